#!/bin/sh
# disagent read --follow --app: while it follows, the app's checkpoints
# reach the endpoint within a few seconds of the records being printed
# (no exit needed); SIGINT ends it with status 0 and the checkpoints at
# the last record printed of each partition; records shipped while it
# is stopped are printed by the next run, which SIGTERM ends the same
# way; between the two runs every record is printed exactly once.  Into
# `| head -5`, it ends when head leaves (EPIPE) and commits what it had
# flushed.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

start_server --stream s1:COMMON:2 --stream s2:COMMON:1
mkdir -p "$TMP/logs" "$TMP/big"
write_conf "$TMP/agent.ini"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/*.log"
add_flow "$TMP/agent.ini" big s2 "$TMP/big/*.log"
ship() {
	write_lines "$TMP/logs/x.log" x "$1" "$2"
	"$DISAGENT" -c "$TMP/agent.ini" --once >>"$TMP/agent.log" 2>&1 ||
		fail "--once exited $?"
}
lines() { [ "$(wc -l <"$1" 2>/dev/null || echo 0)" -ge "$2" ]; }
not_running() { ! kill -0 "$1" 2>/dev/null; }

# cps_at APP FILE...: the app's checkpoints are the last records of each
# partition in the JSON lines of FILE... (and there is one per partition
# seen there).
cps_at() {
	control GET /_test/apps >"$TMP/apps.json" || return 1
	"$PYTHON3" - "$TMP/apps.json" "$@" <<'PY'
import json, sys
apps = json.load(open(sys.argv[1]))["apps"]
app = sys.argv[2]
last = {}
for path in sys.argv[3:]:
    for line in open(path):
        r = json.loads(line)
        p, n = r["partition"], int(r["sequence_number"])
        last[p] = max(last.get(p, -1), n)
cps = apps.get(app, {}).get("checkpoints", {}).get("s1", {})
got = {p: int(c["sequence_number"]) for p, c in cps.items()}
sys.exit(0 if got == last and last else 1)
PY
}

# follow APP OUT: read --follow --app in the background.
follow() {
	"$DISAGENT" read -c "$TMP/agent.ini" s1 --follow --app "$1" \
	    --format json >"$2" 2>>"$TMP/follow.err" &
	READ_PID=$!
	E2E_PIDS="$E2E_PIDS $READ_PID"
}
# stop_read SIGNAL: the reader ends with status 0.
stop_read() {
	kill -"$1" "$READ_PID"
	wait_for 30 "read to end after SIG$1" not_running "$READ_PID"
	_rc=0; wait "$READ_PID" || _rc=$?
	[ "$_rc" = 0 ] || fail "read --follow --app exited $_rc after SIG$1"
}

ship 0 200
follow f1 "$TMP/out1"
wait_for 60 "200 records printed" lines "$TMP/out1" 200
# Committed while it runs: every few seconds, not only at the end.
wait_for 20 "the checkpoints of a running reader" cps_at f1 "$TMP/out1"
ship 200 300
wait_for 60 "300 records printed" lines "$TMP/out1" 300
stop_read INT
cps_at f1 "$TMP/out1" || fail "after SIGINT the checkpoints are not the last printed"

ship 300 450
follow f1 "$TMP/out2"
wait_for 60 "150 more records printed" lines "$TMP/out2" 150
stop_read TERM
cps_at f1 "$TMP/out1" "$TMP/out2" ||
	fail "after SIGTERM the checkpoints are not the last printed"
"$PYTHON3" - "$TMP/out1" "$TMP/out2" >"$TMP/got-ids" <<'PY'
import json, sys
for path in sys.argv[1:]:
    for line in open(path):
        r = json.loads(line)
        print(r["partition"], r["sequence_number"])
PY
records dump --records "$TMP/records.jsonl" --stream s1 --ids | sort >"$TMP/want-ids"
sort "$TMP/got-ids" | cmp -s "$TMP/want-ids" - ||
	fail "the two runs did not print every record exactly once"
grep -q "created app f1" "$TMP/follow.err" || fail "no 'created app f1'"
[ "$(grep -c . "$TMP/follow.err")" = 1 ] ||
	fail "read wrote more to stderr: $(cat "$TMP/follow.err")"

# into_head OUT READ-ARGS...: disagent read READ-ARGS... | head -n 5 >OUT;
# the reader ends with status 0 once head has left, and head got 5 lines.
into_head() {
	_out=$1; shift
	rm -f "$TMP/fifo"; mkfifo "$TMP/fifo"
	"$DISAGENT" read -c "$TMP/agent.ini" "$@" >"$TMP/fifo" \
	    2>"$_out.err" &
	READ_PID=$!
	E2E_PIDS="$E2E_PIDS $READ_PID"
	head -n 5 <"$TMP/fifo" >"$_out"
	wait_for 30 "read to end after head left" not_running "$READ_PID"
	_rc=0; wait "$READ_PID" || _rc=$?
	[ "$_rc" = 0 ] || fail "read $* | head exited $_rc"
	[ "$(wc -l <"$_out")" = 5 ] || fail "head got $(wc -l <"$_out") lines"
}

# Into head: EPIPE ends it, and what it flushed is committed.
into_head "$TMP/head" s1 --follow --app f2
control GET /_test/apps | "$PYTHON3" -c '
import json, sys
cps = json.load(sys.stdin)["apps"]["f2"]["checkpoints"]["s1"]
sys.exit(0 if cps and all(int(c["sequence_number"]) >= 0
                          for c in cps.values()) else 1)' ||
	fail "read | head committed no checkpoint"

# A backlog much larger than a pipe holds, into head: the records written
# before head left count as printed, though the write that follows fails
# (with stdio, its own writes of a full buffer were never counted, and an
# app reading such a backlog into `| head` committed nothing).
"$PYTHON3" - "$TMP/big/b.log" <<'PY'
import sys
with open(sys.argv[1], "a") as f:
    f.write("".join("big %05d %s\n" % (i, "b" * 1000) for i in range(400)))
PY
"$DISAGENT" -c "$TMP/agent.ini" --once >>"$TMP/agent.log" 2>&1 ||
	fail "--once exited $?"
into_head "$TMP/head3" s2 --app f3
control GET /_test/apps >"$TMP/apps3.json"
"$PYTHON3" - "$TMP/apps3.json" <<'PY' ||
import json, sys
cps = json.load(open(sys.argv[1]))["apps"]["f3"]["checkpoints"].get("s2", {})
sys.exit(0 if any(int(c["sequence_number"]) >= 4 for c in cps.values())
         else 1)
PY
	fail "read of a backlog | head committed no checkpoint: $(cat "$TMP/apps3.json" "$TMP/head3.err")"
# Standard output that takes nothing (a full disk): an error, and no
# record counts as printed (stdio dropped its buffer on the failed write
# and the next fflush succeeded, so that its records were committed).
rc=0
"$DISAGENT" read -c "$TMP/agent.ini" s2 --app f4 >/dev/full \
    2>"$TMP/full.err" || rc=$?
[ "$rc" = 1 ] || fail "read --app >/dev/full exited $rc"
grep -q "standard output: No space left on device" "$TMP/full.err" ||
	fail "no error for a full standard output: $(cat "$TMP/full.err")"
control GET /_test/apps >"$TMP/apps4.json"
"$PYTHON3" - "$TMP/apps4.json" <<'PY' ||
import json, sys
cps = json.load(open(sys.argv[1]))["apps"]["f4"]["checkpoints"].get("s2", {})
sys.exit(0 if all(int(c["sequence_number"]) < 0 for c in cps.values())
         else 1)
PY
	fail "records written nowhere were committed: $(cat "$TMP/apps4.json")"
[ "$(stat_of auth_failures)" = 0 ] || fail "the endpoint rejected signatures"
pass
