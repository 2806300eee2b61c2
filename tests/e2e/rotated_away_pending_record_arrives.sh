#!/bin/sh
# A file rotated away (renamed out of the flow's pattern) while a record
# still waits in the framer for its end: a container's unfinished partial
# line (Docker's json-file cut a long line at its rotation), or a plain
# file's last multi-line record.  The file is read to its end as a gone
# file; it must not be let go before that record is sent, when the file
# goes quiet (multiLineFlushMillis).  Before, the gone file was closed as
# soon as what it had framed was committed, and the waiting record was
# lost (32 KiB of the Docker line, the whole last multi-line record).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

ID=3f4e5d6c7b8a90123456789abcdef0123456789abcdef0123456789abcdef01
D=$TMP/containers
mkdir -p "$D/$ID" "$TMP/logs"
printf '{"ID":"%s","Name":"/web","Config":{"Image":"nginx:1.27"}}' "$ID" \
    >"$D/$ID/config.v2.json"
# Three whole lines, then the first two 16 KiB partials of a long line.
"$PYTHON3" - "$D/$ID/$ID-json.log" "$TMP/logs/app.log" <<'PY'
import json, sys
with open(sys.argv[1], "w") as f:
    for i in range(3):
        f.write(json.dumps({"log": "line %d\n" % i, "stream": "stdout",
                            "time": "2026-12-07T10:00:00.%dZ" % i}) + "\n")
    for i in range(2):
        f.write(json.dumps({"log": ("P%d" % i) * 8192, "stream": "stdout",
                            "time": "2026-12-07T10:00:01Z"}) + "\n")
with open(sys.argv[2], "w") as f:
    f.write("2026-12-07 first record\n  at one\n")
    f.write("2026-12-07 last record\n  at two\n  at three\n")
PY

start_server --stream s1 --stream s2
write_conf "$TMP/agent.ini"
cat >>"$TMP/agent.ini" <<EOF

[flow:web]
source = containers
containerLogDirectory = $D
containerFormat = docker
containerRecord = message
DISStream = s1
maxBufferAgeMillis = 200

[flow:app]
filePattern = $TMP/logs/*.log
multiLineStartPattern = ^\\d{4}-
DISStream = s2
maxBufferAgeMillis = 200
EOF
start_agent "$TMP/agent.ini"
wait_for 30 "the three whole container lines" count_at_least s1 3
wait_for 30 "the first multi-line record" count_at_least s2 1

# The rotations, before either waiting record's 3 s of quiet are over: the
# rest of the long line starts a new json-file; app.log goes to app.log.1.
mv "$D/$ID/$ID-json.log" "$D/$ID/$ID-json.log.1"
"$PYTHON3" - "$D/$ID/$ID-json.log" <<'PY'
import json, sys
with open(sys.argv[1], "w") as f:
    f.write(json.dumps({"log": "T" * 8000 + "\n", "stream": "stdout",
                        "time": "2026-12-07T10:00:01Z"}) + "\n")
    f.write(json.dumps({"log": "after\n", "stream": "stdout",
                        "time": "2026-12-07T10:00:02Z"}) + "\n")
PY
mv "$TMP/logs/app.log" "$TMP/logs/app.log.1"
echo "2026-12-07 new file" >"$TMP/logs/app.log"

# The records of stream $1, one a line (their newlines as '|').
bodies() {
	"$PYTHON3" -c 'import base64, json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r["stream"] == sys.argv[2]:
        print(base64.b64decode(r["data"]).decode().replace("\n", "|"))' \
	    "$TMP/records.jsonl" "$1" | sort
}
wait_for 30 "the 32 KiB piece of the cut line" count_at_least s1 6
wait_for 30 "the last multi-line record of app.log.1" count_at_least s2 3
sleep 1		# anything more would come within a batch age
"$PYTHON3" -c 'print("\n".join(sorted(["line 0", "line 1", "line 2",
    "P0" * 8192 + "P1" * 8192, "T" * 8000, "after"])))' >"$TMP/want1"
printf '%s\n' '2026-12-07 first record|  at one' \
    '2026-12-07 last record|  at two|  at three' '2026-12-07 new file' |
    sort >"$TMP/want2"
bodies s1 >"$TMP/got1"
bodies s2 >"$TMP/got2"
cmp -s "$TMP/want1" "$TMP/got1" ||
	fail "container records: $(cut -c1-40 "$TMP/got1" | tr '\n' ' ')"
cmp -s "$TMP/want2" "$TMP/got2" ||
	fail "multi-line records: $(tr '\n' ' ' <"$TMP/got2")"
stop_agent
pass
