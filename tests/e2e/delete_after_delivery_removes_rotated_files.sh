#!/bin/sh
# deleteAfterDeliverySeconds (tailed files): a file rotated away from the
# pattern is removed that long after it was delivered and finished; a file
# the pattern still matches is never removed, and a rotated file that
# changed after its delivery stays.  Every line arrives.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

start_server --stream s1
mkdir -p "$TMP/logs"
write_lines "$TMP/logs/app.log" a 0 100
write_lines "$TMP/logs/other.log" o 0 10
write_conf "$TMP/agent.ini"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/*.log" \
    "deleteAfterDeliverySeconds = 4" "rescanIntervalMillis = 300"
start_agent "$TMP/agent.ini"
wait_for 60 "the first lines" count_at_least s1 110

# Rotation: app.log -> app.log.1 (no longer matching), a new app.log.
cp "$TMP/logs/app.log" "$TMP/expect-1"
mv "$TMP/logs/app.log" "$TMP/logs/app.log.1"
write_lines "$TMP/logs/app.log" b 0 50
wait_for 60 "the new app.log" count_at_least s1 160
wait_for 60 "app.log.1 removed" test ! -e "$TMP/logs/app.log.1"
grep -q "removed .*logs/app.log.1 (inode [0-9]*): delivered 4 s ago (deleteAfterDeliverySeconds)" \
    "$TMP/agent.log" || fail "the removal is not logged"

# A rotated file that grows after it was delivered and closed stays (it
# grows well within the 4 s).
mv "$TMP/logs/app.log" "$TMP/logs/app.log.2"
write_lines "$TMP/logs/app.log" c 0 5
ino=$(stat -c %i "$TMP/logs/app.log.2")
# (Logged under the last path the agent had for it: app.log.)
wait_for 60 "app.log.2 finished" grep -q "finished .*(inode $ino)" \
    "$TMP/agent.log"
write_lines "$TMP/logs/app.log.2" late 0 1
wait_for 60 "the verdict on app.log.2" grep -q \
    "logs/app.log.2 changed after it was delivered" "$TMP/agent.log"
[ -f "$TMP/logs/app.log.2" ] || fail "a changed file was removed"
# Files the pattern matches stay, however long ago they were delivered.
[ -f "$TMP/logs/app.log" ] && [ -f "$TMP/logs/other.log" ] ||
	fail "a matching file was removed"
stop_agent
head -n 50 "$TMP/logs/app.log.2" >"$TMP/expect-2"
records verify --records "$TMP/records.jsonl" --stream s1 \
    --expect "$TMP/expect-1" --expect "$TMP/expect-2" \
    --expect "$TMP/logs/app.log" --expect "$TMP/logs/other.log" ||
	fail "records differ"
pass
