#!/bin/sh
# Requests to DIS through a real proxy (Debian's tinyproxy on 127.0.0.1):
#  - PROXY_HOST/PROXY_PORT: every line arrives through the proxy's CONNECT;
#  - with basic auth, PROXY_USERNAME and an encrypted PROXY_PASSWORD (the
#    DIS Agent's format, a Java-made fixture): every line arrives;
#  - no credentials (407) or a wrong password (tinyproxy 1.11 answers
#    CONNECT with 401, reported as the proxy's 407): delivery pauses with an
#    ERROR naming the proxy, probes once per pausedRetrySeconds (no loop),
#    nothing is lost once the password is right;
#  - no keys: the https_proxy environment variable still works;
#  - NON_PROXY_HOSTS (and no_proxy with https_proxy) send directly.
# The proxy password appears in no output.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/creds_lib.sh"

TINYPROXY=${TINYPROXY:-$(command -v tinyproxy || echo /usr/bin/tinyproxy)}
[ -x "$TINYPROXY" ] || fail "tinyproxy is not installed (scripts/deps --test)"
EKEY=e2e-Encrypt-Key-42
PW=proxy-Pass-5ecret
# PW encrypted with EKEY by the Java algorithm (see creds_encrypted_keys.sh).
JAVA_PW=626263366636663263633139626330363a3a31303336643564316365393038666430656332343830383733376335396336383a3a34343031376361356433653438373338323731303239376439316531383332613039343361396634346666383233643462653336393666386531323531373762
unset http_proxy https_proxy HTTPS_PROXY all_proxy ALL_PROXY no_proxy NO_PROXY

