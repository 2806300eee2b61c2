#!/bin/sh
# A whole file (isFileAppendable = false) written in small steps for longer
# than maxFileCheckingMillis is not sent while it is written: every record
# reaches the endpoint after the last write, and all of them do, the last
# (without a delimiter) too.  The writer keeps its steps far shorter than
# maxFileCheckingMillis; should the machine stall it for longer, the agent
# would be right to send, so that attempt is repeated with a new file.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

QUIET=2000
start_server --stream s1
mkdir -p "$TMP/in"
write_conf "$TMP/agent.ini"
add_flow "$TMP/agent.ini" w s1 "$TMP/in/*.csv" "isFileAppendable = false" \
    "maxFileCheckingMillis = $QUIET" "rescanIntervalMillis = 500"
start_agent "$TMP/agent.ini"
wait_for 30 "the agent to start" grep -q "Startup completed" "$TMP/agent.log"

# write_slowly FILE TAG: 40 steps 100 ms apart, for 4 s; prints the
# nanosecond time of the last write and the longest gap in ms.
write_slowly() {
	"$PYTHON3" - "$1" "$2" <<'PY'
import sys, time
path, tag = sys.argv[1], sys.argv[2]
last = time.time_ns()
gap = 0
for i in range(40):
    with open(path, "a") as f:
        f.write("%s %04d slowly\n" % (tag, i) if i < 39 else
                "%s %04d last-without-delimiter" % (tag, i))
    now = time.time_ns()
    gap = max(gap, (now - last) // 1000000)
    last = now
    time.sleep(0.1)
print(last, gap)
PY
}

attempt=0
while :; do
	attempt=$((attempt + 1))
	f=$TMP/in/slow$attempt.csv
	set -- $(write_slowly "$f" "t$attempt")
	last_ns=$1 gap=$2
	echo "attempt $attempt: longest gap between writes $gap ms"
	[ "$gap" -lt $((QUIET * 3 / 4)) ] && break
	[ "$attempt" -lt 3 ] || fail "the writer stalled for $gap ms 3 times"
done

arrived() {
	[ "$(records count --records "$TMP/records.jsonl" --stream s1)" \
	    -ge $((40 * attempt)) ]
}
wait_for 60 "the file's 40 records" arrived
stop_agent
# Every record of the last attempt arrived after its last write.
"$PYTHON3" - "$TMP/records.jsonl" "t$attempt" "$last_ns" <<'PY' ||
import base64, json, sys
tag, last = sys.argv[2].encode(), int(sys.argv[3])
ts = [r["t"] for r in map(json.loads, open(sys.argv[1]))
      if base64.b64decode(r["data"]).startswith(tag + b" ")]
assert len(ts) == 40, len(ts)
early = [t for t in ts if t <= last]
assert not early, "%d records arrived before the last write" % len(early)
PY
	fail "records were sent while the file was still written"
"$PYTHON3" -c 'import sys
for a in range(1, int(sys.argv[1]) + 1):
    for i in range(39): print("t%d %04d slowly" % (a, i))
    print("t%d 0039 last-without-delimiter" % a)' "$attempt" >"$TMP/expect.txt"
records verify --records "$TMP/records.jsonl" --stream s1 \
    --expect "$TMP/expect.txt" || fail "records differ"
pass
