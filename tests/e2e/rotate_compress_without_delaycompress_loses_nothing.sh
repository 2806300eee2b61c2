#!/bin/sh
# logrotate with compress and no delaycompress, as distributions ship it:
# the rotated file is gzip'ed at once, so its inode is gone when the agent
# looks again.  The agent follows it into the .gz (its decompressed head is
# the file's fingerprint) and reads on from the committed offset:
#  1. while the agent is stopped, with 100 lines not yet delivered, and a
#     kill -9 in the middle of reading the .gz (restart resumes inside it);
#  2. with dateext names (app.log-YYYYMMDD-HHMMSS.gz);
#  3. while the agent runs far behind: the file is parked (maxOpenFiles)
#     and rotated while the agent is stopped with SIGSTOP.
# Every line arrives (exactly once where no kill happened); a file whose
# rest cannot be found is reported with its byte count, never silently.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/rotate_lib.sh"

start_server --stream s1 --stream s2 --stream s3
mkdir -p "$TMP/logs" "$TMP/dated" "$TMP/many" "$TMP/expect"
lr_conf "$TMP/logs/app.log {
	rotate 3
	create 0644 root root
	compress
}
$TMP/dated/app.log {
	rotate 3
	create 0644 root root
	compress
	dateext
	dateformat -%Y%m%d-%H%M%S
}"
lr_conf "$TMP/many/a.log {
	rotate 3
	create 0644 root root
	compress
}" "$TMP/lr-many.conf"
# A crash's restart waits for requests that may still land, at most
# socketTimeOutSeconds: 5 s keeps the test short.
write_conf "$TMP/agent.ini" "metricsFile = $TMP/disagent.prom" \
    "metricsIntervalMillis = 1000" "socketTimeOutSeconds = 5"
add_flow "$TMP/agent.ini" plain s1 "$TMP/logs/app.log" "ordered = true" \
    "maxBufferSizeRecords = 100"
add_flow "$TMP/agent.ini" dated s2 "$TMP/dated/app.log" "ordered = true"
log_has() { grep -q -- "$1" "$TMP/agent.log"; }

# --- 1 and 2: rotated and compressed while stopped ------------------------
write_lines "$TMP/logs/app.log" p 0 150
write_lines "$TMP/dated/app.log" d 0 150
start_agent "$TMP/agent.ini"
wait_for 30 "the first 300 lines" count_at_least s1 150
wait_for 30 "the first 150 dated lines" count_at_least s2 150
stop_agent
# 5,000 lines the agent has not seen, then the rotation.
write_lines "$TMP/logs/app.log" p 150 5150
write_lines "$TMP/dated/app.log" d 150 250
lr_rotate
[ -f "$TMP/logs/app.log.1.gz" ] && [ ! -e "$TMP/logs/app.log.1" ] ||
	fail "logrotate did not compress app.log at once"
ls "$TMP"/dated/app.log-*.gz >/dev/null || fail "no dateext .gz"
write_lines "$TMP/logs/app.log" q 0 50
write_lines "$TMP/dated/app.log" e 0 50

# Slow the endpoint so the 5,000 lines take a while, and kill -9 the agent
# in the middle of the .gz: the restart resumes inside it.
faults '{"latency_ms": 30}'
start_agent "$TMP/agent.ini"
wait_for 30 "reading on in the .gz" log_has "was compressed into $TMP/logs/app.log.1.gz; reading on from offset 10650"
wait_for 60 "part of the .gz" count_at_least s1 1500
kill -9 "$AGENT_PID"
wait "$AGENT_PID" 2>/dev/null || true
AGENT_PID=
faults '{"latency_ms": 0}'
mv "$TMP/agent.log" "$TMP/agent-killed.log"
start_agent "$TMP/agent.ini"
gzip -dc "$TMP/logs/app.log.1.gz" >"$TMP/expect/app.log.1"
for f in "$TMP"/dated/app.log-*.gz; do
	gzip -dc "$f" >"$TMP/expect/dated.1"
