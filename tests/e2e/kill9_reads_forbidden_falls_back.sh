#!/bin/sh
# A crash with keys that may not read the stream: the restart's read is
# refused (HTTP 403 DIS.4116, the test endpoint's deny_reads), one INFO
# line says so and why, and the agent falls back to sending again what the
# crashed run sent after its last save: nothing is lost, and some lines
# arrive twice.  A flow whose partitionKeyOption has no RANDOM_INT (here
# FILE_NAME) carries no record ids: its INFO line says what it resends.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

start_server --stream s1:COMMON:2 --stream s2 --deny-reads --latency-ms 20
mkdir -p "$TMP/logs" "$TMP/other"
write_lines "$TMP/logs/one.log" f1 0 20000
write_lines "$TMP/other/two.log" f2 0 2000

write_conf "$TMP/agent.ini"
sed -i 's/^checkpointIntervalMillis = .*/checkpointIntervalMillis = 3000/' \
    "$TMP/agent.ini"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/*.log" \
    "maxBufferSizeRecords = 200"
add_flow "$TMP/agent.ini" named s2 "$TMP/other/*.log" \
    "partitionKeyOption = FILE_NAME"

all_arrived() {
	records verify --records "$TMP/records.jsonl" --stream s1 \
	    --expect "$TMP/logs/one.log" --allow-duplicates &&
	records verify --records "$TMP/records.jsonl" --stream s2 \
	    --expect "$TMP/other/two.log" --allow-duplicates
}

start_agent "$TMP/agent.ini"
wait_for 120 "8000 records" count_at_least s1 8000
kill -9 "$AGENT_PID"
wait "$AGENT_PID" 2>/dev/null || true
AGENT_PID=
wait_for 30 "the endpoint to finish what it received" endpoint_idle
echo "killed after $(records count --records "$TMP/records.jsonl" --stream s1) records"

start_agent "$TMP/agent.ini"
wait_for 180 "every line" all_arrived
stop_agent

grep "restart read of stream \[s1\]: GetCursor refused: HTTP 403 DIS.4116" \
    "$TMP/agent.log" || fail "no INFO line says the read was refused"
[ "$(grep -c "restart read of stream \[s1\]" "$TMP/agent.log")" = 1 ] ||
	fail "not one line about the read"
grep "\[named\] restart after a crash: partitionKeyOption = FILE_NAME" \
    "$TMP/agent.log" || fail "no INFO line for the flow without ids"
dups=$(records verify --records "$TMP/records.jsonl" --stream s1 \
    --expect "$TMP/logs/one.log" --allow-duplicates |
    sed -n 's/.*duplicated \([0-9]*\),.*/\1/p')
echo "sent again after the refused read: $dups"
[ "$dups" -gt 0 ] || fail "nothing was sent again: the fallback is not shown"
pass
