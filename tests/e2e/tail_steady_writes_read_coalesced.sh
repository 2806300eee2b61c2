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

start_agent "$TMP/agent.ini"
wait_for 30 "the stream described" grep -q "type is COMMON" "$TMP/agent.log"
paced_writer "$TMP/logs" $FILES $RATE $SECONDS_
writer=$PACED_PID
sleep 1		# the measured window starts with the writers going
per_s=$(switches_per_s 4)
wait "$writer" || fail "the writer failed"
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
