#!/bin/sh
# A 200,000-line file is deleted shortly after the agent starts, with a slow
# endpoint, so most of it is unread: it is read to its end through the open
# descriptor, over many rescans, and every line arrives once, in order
# (R1, R7).  Then the descriptor is closed: a deleted file is not held open
# once its bytes are committed.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/rotate_lib.sh"

start_server --stream s1 --latency-ms 200
mkdir -p "$TMP/logs"
write_lines "$TMP/expect.log" del 0 200000
cp "$TMP/expect.log" "$TMP/logs/app.log"
write_conf "$TMP/agent.ini"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/*.log" "ordered = true" \
    "rescanIntervalMillis = 200"

start_agent "$TMP/agent.ini"
wait_for 30 "the first records" count_at_least s1 1
rm "$TMP/logs/app.log"
# Ten rescans or more with the file deleted and mostly unread.
wait_progress 3
[ "$(records_of s1)" -lt 100000 ] || fail "the file was read too soon"
agent_fd_to "app.log (deleted)" ||
	fail "the agent closed the deleted file with bytes unread"
faults '{"latency_ms": 0}'

await_records s1 30 "$TMP/expect.log"
wait_for 20 "the deleted file to be closed" \
    sh -c "! ls -l /proc/$AGENT_PID/fd | grep -q 'app.log (deleted)'"
stop_agent
check_records s1 "$TMP/expect.log"
pass
