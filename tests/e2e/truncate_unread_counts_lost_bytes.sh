#!/bin/sh
# A file truncated in place while lines were still unread (issue 36,
# item 5): the bytes between the read offset and the size last seen are
# gone with the truncation.  The WARN names the file and the number, and
# disagent_bytes_lost_total{reason="truncated"} counts it: what arrived
# from the old content plus what is counted lost is the whole old file.
# Lines written after the truncation arrive.  Before: a WARN without a
# number and the counter at 0 while 6,000+ lines were never sent.
# The same for a file truncated while the agent was stopped, below its
# committed offset: what the state file knew was after the offset.  The
# keys carry no record id (RANDOM_DOUBLE): during the outage below, the
# failed requests then go again blindly, and the lease's saves before
# each write c.log's size to the state file; with ids, a dropped request
# waits for the stream to be read and nothing is saved meanwhile.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

log_has() { grep -q -- "$1" "$TMP/agent.log"; }
metric() {
	sed -n "s/^disagent_bytes_lost_total{flow=\"app\",stream=\"s1\",reason=\"$1\"} //p" \
	    "$TMP/metrics.prom"
}

start_server --stream s1
mkdir -p "$TMP/logs"
write_conf "$TMP/agent.ini" "metricsFile = $TMP/metrics.prom" \
    "metricsIntervalMillis = 1000"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/*.log" \
    "rescanIntervalMillis = 200" "maxRecordsPerSecond = 1000" \
    "partitionKeyOption = RANDOM_DOUBLE"

write_lines "$TMP/old.expect" a 0 10000
cp "$TMP/old.expect" "$TMP/logs/a.log"
size=$(wc -c <"$TMP/old.expect")
start_agent "$TMP/agent.ini"
wait_for 60 "1,000 records on s1" count_at_least s1 1000
: >"$TMP/logs/a.log"
wait_for 30 "the truncation to be noticed" log_has "a.log.*truncated"
grep "a.log.*truncated" "$TMP/agent.log" | head -n 1
lostb=$(sed -n 's/.*a\.log.*truncated.* with \([0-9]*\) bytes unread.*/\1/p' \
    "$TMP/agent.log" | head -n 1)
[ -n "$lostb" ] || fail "the WARN does not say how many bytes were lost"
[ "$lostb" -gt 0 ] || fail "0 bytes counted lost"

# New lines after the truncation arrive; the old ones that were read
# before it have arrived by then (the file is read from 0 only once the
# ranges in flight settled).
write_lines "$TMP/new.expect" b 0 200
cat "$TMP/new.expect" >>"$TMP/logs/a.log"
new_arrived() {
	records verify --records "$TMP/records.jsonl" --stream s1 \
	    --expect "$TMP/new.expect" 2>/dev/null | grep -q "missing 0,"
}
wait_for 60 "the new lines" new_arrived
got=$("$PYTHON3" - "$TMP/records.jsonl" <<'PY'
import base64, json, sys
n = set()
for l in open(sys.argv[1]):
    d = base64.b64decode(json.loads(l)["data"])
    if d.startswith(b"a "):
        n.add(d)
print(len(n))
PY
)
line=$(head -n 1 "$TMP/old.expect" | wc -c)
echo "old file $size bytes: $got lines ($((got * line)) bytes) delivered, $lostb bytes counted lost"
[ $((got * line + lostb)) = "$size" ] ||
	fail "delivered $((got * line)) + lost $lostb != $size"
counted() { [ "$(metric truncated)" = "$lostb" ]; }
wait_for 30 "disagent_bytes_lost_total{reason=\"truncated\"} = $lostb" counted

# 2. Truncated while stopped: c.log delivered to 1,000 lines, 1,000 more
# seen but not delivered (an outage), the stop, then cut to 10 lines.
write_lines "$TMP/c.expect" c 0 1000
cp "$TMP/c.expect" "$TMP/logs/c.log"
c_arrived() {
	[ "$("$PYTHON3" - "$TMP/records.jsonl" <<'PY'
import base64, json, sys
print(sum(1 for l in open(sys.argv[1])
          if base64.b64decode(json.loads(l)["data"]).startswith(b"c ")))
PY
)" -ge 1000 ]
}
wait_for 60 "c.log's 1,000 lines" c_arrived
off=$(wc -c <"$TMP/c.expect")
wait_for 30 "c.log's offset saved" grep -q "c.log\",\"offset\":$off" \
    "$TMP/state/state.json"
faults '{"outage": true}'
write_lines "$TMP/logs/c.log" c 1000 2000
size=$(wc -c <"$TMP/logs/c.log")
wait_for 30 "c.log's size seen" grep -q "c.log\",\"offset\":$off,\"size\":$size" \
    "$TMP/state/state.json"
kill -TERM "$AGENT_PID"
wait "$AGENT_PID" || fail "the agent's stop failed"
AGENT_PID=
truncate -s "$(head -n 10 "$TMP/c.expect" | wc -c)" "$TMP/logs/c.log"
faults '{"outage": false}'
: >"$TMP/agent.log"
start_agent "$TMP/agent.ini"
wait_for 30 "the WARN" log_has "c.log: shorter .* truncated while stopped with $((size - off)) bytes unread"
grep "c.log: shorter" "$TMP/agent.log"
lostb=$((size - off))
wait_for 30 "disagent_bytes_lost_total{reason=\"truncated\"} = $lostb" counted
stop_agent
pass
