#!/bin/sh
# A flow that names its stream by streamId, killed with SIGKILL during its
# first request of its first run, sends nothing twice.  Such a flow skips
# DescribeStream, so the state file has no sequence number of its stream
# before an acknowledgement; the restart's read lists the partitions
# (GetCursor until one does not exist) and reads them from the time the
# crashed run started (AT_TIMESTAMP, less a margin for the clocks).  The
# endpoint takes 3 s before it stores a request: the old request lands
# while the read waits, and is found there.  Before: "the state file has
# no sequence numbers of stream [id:...], so what was sent after the last
# save is sent again": 200 duplicates.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

start_server --stream s1:COMMON:3
mkdir -p "$TMP/logs"
sid=sid-$("$PYTHON3" -c 'import hashlib; print(hashlib.md5(b"s1").hexdigest()[:16])')

write_conf "$TMP/agent.ini" "socketTimeOutSeconds = 5"
cat >>"$TMP/agent.ini" <<EOF2

[flow:app]
streamId = $sid
filePattern = $TMP/logs/*.log
maxBufferAgeMillis = 200
EOF2

faults '{"put_latency_ms": 3000}'
write_lines "$TMP/logs/a.log" a 0 200
start_agent "$TMP/agent.ini"
wait_for 60 "a request on the wire" endpoint_busy
kill -9 "$AGENT_PID"
wait "$AGENT_PID" 2>/dev/null || true
AGENT_PID=
faults '{"put_latency_ms": 0}'
grep -q "\"id:$sid\":{\"[0-9]" "$TMP/state/state.json" &&
	fail "the state file has sequence numbers of the stream: nothing to prove"
start_agent "$TMP/agent.ini"
all_arrived() {
	records verify --records "$TMP/records.jsonl" --stream s1 \
	    --expect "$TMP/logs/a.log" --allow-duplicates
}
wait_for 60 "every line" all_arrived
size=$(stat -c %s "$TMP/logs/a.log")
wait_for 30 "a.log committed" grep -q "\"offset\":$size" "$TMP/state/state.json"
wait_for 30 "the endpoint to finish what it received" endpoint_idle
stop_agent

grep "restart read\|read is over\|may still land\|sequence numbers" "$TMP/agent.log"
records verify --records "$TMP/records.jsonl" --stream s1 \
    --expect "$TMP/logs/a.log" ||
	fail "records differ from the lines written (see duplicated)"
grep -q "restart read of stream \[id:$sid\]: 3 partitions, 3 of them without" \
    "$TMP/agent.log" || fail "the restart's read did not list the partitions"
pass
