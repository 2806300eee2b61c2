#!/bin/sh
# data.compress.enabled and data.encrypt.enabled, as the DIS SDK does them:
# every record the agent ships (in lz4 bodies, body.compress still
# applying) is in the SDK's wire format and decodes, by an independent
# reader that the SDK's own vectors check first (tests/sdk_records.py), to
# a line of the file; read and verify undo both with the same keys, from
# the systemd credential data.password; a record cut to the record cap
# stays under it once encoded; the wrong password gives one error line
# per record, naming partition and sequence number, and read goes on;
# records the SDK itself made (the vectors' wire bytes, put by a signed
# PutRecords) read back as their plain data, including those the SDK's
# own reader cannot decode and those of its 1.3.15 GCM scheme.  The password never appears in a log.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

VECTORS=$top_srcdir/tests/data/sdk-record-codecs.txt
PW='data-password-123'
sdk() { "$PYTHON3" "$top_srcdir/tests/sdk_records.py" "$@"; }

start_server --stream s1:COMMON:2 --stream s2:COMMON:1 --stream s3:COMMON:1
mkdir -p "$TMP/logs" "$TMP/big" "$TMP/creds"
write_lines "$TMP/logs/x.log" x 0 600
# Lines that snappy shrinks and lines it cannot (random hex), and one
# far over what fits a record of 4096 bytes once encrypted.
"$PYTHON3" - "$TMP/big/b.log" "$E2E_SEED" <<'PY'
import random, sys
rnd = random.Random(int(sys.argv[2]))
with open(sys.argv[1], "w") as f:
    for i in range(50):
        f.write("b %04d %s\n" % (i, "%x" % rnd.getrandbits(400)))
    f.write("long " + "".join("%x" % rnd.getrandbits(4)
                              for _ in range(20000)) + "\n")
    f.write("after the long line\n")
