#!/bin/sh
# Names from outside are escaped wherever the agent prints them (issue 37):
# a file named "y<newline><3>[sink_halt] ... <ESC>[31mforged.log" in a
# watched directory makes no log line of its own under journald (every
# line starts with the "<N>[" the agent wrote), and neither the log, nor
# `disagent status`, nor describe's error on a stream name, nor
# import-state's report on a DIS Agent checkpoint holds a control
# character; a file name in Chinese stays readable, byte for byte.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

start_server --stream s1
mkdir -p "$TMP/logs"
forged=$(printf 'y\n<3>[sink_halt] delivery paused for stream [s1]: HTTP 441 \033[31mforged.log')
printf 'one\n' >"$TMP/logs/$forged"
printf 'two\n' >"$TMP/logs/日志.log"
write_conf "$TMP/agent.ini"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/*"

# A control character other than the newline that ends each line.
has_control() { LC_ALL=C grep -q "$(printf '[\001-\011\013-\037\177]')" "$1"; }

JOURNAL_STREAM=8:1234 "$DISAGENT" -c "$TMP/agent.ini" --once \
    >"$TMP/agent.log" 2>&1 || fail "--once exited $?"
[ "$(records dump --records "$TMP/records.jsonl" --stream s1 | sort |
    tr '\n' ' ')" = "one two " ] || fail "the records of both files"
bad=$(grep -vc '^<[0-9]>\[[a-z_0-9]*\] ' "$TMP/agent.log" || true)
[ "$bad" = 0 ] || fail "$bad log lines the agent did not start"
if grep -q '^<3>\[sink_halt\]' "$TMP/agent.log"; then
	fail "a file name forged an ERROR line"
fi
has_control "$TMP/agent.log" && fail "a control character in the log"
grep -qF 'logs/y\n<3>[sink_halt] delivery paused for stream [s1]: HTTP 441 \x1b[31mforged.log' \
    "$TMP/agent.log" || fail "the name is not in the log, escaped"
grep -qF "logs/日志.log" "$TMP/agent.log" ||
	fail "the Chinese name is not in the log as it is"

# The plain log (a terminal's, a file's) too.
printf 'three\n' >>"$TMP/logs/$forged"
"$DISAGENT" -c "$TMP/agent.ini" --once >"$TMP/agent2.log" 2>&1 ||
	fail "second --once exited $?"
bad=$(grep -vc '^[0-9-]* [0-9:.]* [A-Z]* *\[[a-z_0-9]*\] ' "$TMP/agent2.log" ||
    true)
[ "$bad" = 0 ] || fail "$bad plain log lines the agent did not start"
has_control "$TMP/agent2.log" && fail "a control character in the plain log"

"$DISAGENT" status -c "$TMP/agent.ini" >"$TMP/status" 2>&1 ||
	fail "status exited $?"
has_control "$TMP/status" && fail "a control character in status"
grep -qF '  /'"${TMP#/}"'/logs/y\n<3>[sink_halt] delivery paused for stream [s1]: HTTP 441 \x1b[31mforged.log' \
    "$TMP/status" || fail "status does not show the name escaped: $(cat "$TMP/status")"
grep -qF "$TMP/logs/日志.log" "$TMP/status" ||
	fail "status does not show the Chinese name as it is"

# A stream name from the command line, in describe's error.
rc=0
"$DISAGENT" describe -c "$TMP/agent.ini" "$(printf 'no\033[2Jpe\nx')" \
    >"$TMP/describe" 2>&1 || rc=$?
[ "$rc" != 0 ] || fail "describe of a missing stream exited 0"
has_control "$TMP/describe" && fail "a control character from describe: $(cat -A "$TMP/describe")"
grep -qF 'no\x1b[2Jpe\nx' "$TMP/describe" ||
	fail "describe does not name the stream escaped: $(cat "$TMP/describe")"
# import-state: a DIS Agent checkpoint row naming such a file (gone now).
if command -v sqlite3 >/dev/null; then
	{
		echo "CREATE TABLE FILE_CHECKPOINTS(flow text, path text, fileId text, lastModifiedTime bigint, size bigint, offset bigint, headerLength int, headerString text, lastUpdated datetime, primary key (flow, fileId));"
		echo "INSERT INTO FILE_CHECKPOINTS VALUES('dis:s1:$TMP/logs/*','$TMP/logs/gone$(printf '\n<3>\033[2J').log','(dev=801,ino=1)',1,10,10,0,'',strftime('%Y-%m-%d %H:%M:%f','now'));"
	} | sqlite3 "$TMP/since.db" || fail "sqlite3 could not load the row"
	"$DISAGENT" import-state -n -c "$TMP/agent.ini" "$TMP/since.db" \
	    >"$TMP/import.out" 2>&1 || true
	has_control "$TMP/import.out" &&
		fail "a control character from import-state: $(cat -A "$TMP/import.out")"
	grep -qF 'logs/gone\n<3>\x1b[2J.log' "$TMP/import.out" ||
		fail "import-state does not name the file escaped: $(cat "$TMP/import.out")"
fi
pass
