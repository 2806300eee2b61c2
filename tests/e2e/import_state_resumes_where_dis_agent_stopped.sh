#!/bin/sh
# disagent import-state takes over the positions of the DIS Agent's SQLite
# checkpoint file (its 1.2.4 schema, made here with the sqlite3 CLI), and
# the first run goes on exactly where the DIS Agent stopped: every line
# after those positions arrives once, none before them again.
#   app.log   stopped at line 60 of 120, then rotated away (app.log.1, a
#             name the flow does not match) and a new app.log written
#   b.log     stopped at line 20; more lines before and after the start
#   c.log     gone; its inode now holds d.log, whose first bytes are not
#             the ones the DIS Agent fingerprinted: d.log must be read from
#             its start, not from c.log's offset (which would skip lines)
#   f.log     delivered to its end: nothing again
#   g.log     stopped before a last line that had no newline yet
#   x.log     in a flow (stream "retired") that agent.ini does not have
# Also: import-state refuses while an agent runs with the state file, and
# an agent refuses while another holds it; the import reads the file while
# a writer (the DIS Agent, still running) holds a write open, and a dry run
# writes nothing.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

if ! command -v sqlite3 >/dev/null; then
	# automake's SKIP, as the rotation tests do without logrotate.
	echo "SKIP: $E2E_NAME: no sqlite3 CLI (scripts/deps --test)" >&2
	E2E_OK=1
	exit 77
fi
start_server --stream s1
L=$TMP/logs
mkdir -p "$L" "$TMP/old" "$TMP/empty"
fid() { stat -c '(dev=%D,ino=%i)' "$1"; }
size() { stat -c %s "$1"; }
sha() { head -c "$2" "$1" | sha256sum | cut -d' ' -f1; }
# row FLOW PATH FILEID SIZE OFFSET HEADERLENGTH HEADERSTRING: one INSERT,
# as SQLiteFileCheckpointStore writes it.
row() {
	echo "INSERT INTO FILE_CHECKPOINTS VALUES('$1','$2','$3',1796143016643,$4,$5,$6,'$7',strftime('%Y-%m-%d %H:%M:%f','now'));"
}

# What the DIS Agent had sent when it stopped, and the files then.
write_lines "$L/app.log" a 0 60
off_a=$(size "$L/app.log")
write_lines "$L/app.log" a 60 120
write_lines "$L/b.log" b 0 20
off_b=$(size "$L/b.log")
write_lines "$L/d.log" d 0 40
write_lines "$TMP/c-old.txt" c 0 40		# what c.log held
write_lines "$L/f.log" f 0 10
write_lines "$L/g.log" g 0 2
off_g=$(size "$L/g.log")
printf 'g-partial' >>"$L/g.log"
write_lines "$TMP/old/x.log" x 0 5
F="dis:s1:$L/*.log"
{
	echo "CREATE TABLE FILE_CHECKPOINTS(       flow text,       path text,       fileId text,       lastModifiedTime bigint,       size bigint,       offset bigint,       headerLength int,       headerString text,       lastUpdated datetime,       primary key (flow, fileId));"
	row "$F" "$L/app.log" "$(fid "$L/app.log")" "$off_a" "$off_a" 512 "$(sha "$L/app.log" 512)"
	row "$F" "$L/b.log" "$(fid "$L/b.log")" "$off_b" "$off_b" 512 "$(sha "$L/b.log" 512)"
	# c.log's row, its inode now d.log's.
	row "$F" "$L/c.log" "$(fid "$L/d.log")" 1000 1000 512 "$(sha "$TMP/c-old.txt" 512)"
	row "$F" "$L/f.log" "$(fid "$L/f.log")" "$(size "$L/f.log")" "$(size "$L/f.log")" 512 "$(sha "$L/f.log" 512)"
	row "$F" "$L/g.log" "$(fid "$L/g.log")" "$(size "$L/g.log")" "$off_g" "$(size "$L/g.log")" "$(sha "$L/g.log" "$(size "$L/g.log")")"
	row "dis:retired:$TMP/old/*.log" "$TMP/old/x.log" "$(fid "$TMP/old/x.log")" 0 0 0 x
} >"$TMP/checkpoints.sql"
sqlite3 "$TMP/since.db" <"$TMP/checkpoints.sql" || fail "sqlite3 could not load the rows"

# While the DIS Agent was stopped: app.log rotated, b.log grew.
mv "$L/app.log" "$L/app.log.1"
write_lines "$L/app.log" n 0 30
write_lines "$L/b.log" b 20 40

