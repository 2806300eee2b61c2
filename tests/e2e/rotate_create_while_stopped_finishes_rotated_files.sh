#!/bin/sh
# The agent is stopped (SIGTERM) half-way through app.log, and logrotate
# `create` rotates three times while it is down, more lines being written
# before each rotation: app.log -> .1 -> .2 -> .3.  After a restart:
#  - flow "live" (filePattern names only app.log): the file it was reading,
#    now app.log.3 and no longer matched, is finished from its committed
#    offset, and the new app.log is read from 0.  app.log.1 and .2 were
#    created and rotated away while the agent was down, never matched its
#    pattern and are not in its state: they are not read.
#  - flow "wide" (filePattern app.log*, a separate directory): every line of
#    every surviving generation arrives.
# In both, each line exactly once, in file order.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/rotate_lib.sh"

start_server --stream s1 --stream s2 --latency-ms 40
mkdir -p "$TMP/live" "$TMP/wide"
lr_conf "$TMP/live/app.log $TMP/wide/app.log {
	rotate 5
	create 0644 root root
	nocompress
}"
write_lines "$TMP/live/app.log" g0 0 30000
write_lines "$TMP/wide/app.log" w0 0 30000
write_conf "$TMP/agent.ini"
add_flow "$TMP/agent.ini" live s1 "$TMP/live/app.log" "ordered = true"
add_flow "$TMP/agent.ini" wide s2 "$TMP/wide/app.log*" "ordered = true"

start_agent "$TMP/agent.ini"
wait_for 60 "some records of flow live" count_at_least s1 3000
wait_for 60 "some records of flow wide" count_at_least s2 3000
stop_agent
[ "$(records_of s1)" -lt 30000 ] || fail "flow live finished before the stop"
[ "$(records_of s2)" -lt 30000 ] || fail "flow wide finished before the stop"

for gen in 1 2 3; do
	lr_rotate
	write_lines "$TMP/live/app.log" "g$gen" 0 $(( gen * 1000 ))
	write_lines "$TMP/wide/app.log" "w$gen" 0 $(( gen * 1000 ))
done
[ -s "$TMP/live/app.log.3" ] || fail "logrotate did not keep 3 generations"

faults '{"latency_ms": 0}'
start_agent "$TMP/agent.ini"
await_records s1 30 "$TMP/live/app.log.3" "$TMP/live/app.log"
await_records s2 30 "$TMP/wide/app.log.3" "$TMP/wide/app.log.2" \
    "$TMP/wide/app.log.1" "$TMP/wide/app.log"
# Long enough for a wrongly read app.log.1 or .2 to show.
wait_progress 2
stop_agent
check_records s1 "$TMP/live/app.log.3" "$TMP/live/app.log"
check_records s2 "$TMP/wide/app.log.3" "$TMP/wide/app.log.2" \
    "$TMP/wide/app.log.1" "$TMP/wide/app.log"
pass
