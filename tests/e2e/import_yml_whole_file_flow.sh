#!/bin/sh
# --import-yml carries a DIS Agent whole-file flow (isFileAppendable:
# false) over with its cleanup keys, instead of reporting them, and the
# result works: -t accepts it and the agent sends each file whole and moves
# it, as the DIS Agent would.  What means nothing in the DIS Agent either
# (cleanup keys of a tailing flow) is dropped with a note, and an
# upper-case IMMEDIATE (which the DIS Agent does not delete with) is not
# carried over.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

start_server --stream exports --stream batches --stream logs
mkdir -p "$TMP/in" "$TMP/done" "$TMP/batch" "$TMP/logs" "$TMP/state"
cat >"$TMP/agent.yml" <<EOF2
---
region: cn-north-1
ak: $E2E_AK
sk: $E2E_SK
projectId: $E2E_PID
endpoint: https://127.0.0.1:$PORT
flows:
  - DISStream: exports
    filePattern: $TMP/in/*.csv
    isFileAppendable: false
    deletePolicy: never
    fileMoveToDir: $TMP/done
    fileSuffix: .COMPLETED
    isIgnoreEmptyData: true
    maxFileCheckingMillis: 400
    fileComparator: NEWEST_FIRST
  - DISStream: batches
    filePattern: $TMP/batch/*.dat
    isFileAppendable: false
    deletePolicy: IMMEDIATE
    maxFileCheckingMillis: 400
  - DISStream: logs
    filePattern: $TMP/logs/*.log
    deletePolicy: immediate
    fileMoveToDir: /nonexistent
EOF2
"$DISAGENT" --import-yml "$TMP/agent.yml" >"$TMP/out.ini" 2>"$TMP/notes" ||
	fail "--import-yml exited $?: $(cat "$TMP/notes")"
for want in "isFileAppendable = false" "deletePolicy = never" \
    "fileMoveToDir = $TMP/done" "fileSuffix = .COMPLETED" \
    "isIgnoreEmptyData = true" "maxFileCheckingMillis = 400"; do
	grep -qxF "$want" "$TMP/out.ini" || fail "not carried over: $want"
done
grep -q "^; same in disagent: fileComparator = NEWEST_FIRST" "$TMP/out.ini" ||
	fail "no note for fileComparator"
grep -q "agent.yml:20: not carried over: deletePolicy = IMMEDIATE (the DIS Agent deletes only for immediate in lower case" \
    "$TMP/notes" || fail "no note for IMMEDIATE: $(cat "$TMP/notes")"
grep -q "agent.yml:24: dropped: deletePolicy = immediate (no effect in the DIS Agent either" \
    "$TMP/notes" || fail "no note for a tailing flow's deletePolicy"
grep -q "agent.yml:25: dropped: fileMoveToDir = /nonexistent" "$TMP/notes" ||
	fail "no note for a tailing flow's fileMoveToDir"
if grep -q "over: isFileAppendable" "$TMP/notes"; then
	fail "isFileAppendable is still reported: $(cat "$TMP/notes")"
fi

# The agent.yml knows no caFile; the test endpoint needs one.
sed "s|^\[agent\]$|&\ncaFile = $TMP/ca/ca.pem\ncheckpointFile = $TMP/state/state.json|" \
    "$TMP/out.ini" >"$TMP/agent.ini"
"$DISAGENT" -t -c "$TMP/agent.ini" >"$TMP/t.out" 2>&1 ||
	fail "the imported file does not pass -t: $(cat "$TMP/t.out")"
write_lines "$TMP/in/a.csv" a 0 100
printf 'b1\nb2 without delimiter' >"$TMP/batch/b.dat"
printf 'b1\nb2 without delimiter\n' >"$TMP/b.expect"
start_agent "$TMP/agent.ini"
wait_for 60 "a.csv moved" test -f "$TMP/done/a.csv"
wait_for 60 "b.dat delivered" grep -q "batch/b.dat delivered; renamed to" \
    "$TMP/agent.log"
stop_agent
[ -f "$TMP/batch/b.dat.COMPLETED" ] ||
	fail "b.dat was not renamed (IMMEDIATE is never, and the suffix applies)"
records verify --records "$TMP/records.jsonl" --stream exports \
    --expect "$TMP/done/a.csv" || fail "stream exports"
records verify --records "$TMP/records.jsonl" --stream batches \
    --expect "$TMP/b.expect" || fail "stream batches"
pass
