#!/bin/sh
# disagent --import-yml carries the DIS Agent's dataEncryptEnabled and
# dataPassword (encrypted with encrypt.key, as the DIS Agent keeps it) and
# data.compress.enabled over: the agent.ini it writes ships records in the
# SDK's snappy-then-encryption format (checked by tests/sdk_records.py
# against the SDK's vectors), read gives the lines back, and neither the
# notes nor the agent's log show the password.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

start_server --stream s1:COMMON:2
mkdir -p "$TMP/logs"
write_lines "$TMP/logs/x.log" y 0 300
printf 'yml-key\n' >"$TMP/key"
printf 'yml-data-Pass-1' | "$DISAGENT" encrypt --key-file "$TMP/key" \
    >"$TMP/pw.enc" 2>/dev/null || fail "disagent encrypt exited $?"
cat >"$TMP/agent.yml" <<EOF
region: cn-north-1
ak: $E2E_AK
sk: $E2E_SK
projectId: $E2E_PID
endpoint: https://127.0.0.1:$PORT
dataEncryptEnabled: true
dataPassword: $(cat "$TMP/pw.enc")
data.compress.enabled: true
flows:
  - DISStream: s1
    filePattern: $TMP/logs/*.log
    maxBufferAgeMillis: 200
EOF
"$DISAGENT" --import-yml "$TMP/agent.yml" >"$TMP/out.ini" 2>"$TMP/notes" ||
	fail "--import-yml exited $?: $(cat "$TMP/notes")"
grep -qx 'data.encrypt.enabled = true' "$TMP/out.ini" ||
	fail "dataEncryptEnabled not carried over: $(cat "$TMP/out.ini")"
grep -qx "data.password = $(cat "$TMP/pw.enc")" "$TMP/out.ini" ||
	fail "dataPassword not carried over as it was"
grep -qx 'data.compress.enabled = true' "$TMP/out.ini" ||
	fail "data.compress.enabled not carried over"
grep -q 'data' "$TMP/notes" && fail "a note about the codec keys: $(cat "$TMP/notes")"
# The test endpoint's CA and a state file of the test's own.
sed -i "/^\[agent\]$/a caFile = $TMP/ca/ca.pem\\
checkpointFile = $TMP/state/state.json" "$TMP/out.ini"
chmod 600 "$TMP/out.ini"
export DIS_ENCRYPT_KEY=yml-key
"$DISAGENT" -t -c "$TMP/out.ini" >"$TMP/t.out" 2>&1 ||
	fail "-t: $(cat "$TMP/t.out")"
"$DISAGENT" -c "$TMP/out.ini" --once >"$TMP/agent.log" 2>&1 ||
	fail "--once exited $?"
"$PYTHON3" "$top_srcdir/tests/sdk_records.py" check \
    --vectors "$top_srcdir/tests/data/sdk-record-codecs.txt" \
    --records "$TMP/records.jsonl" --stream s1 --password yml-data-Pass-1 \
    --compress --expect "$TMP/logs/x.log" ||
	fail "the records are not the SDK's snappy then encryption"
"$DISAGENT" read -c "$TMP/out.ini" s1 | sort | cmp -s - "$TMP/logs/x.log" ||
	fail "read with the imported agent.ini does not give the lines"
for f in "$TMP/notes" "$TMP/agent.log" "$TMP/t.out"; do
	grep -q 'yml-data-Pass-1' "$f" && fail "the password appears in $f"
done
pass
