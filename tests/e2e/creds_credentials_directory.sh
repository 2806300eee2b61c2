#!/bin/sh
# systemd credentials: with no key in agent.ini, the files ak and sk of
# $CREDENTIALS_DIRECTORY supply them, and encrypt.key there decrypts an
# encrypted sk; every line arrives.  The environment still overrides them:
# a wrong DIS_SK beats the right file (HTTP 441, paused, nothing lost), and
# once it is gone every line arrives.  A credential file others can read
# gets a WARN naming its mode; no secret is in any output.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/creds_lib.sh"

EKEY=dir-Encrypt-Key-7
start_server --stream s1
mkdir -p "$TMP/logs" "$TMP/creds"
write_conf "$TMP/agent.ini" "metricsFile = $TMP/metrics.prom" \
    "pausedRetrySeconds = 1"
sed -i '/^ak = \|^sk = /d' "$TMP/agent.ini"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/app.log"
chmod 600 "$TMP/agent.ini"
printf '%s\n' "$E2E_AK" >"$TMP/creds/ak"
printf '%s' "$EKEY" >"$TMP/creds/encrypt.key"
printf '%s' "$E2E_SK" | "$DISAGENT" encrypt --key-file "$TMP/creds/encrypt.key" \
    >"$TMP/creds/sk" || fail "disagent encrypt exited $?"
chmod 400 "$TMP/creds/ak" "$TMP/creds/sk" "$TMP/creds/encrypt.key"
export CREDENTIALS_DIRECTORY="$TMP/creds"

rc=0
env -u CREDENTIALS_DIRECTORY "$DISAGENT" -t -c "$TMP/agent.ini" \
    >"$TMP/t_nodir.out" 2>&1 || rc=$?
[ "$rc" = 1 ] && grep -q "is missing required key 'ak' (or set DIS_AK, or give the systemd credential ak)" \
    "$TMP/t_nodir.out" || fail "-t without credentials: $(cat "$TMP/t_nodir.out")"
"$DISAGENT" -t -c "$TMP/agent.ini" >"$TMP/t.out" 2>&1 ||
	fail "-t with the credentials: $(cat "$TMP/t.out")"
grep -q WARN "$TMP/t.out" && fail "unexpected WARN: $(cat "$TMP/t.out")"

write_lines "$TMP/logs/app.log" d 0 2000
start_agent "$TMP/agent.ini"
wait_for 60 "all 2,000 records" count_at_least s1 2000
stop_agent

# The environment beats the directory: a wrong DIS_SK is used, and fails.
write_lines "$TMP/logs/app.log" d 2000 3000
DIS_SK=Not-The-Secret-Key-0 "$DISAGENT" -c "$TMP/agent.ini" \
    >>"$TMP/agent2.log" 2>&1 &
AGENT_PID=$!
wait_for 30 "the paused ERROR" \
    grep -q "ERROR.*delivery paused.*441" "$TMP/agent2.log"
count_at_least s1 2001 && fail "records arrived with the wrong DIS_SK"
stop_agent

# A credential file others can read: a WARN with its mode.
chmod 644 "$TMP/creds/sk"
"$DISAGENT" -t -c "$TMP/agent.ini" >"$TMP/t_mode.out" 2>&1 ||
	fail "-t: $(cat "$TMP/t_mode.out")"
grep -q "WARN .*credential $TMP/creds/sk is readable by group or others (mode 0644)" \
    "$TMP/t_mode.out" || fail "no WARN for mode 0644: $(cat "$TMP/t_mode.out")"
chmod 400 "$TMP/creds/sk"

start_agent "$TMP/agent.ini"
wait_for 60 "all 3,000 records" count_at_least s1 3000
stop_agent
records verify --records "$TMP/records.jsonl" --stream s1 \
    --expect "$TMP/logs/app.log" || fail "records differ from the lines"

save_outputs "$TMP/agent.ini"
no_secrets "$E2E_SK" "$EKEY" Not-The-Secret-Key-0
pass
