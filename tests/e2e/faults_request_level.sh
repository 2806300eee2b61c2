#!/bin/sh
# Request-level failures: with 10% of PutRecords answered 500, 4% answered
# 429 and 4% of all requests dropped without a reply (all before any record
# is stored, so none is ambiguous), 25,000 lines all arrive exactly once,
# and the endpoint's counters prove each fault really happened (100-record
# requests, so ~250 of them, ~10 of each of the rarer faults, make every
# fault near-certain to occur).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

start_server --stream s1 --req-500 0.1 --drop 0.04 --req-429 0.04
mkdir -p "$TMP/logs"
write_lines "$TMP/logs/one.log" q1 0 15000
write_lines "$TMP/logs/two.log" q2 0 10000

write_conf "$TMP/agent.ini"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/*.log" \
    "maxBufferSizeRecords = 100" \
    "retryInitialBackoffMillis = 50" "retryMaxBackoffMillis = 500"
"$DISAGENT" -t -c "$TMP/agent.ini" >/dev/null

start_agent "$TMP/agent.ini"
wait_for 120 "25,000 records on s1" count_at_least s1 25000
stop_agent

records verify --records "$TMP/records.jsonl" --stream s1 \
    --expect "$TMP/logs/one.log" --expect "$TMP/logs/two.log" ||
	fail "records differ from the lines written"
status_count() {
	"$PYTHON3" -c 'import json, sys; print(json.loads(sys.argv[1]).get(sys.argv[2], 0))' \
	    "$(stat_of status_counts | tr "'" '"')" "$1"
}
n500=$(status_count 500)
n429=$(status_count 429)
ndrop=$(stat_of dropped)
echo "faults seen: 500 x$n500, 429 x$n429, dropped x$ndrop"
[ "$n500" -gt 0 ] || fail "the endpoint never answered 500"
[ "$n429" -gt 0 ] || fail "the endpoint never answered 429"
[ "$ndrop" -gt 0 ] || fail "the endpoint never dropped a request"
if [ -s "$TMP/state/deadletter.jsonl" ]; then
	fail "records were dead-lettered"
fi
no_secret_in "$TMP/agent.log"
pass
