#!/bin/sh
# disagent read --app with a checkpoint the partition no longer holds:
# after a trim past it, one WARN naming the partition and the checkpoint,
# then the partition is read from its oldest record, and the other
# partition goes on after its own checkpoint; the checkpoints then move
# to the new ends.  A checkpoint in range that a trim reached exactly is
# no warning.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

start_server --stream s1:COMMON:2
mkdir -p "$TMP/logs"
write_lines "$TMP/logs/x.log" x 0 400
write_conf "$TMP/agent.ini"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/*.log"
"$DISAGENT" -c "$TMP/agent.ini" --once >"$TMP/agent.log" 2>&1 ||
	fail "--once exited $?"
records dump --records "$TMP/records.jsonl" --stream s1 \
    --partition shardId-0000000000 >"$TMP/p0"
records dump --records "$TMP/records.jsonl" --stream s1 \
    --partition shardId-0000000001 >"$TMP/p1"
n0=$(wc -l <"$TMP/p0"); n1=$(wc -l <"$TMP/p1")
[ "$n0" -gt 60 ] && [ "$n1" -gt 60 ] || fail "partitions of $n0 and $n1 records"

# Partition 0 read up to 9, partition 1 up to 19, then partition 0
# trimmed below 50 (its records 10..49 expired unread) and partition 1
# below 20 (nothing unread lost).
control POST /_test/checkpoints '{"app_name": "c1", "stream_name": "s1",
    "partition_id": "0", "sequence_number": 9}' >/dev/null
control POST /_test/checkpoints '{"app_name": "c1", "stream_name": "s1",
    "partition_id": "1", "sequence_number": 19}' >/dev/null
control POST /_test/streams/s1/partitions \
    '{"trim": "shardId-0000000000", "before": 50}' >/dev/null
control POST /_test/streams/s1/partitions \
    '{"trim": "shardId-0000000001", "before": 20}' >/dev/null

"$DISAGENT" read -c "$TMP/agent.ini" s1 --app c1 >"$TMP/got" 2>"$TMP/err" ||
	fail "read --app exited $?: $(cat "$TMP/err")"
{ tail -n +51 "$TMP/p0"; tail -n +21 "$TMP/p1"; } | cmp -s - "$TMP/got" ||
	fail "read --app did not go on from the oldest record of partition 0 and after the checkpoint of partition 1"
[ "$(grep -c . "$TMP/err")" = 1 ] || fail "not one line on stderr: $(cat "$TMP/err")"
grep -q "partition shardId-0000000000: app c1's checkpoint 9 is outside the records the partition holds" "$TMP/err" ||
	fail "no WARN for the trimmed checkpoint: $(cat "$TMP/err")"

control GET /_test/apps | "$PYTHON3" -c '
import json, sys
cps = json.load(sys.stdin)["apps"]["c1"]["checkpoints"]["s1"]
want = {"shardId-0000000000": int(sys.argv[1]) - 1,
        "shardId-0000000001": int(sys.argv[2]) - 1}
got = {p: int(c["sequence_number"]) for p, c in cps.items()}
sys.exit(0 if got == want else "%r != %r" % (got, want))' "$n0" "$n1" ||
	fail "the checkpoints did not move to the ends"
"$DISAGENT" read -c "$TMP/agent.ini" s1 --app c1 >"$TMP/again" 2>"$TMP/err" ||
	fail "a second read exited $?"
[ ! -s "$TMP/again" ] && [ ! -s "$TMP/err" ] ||
	fail "a second read printed something: $(cat "$TMP/again" "$TMP/err")"
pass
