#!/bin/sh
# A --once run that sends nothing (an empty file) while its DescribeStream
# is still on the wire stops clean: it does not say that "records on the
# wire ... may have landed", and the next start does not read back.  A
# run that does send still ends clean once every record is acknowledged.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

# Every DIS request waits 3 s: the run is over before DescribeStream is.
start_server --stream s1 --latency-ms 3000
mkdir -p "$TMP/logs"
: >"$TMP/logs/a.log"
write_conf "$TMP/agent.ini"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/a.log"

"$DISAGENT" -c "$TMP/agent.ini" --once >"$TMP/agent.log" 2>&1 ||
	fail "--once exited $?"
if grep -q 'may have landed' "$TMP/agent.log"; then
	fail "a run that sent nothing says records may have landed: $(cat "$TMP/agent.log")"
fi
grep -q 'state saved as a clean stop' "$TMP/agent.log" ||
	fail "no clean stop: $(cat "$TMP/agent.log")"

write_lines "$TMP/logs/a.log" a 0 10
"$DISAGENT" -c "$TMP/agent.ini" --once >"$TMP/agent2.log" 2>&1 ||
	fail "second --once exited $?"
if grep -q 'did not stop cleanly' "$TMP/agent2.log"; then
	fail "the run after one that sent nothing reads back: $(cat "$TMP/agent2.log")"
fi
grep -q 'state saved as a clean stop' "$TMP/agent2.log" ||
	fail "the run that sent is not clean: $(cat "$TMP/agent2.log")"
[ "$(records count --records "$TMP/records.jsonl" --stream s1)" = 10 ] ||
	fail "the 10 records"
pass
