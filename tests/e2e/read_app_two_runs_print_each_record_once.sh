#!/bin/sh
# disagent read --app: two runs of --max 1500 over 3,000 records print
# each record exactly once between them, and a third prints nothing; the
# first run creates the app and says so once; the checkpoints the
# endpoint holds are the last record printed of each partition, with
# --metadata; describe --app shows them with no lag; apps lists the app
# and apps delete removes it only with --yes.  Bad names and too long
# metadata are usage errors.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

start_server --stream s1:COMMON:3
mkdir -p "$TMP/logs"
write_lines "$TMP/logs/x.log" x 0 3000
write_conf "$TMP/agent.ini"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/*.log"
"$DISAGENT" -c "$TMP/agent.ini" --once >"$TMP/agent.log" 2>&1 ||
	fail "--once exited $?"
records dump --records "$TMP/records.jsonl" --stream s1 >"$TMP/want"
[ "$(wc -l <"$TMP/want")" = 3000 ] || fail "the endpoint has not 3000 records"

read_app() { "$DISAGENT" read -c "$TMP/agent.ini" s1 --app consumer-1 "$@"; }

read_app --max 1500 --metadata "run one" >"$TMP/run1" 2>"$TMP/err1" ||
	fail "first run exited $?: $(cat "$TMP/err1")"
[ "$(cat "$TMP/err1")" = "disagent read: created app consumer-1" ] ||
	fail "first run's stderr: $(cat "$TMP/err1")"
[ "$(wc -l <"$TMP/run1")" = 1500 ] || fail "first run printed $(wc -l <"$TMP/run1")"

# The checkpoints are the last records printed, per partition.
control GET /_test/apps >"$TMP/apps.json"
"$PYTHON3" - "$TMP/apps.json" "$TMP/run1" "$TMP/records.jsonl" <<'PY' ||
import base64, json, sys
apps = json.load(open(sys.argv[1]))["apps"]
cps = apps["consumer-1"]["checkpoints"]["s1"]
printed = set(open(sys.argv[2], "rb").read().splitlines())
last = {}
for line in open(sys.argv[3]):
    r = json.loads(line)
    if base64.b64decode(r["data"]).rstrip(b"\n") in printed:
        p = r["partition_id"]
        last[p] = max(last.get(p, -1), int(r["sequence_number"]))
got = {p: int(c["sequence_number"]) for p, c in cps.items()}
assert got == last, (got, last)
assert all(c["metadata"] == "run one" for c in cps.values()), cps
PY
	fail "the checkpoints are not the last records printed"

read_app --max 1500 >"$TMP/run2" 2>"$TMP/err2" ||
	fail "second run exited $?: $(cat "$TMP/err2")"
[ ! -s "$TMP/err2" ] || fail "second run's stderr: $(cat "$TMP/err2")"
cat "$TMP/run1" "$TMP/run2" | cmp -s "$TMP/want" - ||
	fail "the two runs do not print every record once, in order"
read_app >"$TMP/run3" 2>"$TMP/err3" || fail "third run exited $?"
[ ! -s "$TMP/run3" ] || fail "a third run printed $(wc -l <"$TMP/run3") records"

# describe --app: every partition read to its end.
"$DISAGENT" describe -c "$TMP/agent.ini" --app consumer-1 s1 >"$TMP/desc" ||
	fail "describe --app exited $?"
grep -q '^ *PARTITION .* CHECKPOINT  *LAG ' "$TMP/desc" ||
	fail "describe --app: $(cat "$TMP/desc")"
[ "$(grep -c '^  shardId-[0-9]*  *ACTIVE .* [0-9][0-9]*  *0  *\[' \
    "$TMP/desc")" = 3 ] || fail "describe --app: not 3 partitions at lag 0: $(cat "$TMP/desc")"
rc=0; "$DISAGENT" describe -c "$TMP/agent.ini" --app nobody s1 \
    >/dev/null 2>"$TMP/err" || rc=$?
[ "$rc" = 1 ] && grep -q "there is no app nobody" "$TMP/err" ||
	fail "describe --app of a missing app: $rc $(cat "$TMP/err")"
# A new app starts at the oldest record and lags by everything.
[ "$(read_app --max 5 2>/dev/null | wc -l)" = 0 ] || fail "consumer-1 re-read"
"$DISAGENT" read -c "$TMP/agent.ini" s1 --app other --max 5 2>/dev/null |
	cmp -s - "$(head -5 "$TMP/want" >"$TMP/want5"; echo "$TMP/want5")" ||
	fail "a new app does not start at TRIM_HORIZON"

# apps lists both; delete needs --yes.
"$DISAGENT" apps -c "$TMP/agent.ini" >"$TMP/list" || fail "apps exited $?"
grep -q '^consumer-1 .* s1$' "$TMP/list" || fail "apps: $(cat "$TMP/list")"
grep -q '^other ' "$TMP/list" || fail "apps: $(cat "$TMP/list")"
rc=0; "$DISAGENT" apps -c "$TMP/agent.ini" delete consumer-1 2>"$TMP/err" ||
	rc=$?
[ "$rc" = 2 ] && grep -q -- "--yes" "$TMP/err" ||
	fail "apps delete without --yes: $rc $(cat "$TMP/err")"
"$DISAGENT" apps -c "$TMP/agent.ini" delete consumer-1 --yes >"$TMP/out" ||
	fail "apps delete --yes exited $?"
"$DISAGENT" apps -c "$TMP/agent.ini" | grep -q '^consumer-1 ' &&
	fail "consumer-1 is still listed"
rc=0; "$DISAGENT" apps -c "$TMP/agent.ini" delete consumer-1 --yes \
    2>"$TMP/err" || rc=$?
[ "$rc" = 1 ] && grep -q "there is no app consumer-1" "$TMP/err" ||
	fail "deleting a missing app: $rc $(cat "$TMP/err")"
# Deleted with its checkpoints: a new consumer-1 starts over.
[ "$(read_app 2>/dev/null | wc -l)" = 3000 ] || fail "a re-created app resumed"

# Usage errors.
rc=0; read_app --metadata "$("$PYTHON3" -c 'print("é" * 1001)')" \
    2>/dev/null || rc=$?
[ "$rc" = 2 ] || fail "1001 characters of metadata exited $rc, not 2"
rc=0; "$DISAGENT" read -c "$TMP/agent.ini" s1 --app 'no spaces' \
    2>/dev/null || rc=$?
[ "$rc" = 2 ] || fail "a bad app name exited $rc, not 2"
rc=0; "$DISAGENT" read -c "$TMP/agent.ini" s1 --metadata x 2>/dev/null ||
	rc=$?
[ "$rc" = 2 ] || fail "--metadata without --app exited $rc, not 2"
[ "$(stat_of auth_failures)" = 0 ] || fail "the endpoint rejected signatures"
pass
