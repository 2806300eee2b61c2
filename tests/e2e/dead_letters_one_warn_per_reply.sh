#!/bin/sh
# Records DIS rejects for good (DIS.4200) go to the dead-letter file, each
# with its file and offset, and count as delivered; the log says so once
# per reply, with the count by code and the first record's file and offset
# -- not one WARN per record; the progress line counts them as
# dead-lettered, not as sent again.  The other records arrive exactly
# once.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

start_server --stream s1
faults '{"reject_prefix": "bad"}'
mkdir -p "$TMP/logs"
# 2,000 lines, every 10th one rejected: 200 dead letters in about 4
# replies of 500 records.
"$PYTHON3" - "$TMP/logs/a.log" "$TMP/good.log" <<'PY'
import sys
with open(sys.argv[1], "w") as a, open(sys.argv[2], "w") as g:
    for i in range(2000):
        line = "%s %07d %s\n" % ("bad" if i % 10 == 9 else "ok", i, "x" * 40)
        a.write(line)
        if i % 10 != 9:
            g.write(line)
PY
write_conf "$TMP/agent.ini"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/a.log" "ordered = true"
"$DISAGENT" -c "$TMP/agent.ini" --once >"$TMP/agent.log" 2>&1 ||
	fail "--once exited $?"
records verify --records "$TMP/records.jsonl" --stream s1 \
    --expect "$TMP/good.log" || fail "the accepted records differ"
n=$(grep -c '"code":"DIS.4200"' "$TMP/state/deadletter.jsonl")
[ "$n" = 200 ] || fail "$n dead letters, not 200"
warns=$(grep -c "rejected by DIS for good" "$TMP/agent.log")
puts=$(stat_of put_requests)
[ "$warns" -ge 1 ] && [ "$warns" -le "$puts" ] ||
	fail "$warns dead-letter WARNs for $puts requests (one per reply at most)"
grep -q "\[app\] [0-9]* records rejected by DIS for good (DIS.4200 [0-9]*; the first from $TMP/logs/a.log at offset [0-9]*): written to $TMP/state/deadletter.jsonl" \
    "$TMP/agent.log" || fail "the WARN lacks the count, code, file or offset"
total=$(sed -n 's/.*\] \([0-9]*\) records\{0,1\} rejected by DIS for good.*/\1/p' \
    "$TMP/agent.log" | awk '{ n += $1 } END { print n + 0 }')
[ "$total" = 200 ] || fail "the WARNs count $total records, not 200"
# The last progress line: dead letters are not records sent again.
last=$(grep "Agent: [0-9]* records sent again" "$TMP/agent.log" | tail -n 1)
case $last in
*"Agent: 0 records sent again after a failure, 200 dead-lettered,"*) ;;
*) fail "the progress line counts dead letters as retried: $last" ;;
esac
pass
