#!/bin/sh
# Coalesced reads follow the batches (issue 25): 20 files appended 25
# times a second each (500 lines/s) fill a 500-record batch in ten passes
# of readCoalesceMillis = 100.  The passes stretch until one reads about
# four fifths of a batch (here 800 ms; at most maxBufferAgeMillis and ten
# periods), and each sends what it read at its end.  Measured as the
# voluntary context switches of the agent's main thread: a pass every
# 100 ms costs ten a second before the requests and saves, following the
# batches about two and a half (the bound, 8/s, sits between).  No line
# waits longer than it did for its batch: p99 of the time from the write
# to the acknowledgement stays under maxBufferAgeMillis plus 500 ms (a
# stretched pass that kept its records for the age timer would wait
# 1.8 s).  Every line arrives exactly once, in file order.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/rotate_lib.sh"

FILES=20
RATE=25		# appends per second per file
SECONDS_=7
LIMIT=8		# voluntary switches per second of the main thread
AGE=1000

start_server --stream s1
mkdir -p "$TMP/logs"
for i in $(seq 1 $FILES); do : >"$TMP/logs/f$i.log"; done
write_conf "$TMP/agent.ini"
sed -i 's/^logLevel = .*/logLevel = DEBUG/' "$TMP/agent.ini"
grep -q '^logLevel = DEBUG' "$TMP/agent.ini" ||
	sed -i 's/^\[agent\]$/[agent]\nlogLevel = DEBUG/' "$TMP/agent.ini"
# The saves (each a few sleeps in fsync) out of the window.
sed -i 's/^checkpointIntervalMillis = .*/checkpointIntervalMillis = 8000/' \
    "$TMP/agent.ini"
grep -q '^checkpointIntervalMillis = 8000' "$TMP/agent.ini" ||
	fail "write_conf no longer sets checkpointIntervalMillis"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/*.log" \
    "readCoalesceMillis = 100" "rescanIntervalMillis = 60000" \
    "maxBufferAgeMillis = $AGE" "maxBufferSizeRecords = 500"

start_agent "$TMP/agent.ini"
wait_for 30 "the stream described" grep -q "type is COMMON" "$TMP/agent.log"
paced_writer "$TMP/logs" $FILES $RATE $SECONDS_
writer=$PACED_PID
sleep 2		# paused, and the pace found
per_s=$(switches_per_s 4)
wait "$writer" || fail "the writer failed"
echo "main thread: $per_s voluntary switches/s while $FILES files were" \
    "appended $RATE times a second each"
[ "$per_s" -le "$LIMIT" ] ||
	fail "$per_s wake-ups/s of the main thread (limit $LIMIT): the" \
	    "passes do not follow the batches"
grep -q "coalesced reads follow the batches" "$TMP/agent.log" ||
	fail "the passes never followed the batches"

set -- "$TMP"/logs/*.log
await_records s1 30 "$@"
stop_agent
check_records s1 "$@"
"$PYTHON3" - "$TMP/records.jsonl" $AGE <<'PY' || fail "lines waited too long"
import base64, json, sys
age = int(sys.argv[2])
lat = []
for line in open(sys.argv[1]):
    r = json.loads(line)
    lat.append((r["t"] - int(base64.b64decode(r["data"])[2:21])) / 1e6)
lat.sort()
p99 = lat[int(len(lat) * 0.99)]
print("%d lines, p50 %.0f ms, p99 %.0f ms, max %.0f ms" % (
    len(lat), lat[len(lat) // 2], p99, lat[-1]))
sys.exit(0 if p99 < age + 500 else 1)
PY
pass
