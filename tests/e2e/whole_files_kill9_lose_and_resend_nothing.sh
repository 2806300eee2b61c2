#!/bin/sh
# SIGKILL in the middle of whole-file flows: one file is half uploaded
# (requests in flight: the endpoint answers after 3 s), another is
# delivered, marked complete and saved, but not yet cleaned up (its
# directory is made unwritable, so the rename fails, deterministically).
# After the restart the first resumes from its committed offset and is
# renamed once delivered, the second is renamed at start without a record
# sent again; nothing is lost, nothing is renamed unread, and the only
# duplicates are the records that were in flight: at most
# maxInFlightRequests x maxBufferSizeRecords (4 x 500).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

start_server --stream s1 --stream s2
mkdir -p "$TMP/big" "$TMP/small"
write_lines "$TMP/big/big.csv" b 0 20000
write_lines "$TMP/small/small.csv" s 0 300
printf 's last-without-delimiter' >>"$TMP/small/small.csv"
cp "$TMP/big/big.csv" "$TMP/big.orig"
cp "$TMP/small/small.csv" "$TMP/small.orig"
{ cat "$TMP/small.orig"; echo; } >"$TMP/small.expect"
unwritable "$TMP/small"

# A crash's restart waits for requests that may still land, at most
# socketTimeOutSeconds: 5 s keeps the test short.
write_conf "$TMP/agent.ini" "socketTimeOutSeconds = 5"
whole="isFileAppendable = false
maxFileCheckingMillis = 300
rescanIntervalMillis = 300
maxInFlightRequests = 4
maxBufferSizeRecords = 500"
add_flow "$TMP/agent.ini" big s1 "$TMP/big/*.csv" "$whole"
add_flow "$TMP/agent.ini" small s2 "$TMP/small/*.csv" "$whole"

saved_offset() {
	"$PYTHON3" - "$TMP/state/state.json" "$top_srcdir/tests" "$1" <<'PY'
import sys
sys.path.insert(0, sys.argv[2])
import state_file
try:
    e = state_file.entries(sys.argv[1])
except OSError:
    e = []
print(max([x["offset"] for x in e if x["path"].endswith(sys.argv[3])] +
          [0]))
PY
}
big_progress_saved() { [ "$(saved_offset big.csv)" -gt 0 ]; }

small_durable() {
	grep -q "delivered, but cannot rename .*small/small.csv" "$TMP/agent.log"
}

faults '{"put_latency_ms": 3000}'
start_agent "$TMP/agent.ini"
wait_for 60 "small.csv delivered and its rename failed" small_durable
wait_for 60 "big.csv's first acknowledgements saved" big_progress_saved
wait_for 30 "requests in flight" endpoint_busy
kill -9 "$AGENT_PID"
wait "$AGENT_PID" 2>/dev/null || true
AGENT_PID=
before=$(records count --records "$TMP/records.jsonl" --stream s1)
echo "killed with $before records of big.csv acknowledged"
[ "$before" -lt 20000 ] || fail "big.csv finished before the kill"
[ -f "$TMP/big/big.csv" ] || fail "big.csv renamed before delivery"
[ -f "$TMP/small/small.csv" ] || fail "small.csv renamed in an unwritable dir"
records verify --records "$TMP/records.jsonl" --stream s2 \
    --expect "$TMP/small.expect" || fail "small.csv before the restart"

writable "$TMP/small"
faults '{"put_latency_ms": 0}'
start_agent "$TMP/agent.ini"
cleaned() {
	[ -f "$TMP/big/big.csv.COMPLETED" ] && [ ! -e "$TMP/big/big.csv" ] &&
	    [ -f "$TMP/small/small.csv.COMPLETED" ] &&
	    [ ! -e "$TMP/small/small.csv" ]
}
wait_for 120 "both files delivered and renamed" cleaned
stop_agent
# The requests abandoned in flight still complete at the endpoint.
wait_for 30 "the endpoint to finish the abandoned requests" endpoint_idle
cmp -s "$TMP/big/big.csv.COMPLETED" "$TMP/big.orig" || fail "big.csv changed"
cmp -s "$TMP/small/small.csv.COMPLETED" "$TMP/small.orig" ||
	fail "small.csv changed"
# small.csv: exactly once, nothing sent again after the restart.
records verify --records "$TMP/records.jsonl" --stream s2 \
    --expect "$TMP/small.expect" || fail "small.csv was sent again"
grep -q "1 delivered file to clean up" "$TMP/agent.log" ||
	fail "the restart did not take up small.csv as delivered"
out=$(records verify --records "$TMP/records.jsonl" --stream s1 \
    --expect "$TMP/big.orig" --allow-duplicates) ||
	fail "big.csv lost records: $out"
dups=$(echo "$out" | sed -n 's/.* duplicated \([0-9]*\),.*/\1/p')
echo "big.csv: $out"
[ -n "$dups" ] || fail "cannot read the duplicate count"
[ "$dups" -le 2000 ] || fail "$dups duplicates, more than 4 x 500"
pass
