#!/bin/sh
# A new file written faster than the agent's event delay (10 ms) is found
# at once, not when its writes pause.  Every event in a watched directory
# that is not a write to a tracked file asks for a scan; each one used to
# put that scan off again, so a new log written 300 times a second was
# not found (nor was the periodic rescan run) for as long as it was
# written.  Here one new file is written every 3 ms for 12 s: the agent
# must be tracking it, and have shipped its lines, while it is still
# being written.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/rotate_lib.sh"

start_server --stream s1
mkdir -p "$TMP/logs"
: >"$TMP/logs/idle.log"
write_conf "$TMP/agent.ini"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/*.log" \
    "rescanIntervalMillis = 60000"
start_agent "$TMP/agent.ini"
wait_for 30 "idle.log tracked" grep -q "tracking .*idle.log" "$TMP/agent.log"

write_every "$TMP/logs/fast.log" fast 12 0.003 &
writer=$!
# Found and read while the writer goes on (it writes for 12 s, the checks
# wait 8 s at most; the agent needs milliseconds).
wait_for 4 "fast.log tracked while written" \
    grep -q "tracking $TMP/logs/fast.log" "$TMP/agent.log"
wait_for 4 "fast.log's lines shipped while written" count_at_least s1 100
kill -0 "$writer" 2>/dev/null ||
	fail "the writer ended before the checks: the machine is too slow"
wait "$writer" || fail "the writer failed"
await_records s1 60 "$TMP/logs/fast.log"
stop_agent
check_records s1 "$TMP/logs/fast.log"
pass
