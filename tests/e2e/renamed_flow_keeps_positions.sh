#!/bin/sh
# A flow renamed in agent.ini (issue 36, item 6): [flow:app] to
# [flow:web], the same DISStream and filePattern, is the same flow and
# carries its positions on, at a restart (the state file's entries are
# app's) and at a reload (app's successor is web): nothing is sent twice.
# Renamed with another stream, the new flow starts from initialPosition as
# before, with a WARN at the start naming both flows.  Before: a full
# resend, 500 duplicates, at each rename.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

log_has() { grep -q -- "$1" "$TMP/agent.log"; }
once() {
	_s=$1; shift
	_nf=$#
	for _f; do set -- "$@" --expect "$_f"; done
	shift "$_nf"
	records verify --records "$TMP/records.jsonl" --stream "$_s" "$@" ||
		fail "stream $_s: lines missing, duplicated or unexpected"
}
# conf FILE NAME STREAM
conf() {
	write_conf "$1"
	add_flow "$1" "$2" "$3" "$TMP/logs/*.log" "rescanIntervalMillis = 200"
}

start_server --stream s1 --stream s2
mkdir -p "$TMP/logs"
write_lines "$TMP/one.expect" a 0 500
cp "$TMP/one.expect" "$TMP/logs/a.log"
conf "$TMP/agent.ini" app s1
start_agent "$TMP/agent.ini"
wait_for 60 "500 records on s1" count_at_least s1 500
stop_agent

# 1. Renamed while stopped.
conf "$TMP/agent.ini" web s1
write_lines "$TMP/two.expect" a 500 600
cat "$TMP/two.expect" >>"$TMP/logs/a.log"
start_agent "$TMP/agent.ini"
pid=$AGENT_PID
wait_for 60 "600 records on s1" count_at_least s1 600
once s1 "$TMP/one.expect" "$TMP/two.expect"
log_has "\[web\] carries on the positions of flow \[app\] (renamed; the same DISStream and filePattern): 1 file" ||
	fail "no carry-over line at the restart"

# 2. Renamed at a reload.
conf "$TMP/new.ini" site s1
mv "$TMP/new.ini" "$TMP/agent.ini"
kill -HUP "$pid"
wait_for 30 "the reload" log_has "configuration reloaded"
log_has "reload: kept \[\], changed \[web (renamed to site)\], added \[\], removed \[\]" ||
	fail "the reload did not pair web with site"
write_lines "$TMP/three.expect" a 600 700
cat "$TMP/three.expect" >>"$TMP/logs/a.log"
wait_for 60 "700 records on s1" count_at_least s1 700
once s1 "$TMP/one.expect" "$TMP/two.expect" "$TMP/three.expect"
log_has "\[site\] carries on the positions of flow \[web\]" ||
	fail "no carry-over line at the reload"
stop_agent
once s1 "$TMP/one.expect" "$TMP/two.expect" "$TMP/three.expect"
grep -q '"flows":{"site":{"stream":"s1","pattern":"' "$TMP/state/state.json" ||
	fail "the state file does not describe flow site"

# 3. Renamed with another stream: from initialPosition, with a WARN.
conf "$TMP/agent.ini" other s2
start_agent "$TMP/agent.ini"
wait_for 60 "700 records on s2" count_at_least s2 700
log_has "WARN.*\[other\] is new in the state file and reads from initialPosition: flow \[site\], no longer configured, read .* for stream s1" ||
	fail "no WARN naming both flows"
stop_agent
once s2 "$TMP/one.expect" "$TMP/two.expect" "$TMP/three.expect"
pass
