#!/bin/sh
# A waiting agent sleeps (testing.md): in every state where it can only wait
# -- backoff after HTTP 500s, paused on 441 (wrong credentials), the request
# window full behind an endpoint that does not answer, and an outage
# (nothing listening) -- the agent's own CPU time (utime + stime from
# /proc/PID/stat) over a few seconds stays under 0.05 CPU-s per second, in
# the daemon and with --once (which does not wait on 441: it exits 1).  A spinning loop costs a whole second per
# second, so the bound is wide and holds on a loaded machine.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

WINDOW_S=2
LIMIT_CS=10	# centiseconds over WINDOW_S: 0.05 CPU-s/s
TICK=$(getconf CLK_TCK)

# cpu_cs PID: utime + stime of PID in centiseconds.
cpu_cs() {
	awk -v tick="$TICK" '{ sub(/^.*\) /, ""); print int(($12 + $13) * 100 / tick) }' \
	    "/proc/$1/stat"
}

# measure NAME: the agent's CPU over WINDOW_S while it waits.
measure() {
	_a=$(cpu_cs "$AGENT_PID")
	sleep "$WINDOW_S"
	kill -0 "$AGENT_PID" 2>/dev/null || fail "$1: the agent exited"
	_b=$(cpu_cs "$AGENT_PID")
	_used=$((_b - _a))
	echo "$1: ${_used} cs of CPU in ${WINDOW_S} s"
	[ "$_used" -le "$LIMIT_CS" ] ||
		fail "$1: the agent used ${_used} cs of CPU in ${WINDOW_S} s while waiting (limit $LIMIT_CS)"
}

# run_case NAME MODE CONF WAITCMD...: start the agent (MODE once|daemon),
# wait until WAITCMD says it is waiting, measure, stop it.
run_case() {
	_name=$1; _mode=$2; _conf=$3; shift 3
	: >"$TMP/agent.log"
	if [ "$_mode" = once ]; then
		start_agent "$_conf" --once
	else
		start_agent "$_conf"
	fi
	wait_for 30 "$_name ($_mode) to start waiting" "$@"
	measure "$_name ($_mode)"
	kill -9 "$AGENT_PID" 2>/dev/null || true
	wait "$AGENT_PID" 2>/dev/null || true
	AGENT_PID=
	rm -rf "$TMP/state"
	mkdir -p "$TMP/state"
}

log_has() { grep -q -- "$1" "$TMP/agent.log"; }
requests_at_least() { [ "$(stat_of requests)" -ge "$1" ]; }
puts_at_least() { [ "$(stat_of put_requests)" -ge "$1" ]; }

start_server --stream s1
mkdir -p "$TMP/logs"
# Enough lines for several batches: the window fills whenever requests
# do not complete.
write_lines "$TMP/logs/a.log" a 0 20000

write_conf "$TMP/agent.ini" "socketTimeOutSeconds = 120"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/*.log" "maxInFlightRequests = 4"

sed "s/^sk = .*/sk = WrongSecretValue987/" "$TMP/agent.ini" >"$TMP/bad.ini"

for mode in daemon once; do
	faults '{"req_500": 1.0}'
	n=$(stat_of requests)
	run_case backoff-500 "$mode" "$TMP/agent.ini" requests_at_least $((n + 4))

	faults '{"req_500": 0.0}'
	if [ "$mode" = daemon ]; then
		run_case paused-441 daemon "$TMP/bad.ini" log_has "delivery paused"
	else
		# --once does not wait for the operator: it exits 1 at once.
		rc=0
		"$DISAGENT" -c "$TMP/bad.ini" --once >"$TMP/agent.log" 2>&1 || rc=$?
		[ "$rc" = 1 ] || fail "--once on 441 exited $rc, not 1"
		rm -rf "$TMP/state"; mkdir -p "$TMP/state"
	fi

	# DescribeStream answers at once; every PutRecords hangs.
	faults '{"put_latency_ms": 600000}'
	n=$(stat_of put_requests)
	run_case window-full "$mode" "$TMP/agent.ini" puts_at_least $((n + 4))
	faults '{"put_latency_ms": 0}'
done

# An outage: nothing listens on the port any more.
kill "$SERVER_PID"
wait "$SERVER_PID" 2>/dev/null || true
SERVER_PID=
for mode in daemon once; do
	run_case outage "$mode" "$TMP/agent.ini" log_has "PutRecords to \[s1\] failed\|DescribeStream \[s1\] failed"
done
pass
