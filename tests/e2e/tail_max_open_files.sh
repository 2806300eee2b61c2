#!/bin/sh
# With more files than maxOpenFiles, idle delivered files are closed and
# reopened when they grow (identity re-checked), descriptors stay bounded,
# and every line arrives exactly once.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

start_server --stream s1
mkdir -p "$TMP/logs"
i=0
while [ $i -lt 40 ]; do
	write_lines "$TMP/logs/f$i.log" "f$i" 0 20
	i=$((i + 1))
done
write_conf "$TMP/agent.ini"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/*.log" "maxOpenFiles = 8" \
    "rescanIntervalMillis = 200"
start_agent "$TMP/agent.ini"
wait_for 60 "the first 800 records" count_at_least s1 800

# Open descriptors of the agent on the log files stay within the cap.
fds() { ls -l "/proc/$AGENT_PID/fd" 2>/dev/null | grep -c "$TMP/logs/" || true; }
n=$(fds)
[ "$n" -le 8 ] || fail "$n log files open, more than maxOpenFiles = 8"

# Every file grows again: parked files are reopened and read on.
i=0
while [ $i -lt 40 ]; do
	write_lines "$TMP/logs/f$i.log" "f$i" 20 30
	i=$((i + 1))
done
wait_for 60 "all 1,200 records" count_at_least s1 1200
n=$(fds)
[ "$n" -le 8 ] || fail "$n log files open after growth"
stop_agent

set --
i=0
while [ $i -lt 40 ]; do set -- "$@" --expect "$TMP/logs/f$i.log"; i=$((i + 1)); done
records verify --records "$TMP/records.jsonl" --stream s1 "$@" ||
	fail "records differ"
pass