done
# With a kill -9, what was in flight arrives twice: wait for every line.
all_of_s1() {
	records verify --records "$TMP/records.jsonl" --stream s1 \
	    --allow-duplicates --expect "$TMP/expect/app.log.1" \
	    --expect "$TMP/logs/app.log"
}
wait_for 60 "every line of the .gz and of the new app.log" all_of_s1
await_records s2 60 "$TMP/expect/dated.1" "$TMP/dated/app.log"
check_records s2 "$TMP/expect/dated.1" "$TMP/dated/app.log"
stop_agent

# --- 3: parked, rotated and compressed while the agent is held ------------
cat >>"$TMP/agent.ini" <<EOF

[flow:many]
DISStream = s3
filePattern = $TMP/many/*.log
maxBufferAgeMillis = 200
maxOpenFiles = 8
watchMode = POLL
rescanIntervalMillis = 300
EOF
# Nine files, maxOpenFiles = 8 (the least allowed): the one quiet longest
# (a.log) is parked, its descriptor closed.
write_lines "$TMP/many/a.log" ma 0 200
for i in 1 2 3 4 5 6 7 8; do write_lines "$TMP/many/b$i.log" "mb$i" 0 50; done
: >"$TMP/agent.log"
start_agent "$TMP/agent.ini"
wait_for 30 "all nine files" count_at_least s3 600
for i in 1 2 3 4 5 6 7 8; do write_lines "$TMP/many/b$i.log" "mb$i" 50 60; done
wait_for 30 "the b files' new lines" count_at_least s3 680
wait_for 10 "a.log parked" sh -c "! ls -l /proc/$AGENT_PID/fd | grep -q many/a.log"
kill -STOP "$AGENT_PID"
write_lines "$TMP/many/a.log" ma 200 300
lr_rotate "$TMP/lr-many.conf"
kill -CONT "$AGENT_PID"
gzip -dc "$TMP/many/a.log.1.gz" >"$TMP/expect/a.log.1"
set --
for i in 1 2 3 4 5 6 7 8; do set -- "$@" "$TMP/many/b$i.log"; done
await_records s3 60 "$TMP/expect/a.log.1" "$@"
check_records s3 "$TMP/expect/a.log.1" "$@"
log_has "many/a.log (inode [0-9]*) was compressed into $TMP/many/a.log.1.gz" ||
	fail "the successor of the parked file is not reported"

# --- what cannot be followed is reported and counted ----------------------
# b1.log grows during an outage: the agent has read 40 lines it could not
# deliver when it stops.  Then, while it is stopped, b1.log is deleted
# (as rotate 0 would, or a compression the agent cannot read): those
# 40 lines of 73 bytes are lost, and said so.
faults '{"outage": true}'
n=$(stat_of dropped)
write_lines "$TMP/many/b1.log" mb1 60 100
wait_for 30 "the agent to try to send b1.log's new lines" \
    sh -c "[ \$(grep -c 'PutRecords to \[s3\] failed' '$TMP/agent.log') -ge 1 ]"
stop_agent
faults '{"outage": false}'
rm "$TMP/many/b1.log"
: >"$TMP/agent.log"
start_agent "$TMP/agent.ini"
wait_for 30 "the loss report" log_has "many/b1.log (inode [0-9]*) is gone with 2920 bytes after its committed offset that could not be delivered"
wait_for 30 "the lost bytes in the metrics" grep -q \
    'disagent_bytes_lost_total{flow="many",stream="s3",reason="gone"} 2920' \
    "$TMP/disagent.prom"
stop_agent
# Reported once: not again at the next start.
: >"$TMP/agent.log"
start_agent "$TMP/agent.ini"
wait_progress 2
log_has "is gone with" && fail "the loss was reported again after a restart"
stop_agent
for f in "$TMP"/agent*.log; do no_secret_in "$f"; done
pass
