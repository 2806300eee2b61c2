#!/bin/sh
# 2,000 small whole files at once (every seventh without a final
# delimiter): each is sent exactly once and renamed, while the agent's
# descriptors stay within maxOpenFiles (16) plus the one it may be
# measuring, and its memory within the usual bound.  Requests are small
# (30 records) and the endpoint answers in 50 ms, so the sending takes a
# few seconds and the descriptor sampling sees it: at full speed all 2,000
# went in 0.25 s, and one CI run sampled no open file at all.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

N=2000
start_server --stream s1 --latency-ms 50
mkdir -p "$TMP/in"
"$PYTHON3" - "$TMP/in" "$TMP/expect.txt" "$N" <<'PY'
import os, sys
d, expect, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
with open(expect, "w") as ex:
    for i in range(n):
        lines = ["f%04d %d payload" % (i, k) for k in range(3)]
        body = "\n".join(lines) + ("" if i % 7 == 0 else "\n")
        with open(os.path.join(d, "f%04d.csv" % i), "w") as f:
            f.write(body)
        ex.write("\n".join(lines) + "\n")
PY

write_conf "$TMP/agent.ini"
add_flow "$TMP/agent.ini" w s1 "$TMP/in/*.csv" "isFileAppendable = false" \
    "maxFileCheckingMillis = 500" "rescanIntervalMillis = 1000" \
    "maxOpenFiles = 16" "maxBufferSizeRecords = 30"
start_agent "$TMP/agent.ini"

# The agent's descriptors on files of the flow now; the most seen.
fds() {
	find "/proc/$AGENT_PID/fd" -lname "$TMP/in/*" 2>/dev/null | wc -l
}
max=0
renamed() { ls "$TMP/in" | grep -c '\.csv\.COMPLETED$' || true; }
deadline=$(( $(date +%s) + 300 ))
while [ "$(renamed)" -lt "$N" ]; do
	n=$(fds)
	[ "$n" -gt "$max" ] && max=$n
	[ "$(date +%s)" -lt "$deadline" ] ||
		fail "only $(renamed) of $N files renamed in time"
	sleep 0.1
done
echo "descriptors on the flow's files: at most $max while sending $N files"
# maxOpenFiles bounds the files being read.  Besides them the agent opens
# a file for a moment, and closes it in the same loop pass, to measure it
# (its head, or its first and last bytes before the cleanup); one thread,
# so one such descriptor at most, which a sample can catch.
[ "$max" -le 17 ] ||
	fail "$max files open at once, more than maxOpenFiles and one measured"
[ "$max" -gt 0 ] || fail "no file was ever seen open (test too weak)"
[ "$(ls "$TMP/in" | grep -c '\.csv$' || true)" = 0 ] ||
	fail "some files were not renamed"
stop_agent
records verify --records "$TMP/records.jsonl" --stream s1 \
    --expect "$TMP/expect.txt" || fail "records differ"
# A figure for the log, not a bound: from the first file ready to the
# last rename.
"$PYTHON3" - "$TMP/agent.log" "$N" <<'PY'
import datetime, sys
t = lambda l: datetime.datetime.strptime(l[:23], "%Y-%m-%d %H:%M:%S.%f")
lines = open(sys.argv[1]).read().splitlines()
ready = [t(l) for l in lines if "stayed unchanged" in l]
done = [t(l) for l in lines if "delivered; renamed to" in l]
print("%s files: %.2f s from the first ready to the last renamed" % (
    sys.argv[2], (max(done) - min(ready)).total_seconds()))
PY
pass
