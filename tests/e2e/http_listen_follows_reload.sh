#!/bin/sh
# A reload (SIGHUP) follows httpListen: a new address is listened on and
# the old one closed; an address that cannot be bound keeps the old one
# (ERROR in the log); one that overlaps the old (the same port on
# 0.0.0.0) is moved to; removing the key stops the server.  Delivery goes on
# throughout.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

free_port() {
	"$PYTHON3" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
code() {
	curl -s -o /dev/null -w '%{http_code}' --max-time 20 \
	    "http://127.0.0.1:$1/healthz" || true
}
ok_on() { [ "$(code "$1")" = 200 ]; }
closed_on() { [ "$(code "$1")" = 000 ]; }
log_has() { grep -q -- "$1" "$TMP/agent.log"; }

# conf PORT|"" [HOST]: the configuration, with httpListen on HOST
# (127.0.0.1) and PORT (none if "").
conf() {
	if [ -n "$1" ]; then
		write_conf "$TMP/agent.ini" "httpListen = ${2:-127.0.0.1}:$1"
	else
		write_conf "$TMP/agent.ini"
	fi
	add_flow "$TMP/agent.ini" app s1 "$TMP/logs/*.log"
}

start_server --stream s1
mkdir -p "$TMP/logs"
P1=$(free_port)
conf "$P1"
write_lines "$TMP/logs/a.log" a 0 10
start_agent "$TMP/agent.ini"
wait_for 30 "/healthz on the first port" ok_on "$P1"
wait_for 60 "10 records" count_at_least s1 10

P2=$(free_port)
conf "$P2"
kill -HUP "$AGENT_PID"
wait_for 30 "/healthz on the new port" ok_on "$P2"
wait_for 30 "the first port to close" closed_on "$P1"

# A port something else holds: the old server stays, and the log says so.
P3=$(free_port)
"$PYTHON3" -c '
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(1)
open(sys.argv[2], "w").close(); time.sleep(120)' "$P3" "$TMP/held" &
E2E_PIDS="$E2E_PIDS $!"
wait_for 10 "the port to be held" test -e "$TMP/held"
conf "$P3"
kill -HUP "$AGENT_PID"
wait_for 30 "the reload's error" log_has "reload: httpListen = 127.0.0.1:$P3: cannot listen"
ok_on "$P2" || fail "the old server stopped although the new one could not start"

# The same port on every address: it overlaps the one held, which must
# let go first.
conf "$P2" 0.0.0.0
kill -HUP "$AGENT_PID"
wait_for 30 "the move to 0.0.0.0" log_has "reload: serving /healthz, /metrics and /status on http://0.0.0.0:$P2"
ok_on "$P2" || fail "no server on 0.0.0.0:$P2"

conf ""
kill -HUP "$AGENT_PID"
wait_for 30 "the server to stop" closed_on "$P2"
write_lines "$TMP/logs/a.log" a 10 20
wait_for 60 "20 records" count_at_least s1 20
stop_agent
pass
