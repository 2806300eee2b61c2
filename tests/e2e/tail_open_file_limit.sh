#!/bin/sh
# More files than the open-file limit allows descriptors: systemd gives a
# service a soft RLIMIT_NOFILE of 1024.  The agent raises its soft limit to
# the hard one, and where the hard limit is low too it lowers maxOpenFiles
# (default 1,024) so that descriptors remain for its connections: once all
# of them went to log files, no request could be made and nothing arrived.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

start_server --stream s1
mkdir -p "$TMP/logs"
"$PYTHON3" - "$TMP/logs" <<'PY'
import os, sys
for n in range(600):
    with open(os.path.join(sys.argv[1], "f%04d.log" % n), "w") as f:
        f.write("f%04d 0000000 %s\n" % (n, "x" * 60))
PY
write_conf "$TMP/agent.ini"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/*.log"

# The soft limit is raised to the hard one.
hard=$(ulimit -Hn)
[ "$hard" = unlimited ] || [ "$hard" -gt 300 ] ||
	fail "the hard open-file limit ($hard) is too low for this test"
ulimit -Sn 256
start_agent "$TMP/agent.ini"
wait_for 30 "600 records on s1" count_at_least s1 600
soft=$(awk '/^Max open files/ { print $4 }' "/proc/$AGENT_PID/limits")
echo "soft limit in the agent: $soft (hard $hard)"
[ "$soft" = "$hard" ] || fail "the agent kept a soft limit of $soft"
stop_agent

# A hard limit of 300 as well: maxOpenFiles is lowered, every line arrives.
rm -rf "$TMP/state"
: >"$TMP/records.jsonl"
ulimit -Hn 300
start_agent "$TMP/agent.ini"
wait_for 60 "600 records on s1" count_at_least s1 600
stop_agent
grep -q "maxOpenFiles = 1024 leaves no descriptors for the connections (open-file limit 300 over 1 flows); using 172" \
    "$TMP/agent.log" || fail "no warning about the lowered maxOpenFiles"
records verify --records "$TMP/records.jsonl" --stream s1 \
    $(for f in "$TMP"/logs/*.log; do printf -- '--expect %s ' "$f"; done) ||
	fail "records differ from the lines written"
pass
