#!/bin/sh
# An outage is told once, not once per failed request (issue 37): with
# requests retried every 200 ms and four in flight, twenty and more fail
# while the endpoint drops every connection, yet the log has one WARN
# "PutRecords to [s1] failed: ..." with the first failure's message; when
# the endpoint is back, one INFO line says delivery works again and how
# many requests failed, and every line arrives.  (The summary a minute
# later is check_sinkreply's outage case, on a made-up clock.)  The keys
# carry no record id (RANDOM_DOUBLE), so each failed request goes again
# after its backoff: with ids, a request whose connection dropped waits for
# the stream to be read instead (timeouts_that_land_settled_by_read.sh).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

start_server --stream s1
mkdir -p "$TMP/logs"
write_lines "$TMP/logs/a.log" a 0 10
write_conf "$TMP/agent.ini"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/a.log" \
    "retryMaxBackoffMillis = 200" "maxInFlightRequests = 4" \
    "maxBufferSizeRecords = 5" "partitionKeyOption = RANDOM_DOUBLE"
start_agent "$TMP/agent.ini"
wait_for 30 "the first 10 records" count_at_least s1 10

faults '{"outage": true}'
n0=$(stat_of dropped)
write_lines "$TMP/logs/a.log" a 10 40
dropped_20() { [ $(( $(stat_of dropped) - n0 )) -ge 20 ]; }
wait_for 60 "20 requests dropped" dropped_20
n=$(grep -c 'PutRecords to \[s1\] failed' "$TMP/agent.log" || true)
[ "$n" = 1 ] || fail "$n WARNs for one outage, not 1: $(grep 'failed' "$TMP/agent.log" | head -5)"
grep -q 'WARN .*PutRecords to \[s1\] failed: .*; retrying in [0-9]* ms' \
    "$TMP/agent.log" || fail "the first failure is not said in full"

d=$(( $(stat_of dropped) - n0 ))
faults '{"outage": false}'
wait_for 60 "all 40 records" count_at_least s1 40
wait_for 30 "the recovery line" grep -q \
    'INFO .*PutRecords to \[s1\] works again, after [0-9]* failed requests over [0-9.]* s' \
    "$TMP/agent.log"
k=$(sed -n 's/.*works again, after \([0-9]*\) failed requests.*/\1/p' \
    "$TMP/agent.log")
# Each failure the agent counts is a dropped connection; curl sends a
# request again once by itself when the pooled connection it took turns
# out dropped, so one failure may be two drops.
[ "$k" -ge $(( d / 2 )) ] && [ "$k" -le $(( d + 4 )) ] ||
	fail "the recovery line counts $k failed requests; $d+ were dropped"
stop_agent
records verify --records "$TMP/records.jsonl" --stream s1 \
    --expect "$TMP/logs/a.log" || fail "records differ from the lines"
pass
