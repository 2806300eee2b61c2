# Helpers for the rotation and tailing end-to-end tests (rotate_*.sh,
# tail_*.sh): the real logrotate with a private state file and config, a
# background writer that appends numbered lines in batches, waiting on the
# agent's own clock (its progress lines), and checking that the records of a
# stream are exactly the lines of a set of files, in file order.  Sourced
# after lib.sh.

# The logrotate binary; tests that need it skip (exit 77) without it.
: "${LOGROTATE:=$(command -v logrotate 2>/dev/null || echo /usr/sbin/logrotate)}"

WRITER_PID=

# skip REASON: the scenario cannot run here (automake's SKIP status).
skip() {
	echo "SKIP: $E2E_NAME: $*" >&2
	E2E_OK=1
	exit 77
}

# also_on_exit COMMAND: run COMMAND (a string) before lib.sh's cleanup,
# keeping the script's exit status.  One hook per test.
also_on_exit() {
	E2E_EXIT_HOOK=$1
}

E2E_EXIT_HOOK=:
rot_cleanup() {
	eval "$E2E_EXIT_HOOK" || true
	[ -n "$WRITER_PID" ] && kill "$WRITER_PID" 2>/dev/null || true
}
trap 'rot_rc=$?; set +e; rot_cleanup; (exit $rot_rc); e2e_cleanup' EXIT

# lr_conf BODY [CONF]: a logrotate config, $TMP/lr.conf by default, not
# writable by others (logrotate refuses anything else).  Needs root.
lr_conf() {
	[ -x "$LOGROTATE" ] || skip "no logrotate binary"
	[ "$(id -u)" = 0 ] || skip "logrotate's create root root needs root"
	printf '%s\n' "$1" >"${2:-$TMP/lr.conf}"
	chmod 0644 "${2:-$TMP/lr.conf}"
}

# lr_rotate [CONF]: one forced rotation with the private state file.  Holds
# the writer's lock, so a batch is never split between two generations.
lr_rotate() {
	: >>"$TMP/writer.lock"
	flock "$TMP/writer.lock" "$LOGROTATE" -v -s "$TMP/lr.state" \
	    -f "${1:-$TMP/lr.conf}" >>"$TMP/logrotate.log" 2>&1 ||
		fail "logrotate failed; see $TMP/logrotate.log"
}

# writer_start FILE TAG: append "TAG NNNNNNN payload" lines to FILE in
# batches of 100, reopening FILE by name for each batch, until writer_stop.
# $TMP/writer.count holds how many lines are written so far.
writer_start() {
	rm -f "$TMP/writer.stop" "$TMP/writer.count"
	: >>"$TMP/writer.lock"
	"$PYTHON3" - "$1" "$2" "$TMP/writer.lock" "$TMP/writer.stop" \
	    "$TMP/writer.count" <<'PY' &
import fcntl, os, sys, time
path, tag, lock, stop, countf = sys.argv[1:6]
pad = "x" * 60
seq = 0
with open(lock, "a") as lk:
    while not os.path.exists(stop):
        fcntl.flock(lk, fcntl.LOCK_EX)
        with open(path, "a") as f:
            f.write("".join("%s %07d %s\n" % (tag, i, pad)
                            for i in range(seq, seq + 100)))
        fcntl.flock(lk, fcntl.LOCK_UN)
        seq += 100
        with open(countf + ".tmp", "w") as c:
            c.write("%d\n" % seq)
        os.rename(countf + ".tmp", countf)
        time.sleep(0.005)
PY
	WRITER_PID=$!
	wait_for 20 "the writer to start" test -s "$TMP/writer.count"
}

# paced_writer DIR FILES RATE SECONDS: in the background (PACED_PID),
# append to DIR/f1.log ... DIR/fFILES.log in turn, RATE lines a second
# each, for SECONDS: "T=<write time ns> fNN n=NNNNNN payload".
paced_writer() {
	"$PYTHON3" - "$@" <<'PY' &
import os, sys, time
d, files, rate, secs = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), \
    float(sys.argv[4])
fds = [os.open(os.path.join(d, "f%d.log" % (i + 1)),
               os.O_WRONLY | os.O_APPEND) for i in range(files)]
per_s = files * rate
start = time.monotonic()
for j in range(int(secs * per_s)):
    due = start + j / per_s
    now = time.monotonic()
    if due > now:
        time.sleep(due - now)
    os.write(fds[j % files], b"T=%019d f%02d n=%06d %s\n" % (
        time.time_ns(), j % files, j // files, b"p" * 40))
PY
	PACED_PID=$!
}

# main_switches: voluntary context switches of the agent's main thread so
# far (each a sleep its loop woke from).
main_switches() {
	awk '/^voluntary_ctxt_switches/ { print $2 }' \
	    "/proc/$AGENT_PID/task/$AGENT_PID/status"
}

# switches_per_s SECONDS: the main thread's voluntary switches a second
# over the next SECONDS.
switches_per_s() {
	_a=$(main_switches)
	sleep "$1"
	echo $(( ($(main_switches) - _a) / $1 ))
}

# writer_count: lines the writer has written so far.
writer_count() {
	cat "$TMP/writer.count" 2>/dev/null || echo 0
}

writer_at_least() {
	[ "$(writer_count)" -ge "$1" ]
}

writer_stop() {
	: >"$TMP/writer.stop"
	wait "$WRITER_PID" || fail "the writer failed"
	WRITER_PID=
}

# progress_lines: how many status reports the agent has logged (one a
# second with lib.sh's config): the agent's own clock.
progress_lines() {
	_n=$(grep -c "Agent: Progress:" "$TMP/agent.log" 2>/dev/null) || true
	echo "${_n:-0}"
}

progress_at_least() {
	[ "$(progress_lines)" -ge "$1" ]
}

# wait_progress N: until the agent has logged N more status reports, so
# that its timers (rescans, age flushes) have run for about N seconds.
wait_progress() {
	_target=$(( $(progress_lines) + $1 ))
	wait_for $(( $1 * 5 + 20 )) "$1 more progress lines" \
	    progress_at_least "$_target"
}

# lines_in FILE...: complete lines in all of them.
lines_in() {
	cat "$@" | wc -l | tr -d ' '
}

records_of() {
	records count --records "$TMP/records.jsonl" --stream "$1" \
	    2>/dev/null || echo 0
}

# await_records STREAM SECONDS FILE...: wait until STREAM holds as many
# records as the files have lines.  On a timeout this only reports: the
# caller stops the agent and check_records shows what is wrong.
await_records() {
	_s=$1; _t=$2; shift 2
	_n=$(lines_in "$@")
	records wait --records "$TMP/records.jsonl" --stream "$_s" \
	    --count "$_n" --timeout "$_t" >&2 ||
		echo "note: $_s did not reach $_n records in ${_t}s" >&2
}

# check_records STREAM FILE...: every line of the files arrived on STREAM
# exactly once, in file order per file, and nothing else did.
check_records() {
	_s=$1; shift
	_nf=$#
	for _f; do set -- "$@" --expect "$_f"; done
	shift "$_nf"
	records verify --records "$TMP/records.jsonl" --stream "$_s" \
	    --ordered "$@" ||
		fail "stream $_s: records differ from the lines written"
}

# agent_fd_to PATTERN: the running agent holds a descriptor whose target
# matches the grep PATTERN.
agent_fd_to() {
	ls -l "/proc/$AGENT_PID/fd" 2>/dev/null | grep -q -- "$1"
}
