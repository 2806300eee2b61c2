#!/bin/sh
# Drop-in flow files: a flow in agent.d/b.ini beside agent.ini is shipped
# like one in agent.ini, and disagent -t lists both files.  A broken
# drop-in (a flow name agent.ini has) fails -t naming its own file and
# line and both places, and a SIGHUP refuses it while the running flows go
# on.  Then, one SIGHUP each: a drop-in removed is a flow removed (lines
# written to its files afterwards are not sent), a drop-in added is a flow
# added, and a drop-in changed is a flow changed (its new pattern is read).
# It is the same process throughout, and every line of the flows that
# existed when it was written arrives exactly once.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

log_has() { grep -q -- "$1" "$TMP/agent.log"; }
reloads() { [ "$(grep -c "configuration reloaded: $1 flow" "$TMP/agent.log")" -ge "$2" ]; }
# dropin NAME FLOW STREAM PATTERN: agent.d/NAME.ini, written in one step.
dropin() {
	add_flow "$TMP/agent.d/.$1.tmp" "$2" "$3" "$4"
	mv "$TMP/agent.d/.$1.tmp" "$TMP/agent.d/$1.ini"
}

start_server --stream s1 --stream s2 --stream s3
mkdir -p "$TMP/logs/a" "$TMP/logs/b" "$TMP/logs/d" "$TMP/logs/e" "$TMP/agent.d"
write_conf "$TMP/agent.ini"
add_flow "$TMP/agent.ini" a s1 "$TMP/logs/a/*.log"
dropin b b s2 "$TMP/logs/b/*.log"

"$DISAGENT" -t -c "$TMP/agent.ini" >"$TMP/t.out" 2>&1 || fail "-t: $(cat "$TMP/t.out")"
grep -qx "  read $TMP/agent.ini: \[flow:a\]" "$TMP/t.out" || fail "-t does not list agent.ini: $(cat "$TMP/t.out")"
grep -qx "  read $TMP/agent.d/b.ini: \[flow:b\]" "$TMP/t.out" || fail "-t does not list the drop-in: $(cat "$TMP/t.out")"

write_lines "$TMP/logs/a/a.log" a 0 1000
write_lines "$TMP/logs/b/b.log" b 0 1000
start_agent "$TMP/agent.ini"
pid=$AGENT_PID
wait_for 60 "1,000 records of flow a on s1" count_at_least s1 1000
wait_for 60 "1,000 records of the drop-in's flow b on s2" count_at_least s2 1000

# A broken drop-in: -t names its file and line and the first place.
agent_line=$(grep -n '^\[flow:a\]' "$TMP/agent.ini" | cut -d: -f1)
dropin c a s3 "$TMP/logs/d/*.log"
c_line=$(grep -n '^\[flow:a\]' "$TMP/agent.d/c.ini" | cut -d: -f1)
want="$TMP/agent.d/c.ini:$c_line: duplicate section \[flow:a\] (first at $TMP/agent.ini:$agent_line)"
if "$DISAGENT" -t -c "$TMP/agent.ini" >"$TMP/t.out" 2>&1; then
	fail "-t accepts a drop-in that repeats flow a"
fi
grep -q "^$want\$" "$TMP/t.out" || fail "-t says: $(cat "$TMP/t.out")"
kill -HUP "$pid"
wait_for 30 "the refused reload" log_has "ERROR.*SIGHUP: $want; keeping the running configuration"
write_lines "$TMP/logs/a/a.log" a 1000 1500
wait_for 60 "1,500 records on s1 after the refused reload" count_at_least s1 1500
rm "$TMP/agent.d/c.ini"

# Removed: b.ini goes, and its files are no longer read.
rm "$TMP/agent.d/b.ini"
kill -HUP "$pid"
wait_for 30 "the reload without b.ini" reloads 1 1
write_lines "$TMP/logs/b/b.log" b 1000 1500
# Added: d.ini.
dropin d d s3 "$TMP/logs/d/*.log"
kill -HUP "$pid"
wait_for 30 "the reload with d.ini" reloads 2 1
write_lines "$TMP/logs/d/d.log" d 0 800
write_lines "$TMP/logs/a/a.log" a 1500 2000
wait_for 60 "flow d's 800 records on s3" count_at_least s3 800
wait_for 60 "2,000 records on s1" count_at_least s1 2000

# Changed: d.ini now reads logs/e.
dropin d d s3 "$TMP/logs/e/*.log"
kill -HUP "$pid"
wait_for 30 "the reload with the changed d.ini" reloads 2 2
write_lines "$TMP/logs/e/e.log" e 0 700
write_lines "$TMP/logs/a/a.log" a 2000 2300
wait_for 60 "flow d's 700 records of logs/e on s3" count_at_least s3 1500
wait_for 60 "2,300 records on s1" count_at_least s1 2300

kill -0 "$pid" || fail "the agent is gone"
[ "$AGENT_PID" = "$pid" ] || fail "the agent was restarted"
stop_agent
n=$(grep -c "INFO .* disagent .* starting with" "$TMP/agent.log")
[ "$n" = 1 ] || fail "the agent started $n times"
records verify --records "$TMP/records.jsonl" --stream s1 \
    --expect "$TMP/logs/a/a.log" || fail "flow a: records differ"
# Flow b's lines written after its drop-in went were not sent.
head -n 1000 "$TMP/logs/b/b.log" >"$TMP/b-sent.log"
records verify --records "$TMP/records.jsonl" --stream s2 \
    --expect "$TMP/b-sent.log" || fail "flow b: records differ"
records verify --records "$TMP/records.jsonl" --stream s3 \
    --expect "$TMP/logs/d/d.log" --expect "$TMP/logs/e/e.log" ||
	fail "flow d: records differ"
no_secret_in "$TMP/agent.log"
pass
