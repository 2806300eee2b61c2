#!/bin/sh
# At the stream's write limit the agent keeps it busy: two partitions, each
# taking at most 64 KiB/s of record data and refusing the rest record by
# record (DIS.4303, as DIS throttles a partition), a backlog of 24,000
# lines in two files.  (At 128 KiB/s a sanitizer build on a loaded machine,
# with the Python endpoint checking every signature, could fall short of
# the limit itself: then nothing is throttled and nothing is measured.)  Every line arrives exactly once, the limit was hit,
# and the agent used at least 90% of the capacity the endpoint offered:
# per partition, the bytes it accepted against 128 KiB per second from the
# first record it saw to the last it accepted, plus the second its bucket
# held at the start, all from the endpoint's own clock in the same run.
# The bar is wide on purpose (issue 20 part 6 measured 95-99%); a timing
# figure is never asserted.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

LIMIT=65536
start_server --stream s1:COMMON:2 --write-limit-bytes "$LIMIT"
mkdir -p "$TMP/logs"
write_lines "$TMP/logs/one.log" c1 0 12000
write_lines "$TMP/logs/two.log" c2 0 12000

write_conf "$TMP/agent.ini"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/*.log"
"$DISAGENT" -t -c "$TMP/agent.ini" >/dev/null

start_agent "$TMP/agent.ini"
wait_for 300 "24,000 records on s1" count_at_least s1 24000
stop_agent

records verify --records "$TMP/records.jsonl" --stream s1 \
    --expect "$TMP/logs/one.log" --expect "$TMP/logs/two.log" ||
	fail "records differ from the lines written"
stat_of write_limit >"$TMP/write_limit.txt"
"$PYTHON3" - "$TMP/write_limit.txt" "$LIMIT" <<'PY' || fail "capacity share"
import ast, sys
parts = ast.literal_eval(open(sys.argv[1]).read())
rate = int(sys.argv[2])
accepted = sum(p["accepted_bytes"] for p in parts.values())
capacity = sum(rate * (p["last_t"] - p["first_t"]) / 1e9 + rate
               for p in parts.values())
throttled = sum(p["throttled"] for p in parts.values())
share = accepted / capacity
print("capacity share %.3f: %d of %.0f bytes the partitions could take; "
      "%d records throttled" % (share, accepted, capacity, throttled))
if len(parts) != 2 or throttled == 0:
    sys.exit("the write limit was never reached: %r" % parts)
sys.exit(0 if share >= 0.90 else "below 90% of the stream's capacity")
PY
pass