PY
printf '%s\n' "$PW" >"$TMP/creds/data.password"
chmod 600 "$TMP/creds/data.password"
export CREDENTIALS_DIRECTORY="$TMP/creds"
write_conf "$TMP/agent.ini" "data.compress.enabled = true" \
    "data.encrypt.enabled = true" "body.compress.enabled = true"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/*.log"
add_flow "$TMP/agent.ini" big s3 "$TMP/big/*.log" "maxBufferSizeBytes = 4096" \
    "ordered = true"
"$DISAGENT" -c "$TMP/agent.ini" --once >"$TMP/agent.log" 2>&1 ||
	fail "--once exited $?"
stat_of put_by_encoding | grep -q "'lz4'" || fail "no lz4 body arrived"

# What went on the wire is the SDK's, and decodes to the lines.
sdk check --vectors "$VECTORS" --records "$TMP/records.jsonl" --stream s1 \
    --password "$PW" --compress --expect "$TMP/logs/x.log" ||
	fail "the records shipped are not the SDK's snappy then encryption"
# Under the record cap once encoded, the long line cut to fit.
"$PYTHON3" - "$TMP/records.jsonl" <<'PY' || fail "a record over 4096 bytes"
import base64, json, sys
sizes = [len(base64.b64decode(json.loads(l)["data"]))
         for l in open(sys.argv[1]) if json.loads(l)["stream"] == "s3"]
assert len(sizes) == 52 and max(sizes) <= 4096, (len(sizes), max(sizes))
PY

# read and verify with the same keys.
read_s() { "$DISAGENT" read -c "$TMP/agent.ini" "$@"; }
read_s s1 >"$TMP/got" 2>"$TMP/err" || fail "read exited $?: $(cat "$TMP/err")"
sort "$TMP/got" | cmp -s - "$TMP/logs/x.log" || fail "read does not give the lines"
[ ! -s "$TMP/err" ] || fail "read wrote to stderr: $(cat "$TMP/err")"
read_s s3 >"$TMP/got3" || fail "read s3 exited $?"
head -50 "$TMP/big/b.log" | cmp -s - "$(head -50 "$TMP/got3" >"$TMP/h"; echo "$TMP/h")" ||
	fail "read s3: the short lines differ"
long=$(sed -n 51p "$TMP/got3")
[ "${#long}" -gt 500 ] || fail "the long line is ${#long} bytes"
grep -q "^$long" "$TMP/big/b.log" || fail "the long line is not a cut of the line"
[ "$(sed -n 52p "$TMP/got3")" = "after the long line" ] || fail "no line after the long one"
"$DISAGENT" verify -c "$TMP/agent.ini" "$TMP/logs/x.log" "$TMP/big/b.log" \
    >"$TMP/verify" 2>&1 || fail "verify: $(cat "$TMP/verify")"
grep -q "x.log (flow app, stream s1): 600 records, 600 found, 0 missing" \
    "$TMP/verify" || fail "verify: $(cat "$TMP/verify")"
grep -q "b.log (flow big, stream s3): 52 records, 52 found, 0 missing" \
    "$TMP/verify" || fail "verify: $(cat "$TMP/verify")"

# Another password: an error line per record, and read goes on.
printf 'not-the-password\n' >"$TMP/creds/data.password"
rc=0; read_s s1 --partition 0 >"$TMP/bad" 2>"$TMP/err" || rc=$?
[ "$rc" = 1 ] || fail "read with another password exited $rc, not 1"
[ ! -s "$TMP/bad" ] || fail "read with another password printed records"
n0=$(records dump --records "$TMP/records.jsonl" --stream s1 \
    --partition shardId-0000000000 | wc -l)
# (CBC's padding lets about one wrong password in 256 through: that
# record's garbage then does not uncompress, or claims a length over the
# record limit.)
[ "$(grep -c '^disagent read: partition shardId-0000000000 sequence number [0-9]*: \(does not \(decrypt\|uncompress\)\|too large once uncompressed\)' "$TMP/err")" = "$n0" ] ||
	fail "not one error line per record: $(head -3 "$TMP/err")"
grep -q "^disagent read: partition shardId-0000000000 sequence number $((n0 - 1)): " "$TMP/err" ||
	fail "read did not go on to the last record"
grep -q "^disagent read: $n0 records could not be decoded$" "$TMP/err" ||
	fail "no count of the records not decoded"

# Records the SDK made: plain data back, byte for byte (JSON lines carry
# binary data as base64), among them those its own reader mangles.
printf '%s\n' "abc" >"$TMP/creds/data.password"
sdk put --port "$PORT" --ca "$TMP/ca/ca.pem" --ak "$E2E_AK" --sk "$E2E_SK" \
    --project-id "$E2E_PID" --stream s2 --vectors "$VECTORS" \
    --password-hex 616263 \
    --kinds snappy+encrypt,snappy+gen,gcm1315-snappy+encrypt,gcm1315-snappy+gen \
    --expect "$TMP/sdk-both" || fail "PutRecords of the SDK's records"
read_s s2 --format json >"$TMP/json" 2>"$TMP/err" ||
	fail "read of the SDK's records exited $?: $(cat "$TMP/err")"
"$PYTHON3" -c 'import json, sys
for l in open(sys.argv[1]): print(json.loads(l)["data"])' "$TMP/json" |
	cmp -s "$TMP/sdk-both" - || fail "the SDK's records do not read back"
[ "$(wc -l <"$TMP/sdk-both")" = 8 ] || fail "not the 8 SDK records"
# And encryption alone, the SDK's lines read as lines.
sed -i '/^data.compress.enabled/d' "$TMP/agent.ini"
control POST /_test/streams '{"name": "s4", "partitions": 1}' >/dev/null
sdk put --port "$PORT" --ca "$TMP/ca/ca.pem" --ak "$E2E_AK" --sk "$E2E_SK" \
    --project-id "$E2E_PID" --stream s4 --vectors "$VECTORS" \
    --password-hex 616263 --kinds encrypt,gen,gcm1315-encrypt,gcm1315-gen \
    --expect "$TMP/sdk-enc" ||
	fail "PutRecords of the SDK's encrypted records"
read_s s4 --format json >"$TMP/json4" || fail "read s4 exited $?"
"$PYTHON3" -c 'import json, sys
for l in open(sys.argv[1]): print(json.loads(l)["data"])' "$TMP/json4" |
	cmp -s "$TMP/sdk-enc" - || fail "the SDK's encrypted records do not read back"

for f in "$TMP/agent.log" "$TMP/server.log" "$TMP/err"; do
	grep -q -- "$PW" "$f" && fail "the password appears in $f"
done
[ "$(stat_of auth_failures)" = 0 ] || fail "the endpoint rejected signatures"
pass
