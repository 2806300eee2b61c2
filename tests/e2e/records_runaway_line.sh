#!/bin/sh
# A 20 MB line between normal lines: it is shipped as one record cut at the
# stream's 1 MiB limit (counted, logged), the rest of the line is skipped
# without buffering, every other line arrives exactly once, memory stays
# within the budget, and a restart in the middle of the runaway line sends
# nothing twice (lessons R10).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

start_server --stream s1
mkdir -p "$TMP/logs"
write_lines "$TMP/logs/app.log" before 0 1000
"$PYTHON3" -c 'import sys; sys.stdout.write("R" * (20 * 1024 * 1024) + "\n")' \
    >>"$TMP/logs/app.log"
write_lines "$TMP/logs/app.log" after 0 1000

write_conf "$TMP/agent.ini"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/app.log" "ordered = true"
start_agent "$TMP/agent.ini"
wait_for 60 "2,001 records" count_at_least s1 2001
wait_for 20 "the truncation in a progress line" \
    grep -q "1 truncated to the record limit" "$TMP/agent.log"
stop_agent

"$PYTHON3" - "$TMP/records.jsonl" <<'PY' || fail "records differ"
import base64, json, sys
recs = [base64.b64decode(json.loads(l)["data"]) for l in open(sys.argv[1])]
big = [r for r in recs if r.startswith(b"R")]
assert len(recs) == 2001, len(recs)
assert len(big) == 1 and big[0] == b"R" * 1048576, [len(b) for b in big]
want = [b"before %07d %s" % (i, b"x" * 60) for i in range(1000)]
want += [b"R" * 1048576]
want += [b"after %07d %s" % (i, b"x" * 60) for i in range(1000)]
assert recs == want, "order or content differs"
print("2001 records: the runaway line cut to 1 MiB, the rest intact")
PY

# Restart while the agent is inside a second runaway line: its kept head is
# not sent twice and the following lines arrive once.
"$PYTHON3" -c 'import sys; sys.stdout.write("S" * (30 * 1024 * 1024))' \
    >>"$TMP/logs/app.log"
start_agent "$TMP/agent.ini"
wait_for 60 "the second runaway head" count_at_least s1 2002
stop_agent
printf '\n' >>"$TMP/logs/app.log"
write_lines "$TMP/logs/app.log" last 0 100
start_agent "$TMP/agent.ini"
wait_for 60 "the last lines" count_at_least s1 2102
stop_agent
n=$(records count --records "$TMP/records.jsonl" --stream s1)
[ "$n" = 2102 ] || fail "$n records after the restart, not 2102"
pass
