#!/bin/sh
# kill -9 of an agent reading the journal loses nothing: 6,000 entries,
# the agent killed once 2,000 have arrived and a cursor is in the state
# file, a restart resumes after that cursor and every entry arrives.
# What may be sent twice is what was acknowledged after the last save
# (checkpointIntervalMillis) and what was in flight: at most
# maxInFlightRequests + 1 batches of the watermark, plus the save's
# delay -- never everything from the start.  The duplicates are printed.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/journal_lib.sh"

J=$TMP/journal
mkdir -p "$J"
journal_entries "$J/a.journal" app 0 6000 --expect "$TMP/app.exp"
start_server --stream s1
write_conf "$TMP/agent.ini"
add_journal_flow "$TMP/agent.ini" j s1 "$J" "maxBufferSizeRecords = 100"
# Slow replies, so the kill finds requests in flight.
faults '{"put_latency_ms": 40}'
start_agent "$TMP/agent.ini"
wait_for 60 "2,000 records and a saved cursor" sh -c \
    "[ \$(\"$PYTHON3\" \"$top_srcdir/tests/dis_records.py\" count --records \"$TMP/records.jsonl\" --stream s1) -ge 2000 ] && grep -q '\"cursor\":\"s=' \"$TMP/state/state.json\""
kill -9 "$AGENT_PID"
wait "$AGENT_PID" 2>/dev/null || true
AGENT_PID=
before=$(records count --records "$TMP/records.jsonl" --stream s1)
faults '{"put_latency_ms": 0}'
start_agent "$TMP/agent.ini"
wait_for 120 "every entry after the restart" sh -c \
    "\"$PYTHON3\" \"$top_srcdir/tests/dis_records.py\" verify --records \"$TMP/records.jsonl\" --stream s1 --expect \"$TMP/app.exp\" --allow-duplicates >/dev/null"
stop_agent
records verify --records "$TMP/records.jsonl" --stream s1 \
    --expect "$TMP/app.exp" --allow-duplicates >"$TMP/verify.out" ||
	fail "entries lost: $(cat "$TMP/verify.out")"
cat "$TMP/verify.out"
total=$(records count --records "$TMP/records.jsonl" --stream s1)
dups=$((total - 6000))
echo "received $before before the kill; $dups sent twice"
# Resumed from the saved cursor, not from the start.
[ "$dups" -lt "$before" ] || fail "$dups of $before records sent again: not resumed from the cursor"
pass
