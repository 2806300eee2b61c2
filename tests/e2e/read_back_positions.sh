#!/bin/sh
# disagent read gives back exactly what was shipped: from TRIM_HORIZON
# every record, in partition order and sequence order within each; as
# JSON lines with partition and sequence number; from a sequence number
# in one partition; from a time (ISO 8601 and relative) only what came
# after it; nothing from LATEST; --max N records; `read --follow |
# head -3` ends as soon as head has its lines; and --from N below what
# one partition holds names it and --partition.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

start_server --stream s1:COMMON:3
mkdir -p "$TMP/logs"
write_lines "$TMP/logs/x.log" x 0 2000
write_lines "$TMP/logs/y.log" y 0 1000
write_conf "$TMP/agent.ini"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/*.log"
"$DISAGENT" -c "$TMP/agent.ini" --once >"$TMP/agent.log" 2>&1 ||
	fail "--once exited $?"

read_s1() { "$DISAGENT" read -c "$TMP/agent.ini" s1 "$@"; }

# TRIM_HORIZON (the default): byte for byte what the endpoint accepted.
records dump --records "$TMP/records.jsonl" --stream s1 >"$TMP/want"
[ "$(wc -l <"$TMP/want")" = 3000 ] || fail "the endpoint has not 3000 records"
read_s1 >"$TMP/got" 2>"$TMP/err" || fail "read exited $?"
cmp -s "$TMP/want" "$TMP/got" || fail "read differs from what was shipped"
[ ! -s "$TMP/err" ] || fail "read wrote to stderr: $(cat "$TMP/err")"
read_s1 --from trim_horizon | cmp -s "$TMP/want" - ||
	fail "--from TRIM_HORIZON differs"

# JSON lines: partition, sequence number, key, timestamp, base64 data.
read_s1 --format json >"$TMP/json" || fail "read --format json exited $?"
"$PYTHON3" - "$TMP/json" "$TMP/ids" <<'PY' || fail "bad JSON lines"
import base64, json, sys
with open(sys.argv[1]) as f, open(sys.argv[2], "w") as out:
    for line in f:
        r = json.loads(line)
        base64.b64decode(r["data"], validate=True)
        assert r["partition_key"] and r["timestamp"] > 0, r
        out.write("%s %s\n" % (r["partition"], r["sequence_number"]))
PY
records dump --records "$TMP/records.jsonl" --stream s1 --ids |
	cmp -s - "$TMP/ids" || fail "JSON lines name other records"

# One partition from a sequence number.
records dump --records "$TMP/records.jsonl" --stream s1 \
    --partition shardId-0000000001 | tail -n +6 >"$TMP/want1"
read_s1 --partition 1 --from 5 | cmp -s "$TMP/want1" - ||
	fail "--partition 1 --from 5 differs"
read_s1 --partition shardId-0000000001 --partition 1 --from 5 |
	cmp -s "$TMP/want1" - || fail "a partition named twice is read twice"

# From a time: only the lines shipped after it.
t=$("$PYTHON3" -c 'import datetime; print(datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z")')
# The records' timestamps are whole milliseconds: the next batch is later.
sleep 0.01
write_lines "$TMP/logs/y.log" y 1000 1500
"$DISAGENT" -c "$TMP/agent.ini" --once >>"$TMP/agent.log" 2>&1 ||
	fail "second --once exited $?"
read_s1 --from "@$t" | sort >"$TMP/after"
"$PYTHON3" - "$TMP/logs/y.log" <<'PY' | sort | cmp -s - "$TMP/after" ||
import sys
print("".join(l for l in open(sys.argv[1]).readlines()[1000:]), end="")
PY
	fail "--from @$t does not give exactly the lines shipped after it"
[ "$(read_s1 --from @1h | wc -l)" = 3500 ] || fail "--from @1h is not all"
[ "$(read_s1 --from @-1h | wc -l)" = 3500 ] || fail "--from @-1h is not all"

# LATEST: nothing (without --follow); --max.
[ "$(read_s1 --from LATEST | wc -l)" = 0 ] || fail "LATEST printed records"
[ "$(read_s1 --max 7 | wc -l)" = 7 ] || fail "--max 7"

# --follow into head: read ends once head has three lines and left.
# head_of N ARGS...: read ARGS into a fifo, head -N from it; then read
# must exit, with status 0, although it follows.
head_of() {
	_n=$1; shift
	rm -f "$TMP/fifo"; mkfifo "$TMP/fifo"
	read_s1 "$@" >"$TMP/fifo" 2>"$TMP/follow.err" &
	_pid=$!
	E2E_PIDS="$E2E_PIDS $_pid"
	head -n "$_n" <"$TMP/fifo" >"$TMP/head"
	wait_for 30 "read $* to end after head left" not_running "$_pid"
	_rc=0; wait "$_pid" || _rc=$?
	[ "$_rc" = 0 ] || fail "read $* | head exited $_rc"
	[ ! -s "$TMP/follow.err" ] || fail "read $*: $(cat "$TMP/follow.err")"
}
not_running() { ! kill -0 "$1" 2>/dev/null; }
head_of 3 --follow --from TRIM_HORIZON
[ "$(wc -l <"$TMP/head")" = 3 ] || fail "head got $(wc -l <"$TMP/head") lines"
# Partitions are read side by side while following: any three records.
grep -Fvxq -f "$TMP/want" "$TMP/head" && fail "head got other lines"
# ... also when read has written all it had and waits for more: ten
# records fit in the pipe, head takes three and leaves, no record comes.
records dump --records "$TMP/records.jsonl" --stream s1 \
    --partition shardId-0000000001 >"$TMP/p1"
head_of 3 --follow --partition 1 --from $(( $(wc -l <"$TMP/p1") - 10 ))
tail -n 10 "$TMP/p1" | head -3 | cmp -s - "$TMP/head" ||
	fail "head of an idle follow got other lines"

# Usage errors.
rc=0; read_s1 --from yesterday 2>"$TMP/err" || rc=$?
[ "$rc" = 2 ] || fail "--from yesterday exited $rc, not 2"
rc=0; read_s1 --format xml 2>/dev/null || rc=$?
[ "$rc" = 2 ] || fail "--format xml exited $rc, not 2"
# --from N that one partition does not hold (its records below 100 have
# expired): the read fails naming that partition, what it holds, and that
# --partition picks the others.
control POST /_test/streams/s1/partitions \
    '{"trim": "shardId-0000000000", "before": 100}' >/dev/null
rc=0; read_s1 --from 50 >/dev/null 2>"$TMP/err" || rc=$?
[ "$rc" = 1 ] || fail "--from 50 below a partition's oldest exited $rc"
grep -q "DIS.4224.*; partition shardId-0000000000 holds sequence numbers 100 to [0-9]*; --from 50 applies to every partition: read the ones that hold it with --partition" \
    "$TMP/err" || fail "no hint: $(cat "$TMP/err")"
read_s1 --partition 1 --partition 2 --from 50 >/dev/null ||
	fail "--from 50 in the partitions that hold it exited $?"
[ "$(stat_of auth_failures)" = 0 ] || fail "the endpoint rejected signatures"
pass
