#!/bin/sh
# --once ships everything up to the current end of each file, commits it and
# exits 0; a second run ships nothing again; a partial last line waits, and
# the run's last line says so; and when delivery is impossible (wrong
# secret key) it exits 1 with the reason, promising no retries.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

start_server --stream s1
mkdir -p "$TMP/logs"
write_lines "$TMP/logs/x.log" x 0 5000
printf 'partial line without newline' >>"$TMP/logs/x.log"
write_lines "$TMP/logs/y.log" y 0 3000

write_conf "$TMP/agent.ini"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/*.log"

"$DISAGENT" -c "$TMP/agent.ini" --once >"$TMP/agent.log" 2>&1 ||
	fail "--once exited $?"
records verify --records "$TMP/records.jsonl" --stream s1 \
    --expect "$TMP/logs/x.log" --expect "$TMP/logs/y.log" ||
	fail "records differ after --once"
# It does not claim the partial line is delivered.
grep -q -- "--once: every complete record is delivered; 28 bytes wait in the files" \
    "$TMP/agent.log" || fail "the end of the run: $(grep -- '--once:' "$TMP/agent.log")"

"$DISAGENT" -c "$TMP/agent.ini" --once >"$TMP/agent2.log" 2>&1 ||
	fail "second --once exited $?"
records verify --records "$TMP/records.jsonl" --stream s1 \
    --expect "$TMP/logs/x.log" --expect "$TMP/logs/y.log" ||
	fail "second --once sent something again"

# The partial line completes: the next run ships exactly it.
printf ' now complete\n' >>"$TMP/logs/x.log"
"$DISAGENT" -c "$TMP/agent.ini" --once >"$TMP/agent3.log" 2>&1 ||
	fail "third --once exited $?"
records verify --records "$TMP/records.jsonl" --stream s1 \
    --expect "$TMP/logs/x.log" --expect "$TMP/logs/y.log" ||
	fail "completed partial line not delivered exactly once"

# Wrong secret key: nothing is delivered, exit 1 with a reason, and the
# secret never appears in the output.
write_lines "$TMP/logs/y.log" y 3000 3100
sed "s/^sk = .*/sk = WrongSecretValue987/" "$TMP/agent.ini" >"$TMP/bad.ini"
rc=0
"$DISAGENT" -c "$TMP/bad.ini" --once >"$TMP/agent4.log" 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "--once with a wrong sk exited $rc, not 1"
grep -q "cannot deliver" "$TMP/agent4.log" || fail "no reason given"
grep -q "441" "$TMP/agent4.log" || fail "reason does not name the 441"
# A run that ends promises no retries.
if grep -q "retried every" "$TMP/agent4.log"; then
	fail "--once promises retries: $(grep 'retried every' "$TMP/agent4.log")"
fi
grep -q "delivery stopped for stream \[s1\]: .*; data stays on disk for the next run" \
    "$TMP/agent4.log" || fail "no ERROR says the data waits for the next run"
if grep -q WrongSecretValue987 "$TMP/agent4.log"; then
	fail "the secret key appears in the log"
fi
# A region the endpoint does not serve: the hint says region, not the keys.
sed "s/^region = .*/region = cn-north-4/" "$TMP/agent.ini" >"$TMP/region.ini"
rc=0
"$DISAGENT" -c "$TMP/region.ini" --once >"$TMP/agent-region.log" 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "--once with the wrong region exited $rc, not 1"
grep -q "HTTP 441 DIS.4111 .*: check region" "$TMP/agent-region.log" ||
	fail "no region hint: $(grep -i 'paused\|stopped' "$TMP/agent-region.log")"
# ... and the lines are still delivered once credentials are right.
"$DISAGENT" -c "$TMP/agent.ini" --once >"$TMP/agent5.log" 2>&1 ||
	fail "--once after fixing credentials exited $?"
records verify --records "$TMP/records.jsonl" --stream s1 \
    --expect "$TMP/logs/x.log" --expect "$TMP/logs/y.log" ||
	fail "records differ after the credentials were fixed"
for f in "$TMP"/agent*.log; do no_secret_in "$f"; done
pass
