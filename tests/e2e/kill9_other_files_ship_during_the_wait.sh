#!/bin/sh
# Only the files whose records may still land wait for the restart's read:
# b.log is delivered and saved; then a.log's lines go out to an endpoint
# that takes 3 s before it stores a request, and the agent is killed with
# SIGKILL while they are on the wire.  Restarted at once, the read waits
# (socketTimeOutSeconds = 10: about 10 s) for the old request to land.
# a.log has bytes past its saved offset: held until the read is over, so
# nothing of it is sent twice.  b.log ended at its saved offset: nothing
# of it can be on its way, and the lines written to it after the restart
# land before the read's end line, not 10 s later.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

start_server --stream s1:COMMON:2
mkdir -p "$TMP/logs"
write_lines "$TMP/logs/b.log" b 0 100

write_conf "$TMP/agent.ini" "socketTimeOutSeconds = 10"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/*.log"

# b_landed N: at least N records of b.log arrived.
b_landed() {
	"$PYTHON3" - "$TMP/records.jsonl" "$1" <<'PY'
import base64, json, sys
n = 0
with open(sys.argv[1]) as f:
    for line in f:
        if line.endswith("\n") and base64.b64decode(
                json.loads(line)["data"]).startswith(b"b "):
            n += 1
sys.exit(0 if n >= int(sys.argv[2]) else 1)
PY
}

start_agent "$TMP/agent.ini"
wait_for 60 "b.log's lines" b_landed 100
size=$(stat -c %s "$TMP/logs/b.log")
wait_for 30 "a save of b.log" grep -q "\"offset\":$size" "$TMP/state/state.json"

faults '{"put_latency_ms": 3000}'
write_lines "$TMP/logs/a.log" a 0 200
wait_for 60 "a request on the wire" endpoint_busy
kill -9 "$AGENT_PID"
wait "$AGENT_PID" 2>/dev/null || true
AGENT_PID=
faults '{"put_latency_ms": 0}'
start_agent "$TMP/agent.ini"
wait_for 30 "the restart's wait" grep -q "may still land for" "$TMP/agent.log"
write_lines "$TMP/logs/b.log" b 100 110
# a.log grows and is rotated out of the pattern while held: once the read
# is over it is read to its end where it is now, without what landed.
write_lines "$TMP/logs/a.log" a 200 210
mv "$TMP/logs/a.log" "$TMP/logs/a.log.1"
wait_for 60 "b.log's new lines" b_landed 110
if grep -q "restart read of stream \[s1\]" "$TMP/agent.log"; then
	grep "restart\|may still land\|held\|tracking" "$TMP/agent.log"
	fail "b.log's new lines waited for the end of the restart's read"
fi
all_arrived() {
	records verify --records "$TMP/records.jsonl" --stream s1 \
	    --expect "$TMP/logs/a.log.1" --expect "$TMP/logs/b.log" \
	    --allow-duplicates
}
wait_for 60 "every line" all_arrived
wait_for 30 "the restart's read" grep -q "restart read of stream \[s1\]" \
    "$TMP/agent.log"
# a.log.1 read to its end after the read (what it found skipped, or sent
# again), and committed: only then can a duplicate be seen.
size=$(stat -c %s "$TMP/logs/a.log.1")
wait_for 30 "a.log.1 committed" grep -q "\"offset\":$size" "$TMP/state/state.json"
stop_agent

grep "restart read\|may still land\|read is over\|tracking" "$TMP/agent.log"
grep -Eq "restart read of stream \[s1\].* [1-9][0-9]* of them sent by this agent" \
    "$TMP/agent.log" ||
	fail "the old request did not land during the read: nothing proven"
records verify --records "$TMP/records.jsonl" --stream s1 \
    --expect "$TMP/logs/a.log.1" --expect "$TMP/logs/b.log" ||
	fail "records differ from the lines written (see duplicated)"
pass