# start_proxy NAME [BasicAuth user pass]: tinyproxy on a free port.
start_proxy() {
	_n=$1; shift
	_p=$(free_port)
	cat >"$TMP/$_n.conf" <<EOF2
Port $_p
Listen 127.0.0.1
Timeout 60
LogFile "$TMP/$_n.log"
LogLevel Connect
PidFile "$TMP/$_n.pid"
MaxClients 50
Allow 127.0.0.1
ConnectPort $PORT
EOF2
	[ $# -gt 0 ] && echo "BasicAuth $*" >>"$TMP/$_n.conf"
	"$TINYPROXY" -d -c "$TMP/$_n.conf" 2>>"$TMP/$_n.err" &
	EXTRA_PIDS="$EXTRA_PIDS $!"
	eval "${_n}_PORT=$_p"
	wait_for 20 "$_n to listen" "$PYTHON3" -c \
	    'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1)' "$_p"
}
connects() { grep -c "Request (file descriptor [0-9]*): CONNECT 127.0.0.1:$PORT" "$TMP/$1.log" 2>/dev/null || echo 0; }
connects_above() { [ "$(connects "$1")" -gt "$2" ]; }

start_server --stream s1
start_proxy open
start_proxy auth e2euser "$PW"
mkdir -p "$TMP/logs"
conf() {
	write_conf "$TMP/agent.ini" "metricsFile = $TMP/metrics.prom" \
	    "pausedRetrySeconds = 1" "$@"
	add_flow "$TMP/agent.ini" app s1 "$TMP/logs/app.log"
	chmod 600 "$TMP/agent.ini"
}
n=0
more() { write_lines "$TMP/logs/app.log" p "$n" $((n + 500)); n=$((n + 500)); }
delivered() { wait_for 60 "all $n records ($1)" count_at_least s1 "$n"; }

# 1. PROXY_HOST and PROXY_PORT.
conf "PROXY_HOST = 127.0.0.1" "PROXY_PORT = $open_PORT"
more
start_agent "$TMP/agent.ini"
delivered "through the proxy"
connects_above open 0 || fail "nothing went through the proxy"
grep -q "requests to DIS go through the proxy http://127.0.0.1:$open_PORT" \
    "$TMP/agent.log" || fail "no INFO naming the proxy"
stop_agent

# 2. Basic auth with an encrypted password.
conf "PROXY_HOST = 127.0.0.1" "PROXY_PORT = $auth_PORT" \
    "PROXY_USERNAME = e2euser" "PROXY_PASSWORD = $JAVA_PW"
more
DIS_ENCRYPT_KEY=$EKEY start_agent "$TMP/agent.ini"
delivered "through the proxy with basic auth"
connects_above auth 0 || fail "nothing went through the auth proxy"
stop_agent

# 3. No credentials, then a wrong password: paused, named, no loop; and
# disagent describe names the proxy's complaint.
for creds in none wrong; do
	# (A paused flow waits shutdownTimeoutMillis at SIGTERM.)
	if [ "$creds" = none ]; then
		conf "PROXY_HOST = 127.0.0.1" "PROXY_PORT = $auth_PORT" \
		    "shutdownTimeoutMillis = 500"
	else
		conf "PROXY_HOST = 127.0.0.1" "PROXY_PORT = $auth_PORT" \
		    "PROXY_USERNAME = e2euser" "PROXY_PASSWORD = Wrong-Pass-9" \
		    "shutdownTimeoutMillis = 500"
	fi
	more
	c0=$(connects auth)
	t0=$(date +%s)
	: >"$TMP/agent_$creds.log"
	"$DISAGENT" -c "$TMP/agent.ini" >>"$TMP/agent_$creds.log" 2>&1 &
	AGENT_PID=$!
	wait_for 30 "the paused ERROR ($creds)" grep -q \
	    "ERROR .*delivery paused for stream \[s1\]: HTTP 407 from the proxy 127.0.0.1:$auth_PORT: the proxy wants other credentials" \
	    "$TMP/agent_$creds.log"
	wait_for 30 "three probes ($creds)" connects_above auth $((c0 + 3))
	count_at_least s1 $((n - 499)) && fail "records arrived ($creds)"
	stop_agent
	probes=$(( $(connects auth) - c0 ))
	secs=$(( $(date +%s) - t0 + 1 ))
	# pausedRetrySeconds = 1: a few tries a second at most (with curl's
	# 407 round trip), not the thousands of a retry loop.
	[ "$probes" -le $((secs * 4 + 8)) ] ||
		fail "$probes proxy requests in $secs s ($creds): a retry loop"
	grep -q 'HTTP 407 from the proxy' "$TMP/metrics.prom" ||
		fail "the 407 is not the last error in the metrics file"
	# The read-back commands say what to check too, in one line.
	rc=0
	"$DISAGENT" describe -c "$TMP/agent.ini" s1 >"$TMP/describe_$creds.out" \
	    2>&1 || rc=$?
	[ "$rc" = 1 ] || fail "describe through the proxy ($creds) exited $rc"
	grep -q "HTTP 407; the proxy wants other credentials: check PROXY_USERNAME" \
	    "$TMP/describe_$creds.out" ||
		fail "describe ($creds): $(cat "$TMP/describe_$creds.out")"
done
conf "PROXY_HOST = 127.0.0.1" "PROXY_PORT = $auth_PORT" \
    "PROXY_USERNAME = e2euser" "PROXY_PASSWORD = $PW"
start_agent "$TMP/agent.ini"
delivered "once the password is right"
stop_agent

# 4. No keys: https_proxy from the environment.
conf
more
c0=$(connects open)
https_proxy=http://127.0.0.1:$open_PORT start_agent "$TMP/agent.ini"
delivered "through https_proxy"
connects_above open "$c0" || fail "https_proxy was not used"
stop_agent
# ... and no_proxy: directly.
more
c0=$(connects open)
https_proxy=http://127.0.0.1:$open_PORT no_proxy=127.0.0.1 \
    start_agent "$TMP/agent.ini"
delivered "with no_proxy"
[ "$(connects open)" = "$c0" ] || fail "no_proxy was not honoured"
stop_agent

# 5. NON_PROXY_HOSTS: the proxy named (nothing listens there) is bypassed.
conf "PROXY_HOST = 127.0.0.1" "PROXY_PORT = $(free_port)" \
    "NON_PROXY_HOSTS = *.example.com|127.0.0.1"
more
start_agent "$TMP/agent.ini"
delivered "past NON_PROXY_HOSTS"
stop_agent

records verify --records "$TMP/records.jsonl" --stream s1 \
    --expect "$TMP/logs/app.log" || fail "records differ from the lines"
DIS_ENCRYPT_KEY=$EKEY save_outputs "$TMP/agent.ini"
no_secrets "$PW" Wrong-Pass-9 "$EKEY" "$E2E_SK"
pass
