#!/bin/sh
# --once sends full batches while its file is held back.  The flow stops
# reading a file with maxInFlightRequests + 1 batches unacknowledged, and a
# batch acknowledged before an earlier one still counts until that one is:
# with requests completing out of order, the window has room while the
# file is held.  --once took that pause for the end of the data and sent
# the batch being filled as it was: 100,000 lines went in 202 to 207
# requests instead of 200 of 500 (a backlog of 2,000,000 lines took 4,026
# to 4,095 instead of 4,000, and as protobuf up to 4,250).  Four requests
# in flight to the test endpoint's threads complete out of order often
# enough to fail every run without the fix (4 of 4); batches go when full,
# not after add_flow's 200 ms.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

start_server --stream s1
mkdir -p "$TMP/logs"
write_lines "$TMP/logs/app.log" t 0 100000

write_conf "$TMP/agent.ini"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/*.log" \
    "maxBufferAgeMillis = 60000"
"$DISAGENT" -t -c "$TMP/agent.ini" >/dev/null
"$DISAGENT" -c "$TMP/agent.ini" --once >>"$TMP/agent.log" 2>&1 ||
    fail "--once exited with $?"
records verify --records "$TMP/records.jsonl" --stream s1 \
    --expect "$TMP/logs/app.log" || fail "records differ from the lines written"
n=$(stat_of put_requests)
echo "PutRecords requests: $n"
[ "$n" = 200 ] ||
    fail "$n PutRecords requests for 100,000 lines, not 200 of 500"
pass
