#!/bin/sh
# readCoalesceMillis pauses the watches only when writes come faster than
# a scan of every file costs: a quarter as many writes in one window as
# there are files.  20 files each appended every 2 s (10 writes a second
# in all, 1 in a 100 ms window) are read on their events, and the watches
# never pause; 60 appends to one of them within a few milliseconds do
# pause them.  (Before, the first write paused them, and at a slow pace
# each window's scan cost more than the writes: latency-low of the bench,
# 0.25 CPU-s against 0.14.)  Every line arrives exactly once, in order.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/rotate_lib.sh"

start_server --stream s1
mkdir -p "$TMP/logs"
for i in $(seq 1 20); do : >"$TMP/logs/f$i.log"; done
write_conf "$TMP/agent.ini"
sed -i 's/^logLevel = .*/logLevel = DEBUG/' "$TMP/agent.ini"
grep -q '^logLevel = DEBUG' "$TMP/agent.ini" ||
	sed -i 's/^\[agent\]$/[agent]\nlogLevel = DEBUG/' "$TMP/agent.ini"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/*.log" \
    "readCoalesceMillis = 100" "rescanIntervalMillis = 60000"
start_agent "$TMP/agent.ini"
wait_for 30 "the stream described" grep -q "type is COMMON" "$TMP/agent.log"
paused() { grep -c "watches paused" "$TMP/agent.log" || true; }

"$PYTHON3" - "$TMP/logs" <<'PY'
import os, sys, time
d = sys.argv[1]
start = time.monotonic()
for j in range(60):                     # 6 s: each file every 2 s
    due = start + j * 0.1
    time.sleep(max(0, due - time.monotonic()))
    with open(os.path.join(d, "f%d.log" % (j % 20 + 1)), "a") as f:
        f.write("slow %03d %s\n" % (j, "s" * 40))
PY
set -- "$TMP"/logs/*.log
await_records s1 30 "$@"
[ "$(paused)" = 0 ] ||
	fail "the watches paused at 10 writes a second over 20 files"

"$PYTHON3" - "$TMP/logs/f1.log" <<'PY'
import sys
with open(sys.argv[1], "a", buffering=1) as f:
    for j in range(60):
        f.write("fast %03d %s\n" % (j, "f" * 40))
PY
await_records s1 30 "$@"
[ "$(paused)" -ge 1 ] || fail "60 writes in a burst did not pause the watches"
stop_agent
check_records s1 "$@"
pass
