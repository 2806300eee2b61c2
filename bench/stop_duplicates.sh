#!/bin/sh
# bench/stop_duplicates.sh: the lines a clean stop sends twice (issue 20,
# part 3), as an operator sees it: 20% of PutRecords answered 429 and 20% of
# records refused with DIS.4303, two files of 3,000 lines, one SIGTERM
# midway (after 3,000 records), a restart, and every line delivered.
# Prints "clean stop: duplicated N" per run.  Not part of make check (the
# test stop_throttled_resends_nothing.sh asserts 0); for before/after
# figures:
#   DISAGENT=/path/to/disagent top_srcdir=SRC PYTHON3=python3 \
#       OPENSSL=openssl RUNS=3 sh SRC/bench/stop_duplicates.sh
. "${top_srcdir:-$(dirname "$0")/..}/tests/e2e/lib.sh"

all_arrived() {
	records verify --records "$TMP/records.jsonl" --stream s1 \
	    --expect "$TMP/logs/one.log" --expect "$TMP/logs/two.log" \
	    --allow-duplicates
}
run=0
while [ "$run" -lt "${RUNS:-1}" ]; do
	run=$((run + 1))
	[ -z "$SERVER_PID" ] || { kill "$SERVER_PID"; wait "$SERVER_PID" || :; }
	rm -rf "$TMP/logs" "$TMP/state" "$TMP/records.jsonl" "$TMP/agent.log"
	start_server --stream s1:COMMON:2 --req-429 0.2 --rec-4303 0.2 \
	    --latency-ms 20
	mkdir -p "$TMP/logs"
	write_lines "$TMP/logs/one.log" c1 0 3000
	write_lines "$TMP/logs/two.log" c2 0 3000
	write_conf "$TMP/agent.ini"
	add_flow "$TMP/agent.ini" app s1 "$TMP/logs/*.log" \
	    "maxBufferSizeRecords = 100" \
	    "retryInitialBackoffMillis = 50" "retryMaxBackoffMillis = 400"
	start_agent "$TMP/agent.ini"
	wait_for 120 "3000 records" count_at_least s1 3000
	stop_agent
	start_agent "$TMP/agent.ini"
	wait_for 300 "every line" all_arrived
	stop_agent
	echo "clean stop, run $run: $(records verify --records \
	    "$TMP/records.jsonl" --stream s1 --expect "$TMP/logs/one.log" \
	    --expect "$TMP/logs/two.log" --allow-duplicates | head -1)"
done
pass
