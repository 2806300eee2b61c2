#!/bin/sh
# Whole-file cleanup cannot be turned against the host by symbolic links
# in a watched directory: a link to a file is sent, then deleted -- the
# link, never its target; a linked directory below the pattern's
# directory is read, but nothing in it is deleted through the link (the
# failure is logged, naming the reason, and counted); and a fileMoveToDir
# that is a link is refused by -t, and nothing is moved through it when
# one appears after -t passed.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

start_server --stream s1
mkdir -p "$TMP/in" "$TMP/outside" "$TMP/elsewhere" "$TMP/m"
write_lines "$TMP/outside/target.csv" t 0 10
ln -s "$TMP/outside/target.csv" "$TMP/in/link.csv"
write_lines "$TMP/elsewhere/e.csv" e 0 10
ln -s "$TMP/elsewhere" "$TMP/in/sub"
write_lines "$TMP/in/plain.csv" p 0 10
cat "$TMP/outside/target.csv" "$TMP/elsewhere/e.csv" "$TMP/in/plain.csv" \
    >"$TMP/expect"

write_conf "$TMP/agent.ini" "metricsFile = $TMP/m/disagent.prom" \
    "metricsIntervalMillis = 1000"
add_flow "$TMP/agent.ini" w s1 "$TMP/in/*.csv" "isFileAppendable = false" \
    "maxFileCheckingMillis = 300" "rescanIntervalMillis = 300" \
    "directoryRecursionEnabled = true" "deletePolicy = immediate"
"$DISAGENT" -t -c "$TMP/agent.ini" >/dev/null || fail "-t rejects the flow"
start_agent "$TMP/agent.ini"
wait_for 60 "30 records on s1" count_at_least s1 30
gone() { [ ! -e "$1" ] && [ ! -L "$1" ]; }
wait_for 30 "the link deleted" gone "$TMP/in/link.csv"
wait_for 30 "plain.csv deleted" gone "$TMP/in/plain.csv"
[ -f "$TMP/outside/target.csv" ] || fail "the link's target was deleted"
warned() {
	grep -q "delivered, but cannot delete $TMP/in/sub/e.csv: .*symbolic link" \
	    "$TMP/agent.log"
}
wait_for 30 "the refusal to delete through the linked directory" warned
failed() {
	grep -q '^disagent_cleanup_failures_total{flow="w",stream="s1"} [1-9]' \
	    "$TMP/m/disagent.prom"
}
wait_for 30 "the failure counted" failed
[ -f "$TMP/elsewhere/e.csv" ] || fail "e.csv was deleted through the link"
stop_agent
records verify --records "$TMP/records.jsonl" --stream s1 \
    --expect "$TMP/expect" || fail "records differ"

# fileMoveToDir a link: -t refuses it, naming the key's line.
mkdir -p "$TMP/real-done"
ln -s "$TMP/real-done" "$TMP/done"
write_conf "$TMP/move.ini"
add_flow "$TMP/move.ini" w s1 "$TMP/in/*.csv" "isFileAppendable = false" \
    "fileMoveToDir = $TMP/done"
line=$(grep -n '^fileMoveToDir' "$TMP/move.ini" | cut -d: -f1)
rc=0; "$DISAGENT" -t -c "$TMP/move.ini" >"$TMP/t.out" 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "-t accepted a fileMoveToDir that is a link"
grep -q "^$TMP/move.ini:$line: .*fileMoveToDir = $TMP/done is a symbolic link" \
    "$TMP/t.out" || fail "-t: $(cat "$TMP/t.out")"

# ... and one that became a link after -t passed moves nothing.
write_lines "$TMP/in/m.csv" m 0 10
: >"$TMP/agent.log"
start_agent "$TMP/move.ini"
wait_for 60 "m.csv sent" count_at_least s1 40
moved_refused() {
	grep -q "delivered, but cannot move $TMP/in/m.csv to $TMP/done: .*symbolic link" \
	    "$TMP/agent.log"
}
wait_for 30 "the move through the link refused" moved_refused
[ -f "$TMP/in/m.csv" ] || fail "m.csv was moved"
[ -z "$(ls "$TMP/real-done")" ] || fail "m.csv went through the link"
stop_agent
pass
