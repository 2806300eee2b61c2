#!/bin/sh
# The spool of a clean stop resends nothing either (issue 20, parts 2 and
# 3): while 30% of records are throttled (DIS.4303), a file is deleted
# while the agent reads it, and SIGTERM comes with records acknowledged
# past its committed offset (behind a batch still being retried).  The
# spool copies the unread rest from the committed offset, and its state
# entry keeps the original's acknowledged spans (it keeps the original's
# offsets): after the restart the spool is shipped without them, and
# every line arrives exactly once.  (Without the spans in the spool's
# entry, what was acknowledged past the offset is sent again.)
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/rotate_lib.sh"

log_has() { grep -q -- "$1" "$TMP/agent.log"; }
spool_empty() { [ "$(ls "$TMP/spool" 2>/dev/null | grep -c .)" = 0 ]; }
all_arrived() {
	records verify --records "$TMP/records.jsonl" --stream s1 \
	    --expect "$TMP/one.expect" --allow-duplicates
}

start_server --stream s1:COMMON:2 --rec-4303 0.3 --latency-ms 20
mkdir -p "$TMP/logs"
write_conf "$TMP/agent.ini" "spoolDirectory = $TMP/spool"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/*.log" \
    "maxBufferSizeRecords = 100" "rescanIntervalMillis = 200" \
    "retryInitialBackoffMillis = 300" "retryMaxBackoffMillis = 600"
write_lines "$TMP/one.expect" one 0 6000
cp "$TMP/one.expect" "$TMP/logs/one.log"
start_agent "$TMP/agent.ini"
wait_for 30 "the agent to open the file" agent_fd_to "logs/one.log"
wait_for 60 "1000 records" count_at_least s1 1000
rm "$TMP/logs/one.log"
stop_agent
got=$(records count --records "$TMP/records.jsonl" --stream s1)
[ "$got" -lt 6000 ] || fail "the file was delivered before the stop"
log_has "one.log (inode [0-9]*) was deleted with [0-9]* bytes unread: spooled" ||
	fail "nothing was spooled"
grep -q '"spool"' "$TMP/state/state.json" || fail "no spool entry saved"
grep '"spool"' "$TMP/state/state.json" | grep -q '"acked"' ||
	fail "the spool's entry has no acknowledged spans (nothing to test)"
log_has "clean stop" || fail "the stop was not clean"
echo "stopped after $got records, spool entry: $(grep '"spool"' \
    "$TMP/state/state.json" | cut -c1-160)"

start_agent "$TMP/agent.ini"
wait_for 180 "every line" all_arrived
wait_for 30 "the spool removed" spool_empty
stop_agent
records verify --records "$TMP/records.jsonl" --stream s1 \
    --expect "$TMP/one.expect" ||
	fail "records differ from the lines written (see duplicated)"
pass
