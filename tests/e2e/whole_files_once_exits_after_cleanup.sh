#!/bin/sh
# --once with a whole-file flow: the files there at the start are waited
# for until they stay unchanged, sent, and cleaned up once the state file
# says so; then the agent exits 0.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

start_server --stream s1
mkdir -p "$TMP/in"
write_lines "$TMP/in/a.csv" a 0 100
printf 'b1\nb2 without delimiter' >"$TMP/in/b.csv"
{ cat "$TMP/in/a.csv"; printf 'b1\nb2 without delimiter\n'; } >"$TMP/expect"
write_conf "$TMP/agent.ini"
add_flow "$TMP/agent.ini" w s1 "$TMP/in/*.csv" "isFileAppendable = false" \
    "maxFileCheckingMillis = 300"
rc=0
timeout 60 "$DISAGENT" -c "$TMP/agent.ini" --once >"$TMP/agent.log" 2>&1 ||
	rc=$?
[ "$rc" = 0 ] || fail "--once exited $rc"
[ -f "$TMP/in/a.csv.COMPLETED" ] && [ -f "$TMP/in/b.csv.COMPLETED" ] &&
    [ ! -e "$TMP/in/a.csv" ] && [ ! -e "$TMP/in/b.csv" ] ||
	fail "--once exited before the cleanup: $(ls "$TMP/in")"
records verify --records "$TMP/records.jsonl" --stream s1 \
    --expect "$TMP/expect" || fail "records differ"
pass
