#!/bin/sh
# 1,000 files of 5 lines each are created at once in the watched directory
# while the agent runs (a burst of directory events, more files than one
# scan of a quiet directory ever sees): all 5,000 lines arrive, each once,
# in file order per file.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/rotate_lib.sh"

start_server --stream s1
mkdir -p "$TMP/logs"
write_lines "$TMP/logs/first.log" first 0 10
write_conf "$TMP/agent.ini"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/*.log" "ordered = true"

start_agent "$TMP/agent.ini"
await_records s1 30 "$TMP/logs/first.log"
"$PYTHON3" - "$TMP/logs" <<'PY'
import os, sys
d = sys.argv[1]
pad = "x" * 60
for n in range(1000):
    with open(os.path.join(d, "f%04d.log" % n), "w") as f:
        f.write("".join("f%04d %07d %s\n" % (n, i, pad) for i in range(5)))
PY
set -- "$TMP"/logs/*.log
[ $# = 1001 ] || fail "expected 1,001 files, found $#"
await_records s1 30 "$@"
stop_agent
check_records s1 "$@"
pass
