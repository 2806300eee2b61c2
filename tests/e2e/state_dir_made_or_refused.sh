#!/bin/sh
# The state directory: a checkpointFile in a directory that does not exist
# yet is made at start (mode 0750, parents too) and used, so a second
# --once sends nothing again; one that cannot be made stops -t and the
# start, naming the key's file and line (deadLetterFile and
# spoolDirectory too), -t by trying, as the start does (/proc); and --once
# exits 1 when its last save fails.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

start_server --stream s1
mkdir -p "$TMP/logs"
write_lines "$TMP/logs/a.log" a 0 101
write_conf "$TMP/agent.ini"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/*.log"

# Made at start, parents too.
sed "s|^checkpointFile = .*|checkpointFile = $TMP/new/sub/state.json|" \
    "$TMP/agent.ini" >"$TMP/new.ini"
"$DISAGENT" -t -c "$TMP/new.ini" >"$TMP/t.out" 2>&1 ||
	fail "-t refuses a state directory it can make: $(cat "$TMP/t.out")"
[ ! -e "$TMP/new" ] || fail "-t made the state directory"
for run in 1 2 3; do
	"$DISAGENT" --once -c "$TMP/new.ini" >>"$TMP/agent.log" 2>&1 ||
		fail "--once run $run exited $?"
done
[ -s "$TMP/new/sub/state.json" ] || fail "no state file in the new directory"
for d in "$TMP/new" "$TMP/new/sub"; do
	mode=$(stat -c %a "$d")
	[ "$mode" = 750 ] || fail "$d was made with mode $mode, not 750"
done
n=$(records count --records "$TMP/records.jsonl" --stream s1)
[ "$n" = 101 ] || fail "three --once runs sent $n records, not 101"
if grep -q "cannot save state" "$TMP/agent.log"; then
	fail "a save failed: $(grep 'cannot save state' "$TMP/agent.log")"
fi

# Cannot be made (a file is in the way, which holds for root too): -t
# and the start fail at checkpointFile's line.
echo x >"$TMP/afile"
sed "s|^checkpointFile = .*|checkpointFile = $TMP/afile/state.json|" \
    "$TMP/agent.ini" >"$TMP/bad.ini"
line=$(grep -n '^checkpointFile' "$TMP/bad.ini" | cut -d: -f1)
want="$TMP/bad.ini:$line: checkpointFile = $TMP/afile/state.json: "
for mode in -t --once ""; do
	rc=0
	if [ -z "$mode" ]; then
		timeout 60 "$DISAGENT" -c "$TMP/bad.ini" >"$TMP/bad.out" 2>&1 || rc=$?
	else
		"$DISAGENT" "$mode" -c "$TMP/bad.ini" >"$TMP/bad.out" 2>&1 || rc=$?
	fi
	[ "$rc" = 1 ] || fail "'$mode' with an unusable state directory exited $rc"
	grep -qF "$want" "$TMP/bad.out" ||
		fail "'$mode' does not name the key's line: $(cat "$TMP/bad.out")"
done

# A directory no one can make, whatever access() says (root may "write"
# /proc): -t refuses it with the start's very message, and makes nothing.
sed "s|^checkpointFile = .*|checkpointFile = /proc/nope/state.json|" \
    "$TMP/agent.ini" >"$TMP/proc.ini"
chmod 600 "$TMP/proc.ini"
line=$(grep -n '^checkpointFile' "$TMP/proc.ini" | cut -d: -f1)
for mode in -t --once; do
	rc=0
	"$DISAGENT" "$mode" -c "$TMP/proc.ini" >"$TMP/proc-$mode.out" 2>&1 ||
	    rc=$?
	[ "$rc" = 1 ] || fail "'$mode' with checkpointFile in /proc exited $rc"
done
cmp "$TMP/proc--t.out" "$TMP/proc---once.out" >/dev/null ||
	fail "-t and the start differ: $(cat "$TMP/proc--t.out" "$TMP/proc---once.out")"
grep -q "^$TMP/proc.ini:$line: checkpointFile = /proc/nope/state.json: " \
    "$TMP/proc--t.out" || fail "-t: $(cat "$TMP/proc--t.out")"

# deadLetterFile elsewhere: its directory is checked at its own line.
sed "s|^checkpointFile = .*|&\ndeadLetterFile = $TMP/afile/dead.jsonl|" \
    "$TMP/agent.ini" >"$TMP/dl.ini"
line=$(grep -n '^deadLetterFile' "$TMP/dl.ini" | cut -d: -f1)
rc=0; "$DISAGENT" -t -c "$TMP/dl.ini" >"$TMP/dl.out" 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "-t with an unusable dead-letter directory exited $rc"
grep -qF "$TMP/dl.ini:$line: deadLetterFile = $TMP/afile/dead.jsonl: " \
    "$TMP/dl.out" || fail "deadLetterFile's line: $(cat "$TMP/dl.out")"

# spoolDirectory elsewhere: where it goes is checked at its own line.
sed "s|^checkpointFile = .*|&\nspoolDirectory = $TMP/afile/spool|" \
    "$TMP/agent.ini" >"$TMP/sp.ini"
line=$(grep -n '^spoolDirectory' "$TMP/sp.ini" | cut -d: -f1)
rc=0; "$DISAGENT" -t -c "$TMP/sp.ini" >"$TMP/sp.out" 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "-t with an unusable spool directory exited $rc"
grep -qF "$TMP/sp.ini:$line: spoolDirectory = $TMP/afile/spool: " \
    "$TMP/sp.out" || fail "spoolDirectory's line: $(cat "$TMP/sp.out")"

# A save that fails (state.json.tmp is a directory): --once exits 1.
mkdir -p "$TMP/st2/state.json.tmp"
write_lines "$TMP/logs/a.log" a 101 111
sed "s|^checkpointFile = .*|checkpointFile = $TMP/st2/state.json|" \
    "$TMP/agent.ini" >"$TMP/st2.ini"
rc=0; "$DISAGENT" --once -c "$TMP/st2.ini" >"$TMP/agent-st2.log" 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "--once whose state could not be saved exited $rc"
grep -q -- "--once: the state could not be saved to $TMP/st2/state.json" \
    "$TMP/agent-st2.log" || fail "no reason given: $(tail -5 "$TMP/agent-st2.log")"
pass
