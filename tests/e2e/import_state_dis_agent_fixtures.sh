#!/bin/sh
# The migration end to end with the checkpoint file the real DIS Agent 1.2.4
# wrote (tests/data/dis-agent-checkpoints.db, its files recreated as
# tests/data/dis-agent-checkpoints.txt says): its agent.yml through
# --import-yml, the import-state command that prints, run as printed, and
# the first run sends exactly what that DIS Agent sent when it was
# restarted on the file: the one line that was waiting for its newline.
# Then the synthetic edge cases (tests/data/dis-agent-checkpoints-*.sql):
# each checkpoint imported or not, with the reason, and the first run
# sends what the DIS Agent sent on the same file (twoflows, nostream), or
# more where the DIS Agent skipped lines silently (pastsize: offsets past
# the end are read again from 0, at least once).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

if ! command -v sqlite3 >/dev/null; then
	echo "SKIP: $E2E_NAME: no sqlite3 CLI (scripts/deps --test)" >&2
	E2E_OK=1
	exit 77
fi
DATA=$top_srcdir/tests/data
start_server --stream s1 --stream s2
fid() { stat -c '(dev=%D,ino=%i)' "$1"; }
has() { grep -qF -- "$2" "$1" || fail "$1 does not say: $2"; }

# --- the real DIS Agent's file --------------------------------------------

D=$TMP/data
H=$TMP/dis-agent
mkdir -p "$D/app" "$D/other" "$H/conf"
printf 'app line 1: service started\napp line 2: listening on :8080\napp line 3: GET /health 200\napp line 4: GET /api/items 200\napp line 5: POST /api/items 201\napp line 5b: late write to the rotated file\n' >"$D/app/app.log.1"
printf 'app line 6: rotated, new file\napp line 7: GET /health 200\n' >"$D/app/app.log"
printf 'other 1: alpha\nother 2: beta\nother 3 (no newline yet)' >"$D/other/b.txt"
for f in app/app.log.1 app/app.log other/b.txt; do
	sum=$(sha256sum "$D/$f" | cut -d' ' -f1)
	grep -q "^/tmp/agentrun/data/$f .*" "$DATA/dis-agent-checkpoints.txt" &&
	    grep -A1 "^/tmp/agentrun/data/$f " "$DATA/dis-agent-checkpoints.txt" |
	    grep -q "sha256 $sum" || fail "$f is not the file the DIS Agent had"
