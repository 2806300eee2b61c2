#!/bin/sh
# A multi-line record is sent whole even when the flow holds its file back
# mid-record.  The flow stops reading a file that has maxInFlightRequests + 1
# batches unacknowledged; the record being framed at the end of the last
# read window then waits for lines that are still unread.  It must not be
# flushed as if the file were quiet: --once flushed it at once, and the
# daemon after multiLineFlushMillis while the requests took longer, and its
# rest arrived as one record per line.  4,000 records of 8 lines (1.3 MB,
# read in six 256 KiB windows; a window that ends exactly before a record's
# first line splits nothing, so one of the five boundaries failing is near
# certain), one request at a time, each taking 0.5 s; --once, then the
# daemon with multiLineFlushMillis at 200 ms and batches sent when full (a
# partial batch sent by its age, after add_flow's 200 ms, closes the window,
# which hid the flush).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

start_server --stream s1 --stream s2 --latency-ms 500
mkdir -p "$TMP/logs1" "$TMP/logs2"
"$PYTHON3" - "$TMP/logs1/app.log" "$TMP/expect.json" <<'PY'
import json, sys
recs = []
for i in range(4000):
    lines = ["2026-12-01 10:00:00 ERROR request %06d failed" % i]
    lines += ["\tat com.example.Handler.step%d(Handler.java:%d)" % (j, i % 97)
              for j in range(7)]
    recs.append("\n".join(lines))
with open(sys.argv[1], "w") as f:
    f.write("".join(r + "\n" for r in recs))
with open(sys.argv[2], "w") as f:
    json.dump(recs, f)
PY
cp "$TMP/logs1/app.log" "$TMP/logs2/app.log"
[ "$(wc -c <"$TMP/logs1/app.log")" -gt $((5 * 262144)) ] ||
    fail "the file must span six read windows"

write_conf "$TMP/agent.ini"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs1/*.log" \
    'multiLineStartPattern = ^\d{4}-\d{2}-\d{2} ' "maxInFlightRequests = 1"
"$DISAGENT" -t -c "$TMP/agent.ini" >/dev/null
"$DISAGENT" -c "$TMP/agent.ini" --once >>"$TMP/agent.log" 2>&1 ||
    fail "--once exited with $?"
records exact --records "$TMP/records.jsonl" --stream s1 \
    --expected "$TMP/expect.json" || fail "--once split a record"

write_conf "$TMP/agent2.ini"	# its own state: a new copy, not a rotation
sed -i "s#$TMP/state/#$TMP/state2/#" "$TMP/agent2.ini"
mkdir -p "$TMP/state2"
add_flow "$TMP/agent2.ini" app s2 "$TMP/logs2/*.log" \
    'multiLineStartPattern = ^\d{4}-\d{2}-\d{2} ' "maxInFlightRequests = 1" \
    "multiLineFlushMillis = 200" "maxBufferAgeMillis = 5000"
"$DISAGENT" -t -c "$TMP/agent2.ini" >/dev/null
start_agent "$TMP/agent2.ini"
wait_for 120 "4,000 records on s2" count_at_least s2 4000
stop_agent
records exact --records "$TMP/records.jsonl" --stream s2 \
    --expected "$TMP/expect.json" || fail "the daemon split a record"
pass
