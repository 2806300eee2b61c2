#!/bin/sh
# SIGHUP re-reads the configuration without a restart.  A valid file that
# adds flow b and changes flow a is applied ("configuration reloaded: 2
# flows"); lines of both flows written before and after it arrive exactly
# once (offsets survive the rebuild).  An invalid file (an unknown key) is
# refused with an ERROR naming FILE:LINE, and the running configuration
# keeps delivering.  It is the same process throughout.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

# conf_a FILE AGE: [agent] and flow a with maxBufferAgeMillis = AGE.
conf_a() {
	write_conf "$1"
	add_flow "$1" a s1 "$TMP/logs/a/*.log"
	sed "s/^maxBufferAgeMillis = .*/maxBufferAgeMillis = $2/" "$1" >"$1.tmp"
	mv "$1.tmp" "$1"
}
# install FILE: replace agent.ini in one step, as an editor or tool would.
install_conf() { mv "$1" "$TMP/agent.ini"; }
log_count() { [ "$(grep -c -- "$1" "$TMP/agent.log")" -ge "$2" ]; }

start_server --stream s1 --stream s2
mkdir -p "$TMP/logs/a" "$TMP/logs/b"
write_lines "$TMP/logs/a/one.log" a 0 3000
conf_a "$TMP/agent.ini" 200
start_agent "$TMP/agent.ini"
pid=$AGENT_PID
wait_for 60 "3,000 records on s1" count_at_least s1 3000

# Valid: flow a changed, flow b added.  Lines of both before the SIGHUP...
conf_a "$TMP/new.ini" 300
add_flow "$TMP/new.ini" b s2 "$TMP/logs/b/*.log"
"$DISAGENT" -t -c "$TMP/new.ini" >/dev/null || fail "new.ini is not valid"
install_conf "$TMP/new.ini"
write_lines "$TMP/logs/a/one.log" a 3000 4000
write_lines "$TMP/logs/b/two.log" b 0 2000
kill -HUP "$pid"
wait_for 30 "the reload" grep -q "configuration reloaded: 2 flows" \
    "$TMP/agent.log"
# ... and after it.
write_lines "$TMP/logs/a/one.log" a 4000 5000
write_lines "$TMP/logs/b/two.log" b 2000 3000
wait_for 60 "5,000 records on s1" count_at_least s1 5000
wait_for 60 "3,000 records on s2" count_at_least s2 3000

# Invalid: an unknown key.  The ERROR names the file and line; delivery
# goes on with the running configuration.
cp "$TMP/agent.ini" "$TMP/bad.ini"
echo "bogusKey = 1" >>"$TMP/bad.ini"
line=$(grep -n '^bogusKey' "$TMP/bad.ini" | cut -d: -f1)
install_conf "$TMP/bad.ini"
kill -HUP "$pid"
wait_for 30 "the refused reload" grep -q \
    "ERROR.*SIGHUP: $TMP/agent.ini:$line: .*bogusKey.*keeping the running configuration" \
    "$TMP/agent.log"
write_lines "$TMP/logs/a/one.log" a 5000 6000
write_lines "$TMP/logs/b/two.log" b 3000 3500
wait_for 60 "6,000 records on s1" count_at_least s1 6000
wait_for 60 "3,500 records on s2" count_at_least s2 3500

kill -0 "$pid" || fail "the agent is gone"
[ "$AGENT_PID" = "$pid" ] || fail "the agent was restarted"
stop_agent
n=$(grep -c "INFO .* disagent .* starting with" "$TMP/agent.log")
[ "$n" = 1 ] || fail "the agent started $n times"
n=$(grep -c "configuration reloaded" "$TMP/agent.log")
[ "$n" = 1 ] || fail "$n reloads logged, want 1"
records verify --records "$TMP/records.jsonl" --stream s1 \
    --expect "$TMP/logs/a/one.log" || fail "flow a: records differ"
records verify --records "$TMP/records.jsonl" --stream s2 \
    --expect "$TMP/logs/b/two.log" || fail "flow b: records differ"
no_secret_in "$TMP/agent.log"
pass
