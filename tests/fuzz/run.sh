#!/bin/sh
# run.sh SECONDS [BUILDDIR]: run each libFuzzer target for SECONDS, starting
# from a copy of its seed corpus (tests/fuzz/corpus/NAME) in a temporary
# directory, so nothing is written into the source tree.  Builds the
# targets with build.sh first, into BUILDDIR (default: a fresh directory
# under $TMPDIR, removed afterwards).  Fails on any crash, sanitizer report,
# leak or timeout; the reproducer, the fuzzer's output and the temporary
# directory are then kept and named.
# Environment: as build.sh; FUZZ_TARGETS (default: every target build.sh
# makes), FUZZ_ARGS (extra libFuzzer flags).
# Exit 0 clean, 1 on a finding or a build error, 77 when build.sh reports
# that clang/libFuzzer is missing.
set -u

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
	echo "usage: $0 SECONDS [BUILDDIR]" >&2
	exit 2
fi
secs=$1
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
fz=$top_srcdir/tests/fuzz
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fuzz-run.XXXXXX") || exit 1
bdir=${2:-$tmp/build}

rc=0
top_srcdir=$top_srcdir sh "$fz/build.sh" "$bdir" >"$tmp/build.out" 2>&1 || rc=$?
if [ "$rc" != 0 ]; then
	cat "$tmp/build.out" >&2
	rm -rf "$tmp"
	[ "$rc" = 77 ] && exit 77
	exit 1
fi

failed=
all="fuzz_put_reply fuzz_conf fuzz_convert fuzz_reccodec fuzz_pbuf fuzz_read \
fuzz_ecsmeta fuzz_state fuzz_importyml fuzz_framer"
for t in ${FUZZ_TARGETS:-$all}; do
	name=${t#fuzz_}
	mkdir -p "$tmp/$name/corpus" "$tmp/$name/artifacts"
	cp "$fz/corpus/$name/"* "$tmp/$name/corpus/"
	dict=
	[ -f "$fz/$name.dict" ] && dict=-dict=$fz/$name.dict
	# shellcheck disable=SC2086
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0} \
	UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
	"$bdir/$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
	    -max_len=16384 -detect_leaks=1 -print_final_stats=1 \
	    -artifact_prefix="$tmp/$name/artifacts/" $dict ${FUZZ_ARGS:-} \
	    "$tmp/$name/corpus" >"$tmp/$name/output" 2>&1
	frc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$tmp/$name/output")
	cov=$(grep -o 'cov: [0-9]*' "$tmp/$name/output" | tail -n 1)
	if [ "$frc" != 0 ] || ls "$tmp/$name/artifacts/"* >/dev/null 2>&1; then
		echo "FAIL: $t (exit $frc) after ${runs:-?} runs"
		grep -E 'ERROR|SUMMARY|runtime error|#[0-9]+ 0x' \
		    "$tmp/$name/output" | head -n 40
		for a in "$tmp/$name/artifacts/"*; do
			[ -f "$a" ] || continue
			echo "reproducer: $a ($(wc -c <"$a") bytes);" \
			    "rerun: $bdir/$t $a"
		done
		echo "full output: $tmp/$name/output"
		failed="$failed $t"
	else
		echo "ok: $t, $secs s, ${runs:-?} runs, ${cov:-cov: ?}," \
		    "corpus $(find "$tmp/$name/corpus" -type f | wc -l) files"
	fi
done

if [ -n "$failed" ]; then
	echo "fuzz: findings in$failed; files kept in $tmp"
	exit 1
fi
rm -rf "$tmp"
exit 0
