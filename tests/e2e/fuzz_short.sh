#!/bin/sh
# Short libFuzzer runs: builds the targets of tests/fuzz (the PutRecords
# replies in JSON and protobuf, the download and ECS metadata replies, the
# state file, agent.ini, agent.yml, the converters, the per-record codecs,
# the framer on container log lines and stack-trace presets)
# with clang (ASan with leak detection, UBSan) and runs each for
# FUZZ_SECONDS (default 10) from its seed corpus, copied to a temporary
# directory.  Fails
# on any crash, leak or sanitizer report, naming the reproducer.  Skips
# (77) only when clang or its libFuzzer runtime is not installed; scripts/
# deps installs them (Debian: clang libclang-rt-14-dev).
# Environment (set by `make check`): top_srcdir; CLANG, FUZZ_SECONDS.
set -u

: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
export top_srcdir

sh "$top_srcdir/tests/fuzz/run.sh" "${FUZZ_SECONDS:-10}"
rc=$?
if [ "$rc" = 77 ]; then
	echo "SKIP: clang with libFuzzer is not installed" \
	    "(Debian: apt-get install clang libclang-rt-14-dev)"
fi
exit "$rc"
