#!/bin/sh
# A request whose outcome is unknown is settled by reading the stream, not
# sent again blindly: the endpoint stores a request on receipt and answers
# 2.5 s later, and the agent gives up after 2 s (socketTimeOutSeconds), so
# every request times out and lands.  Before its records go again, the
# sink reads each partition from the floor the request pinned and finds
# which landed: all 200, so nothing is sent twice and the progress counts
# them as sent.  Then the same with a request that lands only after the
# timeout (put_latency_ms: stored when the delay is over): the read waits
# for the request's landing bound before it decides.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

start_server --stream s1:COMMON:2
mkdir -p "$TMP/logs"

write_conf "$TMP/agent.ini" "socketTimeOutSeconds = 2"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/*.log" \
    "retryInitialBackoffMillis = 100" "retryMaxBackoffMillis = 400"

settled() {
	[ "$(grep -c "settled by reading the stream: [0-9]* of its records had landed" \
	    "$TMP/agent.log")" -ge "$1" ]
}
# Settled, or sent again (then the check at the end says how often).
settled_or_resent() { settled "$1" || count_at_least s1 "$2"; }

faults '{"put_reply_latency_ms": 2500}'
write_lines "$TMP/logs/a.log" a 0 200
start_agent "$TMP/agent.ini"
wait_for 60 "a request settled by reading" settled_or_resent 1 201
faults '{"put_reply_latency_ms": 0, "put_latency_ms": 2600}'
write_lines "$TMP/logs/a.log" a 200 400
wait_for 60 "a late request settled by reading" settled_or_resent 2 401
faults '{"put_latency_ms": 0}'
wait_for 60 "every line" records verify --records "$TMP/records.jsonl" \
    --stream s1 --expect "$TMP/logs/a.log" --allow-duplicates
wait_for 30 "the endpoint to finish what it received" endpoint_idle
stop_agent

grep "settled by reading\|could not be settled\|records sent" "$TMP/agent.log" | tail -n 5
records verify --records "$TMP/records.jsonl" --stream s1 \
    --expect "$TMP/logs/a.log" ||
	fail "records differ from the lines written (see duplicated)"
pass
