#!/bin/sh
# A clean stop resends nothing, even while DIS throttles: with 10% of
# PutRecords answered 429 and 10% of records refused with DIS.4303, the
# agent is stopped with SIGTERM twice midway through a backlog (batches
# acknowledged behind one still being retried, and records acknowledged in
# batches that are not done yet), restarted each time, and every line
# arrives exactly once.  The committed offset alone cannot say that: the
# state file keeps the acknowledged ranges past it, and the restart skips
# them.  The throttling stays on across the restarts.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

start_server --stream s1:COMMON:2 --req-429 0.1 --rec-4303 0.1 \
    --latency-ms 20
mkdir -p "$TMP/logs"
write_lines "$TMP/logs/one.log" c1 0 3000
write_lines "$TMP/logs/two.log" c2 0 3000

write_conf "$TMP/agent.ini"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/*.log" \
    "maxBufferSizeRecords = 100" \
    "retryInitialBackoffMillis = 50" "retryMaxBackoffMillis = 400"

for at in 1500 3500; do
	start_agent "$TMP/agent.ini"
	wait_for 120 "$at records" count_at_least s1 "$at"
	stop_agent
	got=$(records count --records "$TMP/records.jsonl" --stream s1)
	[ "$got" -lt 6000 ] || fail "the backlog finished before the stop"
	echo "stopped after $got records"
	grep -q "clean stop" "$TMP/agent.log" ||
		fail "the stop did not say it was clean"
done
all_arrived() {
	records verify --records "$TMP/records.jsonl" --stream s1 \
	    --expect "$TMP/logs/one.log" --expect "$TMP/logs/two.log" \
	    --allow-duplicates
}
start_agent "$TMP/agent.ini"
wait_for 180 "every line" all_arrived
stop_agent

records verify --records "$TMP/records.jsonl" --stream s1 \
    --expect "$TMP/logs/one.log" --expect "$TMP/logs/two.log" ||
	fail "records differ from the lines written (see duplicated)"
grep -q "acknowledged before the restart" "$TMP/agent.log" ||
	fail "no restart skipped acknowledged records"
pass
