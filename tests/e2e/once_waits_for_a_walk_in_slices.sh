#!/bin/sh
# A walk of many directories goes on over turns of the loop (32 a turn),
# so that signals are served meanwhile; --once must still wait for its
# end before it calls everything read.  3000 directories under **, one
# file each: every line arrives and --once exits 0 (it exited at once,
# with nothing sent, when it took the unfinished walk for the end).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

N=3000
start_server --stream s1
"$PYTHON3" - "$TMP/logs" "$N" <<'PY'
import os, sys
top, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    d = os.path.join(top, "d%04d" % i)
    os.makedirs(d)
    with open(os.path.join(d, "f.log"), "w") as f:
        f.write("line %04d\n" % i)
PY
write_conf "$TMP/agent.ini"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/**/*.log"
rc=0
"$DISAGENT" -c "$TMP/agent.ini" --once >"$TMP/agent.log" 2>&1 || rc=$?
[ "$rc" = 0 ] || fail "--once exited $rc"
"$PYTHON3" - "$N" >"$TMP/expect" <<'PY'
import sys
for i in range(int(sys.argv[1])):
    print("line %04d" % i)
PY
records verify --records "$TMP/records.jsonl" --stream s1 \
    --expect "$TMP/expect" || fail "not every line arrived once"
pass
