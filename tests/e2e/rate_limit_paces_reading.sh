#!/bin/sh
# maxBytesPerSecond and maxRecordsPerSecond pace a flow, and drop nothing.
# Timing is checked as a ratio in a wide band (testing.md: timing figures
# are bounds the design sets, not benchmarks): N bytes at R B/s take
# between 0.7 and 2 times N/R (the first second's worth goes at once).
#  1. --once with maxBytesPerSecond: every line arrives once, and the run
#     takes 0.7..2 x bytes / limit.
#  2. The daemon with maxRecordsPerSecond: the same for records, and while
#     it is held `disagent status` says so.
#  3. A flow held by a small limit behind a large backlog sleeps: its CPU
#     time over a few seconds stays under 0.05 CPU-s per second, and the
#     backlog stays on disk (status shows the bytes behind).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

TICK=$(getconf CLK_TCK)
cpu_cs() {
	awk -v tick="$TICK" '{ sub(/^.*\) /, ""); print int(($12 + $13) * 100 / tick) }' \
	    "/proc/$1/stat"
}
now_ms() { date +%s%3N; }
# in_band WHAT ELAPSED_MS EXPECTED_MS: 0.7 <= elapsed / expected <= 2.
in_band() {
	echo "$1: $2 ms for an expected $3 ms (ratio $(awk -v a="$2" -v b="$3" 'BEGIN { printf "%.2f", a / b }'))"
	awk -v a="$2" -v b="$3" 'BEGIN { exit !(a >= 0.7 * b && a <= 2 * b) }' ||
		fail "$1: took $2 ms, outside 0.7..2 x $3 ms"
}

start_server --stream s1 --stream s2 --stream s3
mkdir -p "$TMP/logs/a" "$TMP/logs/b" "$TMP/logs/c"

# 1. --once, 2,000 records of 70 bytes (as sent) at 20,000 B/s: 7 s.
write_lines "$TMP/logs/a/a.log" a 0 2000
bytes=$(awk '{ n += length($0) } END { print n }' "$TMP/logs/a/a.log")
write_conf "$TMP/once.ini"
add_flow "$TMP/once.ini" a s1 "$TMP/logs/a/*.log" "maxBytesPerSecond = 20000"
t0=$(now_ms)
"$DISAGENT" -c "$TMP/once.ini" --once >"$TMP/agent-once.log" 2>&1 ||
	fail "--once exited $?"
t1=$(now_ms)
records verify --records "$TMP/records.jsonl" --stream s1 \
    --expect "$TMP/logs/a/a.log" || fail "--once: records differ"
in_band "--once, $bytes bytes at 20000 B/s" $((t1 - t0)) $((bytes * 1000 / 20000))

# 2. The daemon, 2,400 records at 400 records/s: 6 s.
write_lines "$TMP/logs/b/b.log" b 0 2400
write_conf "$TMP/agent.ini" "metricsFile = $TMP/disagent.prom" \
    "metricsIntervalMillis = 1000"
add_flow "$TMP/agent.ini" b s2 "$TMP/logs/b/*.log" "maxRecordsPerSecond = 400"
held() {
	"$DISAGENT" status -c "$TMP/agent.ini" >"$TMP/st" 2>&1 &&
	    grep -q "^  held by its rate limit ($1): it reads no faster" "$TMP/st"
}
t0=$(now_ms)
start_agent "$TMP/agent.ini"
wait_for 30 "status to show flow b held" held "maxRecordsPerSecond = 400"
wait_for 60 "2,400 records on s2" count_at_least s2 2400
t1=$(now_ms)
stop_agent
records verify --records "$TMP/records.jsonl" --stream s2 \
    --expect "$TMP/logs/b/b.log" || fail "the daemon: records differ"
in_band "daemon, 2400 records at 400 records/s" $((t1 - t0)) 6000

# 3. Held by 700 B/s (10 records a second) behind 20,000 lines: asleep.
write_lines "$TMP/logs/c/c.log" c 0 20000
write_conf "$TMP/held.ini" "metricsFile = $TMP/held.prom" \
    "metricsIntervalMillis = 1000"
add_flow "$TMP/held.ini" c s3 "$TMP/logs/c/*.log" "maxBytesPerSecond = 700"
: >"$TMP/agent.log"
t0=$(now_ms)
start_agent "$TMP/held.ini"
held_c() {
	"$DISAGENT" status -c "$TMP/held.ini" >"$TMP/st" 2>&1 &&
	    grep -q "^  held by its rate limit (maxBytesPerSecond = 700)" "$TMP/st"
}
wait_for 30 "status to show flow c held" held_c
wait_for 30 "the first records of c" count_at_least s3 10
a=$(cpu_cs "$AGENT_PID")
sleep 4
b=$(cpu_cs "$AGENT_PID")
echo "held: $((b - a)) cs of CPU in 4 s"
[ $((b - a)) -le 20 ] || fail "held by its limit, the agent used $((b - a)) cs of CPU in 4 s"
"$DISAGENT" status -c "$TMP/held.ini" >"$TMP/st" 2>&1 || fail "status exited $?"
behind=$(sed -n 's/^\[flow:c\] stream s3: 1 file, \([0-9]*\) bytes behind$/\1/p' "$TMP/st")
[ -n "$behind" ] && [ "$behind" -gt 1000000 ] ||
	fail "the backlog is not behind on disk: $(cat "$TMP/st")"
n=$(records count --records "$TMP/records.jsonl" --stream s3)
t1=$(now_ms)
# 10 records a second, a second's worth at once, and one more refill.
most=$(( (t1 - t0) / 100 + 10 + 2 ))
[ "$n" -le "$most" ] || fail "$n records of c sent in $((t1 - t0)) ms, more than 700 B/s allows ($most)"
stop_agent
no_secret_in "$TMP/agent.log"
pass
