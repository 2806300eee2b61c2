#!/bin/sh
# body.serialize.type = protobuf, plain and with lz4 on top: the endpoint
# verifies the signature over the bytes received, decodes the protobuf
# PutRecordsRequest and answers a protobuf PutRecordsResult; with 5% of
# records refused with DIS.4303, the partial failures are decoded and the
# refused records resent alone, and every line -- text, and bytes of every
# value but the delimiter -- arrives exactly once.  Every PutRecords was
# protobuf, and the uncompressed bodies are far smaller than base64 JSON.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

start_server --stream s1 --stream s2 --rec-4303 0.05
mkdir -p "$TMP/a" "$TMP/b"
write_lines "$TMP/a/app.log" pa 0 20000
# Lines holding every byte value but \n (and \r, which a line may not end
# with) -- bytes JSON would have to escape and protobuf carries as they are.
"$PYTHON3" - "$TMP/a/app.log" <<'PY'
import sys
body = bytes(b for b in range(256) if b not in (10, 13))
with open(sys.argv[1], "ab") as f:
    for i in range(50):
        f.write(b"bin %02d " % i + body[i:] + body[:i] + b"\n")
PY
write_lines "$TMP/b/app.log" pb 0 20000

for v in pb pblz4; do
	write_conf "$TMP/$v.ini" "body.serialize.type = protobuf"
	sed -i "s|^checkpointFile = .*|checkpointFile = $TMP/state/$v.json|" \
	    "$TMP/$v.ini"
done
echo "body.compress.enabled = true" >>"$TMP/pblz4.ini"
echo "body.compress.type = lz4" >>"$TMP/pblz4.ini"
add_flow "$TMP/pb.ini" a s1 "$TMP/a/*.log" \
    "retryInitialBackoffMillis = 50" "retryMaxBackoffMillis = 500"
add_flow "$TMP/pblz4.ini" b s2 "$TMP/b/*.log" \
    "retryInitialBackoffMillis = 50" "retryMaxBackoffMillis = 500"
"$DISAGENT" -t -c "$TMP/pb.ini" >/dev/null ||
	fail "disagent -t rejects body.serialize.type = protobuf"

"$DISAGENT" -c "$TMP/pb.ini" --once >"$TMP/agent.log" 2>&1 ||
	fail "protobuf --once"
plain_decoded=$(stat_of put_bytes_decoded)
"$DISAGENT" -c "$TMP/pblz4.ini" --once >>"$TMP/agent.log" 2>&1 ||
	fail "protobuf + lz4 --once"

records verify --records "$TMP/records.jsonl" --stream s1 \
    --expect "$TMP/a/app.log" || fail "protobuf flow"
records verify --records "$TMP/records.jsonl" --stream s2 \
    --expect "$TMP/b/app.log" || fail "protobuf + lz4 flow"
[ "$(stat_of auth_failures)" = 0 ] || fail "signatures over protobuf bodies rejected"
if grep -q "unparsable reply" "$TMP/agent.log"; then
	fail "the agent could not parse a protobuf reply"
fi

puts=$(stat_of put_requests)
types=$(stat_of put_by_content_type)
encodings=$(stat_of put_by_encoding)
refused=$(stat_of records_failed_by_code)
echo "PutRecords: $puts; by content type: $types; by encoding: $encodings"
echo "records refused: $refused"
[ "$types" = "{'application/x-protobuf': $puts}" ] ||
	fail "not every PutRecords was application/x-protobuf"
echo "$encodings" | grep -q "'lz4'" || fail "no lz4 request arrived"
echo "$refused" | grep -q "'DIS.4303'" ||
	fail "the endpoint refused no record: partial failures untested"

# Base64 JSON would take over 4/3 of the bytes read (plus its syntax);
# protobuf adds a few bytes per record, and the resent records.
size=$(wc -c <"$TMP/a/app.log")
echo "protobuf bytes sent: $plain_decoded for $size bytes of lines"
[ $((plain_decoded * 2)) -lt $((size * 3)) ] ||
	fail "protobuf bodies are not smaller than base64 would allow"
no_secret_in "$TMP/agent.log"
pass
