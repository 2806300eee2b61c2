#!/bin/sh
# The last batch of a file is sent even when throttling shrank the window
# while it waited: 2,500 lines (five full batches) with a fifth of the records
# refused with DIS.4303.  Four batches go out, the fifth fills at the end of
# the file with no room in the window, its age timer fires, and the
# throttled replies shrink the window below what is in flight.  The agent
# must keep trying to send it as requests complete (it once gave up on the
# first completion that still found no room, and waited for a record that
# never came; --once mode flushes at the end of the files and hid it, so the
# agent runs as a daemon here).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

start_server --stream s1 --rec-4303 0.2
mkdir -p "$TMP/logs"
write_lines "$TMP/logs/app.log" t 0 2500

write_conf "$TMP/agent.ini"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/*.log" \
    "retryInitialBackoffMillis = 50" "retryMaxBackoffMillis = 200"
"$DISAGENT" -t -c "$TMP/agent.ini" >/dev/null

start_agent "$TMP/agent.ini"
wait_for 60 "2,500 records on s1" count_at_least s1 2500
stop_agent
records verify --records "$TMP/records.jsonl" --stream s1 \
    --expect "$TMP/logs/app.log" || fail "records differ from the lines written"
n=$(stat_of records_failed_by_code | tr "'" '"' |
    "$PYTHON3" -c 'import json, sys; print(json.load(sys.stdin).get("DIS.4303", 0))')
echo "records refused with DIS.4303: $n"
[ "$n" -gt 0 ] || fail "the endpoint throttled nothing"
pass
