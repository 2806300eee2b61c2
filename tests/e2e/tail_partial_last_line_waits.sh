#!/bin/sh
# A last line without its newline is not sent (isMissLastRecordDelimiter is
# off): it stays unsent over three status reports (fifteen rescans and
# more, several age flushes), then, once the rest of it and its newline are
# written, it arrives whole and once, followed by the later lines, in order.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/rotate_lib.sh"

start_server --stream s1
mkdir -p "$TMP/logs"
write_lines "$TMP/logs/app.log" p 0 100
printf 'partial 0000100 head of the line' >>"$TMP/logs/app.log"
write_conf "$TMP/agent.ini"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/*.log" "ordered = true" \
    "rescanIntervalMillis = 200"

start_agent "$TMP/agent.ini"
await_records s1 30 "$TMP/logs/app.log"
count_at_least s1 100 || fail "the complete lines did not arrive"
printf ', more of it' >>"$TMP/logs/app.log"
wait_progress 3
[ "$(records_of s1)" = 100 ] ||
	fail "the partial line was sent before its newline: $(records show \
	    --records "$TMP/records.jsonl" --stream s1 --tail -n 1)"

printf ' and its end\n' >>"$TMP/logs/app.log"
write_lines "$TMP/logs/app.log" p 101 200
await_records s1 30 "$TMP/logs/app.log"
wait_progress 1
stop_agent
check_records s1 "$TMP/logs/app.log"
pass
