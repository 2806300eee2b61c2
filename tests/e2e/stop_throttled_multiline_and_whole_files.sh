#!/bin/sh
# The acknowledged ranges a clean stop saves map back to the same records
# after the restart for multi-line records (a range ends where the next
# record's first line begins) and for whole files (isFileAppendable =
# false, read up to their size when ready, renamed once delivered): with
# 10% of requests answered 429 and 10% of records throttled, each flow is
# stopped with SIGTERM midway twice and restarted, and every record
# arrives exactly once, whole.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

start_server --stream s1:COMMON:2 --stream s2:COMMON:2 --req-429 0.1 \
    --rec-4303 0.1 --latency-ms 20
mkdir -p "$TMP/multi" "$TMP/whole"
"$PYTHON3" - "$TMP/multi/app.log" "$TMP/multi.json" "$TMP/whole" \
    "$TMP/whole.json" <<'PY'
import json, random, sys
rng = random.Random(7)
recs = []
for i in range(6000):
    lines = ["2026-12-01 10:00:00 ERROR request %06d failed" % i]
    lines += ["\tat com.example.Handler.step%d(Handler.java:%d)" % (j, i)
              for j in range(rng.randrange(0, 4))]
    recs.append("\n".join(lines))
with open(sys.argv[1], "w") as f:
    f.write("".join(r + "\n" for r in recs))
json.dump(recs, open(sys.argv[2], "w"))
lines = []
for n in range(12):
    part = ["w%02d %05d %s" % (n, i, "y" * 40) for i in range(500)]
    with open("%s/part%02d.csv" % (sys.argv[3], n), "w") as f:
        f.write("".join(l + "\n" for l in part))
    lines += part
json.dump(lines, open(sys.argv[4], "w"))
PY

write_conf "$TMP/agent.ini"
add_flow "$TMP/agent.ini" multi s1 "$TMP/multi/*.log" \
    'multiLineStartPattern = ^\d{4}-\d{2}-\d{2} ' \
    "maxBufferSizeRecords = 100" \
    "retryInitialBackoffMillis = 50" "retryMaxBackoffMillis = 400"
add_flow "$TMP/agent.ini" whole s2 "$TMP/whole/*.csv" \
    "isFileAppendable = false" "maxFileCheckingMillis = 300" \
    "rescanIntervalMillis = 300" "maxBufferSizeRecords = 100" \
    "retryInitialBackoffMillis = 50" "retryMaxBackoffMillis = 400"
"$DISAGENT" -t -c "$TMP/agent.ini" >/dev/null

# count STREAM EXPECT.json MODE: every expected record at least once
# (wait), or exactly once (final), as a multiset.
count() {
	"$PYTHON3" - "$TMP/records.jsonl" "$1" "$2" "$3" <<'PY'
import base64, collections, json, sys
want = collections.Counter(json.load(open(sys.argv[3])))
got = collections.Counter()
for line in open(sys.argv[1], "rb"):
    r = json.loads(line)
    if r["stream"] == sys.argv[2]:
        got[base64.b64decode(r["data"]).decode()] += 1
missing = sum(1 for w in want if got[w] == 0)
dups = sum(got[w] - 1 for w in want if got[w] > 1)
other = sum(n for g, n in got.items() if g not in want)
if sys.argv[4] == "final":
    print("%s: expected %d, missing %d, duplicated %d, other %d" % (
        sys.argv[2], len(want), missing, dups, other))
    sys.exit(0 if missing == dups == other == 0 else 1)
sys.exit(0 if missing == 0 else 1)
PY
}
delivered() { count s1 "$TMP/multi.json" wait && count s2 "$TMP/whole.json" wait; }

both_at_least() { count_at_least s1 "$1" && count_at_least s2 "$1"; }
for at in 1500 3500; do
	start_agent "$TMP/agent.ini"
	wait_for 120 "$at records of each flow" both_at_least "$at"
	stop_agent
	delivered && fail "everything was delivered before the stop"
	echo "stopped at $at"
done
start_agent "$TMP/agent.ini"
wait_for 180 "every record" delivered
renamed() { [ "$(ls "$TMP/whole" | grep -c 'COMPLETED$')" = 12 ]; }
wait_for 60 "the whole files to be renamed" renamed
stop_agent
count s1 "$TMP/multi.json" final || fail "multi-line records"
count s2 "$TMP/whole.json" final || fail "whole files"
[ "$(grep -c "state saved as a clean stop" "$TMP/agent.log")" = 3 ] ||
	fail "not every stop was clean"
grep -q "acknowledged before the restart" "$TMP/agent.log" ||
	fail "no restart skipped acknowledged records"
pass
