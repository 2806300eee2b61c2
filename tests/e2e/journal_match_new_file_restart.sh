#!/bin/sh
# source = journal against real journal files (made by
# systemd-journal-remote, no journald running):
#  - journalMatch "_SYSTEMD_UNIT=nginx.service+PRIORITY=0..4,
#    SYSLOG_IDENTIFIER=app" sends exactly the app entries and nginx's
#    entries of priority 0..4, in journal order, a message with a newline
#    as one record; entries without MESSAGE are skipped; the line filter
#    and FILE_NAME partition keys (the unit, else the identifier) apply;
#  - journalFormat = JSON sends journalctl -o json's object, SHORT its
#    short line, through ADDMETADATA as for a file;
#  - entries of a second journal file that appears while the agent runs,
#    and entries appended to the first, arrive;
#  - waiting for entries the agent sleeps (under 0.05 CPU-s per second);
#  - a restart (SIGTERM) sends nothing again, and entries logged while
#    the agent was stopped arrive after the next start, once; status shows
#    the position and the entries behind.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/journal_lib.sh"

export TZ=UTC	# the SHORT lines' time
J=$TMP/journal
mkdir -p "$J"
journal_entries "$J/a.journal" app 0 300 --expect "$TMP/app.exp" \
    --binary-every 7 --no-message-every 50
journal_entries "$J/a.journal" web 300 400 --unit nginx.service \
    --priority 3 --expect "$TMP/j1-web.exp"
journal_entries "$J/a.journal" web 400 450 --unit nginx.service --priority 6
journal_entries "$J/a.journal" db 450 500 --expect "$TMP/db.exp"

start_server --stream s1 --stream s2 --stream s3
write_conf "$TMP/agent.ini"
add_journal_flow "$TMP/agent.ini" j1 s1 "$J" \
    "journalMatch = _SYSTEMD_UNIT=nginx.service+PRIORITY=0..4, SYSLOG_IDENTIFIER=app" \
    "partitionKeyOption = FILE_NAME" "ordered = true" \
    'lineExcludePattern = ^app 0000013 '
add_journal_flow "$TMP/agent.ini" j2 s2 "$J" "journalMatch = SYSLOG_IDENTIFIER=db" \
    "journalFormat = JSON"
add_journal_flow "$TMP/agent.ini" j3 s3 "$J" "journalMatch = SYSLOG_IDENTIFIER=db" \
    "journalFormat = SHORT" "dataProcessingOptions = ADDMETADATA" \
    'ADDMETADATA.metadata = {"env":"e2e"}' "ADDMETADATA.fields = filename"
"$DISAGENT" -t -c "$TMP/agent.ini" >"$TMP/t.out" 2>&1 || fail "-t: $(cat "$TMP/t.out")"

# expect_j1: the records flow j1 must have sent, in order, as JSON.
expect_j1() {
	cat "$TMP/app.exp" "$TMP/j1-web.exp" "$@" | "$PYTHON3" -c '
import json, sys
recs = [l.rstrip("\n").replace("|", "\n") for l in sys.stdin]
json.dump([r for r in recs if not r.startswith("app 0000013 ")], sys.stdout)
' >"$TMP/j1.json"
	n_j1=$("$PYTHON3" -c 'import json, sys; print(len(json.load(open(sys.argv[1]))))' "$TMP/j1.json")
}
expect_j1
start_agent "$TMP/agent.ini"
wait_for 60 "flow j1's $n_j1 records" count_at_least s1 "$n_j1"
wait_for 60 "flow j2's 50 records" count_at_least s2 50
wait_for 60 "flow j3's 50 records" count_at_least s3 50
records exact --records "$TMP/records.jsonl" --stream s1 \
    --expected "$TMP/j1.json" || fail "flow j1: records differ"

# Partition keys: the unit, else the identifier.
"$PYTHON3" - "$TMP/records.jsonl" <<'PY' || fail "flow j1: partition keys"
import base64, json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["stream"] != "s1":
        continue
    data = base64.b64decode(r["data"]).decode()
    want = "app" if data.startswith("app ") else "nginx.service"
    if r["partition_key"] != want:
        sys.exit("record %r has key %r, not %r" % (data, r["partition_key"], want))
PY
# JSON: journalctl -o json's object; SHORT through ADDMETADATA.
"$PYTHON3" - "$TMP/records.jsonl" <<'PY' || fail "flows j2, j3: records differ"
import base64, json, sys
j2, j3 = [], []
for line in open(sys.argv[1]):
    r = json.loads(line)
    data = base64.b64decode(r["data"]).decode()
    {"s2": j2, "s3": j3}.get(r["stream"], []).append(data)
