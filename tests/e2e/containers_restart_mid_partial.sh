#!/bin/sh
# A restart in the middle of a runtime's partial lines resends nothing and
# splits nothing: the partials read before the stop are read again and
# joined with the line that ends them, into one record.
#  1. SIGTERM after two partial stdout lines were read (they came in the
#     write whose whole line before them arrived).
#  2. stdout's partial line, then a whole stderr line, which arrives: its
#     record must not commit past the partial, or the restart starts after
#     it and the record arrives cut ("b2" alone).  Nor may the stderr line
#     be sent again: its own bytes, past the committed offset, are kept
#     acknowledged in the state file.
#  3. kill -9 after the partials were read: the restart's read-back finds
#     the line that landed, and the joined record arrives once.
#  4. kill -9 after a stderr line held back before stdout's partial was
#     delivered: the restart's read-back finds it by its own offset, and
#     it arrives once.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

T=2026-12-07T10:00:00.123456789Z
# put FILE LINE...: the lines appended in one write(2), as a runtime does.
put() {
	"$PYTHON3" - "$@" <<'PY'
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
os.write(fd, "".join(l + "\n" for l in sys.argv[2:]).encode())
os.close(fd)
PY
}
# has TEXT: a record of s1 is exactly TEXT.
has() {
	records dump --records "$TMP/records.jsonl" --stream s1 | grep -qxF "$1"
}
# times TEXT: how many records of s1 are exactly TEXT.
times() {
	records dump --records "$TMP/records.jsonl" --stream s1 |
	    grep -cxF "$1" || true
}
restart() {
	start_agent "$TMP/agent.ini"
}

start_server --stream s1
C=$TMP/pods/prod_web-1_6f1c0a2e-0001/app
mkdir -p "$C"
# A crash's restart waits for what may still land, socketTimeOutSeconds.
write_conf "$TMP/agent.ini" "socketTimeOutSeconds = 5"
cat >>"$TMP/agent.ini" <<EOF

[flow:pods]
source = containers
containerLogDirectory = $TMP/pods
containerRecord = message
DISStream = s1
maxBufferAgeMillis = 200
EOF
"$DISAGENT" -t -c "$TMP/agent.ini" >/dev/null

# 1. SIGTERM between partial lines.
put "$C/0.log" "$T stdout F before1" "$T stdout P a1-" "$T stdout P a2-"
restart
wait_for 30 "before1" has before1
stop_agent
put "$C/0.log" "$T stdout F a3"
restart
wait_for 30 "a1-a2-a3" has a1-a2-a3
stop_agent

# 2. A stderr line between stdout's partials.
put "$C/0.log" "$T stdout F before2" "$T stdout P b1-" "$T stderr F err2"
restart
wait_for 30 "err2" has err2
stop_agent
put "$C/0.log" "$T stdout F b2"
restart
wait_for 30 "b1-b2" has b1-b2
stop_agent
[ "$(times b2)" = 0 ] || fail "the partial line was lost: b2 arrived alone"

# 3. kill -9 between partial lines.
put "$C/0.log" "$T stdout F before3" "$T stdout P c1-" "$T stdout P c2-"
restart
wait_for 30 "before3" has before3
kill -9 "$AGENT_PID"
wait "$AGENT_PID" 2>/dev/null || true
AGENT_PID=
put "$C/0.log" "$T stdout F c3"
restart
wait_for 60 "c1-c2-c3" has c1-c2-c3
stop_agent

# 4. kill -9 with a stderr line held back before stdout's partial.
put "$C/0.log" "$T stdout F before4" "$T stdout P d1-" "$T stderr F err4"
restart
wait_for 30 "err4" has err4
kill -9 "$AGENT_PID"
wait "$AGENT_PID" 2>/dev/null || true
AGENT_PID=
put "$C/0.log" "$T stdout F d2"
restart
wait_for 60 "d1-d2" has d1-d2
stop_agent

for r in before1 a1-a2-a3 before2 err2 b1-b2 before3 c1-c2-c3 before4 \
    err4 d1-d2; do
	[ "$(times "$r")" = 1 ] || fail "$r arrived $(times "$r") times"
done
n=$(records count --records "$TMP/records.jsonl" --stream s1)
[ "$n" = 10 ] || fail "$n records: $(records dump \
    --records "$TMP/records.jsonl" --stream s1 | tr '\n' '|')"
pass
