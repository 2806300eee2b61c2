#!/bin/sh
# watchMode = POLL (R9): no inotify at all, only the rescan, and still
#  - flow "create": logrotate `create` twice while a writer appends
#    continuously: every line of every generation arrives once, in order;
#  - flow "trunc": logrotate `copytruncate`, then fewer lines; then a copy,
#    truncation and refill past the old size between two polls (the agent
#    held with SIGSTOP): the copies are not resent, the new lines arrive
#    whole from the start of the file.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/rotate_lib.sh"

start_server --stream s1 --stream s2 --latency-ms 20
mkdir -p "$TMP/create" "$TMP/trunc"
lr_conf "$TMP/create/app.log {
	rotate 5
	create 0644 root root
	nocompress
}"
lr_conf "$TMP/trunc/app.log {
	rotate 5
	copytruncate
	nocompress
}" "$TMP/lr-trunc.conf"
write_lines "$TMP/trunc/app.log" t0 0 20000
write_conf "$TMP/agent.ini"
add_flow "$TMP/agent.ini" create s1 "$TMP/create/app.log" "ordered = true" \
    "watchMode = POLL" "rescanIntervalMillis = 300"
add_flow "$TMP/agent.ini" trunc s2 "$TMP/trunc/app.log" "ordered = true" \
    "watchMode = POLL" "rescanIntervalMillis = 300"
also_on_exit '[ -n "$AGENT_PID" ] && kill -CONT "$AGENT_PID" 2>/dev/null'

writer_start "$TMP/create/app.log" c
start_agent "$TMP/agent.ini"
wait_for 30 "the first records" count_at_least s1 1
if agent_fd_to "anon_inode:inotify"; then
	fail "the agent uses inotify with watchMode = POLL"
fi
wait_for 60 "6,000 lines written" writer_at_least 6000
lr_rotate
# Polling sees only what stays at a matching path until the next poll: a
# generation renamed away sooner was never app.log to the agent (seen on a
# slow machine, where the first rotation came so late that the second
# followed it within 300 ms).  So the next rotation waits for the agent to
# track the new file, as it must with any poll interval.
new_ino=$(stat -c %i "$TMP/create/app.log")
wait_for 30 "the new app.log tracked" grep -q \
    "tracking $TMP/create/app.log (inode $new_ino)" "$TMP/agent.log"
wait_for 60 "12,000 lines written" writer_at_least 12000
lr_rotate
wait_for 60 "15,000 lines written" writer_at_least 15000
writer_stop
set -- "$TMP/create/app.log.2" "$TMP/create/app.log.1" "$TMP/create/app.log"
[ "$(lines_in "$@")" = "$(writer_count)" ] ||
	fail "the generations do not hold every written line"
await_records s1 30 "$@"

await_records s2 30 "$TMP/trunc/app.log"
count_at_least s2 20000 || fail "the first 20,000 lines did not arrive"
lr_rotate "$TMP/lr-trunc.conf"
write_lines "$TMP/trunc/app.log" t1 0 1000
await_records s2 30 "$TMP/trunc/app.log.1" "$TMP/trunc/app.log"
kill -STOP "$AGENT_PID"
lr_rotate "$TMP/lr-trunc.conf"
write_lines "$TMP/trunc/app.log" t2 0 3000
kill -CONT "$AGENT_PID"
await_records s2 30 "$TMP/trunc/app.log.2" "$TMP/trunc/app.log.1" \
    "$TMP/trunc/app.log"
wait_progress 2
stop_agent
check_records s1 "$TMP/create/app.log.2" "$TMP/create/app.log.1" \
    "$TMP/create/app.log"
check_records s2 "$TMP/trunc/app.log.2" "$TMP/trunc/app.log.1" \
    "$TMP/trunc/app.log"
pass
