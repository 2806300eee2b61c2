#!/bin/sh
# credentialSource = ecs-metadata when the metadata service (here one
# without session tokens) stops answering: the agent keeps its keys until
# they expire and delivers with them meanwhile; once they have expired it
# pauses the flow (an ERROR, the reason in the metrics file and in disagent
# status), sends nothing with expired keys and drops nothing, and retries
# with backoff, sleeping in between; when the service answers again with
# new keys every line arrives exactly once.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/creds_lib.sh"

AK1=TMPAK1DOWNTEST00001 SK1=tmp-Secret-Down-One-$E2E_SEED
TOK1=gQpjbi1TokenDownOne0123456789abcdefghij+/=
AK2=TMPAK2DOWNTEST00002 SK2=tmp-Secret-Down-Two-$E2E_SEED
TOK2=gQpjbi1TokenDownTwo0123456789abcdefghij+/=
TTL=12

start_server --stream s1
mkdir -p "$TMP/logs"
expiry=$(( $(date +%s) + TTL + 1 ))
start_meta --no-session --access "$AK1" --secret "$SK1" \
    --securitytoken "$TOK1" --ttl "$TTL"
temporary_keys "$AK1:$SK1:$TOK1:$TTL"
write_conf "$TMP/agent.ini" "metricsFile = $TMP/metrics.prom" \
    "metricsIntervalMillis = 1000" "pausedRetrySeconds = 1" \
    "credentialSource = ecs-metadata" \
    "ecsMetadataEndpoint = http://127.0.0.1:$META_PORT/"
sed -i '/^ak = \|^sk = /d' "$TMP/agent.ini"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/app.log"

write_lines "$TMP/logs/app.log" m 0 1000
start_agent "$TMP/agent.ini"
wait_for 60 "all 1,000 records" count_at_least s1 1000
meta_stat_at_least token_puts 1 || fail "no session token was tried"
[ "$(meta_stat unauthorized)" = 0 ] || fail "GETs without a session refused"

# The service goes down: the keys stay in use until they expire.
meta POST /_test/down '{"down": true}' >/dev/null
wait_for 30 "the WARN about the metadata service" grep -q \
    "WARN .*no temporary keys from the ECS metadata service .*the current keys stay in use until" \
    "$TMP/agent.log"
write_lines "$TMP/logs/app.log" m 1000 2000
wait_for 60 "all 2,000 records, with the old keys" count_at_least s1 2000
past_expiry() { [ "$(date +%s)" -gt "$expiry" ]; }
wait_for 60 "the keys to expire" past_expiry

# Expired: paused, nothing sent with the old keys, nothing dropped.
write_lines "$TMP/logs/app.log" m 2000 3000
wait_for 30 "the paused ERROR" grep -q \
    "ERROR .*delivery paused for stream \[s1\]: no temporary keys from the ECS metadata service" \
    "$TMP/agent.log"
wait_for 30 "the reason in the metrics file" grep -q \
    'no temporary keys from the ECS metadata service' "$TMP/metrics.prom"
"$DISAGENT" status -c "$TMP/agent.ini" >"$TMP/status_paused.out" 2>&1 ||
	fail "status: $(cat "$TMP/status_paused.out")"
grep -q "no temporary keys from the ECS metadata service" \
    "$TMP/status_paused.out" || fail "status: $(cat "$TMP/status_paused.out")"
count_at_least s1 2001 && fail "records were sent with expired keys"
[ "$(stat_of auth_failures)" = 0 ] || fail "requests with expired keys"
refused=$(meta_stat refused_down)
# cpu_ticks: the agent's user + system time so far, in clock ticks.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$AGENT_PID/stat"; }
c0=$(cpu_ticks); t0=$(date +%s)
# One more try at least: the retries back off to a minute (jittered),
# so by now the next may be half a minute away.
wait_for 70 "another fetch while down" meta_stat_at_least refused_down \
    $((refused + 1))
sleep 2		# a few seconds of the pause, to measure that it sleeps
c1=$(cpu_ticks); secs=$(( $(date +%s) - t0 ))
echo "agent CPU while paused: $((c1 - c0)) ticks in about $secs s"
[ $((c1 - c0)) -le $(( (secs + 1) * 5 )) ] ||
	fail "the paused agent used $((c1 - c0)) ticks in $secs s: it spins"

# Back with new keys: everything arrives.
meta_keys "$AK2" "$SK2" "$TOK2" 120
temporary_keys "$AK2:$SK2:$TOK2"
meta POST /_test/down '{"down": false}' >/dev/null
wait_for 120 "all 3,000 records" count_at_least s1 3000
grep -q "delivery to \[s1\] resumed" "$TMP/agent.log" || fail "no resume line"
used_ak "$AK2" || fail "the new keys were not used"
stop_agent
records verify --records "$TMP/records.jsonl" --stream s1 \
    --expect "$TMP/logs/app.log" || fail "records differ from the lines"
[ "$(stat_of auth_failures)" = 0 ] || fail "requests failed to authenticate"

save_outputs "$TMP/agent.ini"
no_secrets "$AK1" "$SK1" "$TOK1" "$AK2" "$SK2" "$TOK2"
pass
