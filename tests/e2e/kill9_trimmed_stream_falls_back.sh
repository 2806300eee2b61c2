#!/bin/sh
# A crash, and the stream no longer holds the records after the sequence
# numbers the state file kept (retention trimmed them while the agent was
# down: the test endpoint's trim): the restart's read says so in one INFO
# line (DIS.4224), and the agent sends again what it cannot know landed.
# Nothing is lost.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

start_server --stream s1:COMMON:2 --latency-ms 20
mkdir -p "$TMP/logs"
write_lines "$TMP/logs/one.log" t1 0 20000

write_conf "$TMP/agent.ini"
sed -i 's/^checkpointIntervalMillis = .*/checkpointIntervalMillis = 3000/' \
    "$TMP/agent.ini"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/*.log" \
    "maxBufferSizeRecords = 200"

start_agent "$TMP/agent.ini"
wait_for 120 "8000 records" count_at_least s1 8000
kill -9 "$AGENT_PID"
wait "$AGENT_PID" 2>/dev/null || true
AGENT_PID=
wait_for 30 "the endpoint to finish what it received" endpoint_idle
# Retention takes every record kept so far.
for p in 0 1; do
	control POST /_test/streams/s1/partitions \
	    "{\"trim\": $p, \"before\": 1000000000}" >/dev/null ||
		fail "cannot trim partition $p"
done

all_arrived() {
	records verify --records "$TMP/records.jsonl" --stream s1 \
	    --expect "$TMP/logs/one.log" --allow-duplicates
}
start_agent "$TMP/agent.ini"
wait_for 180 "every line" all_arrived
stop_agent

grep "restart read of stream \[s1\]: the stream no longer holds the records" \
    "$TMP/agent.log" || fail "no INFO line says the records were trimmed"
[ "$(grep -c "restart read of stream \[s1\]" "$TMP/agent.log")" = 1 ] ||
	fail "not one line about the read"
pass
