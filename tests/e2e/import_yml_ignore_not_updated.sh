#!/bin/sh
# --import-yml carries ignoreNotUpdatedFileSeconds as the DIS Agent reads
# it (SourceFile.java:132): without ignoreNotUpdatedFileEnabled: true it
# does nothing there, so it is dropped with a note, and a file last
# written two hours ago ships all its lines; with the switch on in a
# recursive flow it is carried, with a note saying what differs (disagent
# reads such a file from its end when it first sees it: only lines added
# later are sent), and the agent does what the note says.  bodySerializeType
# comes across as body.serialize.type.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

start_server --stream s1 --stream s2
mkdir -p "$TMP/a" "$TMP/b/sub" "$TMP/state"
write_lines "$TMP/a/old.log" a 0 100
write_lines "$TMP/b/sub/old.log" b 0 100
touch -d '2 hours ago' "$TMP/a/old.log" "$TMP/b/sub/old.log"
cat >"$TMP/agent.yml" <<EOF2
region: cn-north-1
ak: $E2E_AK
sk: $E2E_SK
projectId: $E2E_PID
endpoint: https://127.0.0.1:$PORT
bodySerializeType: protobuf
flows:
  - DISStream: s1
    filePattern: $TMP/a/*.log
    ignoreNotUpdatedFileEnabled: false
    ignoreNotUpdatedFileSeconds: 3600
  - DISStream: s2
    filePattern: $TMP/b/*.log
    directoryRecursionEnabled: true
    ignoreNotUpdatedFileEnabled: true
    ignoreNotUpdatedFileSeconds: 3600
EOF2
"$DISAGENT" --import-yml "$TMP/agent.yml" >"$TMP/out.ini" 2>"$TMP/notes" ||
	fail "--import-yml exited $?: $(cat "$TMP/notes")"
grep -q "agent.yml:11: dropped: ignoreNotUpdatedFileSeconds = 3600 (no effect in the DIS Agent either: only with ignoreNotUpdatedFileEnabled: true)" \
    "$TMP/notes" || fail "no note for the switched-off seconds: $(cat "$TMP/notes")"
grep -q "agent.yml:16: differs: ignoreNotUpdatedFileSeconds = 3600: a file not modified for that long is read from its end" \
    "$TMP/notes" || fail "no note for what differs: $(cat "$TMP/notes")"
[ "$(grep -c '^ignoreNotUpdatedFileSeconds = 3600$' "$TMP/out.ini")" = 1 ] ||
	fail "ignoreNotUpdatedFileSeconds carried $(grep -c '^ignoreNotUpdatedFileSeconds' "$TMP/out.ini") times, not once"
grep -qx "body.serialize.type = protobuf" "$TMP/out.ini" ||
	fail "bodySerializeType was not carried over"
if grep -q "not supported by disagent" "$TMP/notes"; then
	fail "a DIS Agent key is called unsupported: $(cat "$TMP/notes")"
fi

sed "s|^\[agent\]$|&\ncaFile = $TMP/ca/ca.pem\ncheckpointFile = $TMP/state/state.json|" \
    "$TMP/out.ini" >"$TMP/agent.ini"
chmod 600 "$TMP/agent.ini"
"$DISAGENT" -t -c "$TMP/agent.ini" >"$TMP/t.out" 2>&1 ||
	fail "the imported file does not pass -t: $(cat "$TMP/t.out")"
"$DISAGENT" --once -c "$TMP/agent.ini" >"$TMP/agent.log" 2>&1 ||
	fail "--once exited $?"
records verify --records "$TMP/records.jsonl" --stream s1 \
    --expect "$TMP/a/old.log" || fail "s1: the old file did not ship whole"
n=$(records count --records "$TMP/records.jsonl" --stream s2)
[ "$n" = 0 ] || fail "s2: $n records of a file the note says is read from its end"
# Lines added later are sent.
write_lines "$TMP/b/sub/old.log" b 100 110
"$DISAGENT" --once -c "$TMP/agent.ini" >>"$TMP/agent.log" 2>&1 ||
	fail "second --once exited $?"
tail -n 10 "$TMP/b/sub/old.log" >"$TMP/b.expect"
records verify --records "$TMP/records.jsonl" --stream s2 \
    --expect "$TMP/b.expect" || fail "s2: the lines added later"
[ "$(stat_of put_by_content_type | grep -c protobuf)" = 1 ] ||
	fail "the requests were not protobuf: $(stat_of put_by_content_type)"
pass
