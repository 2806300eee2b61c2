#!/bin/sh
# body.compress.enabled with lz4 and zstd: the endpoint verifies the
# signature over the compressed bytes, decodes them by their
# x-dis-*-content-length, and every line arrives exactly once; the bytes on
# the wire are a fraction of the JSON.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

start_server --stream s1 --stream s2
mkdir -p "$TMP/a" "$TMP/b"
write_lines "$TMP/a/app.log" lz 0 20000
write_lines "$TMP/b/app.log" zs 0 20000

for zip in lz4 zstd; do
	write_conf "$TMP/$zip.ini" "body.compress.enabled = true" \
	    "body.compress.type = $zip"
	sed -i "s|^checkpointFile = .*|checkpointFile = $TMP/state/$zip.json|" \
	    "$TMP/$zip.ini"
done
add_flow "$TMP/lz4.ini" a s1 "$TMP/a/*.log"
add_flow "$TMP/zstd.ini" b s2 "$TMP/b/*.log"
"$DISAGENT" -c "$TMP/lz4.ini" --once >"$TMP/agent.log" 2>&1 || fail "lz4 --once"
"$DISAGENT" -c "$TMP/zstd.ini" --once >>"$TMP/agent.log" 2>&1 || fail "zstd --once"

records verify --records "$TMP/records.jsonl" --stream s1 \
    --expect "$TMP/a/app.log" || fail "lz4 flow"
records verify --records "$TMP/records.jsonl" --stream s2 \
    --expect "$TMP/b/app.log" || fail "zstd flow"
[ "$(stat_of auth_failures)" = 0 ] || fail "signatures over compressed bodies rejected"
stats=$(stat_of put_by_encoding)
echo "requests by encoding: $stats"
echo "$stats" | grep -q "'lz4'" || fail "no lz4 request arrived"
echo "$stats" | grep -q "'zstd'" || fail "no zstd request arrived"
sent=$(stat_of put_bytes_sent)
decoded=$(stat_of put_bytes_decoded)
echo "bytes on the wire $sent for $decoded of JSON"
[ $((sent * 2)) -lt "$decoded" ] || fail "compression saved less than half"
pass
