#!/bin/sh
# A reload that changes only the secret key (the endpoint's keys were
# rotated) replaces the HTTP client and keeps every file open: a file
# deleted while it is read is read on through its descriptor, the requests
# on the wire when the keys changed (signed with the old key, refused by
# the endpoint as it now checks the new one) are sent again with the new
# key, and every line arrives exactly once (issue 20, part 1).  (Before:
# the deleted file was closed, and its unread lines lost.)
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/rotate_lib.sh"

NEW_SK=e2e-Rotated-Secret-Key-9876543210zyx
log_has() { grep -q -- "$1" "$TMP/agent.log"; }
lost() {
	records verify --records "$TMP/records.jsonl" --stream "$1" \
	    --expect "$2" 2>/dev/null | sed -n 's/.*missing \([0-9]*\),.*/\1/p'
}
must() {
	if [ "${E2E_MEASURE:-0}" = 1 ]; then
		("$@") || echo "MEASURE: failed: $*"
	else
		"$@"
	fi
}
puts_at_least() { [ "$(stat_of put_requests)" -ge "$1" ]; }

start_server --stream s1 --latency-ms 200
mkdir -p "$TMP/logs"
write_conf "$TMP/agent.ini"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/*.log" \
    "maxBufferSizeRecords = 100" "rescanIntervalMillis = 200"
write_lines "$TMP/expect.log" k 0 20000
cp "$TMP/expect.log" "$TMP/logs/app.log"
start_agent "$TMP/agent.ini"
pid=$AGENT_PID
wait_for 30 "the first records" count_at_least s1 1
rm "$TMP/logs/app.log"
fd=$(ls -l "/proc/$pid/fd" | sed -n 's/.* \([0-9]*\) -> .*app.log (deleted)$/\1/p')
[ -n "$fd" ] || fail "the deleted file is not open"
[ "$(records_of s1)" -lt 15000 ] || fail "the file was read too soon"

# A rotation as IAM does it: the endpoint takes both keys, the agent is
# given the new one, then the endpoint takes the new one only: what the
# old client still has on the wire is refused and sent again.  (With one
# key at a time, either order leaves a moment in which a request signed
# with the agent's current key is refused: a real pause of 60 s.)
wait_for 30 "requests on the wire" endpoint_busy
control POST /_test/credentials \
    "{\"ak\": \"$E2E_AK\", \"sk\": \"$NEW_SK\", \"also_sk\": \"$E2E_SK\"}" \
    >/dev/null
sed "s/^sk = .*/sk = $NEW_SK/" "$TMP/agent.ini" >"$TMP/new.ini"
chmod 600 "$TMP/new.ini"
mv "$TMP/new.ini" "$TMP/agent.ini"
kill -HUP "$pid"
wait_for 30 "the reload" log_has "configuration reloaded"
control POST /_test/credentials "{\"ak\": \"$E2E_AK\", \"sk\": \"$NEW_SK\"}" \
    >/dev/null
must log_has "reload: kept \[app\], changed \[\], added \[\], removed \[\]; a new HTTP client for sk"
# The same descriptor, still open on the deleted file.
must sh -c "ls -l /proc/$pid/fd/$fd | grep -q 'app.log (deleted)'"
await_records s1 60 "$TMP/expect.log"
echo "new sk by reload, 20,000 lines deleted while read: lost $(lost s1 "$TMP/expect.log")"
must records verify --records "$TMP/records.jsonl" --stream s1 \
    --expect "$TMP/expect.log"
[ "$AGENT_PID" = "$pid" ] && kill -0 "$pid" || fail "the agent is gone"
stop_agent
no_secret_in "$TMP/agent.log"
grep -q -- "$NEW_SK" "$TMP/agent.log" && fail "the new secret key appears in the log"
pass