write_conf "$TMP/agent.ini"
add_flow "$TMP/agent.ini" app s1 "$L/*.log"
"$DISAGENT" -t -c "$TMP/agent.ini" >/dev/null

# An agent runs with this state file (a flow with nothing to read).
write_conf "$TMP/other.ini"
add_flow "$TMP/other.ini" other s1 "$TMP/empty/*.log"
start_agent "$TMP/other.ini"
wait_for 20 "the agent to start" grep -q "Startup completed" "$TMP/agent.log"
rc=0
"$DISAGENT" import-state -c "$TMP/agent.ini" "$TMP/since.db" \
    >"$TMP/refused.out" 2>"$TMP/refused.err" || rc=$?
[ "$rc" = 1 ] || fail "import-state exited $rc while an agent ran"
grep -q "is in use: disagent runs (pid $AGENT_PID holds " "$TMP/refused.err" ||
	fail "import-state did not say the agent holds the state: $(cat "$TMP/refused.err")"
rc=0
"$DISAGENT" -c "$TMP/agent.ini" >"$TMP/agent2.log" 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "a second agent on the same state file exited $rc"
grep -q "is in use by another process (pid $AGENT_PID" "$TMP/agent2.log" ||
	fail "the second agent did not say why it refused"
stop_agent

# The DIS Agent still has the file open, in the middle of a write that
# would move every offset to 0: the import sees the last commit only.
mkfifo "$TMP/writer"
sqlite3 "$TMP/since.db" <"$TMP/writer" >/dev/null 2>&1 &
E2E_PIDS="$E2E_PIDS $!"
exec 3>"$TMP/writer"
echo "BEGIN IMMEDIATE; UPDATE FILE_CHECKPOINTS SET offset = 0;" >&3
wait_for 20 "the writer's journal" test -e "$TMP/since.db-journal"

cp "$TMP/state/state.json" "$TMP/state.before"
"$DISAGENT" import-state -n -c "$TMP/agent.ini" "$TMP/since.db" \
    >"$TMP/dry.out" 2>&1 || fail "the dry run failed: $(cat "$TMP/dry.out")"
grep -q "^would import 4 of 6 checkpoints" "$TMP/dry.out" ||
	fail "dry run: $(cat "$TMP/dry.out")"
cmp -s "$TMP/state/state.json" "$TMP/state.before" ||
	fail "the dry run wrote the state file"
"$DISAGENT" import-state -c "$TMP/agent.ini" "$TMP/since.db" \
    >"$TMP/import.out" 2>&1 || fail "import-state failed: $(cat "$TMP/import.out")"
exec 3>&-
cat "$TMP/import.out"
expect_out() {
	grep -qF -- "$1" "$TMP/import.out" || fail "import-state did not say: $1"
}
expect_out "imported: [app] $L/app.log.1 (inode $(stat -c %i "$L/app.log.1"), was $L/app.log) at offset $off_a of"
expect_out "imported: [app] $L/b.log (inode $(stat -c %i "$L/b.log")) at offset $off_b of"
expect_out "imported: [app] $L/g.log (inode $(stat -c %i "$L/g.log")) at offset $off_g of"
expect_out "not imported: $L/c.log ($F, fileId $(fid "$L/d.log"), offset 1000): inode $(stat -c %i "$L/d.log") holds another file now ($L/d.log)"
expect_out "not imported: $TMP/old/x.log (dis:retired:$TMP/old/*.log"
expect_out "no flow of $TMP/agent.ini sends to stream retired"
expect_out "imported 4 of 6 checkpoints from $TMP/since.db into $TMP/state/state.json"

start_agent "$TMP/agent.ini"
wait_for 60 "the lines after the DIS Agent's positions" count_at_least s1 150
write_lines "$L/b.log" b 40 60
printf '\n' >>"$L/g.log"
wait_for 60 "the lines written since" count_at_least s1 171
stop_agent

# Exactly these, once each: app.log.1 from line 60, the new app.log, b.log
# from line 20, all of d.log, g.log's last line.
{
	tail -c +"$((off_a + 1))" "$L/app.log.1"
	cat "$L/app.log"
	tail -c +"$((off_b + 1))" "$L/b.log"
	cat "$L/d.log"
	echo g-partial
} >"$TMP/expected.txt"
[ "$(wc -l <"$TMP/expected.txt")" = 171 ] || fail "expected 171 lines"
records verify --records "$TMP/records.jsonl" --stream s1 \
    --expect "$TMP/expected.txt" ||
	fail "records differ from the lines after the DIS Agent's positions"
if grep -q "bytes after its committed offset that could not be delivered" \
    "$TMP/agent.log"; then
	fail "the agent reported lines lost"
fi
pass
