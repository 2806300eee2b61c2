#!/bin/sh
# disagent status -c FILE reports, per flow and file, the committed offset,
# the current size and the bytes behind, from the state file the agent
# leaves; it works before the first run, changes nothing on disk, needs no
# credentials, and exits 1 with a reason when the configuration or the
# state cannot be read.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

start_server --stream s1
mkdir -p "$TMP/logs"
write_lines "$TMP/logs/a.log" a 0 2000
write_lines "$TMP/logs/b.log" b 0 500
write_conf "$TMP/agent.ini" "metricsFile = $TMP/disagent.prom"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/*.log"

"$DISAGENT" status -c "$TMP/agent.ini" >"$TMP/st0" 2>"$TMP/st0.err" ||
	fail "status before the first run exited $?: $(cat "$TMP/st0.err")"
grep -q "^state file:    $TMP/state/state.json (none yet: nothing delivered)\$" \
    "$TMP/st0" || fail "status before the first run: $(cat "$TMP/st0")"
grep -q '^\[flow:app\] stream s1: 0 files, 0 bytes behind$' "$TMP/st0" ||
	fail "no empty flow line: $(cat "$TMP/st0")"

"$DISAGENT" -c "$TMP/agent.ini" --once >"$TMP/agent.log" 2>&1 ||
	fail "--once exited $?"
asize=$(wc -c <"$TMP/logs/a.log" | tr -d ' ')
bsize=$(wc -c <"$TMP/logs/b.log" | tr -d ' ')
# Without credentials in the environment or the file.
grep -v '^ak = \|^sk = ' "$TMP/agent.ini" >"$TMP/nokeys.ini"
sum_before=$(cksum <"$TMP/state/state.json")
env -u DIS_AK -u DIS_SK "$DISAGENT" status -c "$TMP/nokeys.ini" \
    >"$TMP/st1" 2>"$TMP/st1.err" || fail "status exited $?: $(cat "$TMP/st1.err")"
[ "$(cksum <"$TMP/state/state.json")" = "$sum_before" ] ||
	fail "status changed the state file"
grep -q "^state file:    $TMP/state/state.json (2 files)\$" "$TMP/st1" ||
	fail "state line: $(cat "$TMP/st1")"
grep -q "^metrics file:  $TMP/disagent.prom" "$TMP/st1" ||
	fail "metrics line: $(cat "$TMP/st1")"
grep -q '^\[flow:app\] stream s1: 2 files, 0 bytes behind$' "$TMP/st1" ||
	fail "flow line after --once: $(cat "$TMP/st1")"
row() { printf '  %14s %14s %14s  %s\n' "$1" "$2" "$3" "$4"; }
grep -qxF "$(row "$asize" "$asize" 0 "$TMP/logs/a.log")" "$TMP/st1" ||
	fail "row of a.log: $(cat "$TMP/st1")"
grep -qxF "$(row "$bsize" "$bsize" 0 "$TMP/logs/b.log")" "$TMP/st1" ||
	fail "row of b.log: $(cat "$TMP/st1")"

# New lines are behind until the agent sends them.
write_lines "$TMP/logs/a.log" a 2000 2100
asize2=$(wc -c <"$TMP/logs/a.log" | tr -d ' ')
behind=$((asize2 - asize))
"$DISAGENT" status -c "$TMP/agent.ini" >"$TMP/st2" || fail "status exited $?"
grep -q "^\[flow:app\] stream s1: 2 files, $behind bytes behind\$" "$TMP/st2" ||
	fail "bytes behind after appending: $(cat "$TMP/st2")"
grep -qxF "$(row "$asize" "$asize2" "$behind" "$TMP/logs/a.log")" "$TMP/st2" ||
	fail "row of a.log after appending: $(cat "$TMP/st2")"

# A file that is gone is marked, not an error.
rm "$TMP/logs/b.log"
"$DISAGENT" status -c "$TMP/agent.ini" >"$TMP/st3" || fail "status exited $?"
grep -qxF "$(row "$bsize" - - "$TMP/logs/b.log (missing)")" "$TMP/st3" ||
	fail "row of the removed b.log: $(cat "$TMP/st3")"

# A configuration that does not load: exit 1 with FILE:LINE.
printf '[agent]\nregion = cn-north-1\nbogus = 1\n' >"$TMP/bad.ini"
rc=0
"$DISAGENT" status -c "$TMP/bad.ini" >/dev/null 2>"$TMP/bad.err" || rc=$?
[ "$rc" = 1 ] || fail "status with a bad configuration exited $rc, not 1"
grep -q "$TMP/bad.ini:3: unknown key 'bogus'" "$TMP/bad.err" ||
	fail "no FILE:LINE message: $(cat "$TMP/bad.err")"

# A state file and .bak that cannot be used: exit 1, and both stay put.
echo garbage >"$TMP/state/state.json"
echo garbage >"$TMP/state/state.json.bak"
rc=0
"$DISAGENT" status -c "$TMP/agent.ini" >/dev/null 2>"$TMP/corrupt.err" || rc=$?
[ "$rc" = 1 ] || fail "status with a corrupt state exited $rc, not 1"
grep -q "state file $TMP/state/state.json and its .bak are corrupt" \
    "$TMP/corrupt.err" || fail "no reason: $(cat "$TMP/corrupt.err")"
if ls "$TMP/state" | grep -q corrupt; then
	fail "status set a corrupt file aside"
fi
pass
