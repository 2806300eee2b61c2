#!/bin/sh
# 10,000 one-line files found at start: every line arrives once, and the
# agent's peak RSS stays bounded whatever the number of files; then a
# restart that loads the 10,000 entries of the state file (and finds
# nothing new to send) stays under the bound too.  Per tracked file the
# agent holds a tailer and a registry entry, a few hundred bytes; the state
# file is read one entry at a time.  The bound is 24 MiB, a wide margin
# (docs/testing.md): the 16 MiB target is measured, and held, by the
# benchmark (bench/run, rows discovery and discovery-restart: 15.8 and
# 15.6 MiB here, and discovery-1, the same start with one file: 12.0),
# where the figure is a number to compare, not a verdict that a libc or
# a kernel a few dozen kB apart flips.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

E2E_RSS_LIMIT_KB=24576
N=10000

start_server --stream s1
"$PYTHON3" - "$TMP/logs" "$N" <<'PY'
import os, sys
d, n = sys.argv[1], int(sys.argv[2])
os.makedirs(d)
for i in range(n):
    with open(os.path.join(d, "f%05d.log" % i), "w") as f:
        f.write("f%05d 0000000 %s\n" % (i, "x" * 60))
PY
write_conf "$TMP/agent.ini"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/*.log"

start_agent "$TMP/agent.ini"
records wait --records "$TMP/records.jsonl" --stream s1 --count "$N" \
    --timeout 120 >&2 || fail "not all $N records arrived"
stop_agent

# Every file's line, once (the file list is too long for --expect).
"$PYTHON3" - "$TMP/records.jsonl" "$N" <<'PY' || fail "records differ"
import base64, json, sys
got = sorted(base64.b64decode(json.loads(l)["data"]).decode()
             for l in open(sys.argv[1]))
want = sorted("f%05d 0000000 %s" % (i, "x" * 60)
              for i in range(int(sys.argv[2])))
assert got == want, "%d records, %d distinct, %d expected" % (
    len(got), len(set(got)), len(want))
PY

# The restart reads the 10,000 entries back and resumes every file at its
# end: nothing is sent again.
mv "$TMP/agent.log" "$TMP/agent1.log"
start_agent "$TMP/agent.ini"
wait_for 60 "the state file loaded" \
    grep -q "loaded $N entries from" "$TMP/agent.log"
wait_for 60 "$N files tracked" \
    grep -q "/ $N files\] parsed" "$TMP/agent.log"
stop_agent
[ "$(records count --records "$TMP/records.jsonl" --stream s1)" = "$N" ] ||
	fail "the restart sent records again"
pass
