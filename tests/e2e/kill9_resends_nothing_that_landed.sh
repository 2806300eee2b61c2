#!/bin/sh
# A crash resends nothing that landed: the agent is killed with SIGKILL
# twice midway through a backlog, with saves three seconds apart (so that
# thousands of acknowledged records are not in the state file yet), 10% of
# records throttled (acknowledged batches behind one being retried) and
# requests on the wire.  Each restart first reads the stream back from the
# sequence numbers the state file kept, says what it read, skips the
# records this agent sent that landed, and sends the rest: every line
# arrives exactly once.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

start_server --stream s1:COMMON:3 --rec-4303 0.1 --latency-ms 20
mkdir -p "$TMP/logs"
write_lines "$TMP/logs/one.log" k1 0 15000
write_lines "$TMP/logs/two.log" k2 0 15000

# A crash's restart waits for requests that may still land, at most
# socketTimeOutSeconds: 5 s keeps the test short.
write_conf "$TMP/agent.ini" "socketTimeOutSeconds = 5"
sed -i 's/^checkpointIntervalMillis = .*/checkpointIntervalMillis = 3000/' \
    "$TMP/agent.ini"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/*.log" \
    "maxBufferSizeRecords = 200" \
    "retryInitialBackoffMillis = 50" "retryMaxBackoffMillis = 400"

all_arrived() {
	records verify --records "$TMP/records.jsonl" --stream s1 \
	    --expect "$TMP/logs/one.log" --expect "$TMP/logs/two.log" \
	    --allow-duplicates
}

for at in 6000 16000; do
	start_agent "$TMP/agent.ini"
	wait_for 120 "$at records" count_at_least s1 "$at"
	kill -9 "$AGENT_PID"
	wait "$AGENT_PID" 2>/dev/null || true
	AGENT_PID=
	wait_for 30 "the endpoint to finish what it received" endpoint_idle
	got=$(records count --records "$TMP/records.jsonl" --stream s1)
	[ "$got" -lt 30000 ] || fail "the backlog finished before the kill"
	echo "killed after $got records"
done
start_agent "$TMP/agent.ini"
wait_for 180 "every line" all_arrived
stop_agent

records verify --records "$TMP/records.jsonl" --stream s1 \
    --expect "$TMP/logs/one.log" --expect "$TMP/logs/two.log" ||
	fail "records differ from the lines written (see duplicated)"
grep "restart read of stream \[s1\]" "$TMP/agent.log" ||
	fail "no restart read was reported"
found=$(sed -n 's/.*records read in .* s after.*; \([0-9]*\) of them sent by this agent.*/\1/p' \
    "$TMP/agent.log" | awk '{ n += $1 } END { print n + 0 }')
echo "records found by the restart reads: $found"
[ "$found" -gt 0 ] || fail "the restart reads found nothing of ours"
grep -q "found in the stream by the restart read" "$TMP/agent.log" ||
	fail "no progress line counted the records found"
pass
