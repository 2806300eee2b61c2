#!/bin/sh
# Short libFuzzer runs: builds tests/fuzz/fuzz_put_reply, fuzz_conf,
# fuzz_convert and fuzz_reccodec with
# clang (ASan with leak detection, UBSan) and runs each for FUZZ_SECONDS
# (default 20) from its seed corpus, copied to a temporary directory.  Fails
# on any crash, leak or sanitizer report, naming the reproducer.  Skips
# (77) only when clang or its libFuzzer runtime is not installed; scripts/
# deps installs them (Debian: clang libclang-rt-14-dev).
# Environment (set by `make check`): top_srcdir; CLANG, FUZZ_SECONDS.
set -u

: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
export top_srcdir

sh "$top_srcdir/tests/fuzz/run.sh" "${FUZZ_SECONDS:-20}"
rc=$?
if [ "$rc" = 77 ]; then
	echo "SKIP: clang with libFuzzer is not installed" \
	    "(Debian: apt-get install clang libclang-rt-14-dev)"
fi
exit "$rc"
