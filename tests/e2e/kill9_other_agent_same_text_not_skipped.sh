#!/bin/sh
# The restart's read skips only this agent's records: two agents (two
# state files, so two agent ids) ship the very same file -- same inode,
# same text at the same offsets -- to one stream.  Agent A is killed with
# SIGKILL midway while records wait for retries (10% throttled), B keeps
# going, and A's restart reads B's records too: none of them may stand in
# for one of A's that never landed.  At the end every line has arrived
# exactly twice, once from each.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

start_server --stream s1:COMMON:2 --rec-4303 0.1 --latency-ms 20
mkdir -p "$TMP/logs"
write_lines "$TMP/logs/app.log" s 0 24000

# A crash's restart waits for requests that may still land, at most
# socketTimeOutSeconds: 5 s keeps the test short.
write_conf "$TMP/a.ini" "socketTimeOutSeconds = 5"
sed -i 's/^checkpointIntervalMillis = .*/checkpointIntervalMillis = 3000/' \
    "$TMP/a.ini"
add_flow "$TMP/a.ini" app s1 "$TMP/logs/app.log" \
    "maxBufferSizeRecords = 200" \
    "retryInitialBackoffMillis = 200" "retryMaxBackoffMillis = 1000"
sed "s|$TMP/state/state.json|$TMP/state-b/state.json|" "$TMP/a.ini" \
    >"$TMP/b.ini"
chmod 600 "$TMP/b.ini"
mkdir -p "$TMP/state-b"

"$DISAGENT" -c "$TMP/b.ini" >>"$TMP/agent-b.log" 2>&1 &
B_PID=$!
E2E_PIDS="$B_PID"
start_agent "$TMP/a.ini"
wait_for 120 "20000 records" count_at_least s1 20000
kill -9 "$AGENT_PID"
wait "$AGENT_PID" 2>/dev/null || true
AGENT_PID=
echo "A killed after $(records count --records "$TMP/records.jsonl" --stream s1) records of both"
wait_for 30 "the endpoint to finish what A sent" endpoint_idle

twice() {
	"$PYTHON3" - "$TMP/records.jsonl" "$TMP/logs/app.log" "$1" <<'PY'
import base64, collections, json, sys
want = open(sys.argv[2], "rb").read().split(b"\n")[:-1]
got = collections.Counter()
for line in open(sys.argv[1], "rb"):
    r = json.loads(line)
    if r["stream"] == "s1":
        got[base64.b64decode(r["data"])] += 1
short = [w for w in want if got[w] < 2]
extra = [w for w in want if got[w] > 2]
if sys.argv[3] == "report":
    print("lines %d: fewer than two copies %d, more than two %d" % (
        len(want), len(short), len(extra)))
    for w in (short + extra)[:5]:
        print("  %r: %d" % (w[:20], got[w]))
sys.exit(0 if not short and (sys.argv[3] == "wait" or not extra) else 1)
PY
}
start_agent "$TMP/a.ini"
wait_for 180 "two copies of every line" twice wait
stop_agent
kill -TERM "$B_PID"
wait "$B_PID" || fail "agent B exited with $?"
E2E_PIDS=
twice report || fail "a line did not arrive exactly once from each agent"
grep "restart read of stream \[s1\]" "$TMP/agent.log" ||
	fail "A's restart did not read the stream back"
pass
