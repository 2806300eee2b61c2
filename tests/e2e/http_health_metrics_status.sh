#!/bin/sh
# httpListen: the agent's HTTP server.  /healthz is 200; /metrics is the
# metrics file's text (Prometheus content type) with the counters of the
# delivery; /status is JSON naming every file with its offset; other paths
# are 404, other methods 405; huge headers, garbage and slow clients get a
# clear status or are cut off, and the agent still delivers and stays
# healthy; -t refuses a port something else holds (and accepts it while
# the agent of the same configuration holds it: the check before a
# reload), a second agent on the port does not start; /healthz goes to
# 503 while the state cannot be saved (healthStallSeconds = 1) and back to
# 200 once it can; an idle agent with the server sleeps.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

# free_port: a port nothing listens on now.
free_port() {
	"$PYTHON3" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# code PATH [curl options]: the HTTP status of a request.
code() {
	_p=$1; shift
	curl -s -o /dev/null -w '%{http_code}' --max-time 20 "$@" \
	    "http://127.0.0.1:$HPORT$_p" || true
}
health_is() { [ "$(code /healthz)" = "$1" ]; }

start_server --stream s1
mkdir -p "$TMP/logs"
HPORT=$(free_port)
write_conf "$TMP/agent.ini" "httpListen = 127.0.0.1:$HPORT" \
    "healthStallSeconds = 1" "metricsFile = $TMP/metrics.prom" \
    "metricsIntervalMillis = 1000"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/*.log"

# -t: a port another socket holds is refused, naming the line.
"$PYTHON3" -c '
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(1)
open(sys.argv[2], "w").close(); time.sleep(60)' "$HPORT" "$TMP/held" &
HOLDER=$!
E2E_PIDS="$E2E_PIDS $HOLDER"
wait_for 10 "the port to be held" test -e "$TMP/held"
rc=0
"$DISAGENT" -t -c "$TMP/agent.ini" >"$TMP/t.out" 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "-t with the port taken exited $rc: $(cat "$TMP/t.out")"
line=$(grep -n '^httpListen' "$TMP/agent.ini" | cut -d: -f1)
grep -q "agent.ini:$line: httpListen = 127.0.0.1:$HPORT: cannot be bound" \
    "$TMP/t.out" || fail "-t did not name the line: $(cat "$TMP/t.out")"
kill "$HOLDER"; wait "$HOLDER" 2>/dev/null || true

write_lines "$TMP/logs/a.log" a 0 500
printf 'x\n' >"$TMP/logs/b\"q.log"
printf 'y\n' >"$TMP/logs/$(printf 'c\377.log')"	# not UTF-8
start_agent "$TMP/agent.ini"
wait_for 30 "/healthz to answer 200" health_is 200
curl -s "http://127.0.0.1:$HPORT/healthz" | grep -qx ok || fail "/healthz body"
wait_for 60 "502 records" count_at_least s1 502

# -t while the agent itself holds the port (ExecReload runs it first):
# its state file is locked, so the port is its own.
"$DISAGENT" -t -c "$TMP/agent.ini" >"$TMP/t.out" 2>&1 ||
    fail "-t refused the running agent's own port: $(cat "$TMP/t.out")"
# Another configuration on the same port: -t refuses it, and so does the
# start (the port is not shared).
sed "s|^checkpointFile = .*|checkpointFile = $TMP/state2/state.json|" \
    "$TMP/agent.ini" >"$TMP/other.ini"
chmod 600 "$TMP/other.ini"
mkdir -p "$TMP/state2"
rc=0
"$DISAGENT" -t -c "$TMP/other.ini" >"$TMP/t.out" 2>&1 || rc=$?
[ "$rc" = 1 ] && grep -q "httpListen = 127.0.0.1:$HPORT: cannot be bound" \
    "$TMP/t.out" || fail "-t of another configuration on the port: $(cat "$TMP/t.out")"
rc=0
"$DISAGENT" -c "$TMP/other.ini" >"$TMP/other.log" 2>&1 || rc=$?
[ "$rc" = 1 ] && grep -q "httpListen = 127.0.0.1:$HPORT: cannot listen: Address already in use; refusing to start" \
    "$TMP/other.log" || fail "a second agent on the port exited $rc: $(cat "$TMP/other.log")"

# /metrics: the file's format, Prometheus's content type, the counters.
metrics_sent() {
	curl -s "http://127.0.0.1:$HPORT/metrics" >"$TMP/m.txt" &&
	grep -qE '^disagent_records_sent_total\{flow="app",stream="s1"\} 502$' \
	    "$TMP/m.txt"
}
wait_for 30 "/metrics to count 502 records sent" metrics_sent
ctype=$(curl -s -o /dev/null -w '%{content_type}' "http://127.0.0.1:$HPORT/metrics")
[ "$ctype" = "text/plain; version=0.0.4; charset=utf-8" ] ||
    fail "/metrics content type: $ctype"
file_sent() {
	grep -qE '^disagent_records_sent_total\{flow="app",stream="s1"\} 502$' \
	    "$TMP/metrics.prom"
}
wait_for 30 "the metrics file to count 502 records sent" file_sent
# The same families, in the same order, as the file.
grep '^# TYPE' "$TMP/metrics.prom" >"$TMP/file.types"
grep '^# TYPE' "$TMP/m.txt" >"$TMP/http.types"
cmp -s "$TMP/file.types" "$TMP/http.types" ||
    fail "/metrics and metricsFile differ in families: $(diff "$TMP/file.types" "$TMP/http.types")"

# /status: JSON naming both files, delivered to their end.
curl -s "http://127.0.0.1:$HPORT/status" >"$TMP/status.json"
"$PYTHON3" - "$TMP/status.json" "$TMP/logs" <<'PY' || fail "/status: $(cat "$TMP/status.json")"
import json, os, sys
st = json.load(open(sys.argv[1]))
fl = st["flows"]
assert [f["name"] for f in fl] == ["app"], fl
files = {f["path"]: f for f in fl[0]["files"]}
# A name that is not UTF-8 is escaped as the log escapes it.
for name, shown in (("a.log", "a.log"), ('b"q.log', 'b"q.log'),
                    (b"c\xff.log", "c\\xff.log")):
    p = os.path.join(os.fsencode(sys.argv[2]), os.fsencode(name))
    k = os.path.join(sys.argv[2], shown)
    assert k in files, (k, list(files))
    f = files[k]
    assert f["offset"] == f["size"] == os.path.getsize(p), f
    assert f["bytes_behind"] == 0, f
assert fl[0]["stream"] == "s1" and fl[0]["bytes_behind"] == 0, fl[0]
PY

# Other paths, other methods.
[ "$(code /nope)" = 404 ] || fail "/nope is not 404"
[ "$(code /healthz -X POST)" = 405 ] || fail "POST /healthz is not 405"
[ "$(code /metrics -X DELETE)" = 405 ] || fail "DELETE /metrics is not 405"
[ "$(code /healthz -I)" = 200 ] || fail "HEAD /healthz is not 200"

# Hostile clients: 1 MB of headers, garbage, a slow client; then the agent
# still delivers and is healthy.
# (Python, not curl: the server answers before it has read it all, and
# curl reports the reset instead of the answer.)
c=$("$PYTHON3" - "$HPORT" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=20)
try:
    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " +
              b"x" * 1048576 + b"\r\n\r\n")
except (ConnectionResetError, BrokenPipeError):
    pass
print(s.recv(100).split(b" ")[1].decode())
PY
) || true
case $c in 431|400|413) ;; *) fail "1 MB of headers got '$c'" ;; esac
"$PYTHON3" - "$HPORT" "$E2E_SEED" <<'PY' || fail "malformed requests"
import random, socket, sys, time
port, seed = int(sys.argv[1]), int(sys.argv[2])
rnd = random.Random(seed)
bad = [b"GARBAGE\r\n\r\n", b"GET\r\n\r\n", b"GET /healthz HTTP/9.9\r\n\r\n",
       b"GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n",
       b"\x00\x01\x02\xff\r\n\r\n", b"GET " + b"/" * 70000 + b" HTTP/1.1\r\n\r\n",
       b"GET /healthz HTTP/1.1\r\nBad Header\r\n\r\n",
       b"GET /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"]
for i in range(300):
    if i % 3 == 0:
        req = rnd.choice(bad)
    else:
        req = bytes(rnd.randrange(256) for _ in range(rnd.randrange(1, 400)))
    s = socket.create_connection(("127.0.0.1", port), timeout=20)
    try:
        s.sendall(req)
        s.shutdown(socket.SHUT_WR)
        while s.recv(65536):
            pass
    # Reset, or already closed by the agent (ENOTCONN from shutdown).
    except OSError:
        pass
    s.close()
# A slow client (half a request line, then nothing) is cut off.
s = socket.create_connection(("127.0.0.1", port), timeout=60)
s.sendall(b"GET /heal")
t0 = time.monotonic()
try:
    while s.recv(65536):
        pass
except ConnectionResetError:
    pass
if time.monotonic() - t0 > 45:
    sys.exit("a slow client was not cut off")
PY
kill -0 "$AGENT_PID" || fail "the agent died"
health_is 200 || fail "/healthz is not 200 after the hostile clients"
write_lines "$TMP/logs/a.log" a 500 600
wait_for 60 "602 records" count_at_least s1 602

# An idle agent with the server sleeps (waiting_states_sleep.sh's bound).
TICK=$(getconf CLK_TCK)
cpu_cs() {
	awk -v tick="$TICK" '{ sub(/^.*\) /, ""); print int(($12 + $13) * 100 / tick) }' \
	    "/proc/$1/stat"
}
sleep 1		# the last acknowledgement's save
a=$(cpu_cs "$AGENT_PID"); sleep 2; b=$(cpu_cs "$AGENT_PID")
echo "idle with httpListen: $((b - a)) cs of CPU in 2 s"
[ $((b - a)) -le 10 ] || fail "idle agent used $((b - a)) cs in 2 s"

# The state cannot be saved: /healthz is 503 after healthStallSeconds,
# saying why, and 200 again once it can.
unwritable "$TMP/state"
write_lines "$TMP/logs/a.log" a 600 700
wait_for 30 "/healthz to answer 503" health_is 503
curl -s "http://127.0.0.1:$HPORT/healthz" | grep -q "state has not been saved" ||
    fail "/healthz 503 without the reason"
writable "$TMP/state"
wait_for 30 "/healthz to answer 200 again" health_is 200
wait_for 60 "702 records" count_at_least s1 702

stop_agent
pass
