#!/bin/sh
# A request that lands after the restart began is not sent twice: the
# endpoint takes 3 s before it stores a request (a request still in DIS's
# hands), the agent is killed with SIGKILL while one is on the wire and
# restarted 0.1-1 s later (systemd's Restart= timing).  The restart's read
# reaches the stream's end before the old request lands; it keeps reading
# (polling, not spinning) until no request of the crashed run can land any
# more, finds its records and does not send them again.  Twice: once on a
# first run (no sequence numbers saved yet: the read starts at the run's
# start time), once after a save.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

start_server --stream s1:COMMON:2
mkdir -p "$TMP/logs"

write_conf "$TMP/agent.ini" "socketTimeOutSeconds = 5"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/*.log"

# systemd's notify socket: what the agent tells it, one line a datagram.
"$PYTHON3" - "$TMP/notify.sock" "$TMP/notify.log" <<'PY' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
with open(sys.argv[2], "a") as out:
    while True:
        out.write(s.recv(4096).decode().replace("\n", " ") + "\n")
        out.flush()
PY
E2E_PIDS="$E2E_PIDS $!"
wait_for 10 "the notify socket" test -S "$TMP/notify.sock"

restart_soon() {
	sleep "$(awk -v s="$E2E_SEED$1" 'BEGIN { srand(s); printf "%.1f", 0.1 + rand() * 0.9 }')"
	# The restart's read comes before READY=1: it extends systemd's
	# start timeout to cover its wait.
	NOTIFY_SOCKET="$TMP/notify.sock"
	export NOTIFY_SOCKET
	start_agent "$TMP/agent.ini"
	unset NOTIFY_SOCKET
}

# The restart reads done so far are at least $1.
reads_at_least() {
	[ "$(grep -c 'restart read of stream \[s1\]' "$TMP/agent.log")" -ge "$1" ]
}

waits_at_least() {
	[ "$(grep -c 'may still land for' "$TMP/agent.log")" -ge "$1" ]
}
# cpu_ticks: the agent's user + system time so far, in clock ticks.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$AGENT_PID/stat"; }

n=0
for round in 1 2; do
	faults '{"put_latency_ms": 3000}'
	write_lines "$TMP/logs/a.log" a "$n" $((n + 200))
	n=$((n + 200))
	[ "$round" = 1 ] && start_agent "$TMP/agent.ini"
	wait_for 60 "a request on the wire" endpoint_busy
	kill -9 "$AGENT_PID"
	wait "$AGENT_PID" 2>/dev/null || true
	AGENT_PID=
	restart_soon "$round"
	# The wait at the partitions' ends sleeps between its polls.
	wait_for 30 "the wait $round" waits_at_least "$round"
	c0=$(cpu_ticks); t0=$(date +%s)
	wait_for 60 "restart read $round" reads_at_least "$round"
	c1=$(cpu_ticks); secs=$(( $(date +%s) - t0 ))
	echo "agent CPU while the restart read waited: $((c1 - c0)) ticks in about $secs s"
	[ $((c1 - c0)) -le $(( (secs + 1) * 20 )) ] ||
		fail "the waiting restart read used $((c1 - c0)) ticks in $secs s: it spins"
	faults '{"put_latency_ms": 0}'
	wait_for 60 "round $round's lines" records verify \
	    --records "$TMP/records.jsonl" --stream s1 \
	    --expect "$TMP/logs/a.log" --allow-duplicates
	wait_for 30 "the endpoint to finish what it received" endpoint_idle
done
stop_agent

grep "restart read\|may still land" "$TMP/agent.log"
[ "$(grep -c "may still land for" "$TMP/agent.log")" = 2 ] ||
	fail "the restart did not say how long it waits and why"
records verify --records "$TMP/records.jsonl" --stream s1 \
    --expect "$TMP/logs/a.log" ||
	fail "records differ from the lines written (see duplicated)"
cat "$TMP/notify.log"
grep -n "EXTEND_TIMEOUT_USEC=[0-9]" "$TMP/notify.log" | head -n 1 | cut -d: -f1 >"$TMP/ext"
grep -n "READY=1" "$TMP/notify.log" | head -n 1 | cut -d: -f1 >"$TMP/ready"
[ -s "$TMP/ext" ] && [ -s "$TMP/ready" ] &&
    [ "$(cat "$TMP/ext")" -lt "$(cat "$TMP/ready")" ] ||
	fail "the start timeout was not extended before READY=1"
pass
