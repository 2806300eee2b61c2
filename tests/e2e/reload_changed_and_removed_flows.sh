#!/bin/sh
# A reload that changes one flow and removes another, both with a file
# deleted while open and unread (an outage holds everything back):
# the changed flow hands its open files, by device and inode and with their
# offsets, to its successor, which reads the deleted file on through the
# same descriptor; the removed flow spools its deleted file before it goes
# (issue 20, parts 1 and 2), and the spool is shipped first when a later
# reload adds the flow back.  One line names what was kept, changed, added
# and removed.  Every line arrives once.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/rotate_lib.sh"

log_has() { grep -q -- "$1" "$TMP/agent.log"; }
reloads_at_least() {
	[ "$(grep -c 'configuration reloaded' "$TMP/agent.log")" -ge "$1" ]
}
lost() {
	records verify --records "$TMP/records.jsonl" --stream "$1" \
	    --expect "$2" 2>/dev/null | sed -n 's/.*missing \([0-9]*\),.*/\1/p'
}
once() {
	records verify --records "$TMP/records.jsonl" --stream "$1" \
	    --expect "$2" || fail "stream $1: lines missing or duplicated"
}
must() {
	if [ "${E2E_MEASURE:-0}" = 1 ]; then
		("$@") || echo "MEASURE: failed: $*"
	else
		"$@"
	fi
}
spooled() { ls "$TMP/spool" 2>/dev/null | grep -c "\.spool$" || true; }
spool_empty() { [ "$(spooled)" = 0 ]; }
# conf FILE [flows...]: a with maxBufferAgeMillis = AGE_A, then b if asked.
conf() {
	_f=$1; shift
	write_conf "$_f" "$spool_key"
	add_flow "$_f" a s1 "$TMP/logs/a/*.log" "rescanIntervalMillis = 200" \
	    "maxBufferAgeMillis = $AGE_A"
	[ "${1:-}" = b ] && add_flow "$_f" b s2 "$TMP/logs/b/*.log" \
	    "rescanIntervalMillis = 200"
	return 0
}

spool_key="spoolDirectory = $TMP/spool"
[ "${E2E_MEASURE:-0}" = 1 ] && spool_key="; $spool_key"
start_server --stream s1 --stream s2 --outage
mkdir -p "$TMP/logs/a" "$TMP/logs/b"
AGE_A=200 conf "$TMP/agent.ini" b
write_lines "$TMP/a.expect" a 0 1500
write_lines "$TMP/b.expect" b 0 1200
cp "$TMP/a.expect" "$TMP/logs/a/one.log"
cp "$TMP/b.expect" "$TMP/logs/b/one.log"
start_agent "$TMP/agent.ini"
pid=$AGENT_PID
wait_for 30 "the agent to open a/one.log" agent_fd_to "logs/a/one.log"
wait_for 30 "the agent to open b/one.log" agent_fd_to "logs/b/one.log"
wait_for 30 "a request of each flow in the outage" sh -c \
    "grep -q 'DescribeStream \[s1\] failed' '$TMP/agent.log' &&
     grep -q 'DescribeStream \[s2\] failed' '$TMP/agent.log'"
rm "$TMP/logs/a/one.log" "$TMP/logs/b/one.log"

# Flow a changed, flow b removed.
AGE_A=300 conf "$TMP/new.ini"
mv "$TMP/new.ini" "$TMP/agent.ini"
kill -HUP "$pid"
wait_for 30 "the reload" reloads_at_least 1
must log_has "reload: kept \[\], changed \[a (maxBufferAgeMillis)\], added \[\], removed \[b\]"
must log_has "\[a\] .*a/one.log (inode [0-9]*) handed over at offset 0 (deleted; reading it to the end)"
must agent_fd_to "a/one.log (deleted)"
size=$(wc -c <"$TMP/b.expect")
must log_has "\[b\] .*b/one.log (inode [0-9]*) was deleted with $size bytes unread: spooled $size of them"
must test "$(spooled)" = 1
faults '{"outage": false}'
await_records s1 60 "$TMP/a.expect"
echo "changed flow (1,500 lines deleted in an outage, SIGHUP): lost $(lost s1 "$TMP/a.expect")"
must once s1 "$TMP/a.expect"

# Flow b added back: its spool is shipped, then removed.
AGE_A=300 conf "$TMP/new.ini" b
mv "$TMP/new.ini" "$TMP/agent.ini"
kill -HUP "$pid"
wait_for 30 "the second reload" reloads_at_least 2
must log_has "reload: kept \[a\], changed \[\], added \[b\], removed \[\]"
await_records s2 60 "$TMP/b.expect"
echo "removed flow (1,200 lines deleted in an outage, SIGHUP, added back): lost $(lost s2 "$TMP/b.expect")"
must once s2 "$TMP/b.expect"
must wait_for 30 "the spool file to be removed" spool_empty
[ "$AGENT_PID" = "$pid" ] && kill -0 "$pid" || fail "the agent is gone"
stop_agent
must once s1 "$TMP/a.expect"
no_secret_in "$TMP/agent.log"
pass
