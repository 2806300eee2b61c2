#!/bin/sh
# The README's first command, scripts/quickstart, as a newcomer runs it
# (with the binary under test instead of a build of its own): lines
# arrive, it runs twice in a row, and Ctrl-C stops the writer first and
# lets the agent deliver the rest, so the final counts match.  Its demo
# agent.ini holds a secret key and is mode 0600, and nothing it prints is
# a WARN or an ERROR.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

QS="$TMP/qs"
# Starts the quickstart with SIGINT at its default and in a process group
# of its own, as a terminal would (a shell without job control starts
# background commands with SIGINT ignored, and then it cannot be trapped).
LAUNCH='
import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.setpgid(0, 0)
os.execvp(sys.argv[1], sys.argv[1:])'

# The quickstart's processes (its writer, the agent, the endpoint) are
# those with its QUICKSTART_DIR in their environment.  PROCS SIG: send
# them SIG (0: none); exits 0 when there was one.
PROCS='
import os, sys
want = ("QUICKSTART_DIR=" + sys.argv[2]).encode()
found = False
for p in filter(str.isdigit, os.listdir("/proc")):
    try:
        env = open("/proc/%s/environ" % p, "rb").read().split(b"\0")
    except OSError:
        continue
    if int(p) != os.getpid() and want in env:
        found = True
        if sys.argv[1] != "0":
            try:
                os.kill(int(p), int(sys.argv[1]))
            except OSError:
                pass
sys.exit(0 if found else 1)'
# The agent and the endpoint run in sessions of their own: a test that
# fails half-way must not leave them, or the writer, behind.
E2E_ON_EXIT='"$PYTHON3" -c "$PROCS" 9 "$QS" || :'

# check_run OUT: the run's output shows lines arriving, ends with equal
# counts, and has no WARN or ERROR; its agent.ini is the owner's only.
check_run() {
	last=$(sed -n 's/.*records received by the endpoint: \([0-9]*\).*/\1/p' \
	    "$1" | tail -n 1)
	[ -n "$last" ] && [ "$last" -ge 1000 ] ||
		fail "$1: no progress line with the 1,000 backlog lines arrived"
	line=$(grep '^== stopped\.' "$1") || fail "$1: no final counts"
	written=$(echo "$line" | sed -n 's/.*Lines written: \([0-9]*\),.*/\1/p')
	received=$(echo "$line" | sed -n 's/.*records received: \([0-9]*\)$/\1/p')
	[ -n "$written" ] && [ "$written" -gt 1000 ] ||
		fail "$1: bad final line: $line"
	[ "$written" = "$received" ] || fail "$1: final counts differ: $line"
	grep -E 'WARN|ERROR' "$1" && fail "$1: the quickstart printed a WARN or ERROR"
	[ "$(stat -c %a "$QS/agent.ini")" = 600 ] ||
		fail "the demo agent.ini is mode $(stat -c %a "$QS/agent.ini")"
	no_secret_in "$QS/agent.log"
}

# 1. Twice in a row, stopping by itself.
for run in 1 2; do
	rc=0
	env QUICKSTART_DIR="$QS" QUICKSTART_BIN="$DISAGENT" \
	    "$PYTHON3" -c "$LAUNCH" sh "$top_srcdir/scripts/quickstart" \
	    --seconds 3 >"$TMP/run$run.out" 2>&1 || rc=$?
	[ "$rc" = 0 ] || { cat "$TMP/run$run.out" >&2; fail "run $run exited $rc"; }
	check_run "$TMP/run$run.out"
done

# 2. Ctrl-C: SIGINT to its process group, as the terminal sends it.
env QUICKSTART_DIR="$QS" QUICKSTART_BIN="$DISAGENT" \
    "$PYTHON3" -c "$LAUNCH" sh "$top_srcdir/scripts/quickstart" \
    >"$TMP/ctrlc.out" 2>&1 &
qpid=$!		# the process group's id too
E2E_PIDS="$qpid"
wait_for 60 "the first progress line" \
    grep -q 'records received by the endpoint' "$TMP/ctrlc.out"
kill -INT -- "-$qpid"
wait_for 30 "the quickstart to stop after Ctrl-C" \
    sh -c "! kill -0 $qpid 2>/dev/null"
rc=0; wait "$qpid" || rc=$?
[ "$rc" = 0 ] || { cat "$TMP/ctrlc.out" >&2; fail "Ctrl-C: exit status $rc"; }
grep -q 'the writer stopped; waiting for the agent' "$TMP/ctrlc.out" ||
	fail "Ctrl-C did not stop the writer first"
check_run "$TMP/ctrlc.out"
# Nothing of it is left running: writer, agent, endpoint (the writer's
# last "sleep 0.2" may outlive it by that long).
none_left() { ! "$PYTHON3" -c "$PROCS" 0 "$QS"; }
wait_for 10 "no process of the quickstart left after Ctrl-C" none_left
pass
