#!/bin/sh
# Reload and stop wait only for requests on the wire.  A flow paused on 441
# (its probe scheduled, nothing in flight) reloads at once after SIGHUP --
# the case pausing exists for: fix the credentials, reload -- and stops at
# once on SIGTERM, well before shutdownTimeoutMillis (60 s here), without
# the "did not finish" warning.  When requests really are on the wire (the
# endpoint holds every PutRecords), the warning comes at the deadline and
# names how many there were.  A flow in backoff after HTTP 500s (its
# batches waiting for their retry timer, not on the wire) reloads and stops
# at once too, and loses nothing.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

log_has() { grep -q -- "$1" "$TMP/agent.log"; }
puts_at_least() { [ "$(stat_of put_requests)" -ge "$1" ]; }

start_server --stream s1
mkdir -p "$TMP/logs"
write_lines "$TMP/logs/app.log" r 0 3000

# A crash's restart waits for requests that may still land, at most
# socketTimeOutSeconds: 5 s keeps the test short.
write_conf "$TMP/agent.ini" "pausedRetrySeconds = 600" \
    "shutdownTimeoutMillis = 60000" "socketTimeOutSeconds = 5"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/app.log"
sed "s/^sk = .*/sk = WrongSecretValue987/" "$TMP/agent.ini" >"$TMP/run.ini"

# 1. Paused, then fixed and reloaded: prompt, and everything arrives.
start_agent "$TMP/run.ini"
wait_for 30 "the flow to pause" log_has "delivery paused"
cp "$TMP/agent.ini" "$TMP/run.ini"
kill -HUP "$AGENT_PID"
# Well inside shutdownTimeoutMillis: a reload that waited for the
# deadline fails here.
wait_for 20 "the reload" log_has "configuration reloaded"
log_has "did not finish" && fail "the reload waited for requests that were not in flight"
wait_for 60 "all 3,000 records" count_at_least s1 3000
stop_agent
records verify --records "$TMP/records.jsonl" --stream s1 \
    --expect "$TMP/logs/app.log" || fail "records differ after the reload"

# 2. Paused, then SIGTERM: the agent exits at once with status 0.
write_lines "$TMP/logs/app.log" r 3000 4000
sed "s/^sk = .*/sk = WrongSecretValue987/" "$TMP/agent.ini" >"$TMP/run.ini"
: >"$TMP/agent.log"
start_agent "$TMP/run.ini"
wait_for 30 "the flow to pause again" log_has "delivery paused"
kill -TERM "$AGENT_PID"
wait_for 20 "the agent to exit" sh -c "! kill -0 $AGENT_PID 2>/dev/null"
rc=0; wait "$AGENT_PID" || rc=$?
AGENT_PID=
[ "$rc" = 0 ] || fail "the paused agent exited $rc after SIGTERM"
log_has "did not finish" && fail "the stop waited for requests that were not in flight"

# 3. Requests truly on the wire: the deadline's warning names them.
faults '{"put_latency_ms": 600000}'
sed "s/^shutdownTimeoutMillis = .*/shutdownTimeoutMillis = 1500/" \
    "$TMP/agent.ini" >"$TMP/run.ini"
cat >>"$TMP/run.ini" <<EOF
maxInFlightRequests = 2
maxBufferSizeRecords = 100
EOF
: >"$TMP/agent.log"
n=$(stat_of put_requests)
start_agent "$TMP/run.ini"
wait_for 30 "two requests held by the endpoint" puts_at_least $((n + 2))
kill -TERM "$AGENT_PID"
wait_for 30 "the agent to exit" sh -c "! kill -0 $AGENT_PID 2>/dev/null"
rc=0; wait "$AGENT_PID" || rc=$?
AGENT_PID=
[ "$rc" = 0 ] || fail "the agent exited $rc after SIGTERM"
log_has "shutdown: 2 requests in flight did not finish within 1500 ms" ||
	fail "the shutdown warning does not name the 2 requests in flight"

# 4. In backoff after 500s: SIGHUP and SIGTERM are prompt; nothing is lost.
faults '{"put_latency_ms": 0}'
faults '{"req_500": 1.0}'
cp "$TMP/agent.ini" "$TMP/run.ini"
: >"$TMP/agent.log"
n=$(stat_of put_requests)
start_agent "$TMP/run.ini"
wait_for 30 "PutRecords answered 500 and retried" puts_at_least $((n + 3))
kill -HUP "$AGENT_PID"
wait_for 20 "the reload in backoff" log_has "configuration reloaded"
n=$(stat_of put_requests)
wait_for 30 "retries after the reload" puts_at_least $((n + 2))
kill -TERM "$AGENT_PID"
wait_for 20 "the agent in backoff to exit" \
    sh -c "! kill -0 $AGENT_PID 2>/dev/null"
rc=0; wait "$AGENT_PID" || rc=$?
AGENT_PID=
[ "$rc" = 0 ] || fail "the agent in backoff exited $rc after SIGTERM"
log_has "did not finish" &&
	fail "reload or stop in backoff waited for requests not in flight"
faults '{"req_500": 0.0}'
: >"$TMP/agent.log"
start_agent "$TMP/run.ini"
wait_for 60 "all 4,000 records" count_at_least s1 4000
stop_agent
records verify --records "$TMP/records.jsonl" --stream s1 \
    --expect "$TMP/logs/app.log" --allow-duplicates ||
	fail "records missing or altered after the backoff"
for f in "$TMP"/agent*.log; do no_secret_in "$f"; done
pass
