#!/bin/sh
# A spool file the state file does not name yet (issue 36, item 5): the
# stop wrote it, then was killed (kill -9) or could not save the state.
# The spool file describes itself (a .desc beside it, written once its
# data is synced and before anything relies on it), so the next start
# adopts it instead of deleting it: every line arrives, none twice.  A
# spool file without a valid description is removed as before.
#
# The window between the spool and the save is made wide and certain: the
# state directory cannot be written (chattr +i), so the stop's save
# fails; the agent is killed with SIGKILL once the spool is described.
# Before: "spool: removing ... the state file does not name it", and
# the deleted file's 2,000 lines were lost.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/rotate_lib.sh"

log_has() { grep -q -- "$1" "$TMP/agent.log"; }
described() { ls "$TMP/spool/"*.spool.desc >/dev/null 2>&1; }
spool_empty() { [ -z "$(ls "$TMP/spool" 2>/dev/null)" ]; }
once() {
	_s=$1; shift
	_nf=$#
	for _f; do set -- "$@" --expect "$_f"; done
	shift "$_nf"
	records verify --records "$TMP/records.jsonl" --stream "$_s" "$@" ||
		fail "stream $_s: lines missing, duplicated or unexpected"
}

if [ "$(id -u)" != 0 ]; then
	echo "note: not root (chattr +i); the test is skipped"
	pass
	exit 0
fi
start_server --stream s1
mkdir -p "$TMP/logs"
# A crash's restart waits for requests that may still land, at most
# socketTimeOutSeconds: 5 s keeps the test short.
write_conf "$TMP/agent.ini" "spoolDirectory = $TMP/spool" \
    "socketTimeOutSeconds = 5"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/*.log" \
    "rescanIntervalMillis = 200" "ordered = true"

# Some lines delivered and saved, then an outage and a file deleted
# while open with 2,000 lines unread.
write_lines "$TMP/one.expect" one 0 300
cp "$TMP/one.expect" "$TMP/logs/one.log"
start_agent "$TMP/agent.ini"
wait_for 60 "300 records" count_at_least s1 300
off=$(wc -c <"$TMP/one.expect")
wait_for 30 "a save" grep -q "\"offset\":$off" "$TMP/state/state.json"
faults '{"outage": true}'
write_lines "$TMP/two.expect" two 0 2000
cp "$TMP/two.expect" "$TMP/logs/two.log"
wait_for 30 "the agent to open two.log" agent_fd_to "logs/two.log"
dropped() { [ "$(stat_of dropped)" -gt 0 ]; }
wait_for 30 "a request in the outage" dropped
rm "$TMP/logs/two.log"

# The stop: spooled and described, the state not saved, then SIGKILL.
unwritable "$TMP/state"
kill -TERM "$AGENT_PID"
# (A build without descriptions: until the agent gives up on its save.)
pid=$AGENT_PID
wait_for 30 "the spool file's description" sh -c \
    "ls '$TMP/spool/'*.spool.desc || ! kill -0 $pid"
kill -9 "$AGENT_PID" 2>/dev/null || true
wait "$AGENT_PID" 2>/dev/null || true
AGENT_PID=
writable "$TMP/state"
grep -q '"spool"' "$TMP/state/state.json" &&
	fail "the state file names the spool: the window was not hit"

# A spool file without a valid description is removed as before.
printf 'half' >"$TMP/spool/app-1-2-3.spool"

faults '{"outage": false}'
: >>"$TMP/agent.log"
start_agent "$TMP/agent.ini"
wait_for 60 "2,300 records" count_at_least s1 2300
wait_for 30 "the spool to be removed" spool_empty
stop_agent
log_has "spool: adopting .*app-.*\.spool" || fail "no line says the spool was adopted"
log_has "spool: removing .*app-1-2-3.spool" || fail "the undescribed spool file was not removed"
log_has "two.log.*is gone with" && fail "the spooled file is also reported gone"
once s1 "$TMP/one.expect" "$TMP/two.expect"
pass
