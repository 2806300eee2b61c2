#!/bin/sh
# logrotate `copytruncate` while the agent runs (filePattern app.log, so the
# copies app.log.N are not matched):
#  1. the lines shipped before the copy are not sent again, and the lines
#     written after the truncation (fewer bytes than before) arrive;
#  2. the hard case (R6): the file is copied, truncated and refilled past
#     its old size before the agent looks again (the agent is held with
#     SIGSTOP meanwhile, so it cannot see the short file): only the new
#     lines arrive, whole, from the start of the file, nothing duplicated.
# Lines written between copy and truncate are an inherent loss of
# copytruncate, so the writer is quiet during each rotation.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/rotate_lib.sh"

start_server --stream s1
mkdir -p "$TMP/logs"
lr_conf "$TMP/logs/app.log {
	rotate 5
	copytruncate
	nocompress
}"
write_conf "$TMP/agent.ini"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/app.log" "ordered = true"
also_on_exit '[ -n "$AGENT_PID" ] && kill -CONT "$AGENT_PID" 2>/dev/null'

write_lines "$TMP/logs/app.log" t0 0 20000
start_agent "$TMP/agent.ini"
await_records s1 30 "$TMP/logs/app.log"
count_at_least s1 20000 || fail "the first 20,000 lines did not arrive"

# 1: copy, truncate, then fewer bytes than before.
lr_rotate
[ "$(lines_in "$TMP/logs/app.log.1")" = 20000 ] || fail "copy incomplete"
[ ! -s "$TMP/logs/app.log" ] || fail "app.log was not truncated"
write_lines "$TMP/logs/app.log" t1 0 1000
await_records s1 30 "$TMP/logs/app.log.1" "$TMP/logs/app.log"

# 2: copy, truncate and refill to three times the old size, unseen.
kill -STOP "$AGENT_PID"
lr_rotate
write_lines "$TMP/logs/app.log" t2 0 3000
kill -CONT "$AGENT_PID"
await_records s1 30 "$TMP/logs/app.log.2" "$TMP/logs/app.log.1" \
    "$TMP/logs/app.log"
# Long enough for a resent copy or a late duplicate to show.
wait_progress 2
stop_agent
check_records s1 "$TMP/logs/app.log.2" "$TMP/logs/app.log.1" \
    "$TMP/logs/app.log"
pass
