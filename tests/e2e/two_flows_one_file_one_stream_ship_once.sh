#!/bin/sh
# Two flows that read one file for one stream (issue 36, item 6).
#
# 1. When the patterns alone tell (`logs/*.log` and `logs/a.log`), -t
#    refuses the file, naming both flows, the file and the stream, at the
#    later flow's filePattern line.  Before: -t said OK and every line of
#    a.log was sent twice.
# 2. When they do not (`logs/*.log` and `logs/a*.log`), the agent ships
#    each such file in the first flow only, with one WARN naming both
#    flows and the file: every line arrives once.
# 3. The same file for two streams is a fan-out, not a duplicate: both
#    streams get every line.
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

start_server --stream s1 --stream s2
mkdir -p "$TMP/logs"

# 1. Told by the patterns: refused.
write_conf "$TMP/static.ini"
add_flow "$TMP/static.ini" all s1 "$TMP/logs/*.log"
add_flow "$TMP/static.ini" app s1 "$TMP/logs/a.log"
line=$(grep -n "^filePattern = $TMP/logs/a.log" "$TMP/static.ini" | cut -d: -f1)
rc=0
"$DISAGENT" -t -c "$TMP/static.ini" >"$TMP/t.out" 2>&1 || rc=$?
cat "$TMP/t.out"
[ "$rc" = 1 ] || fail "-t accepted two flows sending a.log to s1 (exit $rc)"
grep -q "static.ini:$line: \[flow:app\] and \[flow:all\] both send $TMP/logs/a.log to stream s1" \
    "$TMP/t.out" || fail "-t does not name both flows, the file and its line"

# 2. Not told by the patterns: the first flow ships it, once.
write_lines "$TMP/a.expect" a 0 300
write_lines "$TMP/b.expect" b 0 200
write_lines "$TMP/c.expect" c 0 100
cp "$TMP/a.expect" "$TMP/logs/a.log"
cp "$TMP/b.expect" "$TMP/logs/b.log"
cp "$TMP/c.expect" "$TMP/logs/c.log"
write_conf "$TMP/agent.ini"
add_flow "$TMP/agent.ini" all s1 "$TMP/logs/*.log"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/a*.log"
# 3. ... and the same file for another stream.
add_flow "$TMP/agent.ini" copy s2 "$TMP/logs/c.log"
"$DISAGENT" -t -c "$TMP/agent.ini" >/dev/null || fail "-t refused agent.ini"
start_agent "$TMP/agent.ini"
wait_for 60 "600 records on s1" count_at_least s1 600
wait_for 60 "100 records on s2" count_at_least s2 100
# Later rescans change nothing.
n=$(grep -c progress_report "$TMP/agent.log" || true)
wait_for 30 "two more progress lines" sh -c \
    "[ \$(grep -c progress_report '$TMP/agent.log') -ge $((n + 2)) ]"
once s1 "$TMP/a.expect" "$TMP/b.expect" "$TMP/c.expect"
once s2 "$TMP/c.expect"
log_has "\[app\] $TMP/logs/a.log is read by flow \[all\] too, for the same stream s1: only \[all\] ships it" ||
	fail "no WARN naming both flows and a.log"
[ "$(grep -c "a.log is read by flow" "$TMP/agent.log")" = 1 ] ||
	fail "the WARN is not said once"
stop_agent
pass
