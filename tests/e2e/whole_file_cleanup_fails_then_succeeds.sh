#!/bin/sh
# A whole file is delivered but cannot be moved into fileMoveToDir (the
# directory is made unwritable): the failure is logged once with the path
# and the reason, counted in the metrics, shown by `disagent status`, and
# retried at every rescan; once the directory is writable again the file
# is moved.  Nothing is sent again because of the failure.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

start_server --stream s1
mkdir -p "$TMP/in" "$TMP/done"

write_conf "$TMP/agent.ini" "metricsFile = $TMP/metrics.prom" \
    "metricsIntervalMillis = 1000"
add_flow "$TMP/agent.ini" w s1 "$TMP/in/*.csv" "isFileAppendable = false" \
    "maxFileCheckingMillis = 300" "rescanIntervalMillis = 300" \
    "fileMoveToDir = $TMP/done"
"$DISAGENT" -t -c "$TMP/agent.ini" || fail "the configuration is rejected"

metric() {
	awk -v m="$1" '$1 ~ "^"m"[{]" { print $2 }' "$TMP/metrics.prom" \
	    2>/dev/null
}
failures_at_least() { [ "$(metric disagent_cleanup_failures_total)" -ge "$1" ]; }
failing_now() { [ "$(metric disagent_whole_files_cleanup_failing)" = "$1" ]; }

# Unwritable once the agent runs (-t and the start check that it is).
start_agent "$TMP/agent.ini"
wait_for 30 "the agent to start" grep -q "Startup completed" "$TMP/agent.log"
unwritable "$TMP/done"
write_lines "$TMP/in/a.csv" a 0 200
cp "$TMP/in/a.csv" "$TMP/a.orig"
wait_for 60 "the file's records" count_at_least s1 200
wait_for 60 "three failed attempts (three rescans)" failures_at_least 3
wait_for 30 "the metrics to show the failing cleanup" failing_now 1
[ -f "$TMP/in/a.csv" ] || fail "a.csv is gone although it could not move"
n=$(grep -c "delivered, but cannot move .*in/a.csv to .*done: Operation not permitted" \
    "$TMP/agent.log" || true)
[ "$n" = 1 ] || fail "the failure was logged $n times, not once"

"$DISAGENT" status -c "$TMP/agent.ini" >"$TMP/status.out" ||
	fail "status failed"
grep -q "1 whole file delivered, waiting for cleanup" "$TMP/status.out" ||
	fail "status does not show the pending cleanup: $(cat "$TMP/status.out")"
grep -q "last error: CLEANUP Operation not permitted: cannot move .*in/a.csv" \
    "$TMP/status.out" || fail "status does not show why: $(cat "$TMP/status.out")"
grep -q "in/a.csv (delivered; cleanup pending)" "$TMP/status.out" ||
	fail "status does not mark the file"

writable "$TMP/done"
wait_for 30 "a.csv moved once it can be" test -f "$TMP/done/a.csv"
wait_for 30 "the metrics to show no failing cleanup" failing_now 0
[ ! -e "$TMP/in/a.csv" ] || fail "a.csv is still there"
cmp -s "$TMP/done/a.csv" "$TMP/a.orig" || fail "the moved file changed"
[ "$(metric disagent_files_cleaned_up_total)" = 1 ] ||
	fail "files_cleaned_up_total is not 1"
stop_agent
records verify --records "$TMP/records.jsonl" --stream s1 \
    --expect "$TMP/a.orig" || fail "records differ (sent again?)"
pass
