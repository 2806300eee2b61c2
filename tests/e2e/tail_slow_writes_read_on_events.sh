#!/bin/sh
# readCoalesceMillis pauses the watches only when writes come faster than
# a scan of every file costs: a quarter as many writes in one window as
# there are files (here 5).  20 files appended one after another, 0.3 s
# apart (at most 1 write in a 100 ms window), are read on their events,
# and the watches never pause; 60 appends round the files within a few
# milliseconds do pause them.  (Before, the first write paused them, and
# at a slow pace each window's scan cost more than the writes: latency-low
# of the bench, 0.25 CPU-s against 0.14.)  Every line arrives exactly
# once, in order.
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

# Never two appends closer than 0.3 s, even when the writer falls behind:
# 5 writes in one 100 ms window of the agent then need it to stall for
# over a second.
"$PYTHON3" - "$TMP/logs" <<'PY'
import os, sys, time
d = sys.argv[1]
for j in range(20):                     # 6 s, one append to each file
    time.sleep(0.3)
    with open(os.path.join(d, "f%d.log" % (j % 20 + 1)), "a") as f:
        f.write("slow %03d %s\n" % (j, "s" * 40))
PY
set -- "$TMP"/logs/*.log
await_records s1 30 "$@"
[ "$(paused)" = 0 ] ||
	fail "the watches paused at 3 writes a second over 20 files"

# The burst goes round the files: inotify merges a write event into the
# one before it only when both name the same file.
"$PYTHON3" - "$TMP/logs" <<'PY'
import os, sys
d = sys.argv[1]
fds = [os.open(os.path.join(d, "f%d.log" % (i + 1)), os.O_WRONLY | os.O_APPEND)
       for i in range(20)]
for j in range(60):
    os.write(fds[j % 20], b"fast %03d %s\n" % (j, b"f" * 40))
PY
await_records s1 30 "$@"
[ "$(paused)" -ge 1 ] || fail "60 writes in a burst did not pause the watches"
stop_agent
check_records s1 "$@"
pass
