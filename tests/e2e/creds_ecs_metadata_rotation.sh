#!/bin/sh
# credentialSource = ecs-metadata against a fake metadata service with
# session tokens and keys that expire after 10 s, and an endpoint that takes
# only the current temporary keys with their security token.  The agent
# renews the keys ahead of expiry by itself (the service hands out new ones
# while the old stay valid, as ECS does); when the service rotates early and
# DIS refuses the old keys at once (441), the agent fetches again at once
# and resends (no pause), even when its session token has expired.  Lines are written
# throughout: every one arrives exactly once.  The metadata service is
# reached directly although http_proxy names a dead proxy, and no key,
# token or secret appears in any output.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/creds_lib.sh"

for i in 1 2 3 4; do
	eval "AK$i=TMPAK${i}ROTATION000$i"
	eval "SK$i=tmp-Secret-$i-$(echo "$E2E_SEED$i" | cksum | cut -d' ' -f1)"
	eval "TOK$i=gQpjbi1SecurityToken${i}Rotation0123456789abcdef+/$i="
done

start_server --stream s1
temporary_keys "$AK1:$SK1:$TOK1"
start_meta --access "$AK1" --secret "$SK1" --securitytoken "$TOK1" --ttl 10
mkdir -p "$TMP/logs"
write_conf "$TMP/agent.ini" "metricsFile = $TMP/metrics.prom" \
    "pausedRetrySeconds = 1" "credentialSource = ecs-metadata" \
    "ecsMetadataEndpoint = http://127.0.0.1:$META_PORT"
sed -i '/^ak = \|^sk = /d' "$TMP/agent.ini"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/app.log"
"$DISAGENT" -t -c "$TMP/agent.ini" >"$TMP/t.out" 2>&1 ||
	fail "-t: $(cat "$TMP/t.out")"

write_lines "$TMP/logs/app.log" r 0 2000
http_proxy=http://127.0.0.1:1 start_agent "$TMP/agent.ini"
wait_for 60 "all 2,000 records" count_at_least s1 2000
used_ak "$AK1" || fail "the first keys were not used"
meta_stat_at_least token_puts 1 || fail "no session token was asked for"

# Ahead of expiry: the service has new keys, DIS takes both for a while.
temporary_keys "$AK1:$SK1:$TOK1" "$AK2:$SK2:$TOK2"
meta_keys "$AK2" "$SK2" "$TOK2" 60
served=$(meta_stat keys_served)
wait_for 30 "the agent to renew its keys by itself" \
    meta_stat_at_least keys_served $((served + 1))
write_lines "$TMP/logs/app.log" r 2000 3000
wait_for 60 "all 3,000 records" count_at_least s1 3000
used_ak "$AK2" || fail "the renewed keys were not used"
temporary_keys "$AK2:$SK2:$TOK2"
write_lines "$TMP/logs/app.log" r 3000 4000
wait_for 60 "all 4,000 records" count_at_least s1 4000
[ "$(stat_of auth_failures)" = 0 ] || fail "requests were refused"

# Early rotation: DIS refuses the old keys at once; the 441 makes the
# agent fetch again at once (its next renewal is half a minute away).
meta_keys "$AK3" "$SK3" "$TOK3" 60
temporary_keys "$AK3:$SK3:$TOK3"
write_lines "$TMP/logs/app.log" r 4000 5000
wait_for 60 "all 5,000 records" count_at_least s1 5000
grep -q "DIS refused the temporary keys: fetching new ones" "$TMP/agent.log" ||
	fail "no immediate fetch after the 441"
used_ak "$AK3" || fail "the new keys were not used"

# The same with an expired session token: 401, a new token, the keys.
meta POST /_test/expire_sessions >/dev/null
meta_keys "$AK4" "$SK4" "$TOK4" 60
temporary_keys "$AK4:$SK4:$TOK4"
write_lines "$TMP/logs/app.log" r 5000 6000
wait_for 60 "all 6,000 records" count_at_least s1 6000
meta_stat_at_least unauthorized 1 || fail "the old session token was not tried"
used_ak "$AK4" || fail "the keys after the new session token were not used"
grep -q "delivery paused" "$TMP/agent.log" &&
	fail "a rotation paused delivery instead of resending with new keys"
stop_agent
records verify --records "$TMP/records.jsonl" --stream s1 \
    --expect "$TMP/logs/app.log" || fail "records differ from the lines"

save_outputs "$TMP/agent.ini"
no_secrets "$AK1" "$AK2" "$AK3" "$AK4" "$SK1" "$SK2" "$SK3" "$SK4" \
    "$TOK1" "$TOK2" "$TOK3" "$TOK4"
pass
