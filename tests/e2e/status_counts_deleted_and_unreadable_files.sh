#!/bin/sh
# disagent status tells the truth while the agent runs: a file deleted
# while the agent still reads it is shown with its size and counted in the
# bytes behind, which then equal the metrics' backlog; a matching file the
# agent cannot read is shown as an error, naming the file, and is the
# flow's last error.  As root the agent and status run as nobody
# (setpriv), so that file modes apply to them.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

start_server --stream s1
mkdir -p "$TMP/logs"
write_lines "$TMP/logs/a.log" a 0 100
write_lines "$TMP/logs/b.log" b 0 100
write_lines "$TMP/logs/secret.log" s 0 10
chmod 600 "$TMP/logs/secret.log"
write_conf "$TMP/agent.ini" "metricsFile = $TMP/m/disagent.prom" \
    "metricsIntervalMillis = 1000"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/*.log" \
    "watchMode = POLL" "rescanIntervalMillis = 200"
mkdir -p "$TMP/m"

run_as=
if [ "$(id -u)" = 0 ]; then
	command -v setpriv >/dev/null || fail "setpriv (util-linux) is needed"
	run_as="setpriv --reuid=nobody --regid=nogroup --clear-groups --"
	chmod 755 "$TMP" "$TMP/logs" "$TMP/ca"
	chmod 644 "$TMP/agent.ini" "$TMP/logs/a.log" "$TMP/logs/b.log" \
	    "$TMP/ca/ca.pem"
	chmod 777 "$TMP/state" "$TMP/m"
else
	chmod 000 "$TMP/logs/secret.log"
fi
$run_as "$DISAGENT" -c "$TMP/agent.ini" >>"$TMP/agent.log" 2>&1 &
AGENT_PID=$!

st() { $run_as "$DISAGENT" status -c "$TMP/agent.ini" >"$TMP/st" 2>&1; }
row_is() {
	st && grep -qxF "$(printf '  %14s %14s %14s  %s' "$1" "$2" "$3" "$4")" \
	    "$TMP/st"
}
asize=$(wc -c <"$TMP/logs/a.log" | tr -d ' ')
wait_for 30 "a.log and b.log delivered" count_at_least s1 200
wait_for 30 "their offsets saved" row_is "$asize" "$asize" 0 "$TMP/logs/a.log"
last_error_names_it() {
	st && grep -q "^  last error: OPEN Permission denied: cannot open $TMP/logs/secret.log (" \
	    "$TMP/st"
}
wait_for 30 "the last error to name the unreadable file" last_error_names_it

# DIS goes away: what is written now stays behind.
faults '{"outage": true}'
write_lines "$TMP/logs/a.log" a 100 150
write_lines "$TMP/logs/b.log" b 100 200
bsize=$(wc -c <"$TMP/logs/b.log" | tr -d ' ')
behind=$(( $(wc -c <"$TMP/logs/a.log") - asize + bsize - asize ))
backlog() {
	grep -qx "disagent_backlog_bytes{flow=\"app\",stream=\"s1\"} $behind" \
	    "$TMP/m/disagent.prom"
}
wait_for 30 "the agent to see $behind bytes behind" backlog
rm "$TMP/logs/b.log"
wait_for 30 "b.log shown as deleted and still read" row_is "$asize" "$bsize" \
    "$((bsize - asize))" "$TMP/logs/b.log (deleted; still open, being read)"
backlog || fail "the metrics changed: $(grep backlog "$TMP/m/disagent.prom")"
grep -q "^\[flow:app\] stream s1: 3 files, $behind bytes behind, 1 unreadable\$" \
    "$TMP/st" || fail "status does not count what metrics count: $(cat "$TMP/st")"
grep -qxF "$(printf '  %14s %14s %14s  %s' - - - \
    "$TMP/logs/secret.log (unreadable: Permission denied)")" "$TMP/st" ||
	fail "the unreadable file is not shown as an error: $(cat "$TMP/st")"
grep -q "^  error: 1 matching file cannot be opened" "$TMP/st" ||
	fail "no error line: $(cat "$TMP/st")"
grep -q "^disagent_files_unreadable{flow=\"app\",stream=\"s1\"} 1\$" \
    "$TMP/m/disagent.prom" || fail "the metrics do not count it"

# Once DIS is back, the deleted file is read to its end.
faults '{"outage": false}'
wait_for 60 "everything delivered" count_at_least s1 350
stop_agent
pass
