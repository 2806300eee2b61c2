#!/bin/sh
# disagent status looks for the files an agent still reads through the
# agent that runs with ITS state file (the pid in the state file's lock),
# not through every disagent process on the host: another agent (another
# configuration, another test) may hold open a file that was ours, or one
# that reuses a deleted file's inode.  Here agent A read x.log, stopped,
# and x.log then got more lines and was deleted while agent B, with its
# own state file, still held it open (B's endpoint does not answer, so B
# cannot let go of it).  status -c A says x.log is missing, as A last saved
# it; before, it took B's descriptor for A's and said "(deleted; still
# open, being read)".
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

start_server --stream s1
mkdir -p "$TMP/logs" "$TMP/b"
write_lines "$TMP/logs/x.log" x 0 100
write_conf "$TMP/a.ini"
add_flow "$TMP/a.ini" app s1 "$TMP/logs/x.log"
"$DISAGENT" --once -c "$TMP/a.ini" >>"$TMP/agent.log" 2>&1 ||
	fail "agent A --once failed"
count_at_least s1 100 || fail "agent A did not deliver x.log"
size=$(wc -c <"$TMP/logs/x.log" | tr -d ' ')

# Agent B: the same file, its own state, an endpoint nobody answers on.
sed -e "s|^checkpointFile = .*|checkpointFile = $TMP/b/state.json|" \
    -e "s|^endpoint = .*|endpoint = https://127.0.0.1:1|" "$TMP/a.ini" \
    >"$TMP/b.ini"
chmod 600 "$TMP/b.ini"
start_agent "$TMP/b.ini"
b_holds() {
	ls -l "/proc/$AGENT_PID/fd" 2>/dev/null | grep -q "$TMP/logs/x.log"
}
wait_for 30 "agent B to open x.log" b_holds
write_lines "$TMP/logs/x.log" x 100 150
rm "$TMP/logs/x.log"
b_holds_deleted() {
	ls -l "/proc/$AGENT_PID/fd" 2>/dev/null |
	    grep -q "$TMP/logs/x.log (deleted)"
}
wait_for 30 "agent B to hold the deleted x.log" b_holds_deleted

"$DISAGENT" status -c "$TMP/a.ini" >"$TMP/st" 2>&1 ||
	{ cat "$TMP/st"; fail "status -c A failed"; }
cat "$TMP/st"
grep -q "still open, being read" "$TMP/st" &&
	fail "status of A took agent B's descriptor for A's"
grep -qF "$(printf '  %14s %14s %14s  %s (missing)' "$size" - - \
    "$TMP/logs/x.log")" "$TMP/st" ||
	fail "status of A does not say x.log is missing at offset $size"
kill -TERM "$AGENT_PID"
wait "$AGENT_PID" || :
AGENT_PID=
pass
