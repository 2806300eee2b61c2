#!/bin/sh
# readCoalesceMillis pauses the directory watches while files keep
# changing, so that a write wakes nothing.  A file created, written and
# renamed away within one coalescing window must still be read: the
# names in the directory stay watched during the pause.  One file is
# appended 50 times a second (the pause holds), and three times a new
# matching file is created, written, and renamed after a second to a name
# the pattern does not take.  The window is 10 s, so that the timer's
# scans would catch each one with a chance of 1 in 10: every line of all
# of them arrives, exactly once.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/rotate_lib.sh"

start_server --stream s1
mkdir -p "$TMP/logs"
: >"$TMP/logs/busy.log"
write_conf "$TMP/agent.ini"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/*.log" \
    "readCoalesceMillis = 10000" "rescanIntervalMillis = 60000"
start_agent "$TMP/agent.ini"
wait_for 30 "busy.log tracked" grep -q "busy.log" "$TMP/agent.log"

write_every "$TMP/logs/busy.log" busy 12 0.02 &
writer=$!
# The pause starts at the first write read; give it a moment.
wait_for 30 "busy lines read" count_at_least s1 5
for g in 1 2 3; do
	write_lines "$TMP/logs/gen$g.log" "gen$g" 0 200
	sleep 1
	mv "$TMP/logs/gen$g.log" "$TMP/logs/gen$g.old"
	sleep 1
done
wait "$writer" || fail "the writer failed"
set -- "$TMP/logs/busy.log" "$TMP"/logs/gen*.old
await_records s1 60 "$@"
stop_agent
check_records s1 "$@"
pass
