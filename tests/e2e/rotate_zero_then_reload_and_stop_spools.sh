#!/bin/sh
# The real logrotate with `rotate 0` deletes the rotated generation at
# once, while the agent (held back by an outage) has read none of it: the
# agent's descriptor is the only way left to those lines.  A reload with
# agent.ini unchanged keeps that descriptor; the stop then spools the
# deleted generation's unread rest, and after the restart the spool is
# shipped first and removed: every line of both generations arrives once
# (issue 20).  The spool is in its default directory, beside checkpointFile.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/rotate_lib.sh"

log_has() { grep -q -- "$1" "$TMP/agent.log"; }
spooled() { ls "$TMP/state/spool" 2>/dev/null | grep -c "\.spool$" || true; }
spool_empty() { [ "$(spooled)" = 0 ]; }

start_server --stream s1 --outage
mkdir -p "$TMP/logs"
lr_conf "$TMP/logs/app.log {
	rotate 0
	create 0644 root root
	nocompress
}"
write_conf "$TMP/agent.ini"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/app.log" \
    "rescanIntervalMillis = 200"
write_lines "$TMP/gen1" g1 0 3000
cp "$TMP/gen1" "$TMP/logs/app.log"
start_agent "$TMP/agent.ini"
wait_for 30 "the agent to open app.log" agent_fd_to "logs/app.log"
wait_for 30 "a request in the outage" log_has "DescribeStream \[s1\] failed"
lr_rotate
[ -e "$TMP/logs/app.log.1" ] && fail "logrotate kept the old generation"
agent_fd_to "app.log.1 (deleted)" || agent_fd_to "app.log (deleted)" ||
	fail "the agent does not hold the deleted generation"
write_lines "$TMP/gen2" g2 0 1000
cat "$TMP/gen2" >>"$TMP/logs/app.log"

kill -HUP "$AGENT_PID"
wait_for 30 "the reload" log_has "configuration reloaded"
log_has "reload: kept \[app\]" || fail "the reload did not keep the flow"
kill -TERM "$AGENT_PID"
rc=0; wait "$AGENT_PID" || rc=$?
AGENT_PID=
[ "$rc" = 0 ] || fail "the agent exited $rc after SIGTERM"
log_has "was deleted with $(wc -c <"$TMP/gen1") bytes unread: spooled" ||
	fail "the deleted generation was not spooled"
[ "$(spooled)" = 1 ] || fail "no spool file"

faults '{"outage": false}'
start_agent "$TMP/agent.ini"
await_records s1 60 "$TMP/gen1" "$TMP/gen2"
wait_for 30 "the spool file to be removed" spool_empty
stop_agent
records verify --records "$TMP/records.jsonl" --stream s1 \
    --expect "$TMP/gen1" --expect "$TMP/gen2" ||
	fail "lines missing or sent twice"
pass