got = sorted(json.loads(d)["MESSAGE"] for d in j2)
if got != ["db %07d payload" % i for i in range(450, 500)]:
    sys.exit("j2 messages: %r" % got[:3])
for d in j2:
    o = json.loads(d)
    if not (o["__CURSOR"].startswith("s=") and o["__REALTIME_TIMESTAMP"].isdigit()
            and o["__MONOTONIC_TIMESTAMP"].isdigit() and o["SYSLOG_IDENTIFIER"] == "db"
            and o["PRIORITY"] == "6" and o["_BOOT_ID"] == "0123456789abcdef0123456789abcdef"
            and list(o)[:3] == ["__CURSOR", "__REALTIME_TIMESTAMP", "__MONOTONIC_TIMESTAMP"]):
        sys.exit("j2 object: %s" % d)
want = sorted(json.dumps({"metadata": {"env": "e2e", "filename": "db"},
                          "data": "Nov 14 22:13:20 e2e-host db[4242]: db %07d payload" % i},
                         separators=(",", ":")) for i in range(450, 500))
if sorted(j3) != want:
    sys.exit("j3: %r, want %r" % (sorted(j3)[:2], want[:2]))
PY

# A second file appears, and the first grows, while the agent runs.
journal_entries "$J/b.journal" app 500 600 --expect "$TMP/new.exp"
journal_entries "$J/a.journal" web 600 650 --unit nginx.service --priority 2 \
    --expect "$TMP/new.exp"
expect_j1 "$TMP/new.exp"
wait_for 60 "the new file's and the appended records ($n_j1)" count_at_least s1 "$n_j1"
records exact --records "$TMP/records.jsonl" --stream s1 \
    --expected "$TMP/j1.json" || fail "flow j1 after the new file: records differ"

# Waiting for the journal, the agent sleeps (its own CPU over 4 s).
TICK=$(getconf CLK_TCK)
cpu_cs() {
	awk -v tick="$TICK" '{ sub(/^.*\) /, ""); print int(($12 + $13) * 100 / tick) }' \
	    "/proc/$1/stat"
}
a=$(cpu_cs "$AGENT_PID")
sleep 4
b=$(cpu_cs "$AGENT_PID")
echo "idle on the journal: $((b - a)) cs of CPU in 4 s"
[ $((b - a)) -le 20 ] || fail "idle, the agent used $((b - a)) cs of CPU in 4 s"

# A restart sends nothing again.
stop_agent
start_agent "$TMP/agent.ini"
journal_entries "$J/b.journal" app 650 660 --expect "$TMP/new.exp"
expect_j1 "$TMP/new.exp"
wait_for 60 "10 records after the restart" count_at_least s1 "$n_j1"
stop_agent
records exact --records "$TMP/records.jsonl" --stream s1 \
    --expected "$TMP/j1.json" || fail "flow j1 after the restart: records differ"
[ "$(records count --records "$TMP/records.jsonl" --stream s2)" = 50 ] ||
	fail "flow j2 sent records again after the restart"

# Logged while the agent is stopped: status shows them behind, and the
# next start sends them once.
journal_entries "$J/b.journal" app 660 700 --expect "$TMP/new.exp"
"$DISAGENT" status -c "$TMP/agent.ini" >"$TMP/st" 2>&1 || fail "status: $(cat "$TMP/st")"
grep -q "^\[flow:j1\] stream s1: journal $J, journalMatch = _SYSTEMD_UNIT" "$TMP/st" &&
    grep -q "^  position: 2023-11-14 22:13:20 UTC (s=.*;i=" "$TMP/st" &&
    grep -q "^  behind:   40 entries; the newest is from 2023-11-14 22:13:20 UTC, 0 s later" "$TMP/st" ||
	fail "status: $(cat "$TMP/st")"
grep -q "(0 files, 3 journal positions)" "$TMP/st" || fail "status: $(cat "$TMP/st")"
expect_j1 "$TMP/new.exp"
start_agent "$TMP/agent.ini"
wait_for 60 "the 40 records logged while stopped" count_at_least s1 "$n_j1"
stop_agent
records exact --records "$TMP/records.jsonl" --stream s1 \
    --expected "$TMP/j1.json" || fail "flow j1 after a stop: records differ"
"$DISAGENT" status -c "$TMP/agent.ini" >"$TMP/st" 2>&1 || fail "status: $(cat "$TMP/st")"
grep -q "^  behind:   0 entries" "$TMP/st" || fail "status at the end: $(cat "$TMP/st")"
no_secret_in "$TMP/agent.log"
pass
