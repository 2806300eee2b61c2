# Shared helpers for the end-to-end tests: a temp dir per scenario, the test
# CA, the project's DIS-compatible HTTPS endpoint, an agent.ini, and waiting
# for conditions (never for time).  Sourced by tests/e2e/*.sh.
#
# Environment (set by `make check`): top_srcdir, DISAGENT, PYTHON3, OPENSSL.

set -eu

: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$top_srcdir/tests/e2e/tools.sh"

E2E_NAME=$(basename "$0" .sh)
E2E_T0=$(date +%s)
E2E_AK=E2EACCESSKEY
E2E_SK=e2e-Secret-Key-0123456789abcdefXYZ
E2E_PID=0123456789abcdef0123456789abcdef
E2E_SEED=${E2E_SEED:-$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/disagent-$E2E_NAME.XXXXXX")
SERVER_PID=
AGENT_PID=
E2E_PIDS=		# more processes of the test, killed at exit
E2E_OK=0
# Commands the exit runs first (set by a test: undo chattr +i, ...).
E2E_ON_EXIT=

e2e_cleanup() {
	rc=$?
	[ -n "$E2E_ON_EXIT" ] && { eval "$E2E_ON_EXIT" || true; }
	[ -n "$AGENT_PID" ] && kill -9 "$AGENT_PID" 2>/dev/null || true
	for _p in $E2E_PIDS; do kill -9 "$_p" 2>/dev/null || true; done
	[ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null || true
	wait 2>/dev/null || true
	# A skip (77) says why itself.
	if [ "$E2E_OK" = 1 ] && { [ "$rc" = 0 ] || [ "$rc" = 77 ]; }; then
		rm -rf "$TMP"
	else
		echo "FAIL: $E2E_NAME (seed $E2E_SEED); files kept in $TMP" >&2
		for f in "$TMP"/agent*.log "$TMP"/server.log; do
			[ -f "$f" ] || continue
			echo "--- last lines of $f" >&2
			tail -n 25 "$f" >&2
		done
		# What the agent said about its files, the whole run (a
		# container's /tmp, and the kept files with it, may be gone
		# by the time anyone looks): no per-request or progress line.
		for f in "$TMP"/agent*.log; do
			[ -f "$f" ] || continue
			echo "--- $f without Put and progress lines (200 at most)" >&2
			grep -vE '\[(log_put|progress_report)\]' "$f" |
			    head -n 200 >&2
		done
		[ "$rc" = 0 ] && rc=1
	fi
	exit "$rc"
}
trap e2e_cleanup EXIT
trap 'exit 1' INT TERM

fail() { echo "FAIL: $*" >&2; exit 1; }
# The wall time and the CPU time of the test's waited-for processes (the
# agent, the endpoint, the tools), for the harness's log: what makes
# make check long.
pass() {
	E2E_OK=1
	command times >"$TMP/.times"
	echo "PASS: $E2E_NAME ($(( $(date +%s) - E2E_T0 )) s; CPU: $(tail -n 1 "$TMP/.times"))"
}

# wait_for SECONDS DESCRIPTION COMMAND...: poll until COMMAND succeeds.
wait_for() {
	_start=$(date +%s); _deadline=$((_start + $1)); _what=$2; shift 2
	while ! "$@" >/dev/null 2>&1; do
		[ "$(date +%s)" -lt "$_deadline" ] || fail "timed out waiting for $_what"
		sleep 0.1
	done
	# The long waits, in the test's log: where its wall time goes.
	_waited=$(( $(date +%s) - _start ))
	[ "$_waited" -lt 3 ] || echo "waited $_waited s for $_what"
}

# start_server [dis_server.py options...]: streams default to s1, s2.
start_server() {
	sh "$top_srcdir/tests/make_test_ca.sh" "$TMP/ca" >/dev/null
	"$PYTHON3" "$top_srcdir/tests/dis_server.py" \
	    --cert "$TMP/ca/server.pem" --key "$TMP/ca/server.key" \
	    --port 0 --port-file "$TMP/port" \
	    --ak "$E2E_AK" --sk "$E2E_SK" --project-id "$E2E_PID" \
	    --records-file "$TMP/records.jsonl" --log-file "$TMP/server.log" \
	    --seed "$E2E_SEED" "$@" 2>>"$TMP/server.log" &
	SERVER_PID=$!
	wait_for 20 "the test endpoint to listen" test -s "$TMP/port"
	PORT=$(cat "$TMP/port")
}

# faults JSON: change the endpoint's fault knobs live.
faults() {
	"$PYTHON3" - "$PORT" "$TMP/ca/ca.pem" "$1" <<'PY'
import http.client, ssl, sys
ctx = ssl.create_default_context(cafile=sys.argv[2])
c = http.client.HTTPSConnection("127.0.0.1", int(sys.argv[1]), context=ctx)
c.request("POST", "/_test/faults", body=sys.argv[3],
          headers={"Content-Type": "application/json"})
r = c.getresponse(); r.read()
sys.exit(0 if r.status == 200 else 1)
PY
}

# control METHOD PATH [JSON]: a /_test/ call; prints the reply, fails
# unless it is 2xx.
control() {
	"$PYTHON3" - "$PORT" "$TMP/ca/ca.pem" "$@" <<'PY'
import http.client, ssl, sys
ctx = ssl.create_default_context(cafile=sys.argv[2])
c = http.client.HTTPSConnection("127.0.0.1", int(sys.argv[1]), context=ctx)
body = sys.argv[5] if len(sys.argv) > 5 else None
c.request(sys.argv[3], sys.argv[4], body=body,
          headers={"Content-Type": "application/json"})
r = c.getresponse(); print(r.read().decode())
sys.exit(0 if 200 <= r.status < 300 else 1)
PY
}

# stat_of NAME: one counter from the endpoint's /_test/stats.
stat_of() {
	"$PYTHON3" - "$PORT" "$TMP/ca/ca.pem" "$1" <<'PY'
import http.client, json, ssl, sys
ctx = ssl.create_default_context(cafile=sys.argv[2])
c = http.client.HTTPSConnection("127.0.0.1", int(sys.argv[1]), context=ctx)
c.request("GET", "/_test/stats")
print(json.loads(c.getresponse().read())[sys.argv[3]])
PY
}

# endpoint_busy: PutRecords (or other requests) reached the endpoint that
# it has not answered yet; endpoint_idle: none.
endpoint_busy() {
	"$PYTHON3" - "$PORT" "$TMP/ca/ca.pem" <<'PY'
import http.client, json, ssl, sys
ctx = ssl.create_default_context(cafile=sys.argv[2])
c = http.client.HTTPSConnection("127.0.0.1", int(sys.argv[1]), context=ctx)
c.request("GET", "/_test/stats")
st = json.loads(c.getresponse().read())
done = sum(st["status_counts"].values()) + st["dropped"]
sys.exit(0 if st["requests"] > done else 1)
PY
}
endpoint_idle() { ! endpoint_busy; }

# unwritable DIR: no entry of DIR can be created, renamed or removed, even
# by root (chattr +i; the mode when not root), until writable DIR or the
# end of the test.
unwritable() {
	if [ "$(id -u)" = 0 ]; then
		chattr +i "$1" || fail "chattr +i is not supported here"
	else
		chmod 555 "$1"
	fi
	E2E_ON_EXIT="${E2E_ON_EXIT}writable '$1' 2>/dev/null; "
}
writable() {
	if [ "$(id -u)" = 0 ]; then chattr -i "$1"; else chmod 755 "$1"; fi
}

# write_conf FILE [extra [agent] lines]: the [agent] part; append flows.
write_conf() {
	_f=$1; shift
	cat >"$_f" <<EOF2
[agent]
region = cn-north-1
projectId = $E2E_PID
endpoint = https://127.0.0.1:$PORT
ak = $E2E_AK
sk = $E2E_SK
caFile = $TMP/ca/ca.pem
checkpointFile = $TMP/state/state.json
log.statusReportingPeriodSeconds = 1
checkpointIntervalMillis = 200
EOF2
	for _l in "$@"; do echo "$_l" >>"$_f"; done
	# It holds the secret key: readable by its owner only, as the
	# agent asks (a WARN otherwise).
	chmod 600 "$_f"
	mkdir -p "$TMP/state"
}

# own_state_unless_default_usable FILE: -t checks that checkpointFile's
# directory can be made, and the default /var/lib/disagent cannot by a
# user who may not write /var/lib: then FILE (an agent.ini without
# checkpointFile) gets one in $TMP/state.  Root's runs check the default.
own_state_unless_default_usable() {
	if [ -w /var/lib/disagent ] ||
	    { [ ! -e /var/lib/disagent ] && [ -w /var/lib ]; }; then
		return 0
	fi
	sed -i "s|^\[agent\]\$|&\ncheckpointFile = $TMP/state/state.json|" "$1"
	mkdir -p "$TMP/state"
}

# add_flow FILE NAME STREAM PATTERN [extra lines...]: maxBufferAgeMillis
# is 200 unless an extra line sets it.
add_flow() {
	_f=$1; _n=$2; _s=$3; _p=$4; shift 4
	_age="maxBufferAgeMillis = 200"
	for _l in "$@"; do
		case $_l in maxBufferAgeMillis*) _age= ;; esac
	done
	{
		echo
		echo "[flow:$_n]"
		echo "DISStream = $_s"
		echo "filePattern = $_p"
		[ -z "$_age" ] || echo "$_age"
		for _l in "$@"; do echo "$_l"; done
	} >>"$_f"
}

# start_agent CONF [args...]: in the background, log in $TMP/agent.log.
start_agent() {
	_c=$1; shift
	"$DISAGENT" -c "$_c" "$@" >>"$TMP/agent.log" 2>&1 &
	AGENT_PID=$!
}

# The sanitizers inflate memory; RSS bounds hold for plain builds only.
E2E_SANITIZED=0
grep -q __asan_init "$DISAGENT" 2>/dev/null && E2E_SANITIZED=1

# check_rss: the agent's peak RSS stays within maxMemoryBytes (default
# 4 MiB) plus a fixed overhead for libcurl, OpenSSL and the loop: 20 MiB in
# all (issue 6's target) unless E2E_RSS_LIMIT_KB says otherwise.
check_rss() {
	[ "$E2E_SANITIZED" = 1 ] && return 0
	_hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$AGENT_PID/status" 2>/dev/null)
	[ -n "$_hwm" ] || return 0
	echo "agent peak RSS: $_hwm kB"
	_max=${E2E_RSS_LIMIT_KB:-20480}
	[ "$_hwm" -le "$_max" ] || fail "agent peak RSS $_hwm kB over $_max kB"
}

# stop_agent: SIGTERM and wait; fails unless the exit status is 0.
stop_agent() {
	check_rss
	kill -TERM "$AGENT_PID"
	_rc=0; wait "$AGENT_PID" || _rc=$?
	AGENT_PID=
	[ "$_rc" = 0 ] || fail "agent exited with $_rc after SIGTERM"
}

records() { "$PYTHON3" "$top_srcdir/tests/dis_records.py" "$@"; }

# exact STREAM RECORD...: the decoded records of STREAM are exactly these,
# in arrival order.
exact() {
	_s=$1; shift
	"$PYTHON3" -c 'import json, sys; json.dump(sys.argv[1:], sys.stdout)' \
	    "$@" >"$TMP/expect-$_s.json"
	records exact --records "$TMP/records.jsonl" --stream "$_s" \
	    --expected "$TMP/expect-$_s.json" || fail "stream $_s"
}

# count_at_least STREAM N
count_at_least() {
	[ "$(records count --records "$TMP/records.jsonl" --stream "$1" 2>/dev/null || echo 0)" -ge "$2" ]
}

# write_lines FILE TAG FROM TO: lines "TAG NNNNNNN payload" appended.
write_lines() {
	"$PYTHON3" - "$@" <<'PY'
import sys
path, tag, a, b = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
pad = "x" * 60
with open(path, "a") as f:
    f.write("".join("%s %07d %s\n" % (tag, i, pad) for i in range(a, b)))
PY
}

# write_every FILE TAG SECONDS INTERVAL: one line "TAG NNNNNNN payload"
# appended (FILE made if missing) every INTERVAL seconds for SECONDS, one
# write each; run it in the background.
write_every() {
	"$PYTHON3" - "$@" <<'PY'
import os, sys, time
path, tag = sys.argv[1], sys.argv[2].encode()
secs, every = float(sys.argv[3]), float(sys.argv[4])
fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
start = time.monotonic()
i = 0
while time.monotonic() - start < secs:
    os.write(fd, b"%s %07d %s\n" % (tag, i, b"x" * 60))
    i += 1
    time.sleep(every)
PY
}

# no_secret_in FILE: the secret key never appears in a log.
no_secret_in() {
	if grep -q -- "$E2E_SK" "$1"; then fail "the secret key appears in $1"; fi
}
