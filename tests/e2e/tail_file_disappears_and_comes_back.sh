#!/bin/sh
# A file is moved out of the watched directory, grows there, stays away for
# many rescans (long enough to be finished and closed), and is moved back
# (same inode, same head) and grows again: its lines arrive exactly once and
# in order; neither the part sent before it left nor the part it grew while
# away is sent again.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/rotate_lib.sh"

start_server --stream s1
mkdir -p "$TMP/logs" "$TMP/parked"
write_lines "$TMP/logs/app.log" m0 0 5000
write_conf "$TMP/agent.ini"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/*.log" "ordered = true" \
    "rescanIntervalMillis = 200"

start_agent "$TMP/agent.ini"
await_records s1 30 "$TMP/logs/app.log"

mv "$TMP/logs/app.log" "$TMP/parked/app.log"
write_lines "$TMP/parked/app.log" m1 0 2000
await_records s1 30 "$TMP/parked/app.log"
wait_progress 3		# ten rescans or more while it is away

mv "$TMP/parked/app.log" "$TMP/logs/app.log"
write_lines "$TMP/logs/app.log" m2 0 1000
await_records s1 30 "$TMP/logs/app.log"
wait_progress 2		# long enough for a re-read to show
stop_agent
check_records s1 "$TMP/logs/app.log"
pass
