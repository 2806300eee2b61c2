#!/bin/sh
# The endpoint refuses requests whose records exceed 20,000 bytes with 413:
# 500-record batches of ~71-byte lines are halved until they fit, and every
# line arrives exactly once.  One 30,000-byte line in the middle of a file
# can never fit: it is refused alone and written to the dead-letter file
# (flow, file, its byte offset, the code, and the line itself), counts as
# done (the saved offset reaches the end of the file), and never arrives.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

start_server --stream s1 --max-request-bytes 20000
mkdir -p "$TMP/logs"
LOG=$TMP/logs/app.log
write_lines "$LOG" d 0 3000
long_off=$(wc -c <"$LOG" | tr -d ' ')
"$PYTHON3" -c 'import sys; open(sys.argv[1], "a").write("long-line " + "y" * 30000 + "\n")' "$LOG"
write_lines "$LOG" d 3000 6000
write_lines "$TMP/logs/other.log" e 0 2000
grep -v '^long-line ' "$LOG" >"$TMP/expected.log"

write_conf "$TMP/agent.ini"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/*.log"
start_agent "$TMP/agent.ini"
wait_for 60 "7,999 records on s1" count_at_least s1 7999
wait_for 30 "the dead letter" test -s "$TMP/state/deadletter.jsonl"
wait_for 10 "a progress line counting it" \
    grep -q "Agent: .* 1 dead-lettered" "$TMP/agent.log"
stop_agent

records verify --records "$TMP/records.jsonl" --stream s1 \
    --expect "$TMP/expected.log" --expect "$TMP/logs/other.log" ||
	fail "records differ from the lines written (less the long one)"
[ "$(stat_of status_counts | tr -d ' ' | grep -c "'413'")" = 1 ] ||
	fail "the endpoint never answered 413"
grep -q "sending 250 records per request" "$TMP/agent.log" ||
	fail "no batch was halved"
grep -q "WARN.*rejected by DIS.*written to" "$TMP/agent.log" ||
	fail "the dead letter was not logged"

"$PYTHON3" - "$TMP/state/deadletter.jsonl" "$LOG" "$long_off" <<'PY' ||
import base64, json, sys, time
path, log, off = sys.argv[1], sys.argv[2], int(sys.argv[3])
lines = open(path, "rb").read().splitlines()
if len(lines) != 1:
    sys.exit("%d dead letters, want 1" % len(lines))
d = json.loads(lines[0])
want_line = open(log, "rb").read()[off:].split(b"\n", 1)[0]
checks = [
    ("flow", d.get("flow") == "app"),
    ("file", d.get("file") == log),
    ("offset", d.get("offset") == off),
    ("code", d.get("code") == "APIG.0201"),
    ("message", bool(d.get("message"))),
    ("time", abs(d.get("time", 0) - time.time()) < 600),
    ("data", base64.b64decode(d.get("data", "")) == want_line),
]
bad = [k for k, ok in checks if not ok]
if bad:
    sys.exit("dead letter wrong in %s: %s" % (", ".join(bad),
             {k: (v if k != "data" else v[:40] + "...") for k, v in d.items()}))
PY
	fail "the dead-letter file is not as expected"

"$PYTHON3" - "$top_srcdir/tests" "$TMP/state/state.json" "$LOG" <<'PY' ||
import os, sys
sys.path.insert(0, sys.argv[1])
import state_file
st, log = sys.argv[2], sys.argv[3]
files = {f["path"]: f["offset"] for f in state_file.entries(st)}
size = os.path.getsize(log)
if files.get(log) != size:
    sys.exit("saved offset %r, file size %d" % (files.get(log), size))
PY
	fail "the dead-lettered line did not count as done"
no_secret_in "$TMP/agent.log"
pass
