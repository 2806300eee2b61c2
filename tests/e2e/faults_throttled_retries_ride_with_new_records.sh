#!/bin/sh
# Records DIS refused one by one ride in full requests with new records,
# not alone: under 30% HTTP 429 and 20% of records throttled (DIS.4303),
# 6,000 lines in four files all arrive exactly once, and the records that
# travelled again after a refusal did so mostly in requests that also
# carried new records, in requests of 150 records or more on average
# (maxBufferSizeRecords 500).  Before they rode in requests of their own
# that shrank with every retry (about 85 records on average, none with new
# records, down to 1-record requests a second apart).  The endpoint counts
# the retries itself (stats "retried").
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

start_server --stream s1 --req-429 0.3 --rec-4303 0.2
mkdir -p "$TMP/logs"
for i in 1 2 3 4; do
	write_lines "$TMP/logs/f$i.log" r$i 0 1500
done

write_conf "$TMP/agent.ini"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/*.log"
"$DISAGENT" -t -c "$TMP/agent.ini" >/dev/null

start_agent "$TMP/agent.ini"
wait_for 300 "6,000 records on s1" count_at_least s1 6000
stop_agent

records verify --records "$TMP/records.jsonl" --stream s1 \
    --expect "$TMP/logs/f1.log" --expect "$TMP/logs/f2.log" \
    --expect "$TMP/logs/f3.log" --expect "$TMP/logs/f4.log" ||
	fail "records differ from the lines written"
stat_of retried >"$TMP/retried.txt"
"$PYTHON3" - "$TMP/retried.txt" <<'PY' || fail "how the retries travelled"
import ast, sys
r = ast.literal_eval(open(sys.argv[1]).read())
n = r["records"]
if n < 500:
    sys.exit("only %d records were retried after a refusal" % n)
size = r["request_records"] / n
new = r["with_new"] / n
print("%d retried records: in requests of %.1f records on average, %.0f%% "
      "of them with new records" % (n, size, 100 * new))
if size < 150:
    sys.exit("retried records travel in small requests")
if new < 0.3:
    sys.exit("retried records travel without new records")
PY
pass
