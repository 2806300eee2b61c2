#!/bin/sh
# inotify queue overflow (R8): correctness never depends on an event.  The
# agent starts while /proc/sys/fs/inotify/max_queued_events is 16 (a queue's
# size is fixed when it is created; the old value is restored as soon as the
# agent's watch exists, since the setting is global).
#  1. With the agent held by SIGSTOP, 300 writes each to two tracked files
#     (alternating, so the kernel cannot merge them) fill the queue with
#     "modified" events, and the "created" events of 10 new files that
#     follow are dropped: only the periodic rescan can find those files.
#  2. With the agent running, 50,000 create/unlink pairs interleaved with
#     300 single-line writes to a tracked file and 10 new files.
# Every line arrives exactly once, in file order.  Without a writable
# setting, phase 1 writes enough to overflow the default queue.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/rotate_lib.sh"

QUEUE=/proc/sys/fs/inotify/max_queued_events
old_queue=
writes=300

start_server --stream s1
mkdir -p "$TMP/logs"
write_lines "$TMP/logs/app.log" seed 0 10
write_lines "$TMP/logs/b.log" bseed 0 10
write_conf "$TMP/agent.ini"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/*.log" "ordered = true" \
    "rescanIntervalMillis = 1000"
also_on_exit '[ -n "$AGENT_PID" ] && kill -CONT "$AGENT_PID" 2>/dev/null;
    [ -n "$old_queue" ] && echo "$old_queue" >"$QUEUE"'

if old_queue=$(cat "$QUEUE" 2>/dev/null) && echo 16 2>/dev/null >"$QUEUE"
then
	:
else
	echo "note: $QUEUE is not writable; overflowing the default queue" >&2
	old_queue=
	writes=9000
fi
start_agent "$TMP/agent.ini"
# The first records prove the flow started, so its watch exists.
await_records s1 30 "$TMP/logs/app.log" "$TMP/logs/b.log"
if [ -n "$old_queue" ]; then
	echo "$old_queue" >"$QUEUE"
	old_queue=
fi

# Phase 1: modifications fill the held agent's queue, creations are lost.
kill -STOP "$AGENT_PID"
"$PYTHON3" - "$TMP/logs" "$writes" <<'PY'
import os, sys
d, writes = sys.argv[1], int(sys.argv[2])
pad = "x" * 60
fds = [os.open(os.path.join(d, n), os.O_WRONLY | os.O_APPEND)
       for n in ("app.log", "b.log")]
for w in range(writes):
    for k, fd in enumerate(fds):
        os.write(fd, ("held%d %07d %s\n" % (k, w, pad)).encode())
for fd in fds:
    os.close(fd)
for n in range(10):
    with open(os.path.join(d, "held-%02d.log" % n), "w") as f:
        f.write("".join("held-%02d %07d %s\n" % (n, k, pad)
                        for k in range(3)))
PY
kill -CONT "$AGENT_PID"
set -- "$TMP"/logs/*.log
[ $# = 12 ] || fail "expected 12 files, found $#"
await_records s1 30 "$@"
check_records s1 "$@"

# Phase 2: a burst of 50,000 create/unlink pairs with the agent running.
"$PYTHON3" - "$TMP/logs" <<'PY'
import os, sys
d = sys.argv[1]
pad = "x" * 60
app = os.path.join(d, "app.log")
w = n = 0
for i in range(50000):
    p = os.path.join(d, "burst-%d.tmp" % i)
    os.close(os.open(p, os.O_WRONLY | os.O_CREAT, 0o644))
    os.unlink(p)
    if i % 166 == 165 and w < 300:
        with open(app, "a") as f:
            f.write("ovf %07d %s\n" % (w, pad))
        w += 1
    if i % 5000 == 4999:
        with open(os.path.join(d, "new-%02d.log" % n), "w") as f:
            f.write("".join("new-%02d %07d %s\n" % (n, k, pad)
                            for k in range(3)))
        n += 1
assert w == 300 and n == 10, (w, n)
PY
set -- "$TMP"/logs/*.log
[ $# = 22 ] || fail "expected 22 files, found $#"
await_records s1 30 "$@"
stop_agent
check_records s1 "$@"
pass
