#!/bin/sh
# Temporary keys with security.token: the endpoint accepts the agent's ak/sk
# only with their X-Security-Token, sent and signed.  Without the token
# delivery pauses on HTTP 441 and nothing is lost; with security.token in
# agent.ini, then with DIS_SECURITY_TOKEN (which overrides a wrong one in
# the file), every line arrives exactly once and the token appears nowhere.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/creds_lib.sh"

TOKEN=gQpjbi1ub3J0aC00TEMPORARYsecurityTOKEN0123456789abcdefABCDEF+/=
start_server --stream s1 --security-token "$TOKEN"
mkdir -p "$TMP/logs"
write_conf "$TMP/agent.ini" "metricsFile = $TMP/metrics.prom" \
    "pausedRetrySeconds = 1"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/app.log"
chmod 600 "$TMP/agent.ini"

write_lines "$TMP/logs/app.log" t 0 1000
start_agent "$TMP/agent.ini"
wait_for 30 "the paused ERROR" \
    grep -q "ERROR.*delivery paused.*441 DIS.4113" "$TMP/agent.log"
count_at_least s1 1 && fail "records arrived without the security token"
stop_agent

sed -i "s|^sk = .*|&\nsecurity.token = $TOKEN|" "$TMP/agent.ini"
start_agent "$TMP/agent.ini"
wait_for 60 "all 1,000 records" count_at_least s1 1000
write_lines "$TMP/logs/app.log" t 1000 2000
wait_for 60 "all 2,000 records" count_at_least s1 2000
stop_agent

sed -i "s|^security.token = .*|security.token = not-the-token|" \
    "$TMP/agent.ini"
write_lines "$TMP/logs/app.log" t 2000 3000
DIS_SECURITY_TOKEN=$TOKEN start_agent "$TMP/agent.ini"
wait_for 60 "all 3,000 records" count_at_least s1 3000
stop_agent
records verify --records "$TMP/records.jsonl" --stream s1 \
    --expect "$TMP/logs/app.log" || fail "records differ from the lines"

DIS_SECURITY_TOKEN=$TOKEN save_outputs "$TMP/agent.ini"
no_secrets "$TOKEN" "$E2E_SK" not-the-token
pass
