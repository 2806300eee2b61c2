#!/bin/sh
# logrotate `copytruncate` with copies the pattern matches (app.log*): each
# copy is recognised by the head the original had before its truncation and
# read only from where the original had got to, so nothing is sent twice
# (lessons R6) -- whether the agent sees the truncation before the copy
# (agent held with SIGSTOP through the rotation) or the copy first (the
# truncation comes once the agent has found the copy, the agent running).
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
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/app.log*" "ordered = true" \
    "rescanIntervalMillis = 500"
also_on_exit '[ -n "$AGENT_PID" ] && kill -CONT "$AGENT_PID" 2>/dev/null'

write_lines "$TMP/logs/app.log" m0 0 5000
start_agent "$TMP/agent.ini"
await_records s1 30 "$TMP/logs/app.log"

# 1: rotation unseen by the agent, with unread lines in the copy.
kill -STOP "$AGENT_PID"
write_lines "$TMP/logs/app.log" m1 0 2000
lr_rotate
write_lines "$TMP/logs/app.log" m2 0 500
kill -CONT "$AGENT_PID"
await_records s1 30 "$TMP/logs/app.log.1" "$TMP/logs/app.log"

# 2: the copy appears while the agent runs, the truncation a moment later.
write_lines "$TMP/logs/app.log" m3 0 1000
await_records s1 30 "$TMP/logs/app.log.1" "$TMP/logs/app.log"
cp "$TMP/logs/app.log" "$TMP/logs/app.log.copy"
# The copy is seen before the truncation: the scenario itself.  The agent
# says it holds the copy back (maybe still being written by cp, or
# waiting for the truncation).
held() { grep -q "logs/app.log.copy[ :].*holding it back" "$TMP/agent.log"; }
wait_for 30 "the agent to hold the copy back" held
: >"$TMP/logs/app.log"
write_lines "$TMP/logs/app.log" m4 0 300
await_records s1 30 "$TMP/logs/app.log.1" "$TMP/logs/app.log.copy" \
    "$TMP/logs/app.log"
copies() { [ "$(grep -c "is a copy of .* taken before its truncation" "$TMP/agent.log")" = 2 ]; }
wait_for 30 "both copies recognised" copies
wait_progress 2
stop_agent
check_records s1 "$TMP/logs/app.log.1" "$TMP/logs/app.log.copy" \
    "$TMP/logs/app.log"
pass
