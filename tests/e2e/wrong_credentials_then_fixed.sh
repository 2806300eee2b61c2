#!/bin/sh
# The endpoint expects another secret key than the agent has: every request
# gets HTTP 441, delivery pauses with one ERROR naming the 441 and the hint,
# a probe goes out every pausedRetrySeconds (1 s here), nothing is delivered
# or dropped and no offset moves.  Once the endpoint takes the agent's key,
# every line arrives exactly once, and the secret is never logged.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

count_is() {
	[ "$(records count --records "$TMP/records.jsonl" --stream "$1" 2>/dev/null || echo 0)" -eq "$2" ]
}
stat_at_least() { [ "$(stat_of "$1")" -ge "$2" ]; }
# offsets_all_zero: the state file tracks the log file at offset 0.
offsets_all_zero() {
	"$PYTHON3" - "$top_srcdir/tests" "$TMP/state/state.json" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import state_file
files = state_file.entries(sys.argv[2])
sys.exit(0 if files and all(f.get("offset") == 0 for f in files) else 1)
PY
}

start_server --stream s1
control POST /_test/credentials \
    "{\"ak\": \"$E2E_AK\", \"sk\": \"Another-Secret-Key-Not-The-Agents\"}" ||
	fail "cannot change the endpoint's credentials"
mkdir -p "$TMP/logs"
write_lines "$TMP/logs/app.log" c 0 5000

write_conf "$TMP/agent.ini" "pausedRetrySeconds = 1"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/app.log"
start_agent "$TMP/agent.ini"

wait_for 30 "the paused ERROR" \
    grep -q "ERROR.*delivery paused.*441.*check ak/sk" "$TMP/agent.log"
# At least three more probes, each refused, and still nothing delivered.
n0=$(stat_of auth_failures)
write_lines "$TMP/logs/app.log" c 5000 6000
wait_for 30 "three more refused probes" stat_at_least auth_failures $((n0 + 3))
count_is s1 0 || fail "records arrived with the wrong credentials"
[ "$(stat_of records_received)" = 0 ] || fail "records were sent while paused"
wait_for 10 "the state file" test -s "$TMP/state/state.json"
sleep 0.3	# more than a checkpoint interval (200 ms): a move would show
offsets_all_zero || fail "offsets moved while delivery was paused"
grep -q "Agent: .* 1 flow paused" "$TMP/agent.log" ||
	fail "the progress line does not report the paused flow"
n=$(grep -c "delivery paused" "$TMP/agent.log")
[ "$n" = 1 ] || fail "the paused ERROR was logged $n times, not once a minute"

control POST /_test/credentials "{\"ak\": \"$E2E_AK\", \"sk\": \"$E2E_SK\"}" ||
	fail "cannot restore the endpoint's credentials"
write_lines "$TMP/logs/app.log" c 6000 7000
wait_for 60 "all 7,000 records" count_at_least s1 7000
stop_agent

records verify --records "$TMP/records.jsonl" --stream s1 \
    --expect "$TMP/logs/app.log" ||
	fail "records differ from the lines written"
no_secret_in "$TMP/agent.log"
if grep -q "Another-Secret-Key" "$TMP/agent.log"; then
	fail "the endpoint's secret appears in the log"
fi
pass
