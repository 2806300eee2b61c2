#!/bin/sh
# Weak TLS is not silent (issue 37): sslVerify = false against a
# certificate the agent cannot verify ships its records with one WARN at
# the start naming agent.ini's line, and -t says the same; an http://
# endpoint passes -t and starts with a WARN naming its line (records in
# clear text).  A verified https:// endpoint warns about neither.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

start_server --stream s1
mkdir -p "$TMP/logs"
write_lines "$TMP/logs/a.log" a 0 100

# Without caFile the test CA is unknown: only sslVerify = false connects.
write_conf "$TMP/agent.ini" "sslVerify = false"
sed -i '/^caFile = /d' "$TMP/agent.ini"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/a.log"
line=$(grep -n '^sslVerify = false$' "$TMP/agent.ini" | cut -d: -f1)

"$DISAGENT" -t -c "$TMP/agent.ini" >"$TMP/t.out" 2>&1 ||
	fail "-t exited $?: $(cat "$TMP/t.out")"
grep -q "WARN .*$TMP/agent.ini:$line: sslVerify = false: the endpoint's certificate and host name are not checked" \
    "$TMP/t.out" || fail "-t said nothing of sslVerify: $(cat "$TMP/t.out")"

JOURNAL_STREAM=8:1 "$DISAGENT" -c "$TMP/agent.ini" --once \
    >"$TMP/agent.log" 2>&1 || fail "--once exited $?"
[ "$(records count --records "$TMP/records.jsonl" --stream s1)" = 100 ] ||
	fail "the 100 records were not shipped"
n=$(grep -c "^<4>\[warn_weak_tls\] $TMP/agent.ini:$line: sslVerify = false" \
    "$TMP/agent.log" || true)
[ "$n" = 1 ] || fail "$n sslVerify WARNs at the start, not 1: $(cat "$TMP/agent.log")"

# http://: -t and the start warn; the agent runs as configured.
write_conf "$TMP/http.ini"
sed -i "s|^endpoint = https://|endpoint = http://|" "$TMP/http.ini"
add_flow "$TMP/http.ini" app s1 "$TMP/logs/a.log"
line=$(grep -n '^endpoint = http://' "$TMP/http.ini" | cut -d: -f1)
"$DISAGENT" -t -c "$TMP/http.ini" >"$TMP/t2.out" 2>&1 ||
	fail "-t of the http endpoint exited $?: $(cat "$TMP/t2.out")"
grep -q "WARN .*$TMP/http.ini:$line: endpoint = http://127.0.0.1:$PORT: every record is sent in clear text" \
    "$TMP/t2.out" || fail "-t said nothing of http://: $(cat "$TMP/t2.out")"
: >"$TMP/agent.log"
start_agent "$TMP/http.ini"
wait_for 20 "the WARN of the http endpoint" grep -q \
    "WARN .*$TMP/http.ini:$line: endpoint = http://" "$TMP/agent.log"
kill -TERM "$AGENT_PID"; wait "$AGENT_PID" || true; AGENT_PID=

# Verified https: no such WARN.
write_conf "$TMP/good.ini"
add_flow "$TMP/good.ini" app s1 "$TMP/logs/a.log"
"$DISAGENT" -t -c "$TMP/good.ini" >"$TMP/t3.out" 2>&1 || fail "-t exited $?"
if grep -q 'sslVerify\|clear text' "$TMP/t3.out"; then
	fail "-t warned about a verified endpoint: $(cat "$TMP/t3.out")"
fi
pass
