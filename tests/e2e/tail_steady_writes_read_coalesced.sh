#!/bin/sh
# readCoalesceMillis (issue 25): 20 files appended 25 times a second each
# (500 appends/s) are read on the coalescing timer, not on every inotify
# event.  Measured as the voluntary context switches of the agent's main
# thread (each is a sleep the loop woke from): reading on every event costs
# about one per append, the coalesced reads a few per window plus the
# requests.  The bound (150/s) is wide on both sides.  Then, with the
# writers stopped and everything delivered, one more line is read within
# seconds although the rescan is a minute away: the watches came back.
# Every line arrives exactly once, in file order.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/rotate_lib.sh"

FILES=20
RATE=25		# appends per second per file
SECONDS_=6
LIMIT=150	# voluntary switches per second of the main thread

start_server --stream s1
mkdir -p "$TMP/logs"
for i in $(seq 1 $FILES); do : >"$TMP/logs/f$i.log"; done
write_conf "$TMP/agent.ini"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/*.log" \
    "readCoalesceMillis = ${COALESCE_MS:-100}" "rescanIntervalMillis = 60000"

# switches: voluntary context switches of the main thread so far.
switches() {
	awk '/^voluntary_ctxt_switches/ { print $2 }' \
	    "/proc/$AGENT_PID/task/$AGENT_PID/status"
}

start_agent "$TMP/agent.ini"
wait_for 30 "the stream described" grep -q "type is COMMON" "$TMP/agent.log"
"$PYTHON3" - "$TMP/logs" $FILES $RATE $SECONDS_ <<'PY' &
import os, sys, time
d, files, rate, secs = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), \
    float(sys.argv[4])
fds = [os.open(os.path.join(d, "f%d.log" % (i + 1)),
               os.O_WRONLY | os.O_APPEND) for i in range(files)]
per_s = files * rate
start = time.monotonic()
for j in range(int(secs * per_s)):
    due = start + j / per_s
    now = time.monotonic()
    if due > now:
        time.sleep(due - now)
    os.write(fds[j % files], b"f%02d n=%06d %s\n" % (
        j % files, j // files, b"p" * 60))
PY
writer=$!
sleep 1		# the measured window starts with the writers going
a=$(switches)
sleep 4
b=$(switches)
wait "$writer" || fail "the writer failed"
per_s=$(( (b - a) / 4 ))
echo "main thread: $per_s voluntary switches/s while $FILES files were" \
    "appended $RATE times a second each"
[ "$per_s" -le "$LIMIT" ] ||
	fail "$per_s wake-ups/s of the main thread (limit $LIMIT): reads" \
	    "are not coalesced"

set -- "$TMP"/logs/*.log
await_records s1 30 "$@"
# Quiet now: one more line must not wait for the rescan a minute away.
echo "after the quiet" >>"$TMP/logs/f1.log"
await_records s1 10 "$@"
n=$(lines_in "$@")
[ "$(records count --records "$TMP/records.jsonl" --stream s1)" = "$n" ] ||
	fail "the line after the quiet did not arrive in 10 s: the watches" \
	    "did not come back"
stop_agent
check_records s1 "$@"
pass
