#!/bin/sh
# copytruncate copies the file by read and write, so the agent may find the
# copy (filePattern app.log* matches it) while it is still being written;
# it must still be told a copy and not sent again (lessons R6):
#  1. the copy seen empty, then filled, then the original truncated;
#  2. the copy seen with its first 100 bytes (fewer than headerBytesLength);
#  3. the copy written for longer than 3 s before the truncation;
#  4. the copy seen again after the truncation, still shorter than what was
#     read of the original, then finished.
# Each step lets the agent look at the copy (its log names the file, or a
# status report passes) before the copy goes on, so the race is played
# every time, not left to a sleep; what arrived is checked after each.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/rotate_lib.sh"

L=$TMP/logs
start_server --stream s1
mkdir -p "$L"
write_conf "$TMP/agent.ini"
add_flow "$TMP/agent.ini" app s1 "$L/app.log*" "ordered = true" \
    "rescanIntervalMillis = 500"

# mentions PATTERN [N]: the agent's log has more than N lines matching.
mentions() {
	[ "$(grep -c -- "$1" "$TMP/agent.log")" -gt "${2:-0}" ]
}

# seen COPY: wait until the agent has looked at COPY (held it back, or,
# without the fix, tracked it).
seen() {
	wait_for 30 "the agent to look at $1" mentions "logs/$1[ :(]"
}

# truncate: empty app.log, then a few lines into it.
truncate_and_go_on() {
	: >"$L/app.log"
	write_lines "$L/app.log" "$1" 0 200
}

# chunk SRC DST I: bytes [I*4096, (I+1)*4096) of SRC into DST, in place.
chunk() {
	dd if="$1" of="$2" bs=4096 skip="$3" seek="$3" count=1 conv=notrunc \
	    status=none
}

write_lines "$L/app.log" m0 0 3000
start_agent "$TMP/agent.ini"
await_records s1 30 "$L/app.log"

# 1: empty at first.
: >"$L/app.log.c1"
seen app.log.c1
cat "$L/app.log" >>"$L/app.log.c1"
truncate_and_go_on m1
await_records s1 30 "$L/app.log.c1" "$L/app.log"
check_records s1 "$L/app.log.c1" "$L/app.log"

# 2: 100 bytes at first.
write_lines "$L/app.log" m2 0 2000
await_records s1 30 "$L/app.log.c1" "$L/app.log"
head -c 100 "$L/app.log" >"$L/app.log.c2"
seen app.log.c2
tail -c +101 "$L/app.log" >>"$L/app.log.c2"
truncate_and_go_on m3
await_records s1 30 "$L/app.log.c1" "$L/app.log.c2" "$L/app.log"
check_records s1 "$L/app.log.c1" "$L/app.log.c2" "$L/app.log"

# 3: a chunk a second, for more than 3 s.
write_lines "$L/app.log" m4 0 2000
await_records s1 30 "$L/app.log.c1" "$L/app.log.c2" "$L/app.log"
for i in 0 1 2 3 4; do
	chunk "$L/app.log" "$L/app.log.c3" "$i"
	wait_progress 1
done
tail -c +$((5 * 4096 + 1)) "$L/app.log" >>"$L/app.log.c3"
cmp -s "$L/app.log" "$L/app.log.c3" || fail "copy 3 differs"
truncate_and_go_on m5
await_records s1 30 "$L/app.log.c1" "$L/app.log.c2" "$L/app.log.c3" \
    "$L/app.log"
check_records s1 "$L/app.log.c1" "$L/app.log.c2" "$L/app.log.c3" \
    "$L/app.log"

# 4: 100,000 bytes before the truncation, the rest after it.
write_lines "$L/app.log" m6 0 3000
await_records s1 30 "$L/app.log.c1" "$L/app.log.c2" "$L/app.log.c3" \
    "$L/app.log"
cp "$L/app.log" "$TMP/app.log.before"
head -c 100000 "$L/app.log" >"$L/app.log.c4"
seen app.log.c4
restarts=$(grep -c "app.log: truncated or rewritten" "$TMP/agent.log" || true)
truncate_and_go_on m7
wait_for 30 "the agent to see the truncation" \
    mentions "app.log: truncated or rewritten" "$restarts"
wait_for 30 "the agent to look at app.log.c4 again" mentions \
    "app.log.c4 is a copy of\|app.log.c4: its head is the one"
tail -c +100001 "$TMP/app.log.before" >>"$L/app.log.c4"
cmp -s "$TMP/app.log.before" "$L/app.log.c4" || fail "copy 4 differs"
await_records s1 30 "$L/app.log.c1" "$L/app.log.c2" "$L/app.log.c3" \
    "$L/app.log.c4" "$L/app.log"

wait_for 30 "the four copies recognised" \
    mentions "app.log.c4 is a copy of .* taken before its truncation"
[ "$(grep -c "is a copy of .* taken before its truncation" \
    "$TMP/agent.log")" = 4 ] || fail "not four copies recognised"
# Long enough for a resent copy or a late duplicate to show.
wait_progress 2
stop_agent
check_records s1 "$L/app.log.c1" "$L/app.log.c2" "$L/app.log.c3" \
    "$L/app.log.c4" "$L/app.log"
pass
