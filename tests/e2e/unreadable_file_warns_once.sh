#!/bin/sh
# A matching file the agent cannot read is reported once, with the hint
# (the adm group, root-only logs), not at every rescan; it is retried at
# every rescan, and once it becomes readable its lines arrive and the agent
# says so.  As root the agent runs as nobody (setpriv), so that file modes
# apply to it.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

start_server --stream s1
mkdir -p "$TMP/logs"
write_lines "$TMP/logs/a.log" a 0 100
write_lines "$TMP/logs/secret.log" s 0 100
chmod 600 "$TMP/logs/secret.log"

write_conf "$TMP/agent.ini"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/*.log" \
    "watchMode = POLL" "rescanIntervalMillis = 200"

run_as=
if [ "$(id -u)" = 0 ]; then
	command -v setpriv >/dev/null || fail "setpriv (util-linux) is needed"
	run_as="setpriv --reuid=nobody --regid=nogroup --clear-groups --"
	# nobody must reach the files and write the state.
	chmod 755 "$TMP" "$TMP/logs"
	chmod 644 "$TMP/agent.ini" "$TMP/logs/a.log" "$TMP/ca/ca.pem"
	chmod 755 "$TMP/ca"
	chown nobody "$TMP/state" "$TMP/logs/secret.log"
	chown root "$TMP/logs/secret.log"
	chmod 777 "$TMP/state"
fi
$run_as "$DISAGENT" -c "$TMP/agent.ini" >>"$TMP/agent.log" 2>&1 &
AGENT_PID=$!

wait_for 30 "a.log's lines" count_at_least s1 100
# Three rounds of "a new file is found": at least three rescans saw the
# unreadable one again.
for i in 1 2 3; do
	write_lines "$TMP/logs/new$i.log" n$i 0 10
	chmod 644 "$TMP/logs/new$i.log"
	wait_for 30 "new$i.log found by a rescan" count_at_least s1 $((100 + 10 * i))
done
n=$(grep -c "secret.log: cannot open" "$TMP/agent.log")
[ "$n" = 1 ] || fail "the unreadable file was reported $n times, not once"
grep -q "secret.log: cannot open: Permission denied; will retry at every rescan; the agent's user cannot read it" \
    "$TMP/agent.log" || fail "the warning lacks the reason or the hint"

chmod 644 "$TMP/logs/secret.log"
wait_for 30 "secret.log's lines once readable" count_at_least s1 230
grep -q "secret.log: no longer failing to open" "$TMP/agent.log" ||
	fail "the recovery is not reported"
stop_agent
records verify --records "$TMP/records.jsonl" --stream s1 \
    --expect "$TMP/logs/a.log" --expect "$TMP/logs/secret.log" \
    --expect "$TMP/logs/new1.log" --expect "$TMP/logs/new2.log" \
    --expect "$TMP/logs/new3.log" || fail "records differ"
pass
