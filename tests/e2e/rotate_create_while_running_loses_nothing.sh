#!/bin/sh
# logrotate `create` (rename app.log to app.log.1, create a new app.log)
# four times while a writer appends continuously and the agent runs with
# filePattern naming only the live file: every line of every generation
# arrives exactly once and in file order.  Rotations come while the agent is
# still behind, so renamed files must be finished through their open
# descriptors (R1).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/rotate_lib.sh"

start_server --stream s1 --latency-ms 50
mkdir -p "$TMP/logs"
lr_conf "$TMP/logs/app.log {
	rotate 5
	create 0644 root root
	nocompress
}"
write_conf "$TMP/agent.ini"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/app.log" "ordered = true" \
    "rescanIntervalMillis = 1000"

writer_start "$TMP/logs/app.log" c
start_agent "$TMP/agent.ini"
wait_for 30 "the first records" count_at_least s1 1
next=0
behind=0
for gen in 1 2 3 4; do
	next=$(( next + 6000 ))
	# One rotation is made to come while the agent is behind: the
	# endpoint stops answering first, so the agent cannot keep up however
	# fast it is against the writer on this machine.
	if [ "$gen" = 2 ]; then faults '{"outage": true}'; fi
	wait_for 60 "$next lines written (generation $gen)" \
	    writer_at_least "$next"
	lr_rotate
	[ "$(records_of s1)" -lt "$next" ] && behind=$(( behind + 1 ))
	if [ "$gen" = 2 ]; then faults '{"outage": false}'; fi
done
wait_for 60 "lines in the last generation" writer_at_least $(( next + 3000 ))
writer_stop
[ -s "$TMP/logs/app.log.4" ] || fail "logrotate did not keep 4 generations"
[ "$behind" -gt 0 ] || fail "no rotation came while the agent was behind"

set -- "$TMP/logs/app.log.4" "$TMP/logs/app.log.3" "$TMP/logs/app.log.2" \
    "$TMP/logs/app.log.1" "$TMP/logs/app.log"
[ "$(lines_in "$@")" = "$(writer_count)" ] ||
	fail "the generations do not hold every written line"
await_records s1 30 "$@"
stop_agent
check_records s1 "$@"
pass
