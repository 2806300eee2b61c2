#!/bin/sh
# Requests that time out may have landed: the endpoint stores a request on
# receipt and answers 2.5 s later,
# while the agent gives up after 2 s (socketTimeOutSeconds), so every
# request times out and lands all the same, and its keys may not read the
# stream (--deny-reads), so no request can be settled by reading it.  A
# SIGTERM then is not a clean stop: the retries waiting in their backoff are handed back undelivered,
# and the state file must not say "clean", nor the log "a clean stop"; it
# says how many requests were left in doubt.  The next start reads them
# back.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

start_server --stream s1:COMMON:1 --deny-reads
faults '{"put_reply_latency_ms": 2500}'
mkdir -p "$TMP/logs"
write_lines "$TMP/logs/a.log" t 0 200

write_conf "$TMP/agent.ini" "socketTimeOutSeconds = 2" \
    "shutdownTimeoutMillis = 5000"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/*.log" \
    "retryInitialBackoffMillis = 3000" "retryMaxBackoffMillis = 3000"

start_agent "$TMP/agent.ini"
# The first request timed out (its retry waits 3 s) and then landed.
wait_for 60 "a request to time out" grep -q "PutRecords to \[s1\] failed" \
    "$TMP/agent.log"
wait_for 60 "the timed-out request to land" count_at_least s1 200
stop_agent

grep "state saved" "$TMP/agent.log"
if grep -q "state saved as a clean stop" "$TMP/agent.log"; then
	fail "a stop with requests in doubt was called clean"
fi
grep -q "state saved, not as a clean stop: [0-9]* request.* ended without a verdict" \
    "$TMP/agent.log" || fail "the stop did not say why it is not clean"
head -n 1 "$TMP/state/state.json"
if head -n 1 "$TMP/state/state.json" | grep -q '"clean":true'; then
	fail "the state file says clean"
fi
pass
