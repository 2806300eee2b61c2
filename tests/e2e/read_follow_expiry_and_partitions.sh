#!/bin/sh
# disagent read --follow, while the agent ships: only lines written after
# it started arrive, each exactly once, although every cursor expires
# between polls (the endpoint keeps them 300 ms, read polls every second)
# and is renewed from the last sequence number; a partition added midway
# is picked up, one expired midway is dropped with a note, and SIGINT
# ends the command with status 0.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

start_server --stream s1:COMMON:2 --cursor-ttl-ms 300
mkdir -p "$TMP/logs"
write_conf "$TMP/agent.ini"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/*.log"
write_lines "$TMP/logs/x.log" old 0 500
start_agent "$TMP/agent.ini"
wait_for 60 "the old lines" count_at_least s1 500

"$DISAGENT" read -c "$TMP/agent.ini" s1 --follow >"$TMP/out" \
    2>"$TMP/read.err" &
READ_PID=$!
E2E_PIDS=$READ_PID
reads() { [ "$(stat_of get_records_requests)" -ge "$1" ]; }
lines_out() { [ "$(wc -l <"$TMP/out")" -ge "$1" ]; }
expired() { [ "$(grep -c 'error=DIS.4225' "$TMP/server.log")" -ge "$1" ]; }
# Both partitions polled at least once: read is at the end of the data.
wait_for 60 "read to poll both partitions" reads 2

# Bursts with pauses: each time the cursors have expired when data comes.
n=0
for burst in 1 2 3; do
	write_lines "$TMP/logs/x.log" new $n $((n + 200))
	n=$((n + 200))
	wait_for 60 "$n new lines shipped" count_at_least s1 $((500 + n))
	wait_for 60 "$n new lines from read" lines_out $n
	e=$(grep -c 'error=DIS.4225' "$TMP/server.log" || true)
	wait_for 60 "a cursor to expire" expired $((e + 1))
done

# A third partition, while following.
control POST /_test/streams/s1/partitions '{"count": 3}' >/dev/null ||
	fail "cannot add a partition"
wait_for 60 "read to see the new partition" \
    grep -q "new partition shardId-0000000002" "$TMP/read.err"
write_lines "$TMP/logs/x.log" new $n $((n + 300))
n=$((n + 300))
wait_for 60 "$n new lines shipped" count_at_least s1 $((500 + n))
wait_for 60 "$n new lines from read" lines_out $n
records dump --records "$TMP/records.jsonl" --stream s1 \
    --partition shardId-0000000002 | grep -q '^new ' ||
	fail "no new line went to the new partition"

# The first partition expires (a scale-down): read goes on without it.
control POST /_test/streams/s1/partitions '{"expire": "0"}' >/dev/null ||
	fail "cannot expire a partition"
write_lines "$TMP/logs/x.log" new $n $((n + 200))
n=$((n + 200))
wait_for 60 "$n new lines shipped" count_at_least s1 $((500 + n))
wait_for 60 "$n new lines from read" lines_out $n
wait_for 30 "a note on the expired partition" \
    grep -q "partition shardId-0000000000 expired" "$TMP/read.err"

kill -INT "$READ_PID"
rc=0; wait "$READ_PID" || rc=$?
[ "$rc" = 0 ] || fail "read --follow exited $rc after SIGINT"

# Exactly the new lines: none of the old, none twice, none missing.
grep -c '^old ' "$TMP/out" >/dev/null && fail "old lines were printed"
"$PYTHON3" - "$TMP/logs/x.log" "$TMP/out" <<'PY' || fail "lines differ"
import sys
want = [l for l in open(sys.argv[1]) if l.startswith("new ")]
got = open(sys.argv[2]).readlines()
dups = len(got) - len(set(got))
missing = set(want) - set(got)
print("want %d, got %d, duplicates %d, missing %d" % (
    len(want), len(got), dups, len(missing)))
sys.exit(0 if not dups and not missing and len(got) == len(want) else 1)
PY
stop_agent
no_secret_in "$TMP/read.err"
pass
