#!/bin/sh
# A link back up under ** (issue 36 §1): with two of them
# (sub/l1 -> .., sub/l2 -> ..) the walk used to follow every path through
# the loops to depth 32, sending nothing, spending the CPU, and waiting
# out SIGTERM.  Each directory is now walked once, by (device, inode):
# the lines of both files arrive exactly once, each loop is one INFO line
# however many rescans see it, no file is "renamed" between its paths,
# the state file names each file by its shortest path, a waiting agent
# sleeps, and SIGTERM stops it at once.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

WINDOW_S=3
LIMIT_CS=30	# centiseconds over WINDOW_S: 0.1 CPU-s/s (a spin costs 300)
TICK=$(getconf CLK_TCK)

cpu_cs() {
	awk -v tick="$TICK" '{ sub(/^.*\) /, ""); print int(($12 + $13) * 100 / tick) }' \
	    "/proc/$1/stat"
}
start_server --stream s1
mkdir -p "$TMP/logs/sub"
write_lines "$TMP/logs/a.log" a 0 100
write_lines "$TMP/logs/sub/b.log" b 0 100
ln -s .. "$TMP/logs/sub/l1"
ln -s .. "$TMP/logs/sub/l2"

write_conf "$TMP/agent.ini"
# Rescans every 100 ms: the loops are met again and again.
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/**/*.log" \
    "rescanIntervalMillis = 100"
start_agent "$TMP/agent.ini"
wait_for 30 "200 records" count_at_least s1 200

# Some 30 rescans through the loops, measured.
a=$(cpu_cs "$AGENT_PID")
sleep "$WINDOW_S"
kill -0 "$AGENT_PID" 2>/dev/null || fail "the agent exited"
b=$(cpu_cs "$AGENT_PID")
echo "agent: $((b - a)) cs of CPU in $WINDOW_S s of rescans through two loops"
[ $((b - a)) -le "$LIMIT_CS" ] ||
	fail "the agent used $((b - a)) cs of CPU in $WINDOW_S s (limit $LIMIT_CS)"

# Every line once.
write_lines "$TMP/expect-a" a 0 100
write_lines "$TMP/expect-b" b 0 100
records verify --records "$TMP/records.jsonl" --stream s1 \
    --expect "$TMP/expect-a" --expect "$TMP/expect-b" || fail "the lines did not arrive exactly once"

n=$(grep -c 'a loop' "$TMP/agent.log" || true)
[ "$n" = 2 ] || fail "$n INFO lines for the two loops, not one each"
grep -q "INFO .*logs/sub/l1 leads back to $TMP/logs, a loop" "$TMP/agent.log" ||
	fail "no INFO line naming the loop sub/l1"
if grep -q 'renamed to' "$TMP/agent.log"; then
	fail "a file was taken as renamed between two paths to it"
fi

# SIGTERM at once, with the loops in place: the state file holds the
# shortest paths.
kill -TERM "$AGENT_PID"
wait_for 5 "the agent to stop on SIGTERM" sh -c "! kill -0 $AGENT_PID"
rc=0; wait "$AGENT_PID" || rc=$?
AGENT_PID=
[ "$rc" = 0 ] || fail "the agent exited $rc after SIGTERM"
grep -q "\"path\":\"$TMP/logs/a.log\"" "$TMP/state/state.json" ||
	fail "the state file does not name $TMP/logs/a.log: $(grep -o '"path":"[^"]*"' "$TMP/state/state.json")"
grep -q "\"path\":\"$TMP/logs/sub/b.log\"" "$TMP/state/state.json" ||
	fail "the state file does not name $TMP/logs/sub/b.log"
if grep -q '/l[12]/' "$TMP/state/state.json"; then
	fail "the state file names a path through a loop"
fi
pass
