#!/bin/sh
# bench/stop_duplicates.sh: the lines clean stops send twice (issue 20,
# part 3), as an operator sees it: 20% of PutRecords answered 429 and 20% of
# records refused with DIS.4303, two files of 3,000 lines, a SIGTERM midway
# after each count of records in STOPS (default "1500 3500"), a restart
# each time, and every line delivered.  Prints "clean stops (STOPS):
# ... duplicated N ...".  Not part of make check (the test
# stop_throttled_resends_nothing.sh asserts 0 at 10%/10%); for
# before/after figures, one run per invocation:
#   DISAGENT=/path/to/disagent top_srcdir=SRC PYTHON3=python3 \
#       OPENSSL=openssl sh SRC/bench/stop_duplicates.sh
. "${top_srcdir:-$(dirname "$0")/..}/tests/e2e/lib.sh"

STOPS=${STOPS:-1500 3500}
all_arrived() {
	records verify --records "$TMP/records.jsonl" --stream s1 \
	    --expect "$TMP/logs/one.log" --expect "$TMP/logs/two.log" \
	    --allow-duplicates
}
start_server --stream s1:COMMON:2 --req-429 0.2 --rec-4303 0.2 \
    --latency-ms 20
mkdir -p "$TMP/logs"
write_lines "$TMP/logs/one.log" c1 0 3000
write_lines "$TMP/logs/two.log" c2 0 3000
write_conf "$TMP/agent.ini"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/*.log" \
    "maxBufferSizeRecords = 100" \
    "retryInitialBackoffMillis = 50" "retryMaxBackoffMillis = 400"
for at in $STOPS; do
	start_agent "$TMP/agent.ini"
	wait_for 120 "$at records" count_at_least s1 "$at"
	stop_agent
done
start_agent "$TMP/agent.ini"
wait_for 300 "every line" all_arrived
stop_agent
echo "clean stops ($STOPS): $(all_arrived | head -1)"
pass
