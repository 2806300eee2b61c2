#!/bin/sh
# A filePattern over the agent's own files (issue 36, item 6): `/w/*`
# where the state file, the dead-letter file and the metrics file live
# and the agent's stderr goes to /w/agent.log.  The agent never ships its
# state file (nor .bak, .tmp, .lock), dead letters, metrics file or its
# own log; one INFO per file says so.  Only the application's 100 lines
# arrive, once.  Before: 5,677 records from a 100-line log in 10 s, a
# loop that never settles (each line shipped is logged, each save
# rewrites the state file).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

W=$TMP/w
log_has() { grep -q -- "$1" "$W/agent.log"; }
progress_lines() { grep -c "progress_report" "$W/agent.log" || true; }

start_server --stream s1
mkdir -p "$W"
write_conf "$TMP/agent.ini" "metricsFile = $W/metrics.prom" \
    "metricsIntervalMillis = 1000" "deadLetterFile = $W/dead.jsonl"
sed -i "s|^checkpointFile = .*|checkpointFile = $W/state.json|" "$TMP/agent.ini"
add_flow "$TMP/agent.ini" app s1 "$W/*" "rescanIntervalMillis = 200"
write_lines "$TMP/app.expect" app 0 100
cp "$TMP/app.expect" "$W/app.log"

"$DISAGENT" -c "$TMP/agent.ini" >"$W/agent.log" 2>&1 &
AGENT_PID=$!
wait_for 60 "the 100 lines" count_at_least s1 100
wait_for 30 "the state file" test -s "$W/state.json"
wait_for 30 "the metrics file" test -s "$W/metrics.prom"
# Several rescans, saves and progress lines later (one a second):
n=$(progress_lines)
wait_for 30 "three more progress lines" sh -c \
    "[ \$(grep -c progress_report '$W/agent.log') -ge $((n + 3)) ]"
got=$(records count --records "$TMP/records.jsonl" --stream s1)
echo "records on s1 from a 100-line log: $got"
records verify --records "$TMP/records.jsonl" --stream s1 \
    --expect "$TMP/app.expect" ||
	fail "the agent shipped its own files ($got records)"
for f in state.json agent.log metrics.prom; do
	c=$(grep -c "$W/$f is the agent's" "$W/agent.log" || true)
	[ "$c" = 1 ] || fail "$f: $c INFO lines, expected 1"
done
log_has "$W/agent.log is the agent's own log (its stdout or stderr): never shipped" ||
	fail "the agent's log is not named as its own"
kill -0 "$AGENT_PID" || fail "the agent is gone"
stop_agent
pass
