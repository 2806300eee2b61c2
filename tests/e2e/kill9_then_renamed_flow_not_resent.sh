#!/bin/sh
# A flow renamed while the agent was down after a crash sends nothing
# twice: [flow:app]'s lines go out to an endpoint that takes 3 s before it
# stores a request, the agent is killed with SIGKILL while they are on the
# wire, agent.ini renames the flow [flow:web] (same DISStream and
# filePattern: it carries app's positions on), and the agent starts again
# at once.  The records of the old request carry ids made with the name
# app; the restart's read looks for those too, finds them when the request
# lands, and web does not send them again.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

start_server --stream s1:COMMON:2
mkdir -p "$TMP/logs"

write_conf "$TMP/agent.ini" "socketTimeOutSeconds = 5"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/*.log"

write_lines "$TMP/logs/a.log" a 0 100
start_agent "$TMP/agent.ini"
wait_for 60 "the first lines" count_at_least s1 100
faults '{"put_latency_ms": 3000}'
write_lines "$TMP/logs/a.log" a 100 300
wait_for 60 "a request on the wire" endpoint_busy
kill -9 "$AGENT_PID"
wait "$AGENT_PID" 2>/dev/null || true
AGENT_PID=
faults '{"put_latency_ms": 0}'
sed -i 's/^\[flow:app\]$/[flow:web]/' "$TMP/agent.ini"
start_agent "$TMP/agent.ini"
all_arrived() {
	records verify --records "$TMP/records.jsonl" --stream s1 \
	    --expect "$TMP/logs/a.log" --allow-duplicates
}
wait_for 60 "every line" all_arrived
wait_for 30 "the restart's read" grep -q "restart read of stream \[s1\]" \
    "$TMP/agent.log"
# a.log read to its end after the read (what it found skipped, or sent
# again), and committed: only then can a duplicate be seen.
size=$(stat -c %s "$TMP/logs/a.log")
wait_for 30 "a.log committed" grep -q "\"offset\":$size" "$TMP/state/state.json"
wait_for 30 "the endpoint to finish what it received" endpoint_idle
stop_agent

grep "restart read\|read is over\|carries on\|may still land" "$TMP/agent.log"
grep -q "\[web\] carries on the positions of flow \[app\]" "$TMP/agent.log" ||
	fail "web did not carry app's positions on"
records verify --records "$TMP/records.jsonl" --stream s1 \
    --expect "$TMP/logs/a.log" ||
	fail "records differ from the lines written (see duplicated)"
pass
