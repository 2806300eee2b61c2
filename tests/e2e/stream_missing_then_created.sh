#!/bin/sh
# The flow's stream does not exist yet: DescribeStream gets 400 DIS.4301,
# the agent logs one ERROR with the code and "check that DISStream exists",
# keeps the lines on disk and asks again every pausedRetrySeconds (1 s).
# Once the stream is created every line, including those written while
# paused, arrives exactly once.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

stat_at_least() { [ "$(stat_of "$1")" -ge "$2" ]; }

start_server --stream other
mkdir -p "$TMP/logs"
write_lines "$TMP/logs/app.log" m 0 5000

write_conf "$TMP/agent.ini" "pausedRetrySeconds = 1"
add_flow "$TMP/agent.ini" app later "$TMP/logs/app.log"
start_agent "$TMP/agent.ini"

wait_for 30 "the paused ERROR" grep -q \
    "ERROR.*DIS.4301.*check that DISStream exists" "$TMP/agent.log"
# The agent keeps asking (two more DescribeStreams), sending nothing.
n0=$(stat_of requests)
write_lines "$TMP/logs/app.log" m 5000 6000
wait_for 30 "two more DescribeStream probes" stat_at_least requests $((n0 + 2))
[ "$(stat_of put_requests)" = 0 ] || fail "PutRecords sent to a missing stream"
grep -q "Agent: .* 1 flow paused" "$TMP/agent.log" ||
	fail "the progress line does not report the paused flow"

control POST /_test/streams '{"name": "later", "partitions": 2}' ||
	fail "cannot create the stream"
write_lines "$TMP/logs/app.log" m 6000 7000
wait_for 60 "all 7,000 records" count_at_least later 7000
stop_agent

records verify --records "$TMP/records.jsonl" --stream later \
    --expect "$TMP/logs/app.log" ||
	fail "records differ from the lines written"
n=$(grep -c "ERROR.*DIS.4301" "$TMP/agent.log")
[ "$n" = 1 ] || fail "the paused ERROR was logged $n times, not once a minute"
no_secret_in "$TMP/agent.log"
pass
