#!/bin/sh
# dedupeOnRestart is an agent setting a reload applies without rebuilding
# a flow: changed from auto to off, the flow is kept (its file stays open,
# nothing is sent again), and the records read after the reload carry the
# number RANDOM_INT makes instead of a record id; back to auto, ids again.
# (Before: the flows were rebuilt for the change, or kept the ids.)
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

log_has() { grep -q -- "$1" "$TMP/agent.log"; }
reloads() { [ "$(grep -c 'configuration reloaded' "$TMP/agent.log")" -ge "$1" ]; }
# keys TAG: the kinds of the partition keys of lines TAG: "id", "number".
keys() {
	"$PYTHON3" - "$TMP/records.jsonl" "$1" <<'PY'
import base64, json, re, sys
kinds = set()
for line in open(sys.argv[1]):
    r = json.loads(line)
    if not base64.b64decode(r["data"]).startswith(sys.argv[2].encode() + b" "):
        continue
    k = r["partition_key"]
    kinds.add("number" if re.fullmatch(r"[0-9]+", k) else
              "id" if re.fullmatch(r"[A-Za-z0-9_-]{12}", k) else k)
print(" ".join(sorted(kinds)))
PY
}
set_dedupe() {
	sed "s/^dedupeOnRestart = .*/dedupeOnRestart = $1/" "$TMP/agent.ini" \
	    >"$TMP/new.ini"
	chmod 600 "$TMP/new.ini"
	mv "$TMP/new.ini" "$TMP/agent.ini"
}

start_server --stream s1:COMMON:2
mkdir -p "$TMP/logs"
write_conf "$TMP/agent.ini" "dedupeOnRestart = auto"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/*.log"
write_lines "$TMP/logs/app.log" a 0 200
start_agent "$TMP/agent.ini"
pid=$AGENT_PID
wait_for 30 "the a lines" count_at_least s1 200
[ "$(keys a)" = id ] || fail "auto: keys of a are '$(keys a)', not ids"

set_dedupe off
kill -HUP "$pid"
wait_for 30 "the reload" reloads 1
log_has "reload: kept \[app\], changed \[\], added \[\], removed \[\]" ||
	fail "the flow was not kept: $(grep 'reload:' "$TMP/agent.log")"
write_lines "$TMP/logs/app.log" b 200 400
wait_for 30 "the b lines" count_at_least s1 400
[ "$(keys b)" = number ] || fail "off: keys of b are '$(keys b)', not numbers"

set_dedupe auto
kill -HUP "$pid"
wait_for 30 "the second reload" reloads 2
write_lines "$TMP/logs/app.log" c 400 600
wait_for 30 "the c lines" count_at_least s1 600
[ "$(keys c)" = id ] || fail "auto again: keys of c are '$(keys c)', not ids"
[ "$AGENT_PID" = "$pid" ] && kill -0 "$pid" || fail "the agent is gone"
stop_agent
records verify --records "$TMP/records.jsonl" --stream s1 \
    --expect "$TMP/logs/app.log" || fail "records differ from the lines"
pass
