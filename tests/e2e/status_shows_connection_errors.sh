#!/bin/sh
# The most common misconfigurations fail before PutRecords, at the stream
# check: nothing listening at the endpoint, a TLS peer the CA does not
# vouch for.  Each shows as the flow's last error, in the metrics file and
# in `disagent status`, not only in the log; and the agent keeps retrying
# (nothing is dropped) until the endpoint is right.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

start_server --stream s1
port=$PORT
mkdir -p "$TMP/logs"
write_lines "$TMP/logs/a.log" a 0 100
last_error() {
	grep -q "disagent_last_error_info{flow=\"app\",code=\"NETWORK\",message=\"$1" \
	    "$TMP/disagent.prom" 2>/dev/null
}

# 1. Nothing listens: a port taken from a socket closed at once.
closed=$("$PYTHON3" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
PORT=$closed
write_conf "$TMP/agent.ini" "metricsFile = $TMP/disagent.prom" \
    "metricsIntervalMillis = 1000"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/*.log"
start_agent "$TMP/agent.ini"
wait_for 30 "the connection error in the metrics" last_error "[^\"]*onnect"
"$DISAGENT" status -c "$TMP/agent.ini" >"$TMP/st1" 2>&1 ||
	fail "status exited $?: $(cat "$TMP/st1")"
grep -q "^  last error: NETWORK .*onnect" "$TMP/st1" ||
	fail "status does not show the connection error: $(cat "$TMP/st1")"
stop_agent

# 2. The endpoint answers, but with a certificate another CA signed.
PORT=$port
sh "$top_srcdir/tests/make_test_ca.sh" "$TMP/other-ca" >/dev/null
write_conf "$TMP/agent.ini" "metricsFile = $TMP/disagent.prom" \
    "metricsIntervalMillis = 1000"
sed -i "s|^caFile = .*|caFile = $TMP/other-ca/ca.pem|" "$TMP/agent.ini"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/*.log"
rm -f "$TMP/disagent.prom"
start_agent "$TMP/agent.ini"
wait_for 30 "the TLS error in the metrics" last_error "[^\"]*[Cc]ertificate"
"$DISAGENT" status -c "$TMP/agent.ini" >"$TMP/st2" 2>&1 ||
	fail "status exited $?: $(cat "$TMP/st2")"
grep -q "^  last error: NETWORK .*[Cc]ertificate" "$TMP/st2" ||
	fail "status does not show the TLS error: $(cat "$TMP/st2")"
count_at_least s1 1 && fail "records went to an endpoint the CA does not vouch for"
stop_agent

# 3. Fixed: everything arrives.
write_conf "$TMP/agent.ini" "metricsFile = $TMP/disagent.prom" \
    "metricsIntervalMillis = 1000"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/*.log"
start_agent "$TMP/agent.ini"
wait_for 30 "all 100 records" count_at_least s1 100
stop_agent
records verify --records "$TMP/records.jsonl" --stream s1 \
    --expect "$TMP/logs/a.log" || fail "records differ"
pass
