#!/bin/sh
# The agent is stopped with SIGTERM half-way through a backlog, more lines are
# written while it is down, and after a restart every line has arrived
# exactly once: SIGTERM drains what is in flight and commits it.  (Two
# requests in flight may land out of order; ordering is ship_100k_lines.sh's.)
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

start_server --stream s1 --latency-ms 40
mkdir -p "$TMP/logs"
write_lines "$TMP/logs/app.log" r 0 100000

write_conf "$TMP/agent.ini"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/app.log" "maxInFlightRequests = 2"

start_agent "$TMP/agent.ini"
wait_for 60 "some records" count_at_least s1 10000
stop_agent
got=$(records count --records "$TMP/records.jsonl" --stream s1)
[ "$got" -lt 100000 ] || fail "backlog finished before the stop ($got)"
grep -q '"offset"' "$TMP/state/state.json" || fail "no state saved"
echo "stopped after $got of 100000 records"

write_lines "$TMP/logs/app.log" r 100000 110000
faults '{"latency_ms": 0}'
start_agent "$TMP/agent.ini"
wait_for 120 "all 110,000 records" count_at_least s1 110000
stop_agent

records verify --records "$TMP/records.jsonl" --stream s1 \
    --expect "$TMP/logs/app.log" ||
	fail "records differ from the lines written"
pass