done
cat >"$H/conf/agent.yml" <<EOF
---
region: cn-north-1
ak: $E2E_AK
sk: $E2E_SK
projectId: $E2E_PID
endpoint: https://127.0.0.1:$PORT
flows:
  - DISStream: s1
    filePattern: $D/app/app.log*
    initialPosition: START_OF_FILE
    maxBufferAgeMillis: 1000
  - DISStream: s2
    filePattern: $D/other/*.txt
    initialPosition: START_OF_FILE
    maxBufferAgeMillis: 1000
EOF
"$DISAGENT" --import-yml "$H/conf/agent.yml" >"$TMP/imported.ini" \
    2>"$TMP/import-yml.err" || fail "--import-yml: $(cat "$TMP/import-yml.err")"
sed -e "/^\[agent\]/a caFile = $TMP/ca/ca.pem" \
    -e "/^\[agent\]/a checkpointFile = $TMP/state/state.json" \
    "$TMP/imported.ini" >"$TMP/agent.ini"
chmod 600 "$TMP/agent.ini"
mkdir -p "$TMP/state"
"$DISAGENT" -t -c "$TMP/agent.ini" >/dev/null || fail "-t rejects the imported file"
# The command --import-yml says to run next names the DIS Agent's default
# checkpoint file beside its agent.yml: put the real one there, with its
# rows pointing at these files.
set -- $(tail -n 1 "$TMP/import-yml.err" | sed 's/.*: disagent import-state -c //')
[ "$2" = "$(cd "$H" && pwd -P)/conf/dis-agent_since.db" ] ||
	fail "--import-yml named the checkpoint file $2"
db=$2
cp "$DATA/dis-agent-checkpoints.db" "$db"
sqlite3 "$db" <<EOF || fail "sqlite3 could not rewrite the rows"
UPDATE FILE_CHECKPOINTS SET flow = replace(flow, '/tmp/agentrun/data', '$D'),
                            path = replace(path, '/tmp/agentrun/data', '$D');
UPDATE FILE_CHECKPOINTS SET fileId = '$(fid "$D/app/app.log.1")' WHERE fileId = '(dev=fe00,ino=10964511)';
UPDATE FILE_CHECKPOINTS SET fileId = '$(fid "$D/app/app.log")' WHERE fileId = '(dev=fe00,ino=10964856)';
UPDATE FILE_CHECKPOINTS SET fileId = '$(fid "$D/other/b.txt")' WHERE fileId = '(dev=fe00,ino=10964515)';
EOF
"$DISAGENT" import-state -c "$TMP/agent.ini" "$db" >"$TMP/real.out" 2>&1 ||
	fail "import-state: $(cat "$TMP/real.out")"
cat "$TMP/real.out"
has "$TMP/real.out" "imported: [s1] $D/app/app.log.1 (inode $(stat -c %i "$D/app/app.log.1")) at offset 194 of 194"
has "$TMP/real.out" "imported: [s1] $D/app/app.log (inode $(stat -c %i "$D/app/app.log")) at offset 58 of 58"
has "$TMP/real.out" "imported: [s2] $D/other/b.txt (inode $(stat -c %i "$D/other/b.txt")) at offset 29 of 53"
has "$TMP/real.out" "imported 3 of 3 checkpoints"

start_agent "$TMP/agent.ini"
wait_for 20 "the agent to start" grep -q "Startup completed" "$TMP/agent.log"
printf '\n' >>"$D/other/b.txt"
wait_for 60 "the waiting line" count_at_least s2 1
stop_agent
exact s2 "other 3 (no newline yet)"
exact s1

# --- the synthetic edge cases ---------------------------------------------

# fixture NAME: its files (the "-- file:" lines) under $TMP/NAME, its rows
# with the placeholders replaced in $TMP/NAME.db; DIR is $TMP/NAME.
fixture() {
	DIR=$TMP/$1
	mkdir -p "$DIR"
	"$PYTHON3" - "$DATA/dis-agent-checkpoints-$1.sql" "$DIR" \
	    >"$TMP/$1.sql" <<'PY' || fail "fixture $1"
import ast, os, re, sys
text = open(sys.argv[1]).read()
d = sys.argv[2]
for m in re.finditer(r'^-- file: (\S+) (\d+) (".*")$', text, re.M):
    data = ast.literal_eval(m.group(3)).encode()
    assert len(data) == int(m.group(2)), m.group(1)
    path = os.path.join(d, m.group(1))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
def fid(m):
    st = os.stat(os.path.join(d, m.group(1)))
    return "(dev=%x,ino=%d)" % (st.st_dev, st.st_ino)
for line in text.splitlines(True):
    if not line.startswith("--"):	# the comments name the placeholders
        line = re.sub(r'@FILEID:([^@]+)@', fid, line).replace('@DIR@', d)
    sys.stdout.write(line)
PY
	sqlite3 "$TMP/$1.db" <"$TMP/$1.sql" || fail "sqlite3 could not load $1"
	write_conf "$TMP/$1.ini"
	sed -i "s|^checkpointFile = .*|checkpointFile = $TMP/state-$1/state.json|" \
	    "$TMP/$1.ini"
	mkdir -p "$TMP/state-$1"
}
import_fixture() {
	"$DISAGENT" import-state -c "$TMP/$1.ini" "$TMP/$1.db" \
	    >"$TMP/$1.out" 2>&1 || fail "import-state $1: $(cat "$TMP/$1.out")"
	cat "$TMP/$1.out"
}
# run_fixture NAME COUNT: the first run, until COUNT records in all.
run_fixture() {
	: >"$TMP/records.jsonl"
	start_agent "$TMP/$1.ini"
	wait_for 60 "$2 records of $1" count_all "$2"
	stop_agent
}
count_all() {
	[ "$(records count --records "$TMP/records.jsonl")" -ge "$1" ]
}

fixture twoflows
add_flow "$TMP/twoflows.ini" A s1 "$DIR/logs/app.log*"
add_flow "$TMP/twoflows.ini" B s2 "$DIR/logs/*.log"
import_fixture twoflows
o=$TMP/twoflows.out
has "$o" "imported: [A] $DIR/logs/app.log (inode $(stat -c %i "$DIR/logs/app.log")) at offset 8 of 14"
has "$o" "imported: [A] $DIR/logs/app.log.1 (inode $(stat -c %i "$DIR/logs/app.log.1")) at offset 5 of 5"
has "$o" "imported: [B] $DIR/logs/app.log (inode $(stat -c %i "$DIR/logs/app.log")) at offset 14 of 14"
has "$o" "imported: [B] $DIR/logs/empty.log (inode $(stat -c %i "$DIR/logs/empty.log")) at offset 0 of 0"
has "$o" "not imported: $DIR/logs/gone.log"
has "$o" "deleted or moved away"
has "$o" "not imported: $DIR/logs/win.log (dis:s2:$DIR/logs/*.log, fileId 6c1f9a4e-0b7e-4f43-9d3a-2f5b8c0e7a11_1700000000000, offset 10): fileId 6c1f9a4e-0b7e-4f43-9d3a-2f5b8c0e7a11_1700000000000 is not a device and inode"
has "$o" "not imported: $DIR/logs/old.log (dis:s2:$DIR/logs/*.log, fileId $(fid "$DIR/logs/old.log"), offset 2): offset 2 of $DIR/logs/old.log is inside a line"
has "$o" "imported 4 of 7 checkpoints"
# What the DIS Agent sent when it was restarted on this file.
run_fixture twoflows 2
exact s1 three
exact s2 old

fixture nostream
add_flow "$TMP/nostream.ini" app s1 "$DIR/app/*.log"
import_fixture nostream
o=$TMP/nostream.out
has "$o" "imported: [app] $DIR/app/a.log (inode $(stat -c %i "$DIR/app/a.log")) at offset 16 of 24"
has "$o" "not imported: $DIR/old/x.log (dis:retired:$DIR/old/*.log"
has "$o" "no flow of $TMP/nostream.ini sends to stream retired"
has "$o" "not imported: $DIR/other/y.log (dis:s1:$DIR/other/*.log"
has "$o" "no flow of $TMP/nostream.ini reads $DIR/other/*.log for stream s1 ([app] reads $DIR/app/*.log)"
has "$o" "imported 1 of 3 checkpoints"
run_fixture nostream 1
exact s1 "alpha 3"

fixture pastsize
add_flow "$TMP/pastsize.ini" app s1 "$DIR/app/*.log"
import_fixture pastsize
o=$TMP/pastsize.out
has "$o" "offset 400 is past the end of $DIR/app/a.log (14 bytes)"
has "$o" "offset 150 is past the end of $DIR/app/b.log (120 bytes)"
has "$o" "$DIR/app/c.log (inode $(stat -c %i "$DIR/app/c.log")) is shorter (12 bytes) than the 300 bytes the DIS Agent fingerprinted"
has "$o" "imported 0 of 3 checkpoints"
# Read again from 0: what the DIS Agent silently skipped too.
run_fixture pastsize 8
cat "$DIR/app/a.log" "$DIR/app/b.log" "$DIR/app/c.log" >"$TMP/pastsize.expect"
records verify --records "$TMP/records.jsonl" --stream s1 \
    --expect "$TMP/pastsize.expect" || fail "pastsize: records differ"
pass
