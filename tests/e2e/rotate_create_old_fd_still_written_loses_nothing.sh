#!/bin/sh
# logrotate `create` renames app.log while the application keeps writing to
# its old open descriptor for two seconds (over several rescans) before it
# reopens app.log: the lines written to the renamed file after the rename
# arrive too, and so do those of the new app.log, each once, in file order.
# The renamed file is closed only after it stops growing (R1).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/rotate_lib.sh"

start_server --stream s1
mkdir -p "$TMP/logs"
lr_conf "$TMP/logs/app.log {
	rotate 5
	create 0644 root root
	nocompress
}"
write_conf "$TMP/agent.ini"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/app.log" "ordered = true" \
    "rescanIntervalMillis = 300"

# The application: phase a, then (after the rotation) phase b through the
# same descriptor in 20 bursts 0.1 s apart, then it reopens app.log for
# phase c.
"$PYTHON3" - "$TMP/logs/app.log" "$TMP" <<'PY' &
import os, sys, time
path, tmp = sys.argv[1], sys.argv[2]
pad = "x" * 60
def lines(tag, a, b):
    return "".join("%s %07d %s\n" % (tag, i, pad)
                   for i in range(a, b)).encode()
fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
os.write(fd, lines("a", 0, 5000))
open(tmp + "/phase-a", "w").close()
while not os.path.exists(tmp + "/rotated"):
    time.sleep(0.01)
for burst in range(20):
    os.write(fd, lines("b", burst * 250, (burst + 1) * 250))
    time.sleep(0.1)
os.close(fd)
fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
os.write(fd, lines("c", 0, 5000))
os.close(fd)
open(tmp + "/phase-c", "w").close()
PY
WRITER_PID=$!

start_agent "$TMP/agent.ini"
wait_for 30 "the application's first lines" test -e "$TMP/phase-a"
wait_for 30 "the first records" count_at_least s1 1
lr_rotate
: >"$TMP/rotated"
wait_for 60 "the application to finish" test -e "$TMP/phase-c"
wait "$WRITER_PID" || fail "the application failed"
WRITER_PID=
[ "$(lines_in "$TMP/logs/app.log.1")" = 10000 ] ||
	fail "app.log.1 does not hold phases a and b"

await_records s1 30 "$TMP/logs/app.log.1" "$TMP/logs/app.log"
stop_agent
check_records s1 "$TMP/logs/app.log.1" "$TMP/logs/app.log"
pass
