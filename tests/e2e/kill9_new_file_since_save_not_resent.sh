#!/bin/sh
# A file first seen after the last save is not sent twice after a crash:
# a.log's lines are delivered and saved; then b.log appears (as a rotation
# makes a new file) and its 1,000 lines are delivered, and the agent is
# killed with SIGKILL before the next save names b.log.  Restarted 0.1-1 s
# later (systemd's Restart= timing), the restart's read finds b.log's
# records by the ids of the file its pattern matches now, makes it an
# entry at offset 0 and skips what landed: every line arrives exactly
# once.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

start_server --stream s1:COMMON:2
mkdir -p "$TMP/logs"
write_lines "$TMP/logs/a.log" a 0 1000

# A crash's restart waits for requests that may still land, at most
# socketTimeOutSeconds: 5 s keeps the test short.
write_conf "$TMP/agent.ini" "socketTimeOutSeconds = 5"
sed -i 's/^checkpointIntervalMillis = .*/checkpointIntervalMillis = 5000/' \
    "$TMP/agent.ini"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/*.log"

start_agent "$TMP/agent.ini"
wait_for 60 "a.log's lines" count_at_least s1 1000
wait_for 30 "a save of a.log" grep -q '"offset":71000' "$TMP/state/state.json"
write_lines "$TMP/logs/b.log" b 0 1000
wait_for 30 "b.log's lines" count_at_least s1 2000
if grep -q 'b\.log' "$TMP/state/state.json"; then
	fail "the state file named b.log before the kill: nothing to prove"
fi
kill -9 "$AGENT_PID"
wait "$AGENT_PID" 2>/dev/null || true
AGENT_PID=
# systemd's Restart= after 0.1-1 s.
sleep "$(awk -v s="$E2E_SEED" 'BEGIN { srand(s); printf "%.1f", 0.1 + rand() * 0.9 }')"
start_agent "$TMP/agent.ini"
wait_for 60 "the restart's read" grep -q "restart read of stream \[s1\]" \
    "$TMP/agent.log"
write_lines "$TMP/logs/b.log" b 1000 1010
all_arrived() {
	records verify --records "$TMP/records.jsonl" --stream s1 \
	    --expect "$TMP/logs/a.log" --expect "$TMP/logs/b.log" \
	    --allow-duplicates
}
wait_for 60 "every line" all_arrived
stop_agent

grep "restart read of stream\|does not name yet" "$TMP/agent.log"
records verify --records "$TMP/records.jsonl" --stream s1 \
    --expect "$TMP/logs/a.log" --expect "$TMP/logs/b.log" ||
	fail "records differ from the lines written (see duplicated)"
pass
