#!/bin/sh
# Per-record failures: with 10% of records refused with DIS.4303 (throttled)
# and 2% with DIS.5000 (server error), both retriable by default, 50,000
# lines in two files all arrive exactly once, the endpoint really did refuse
# records with both codes, and nothing is dead-lettered.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

start_server --stream s1 --rec-4303 0.10 --rec-5000 0.02
mkdir -p "$TMP/logs"
write_lines "$TMP/logs/one.log" p1 0 30000
write_lines "$TMP/logs/two.log" p2 0 20000

write_conf "$TMP/agent.ini"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/*.log" \
    "retryInitialBackoffMillis = 50" "retryMaxBackoffMillis = 500"
"$DISAGENT" -t -c "$TMP/agent.ini" >/dev/null

start_agent "$TMP/agent.ini"
wait_for 120 "50,000 records on s1" count_at_least s1 50000
stop_agent

records verify --records "$TMP/records.jsonl" --stream s1 \
    --expect "$TMP/logs/one.log" --expect "$TMP/logs/two.log" ||
	fail "records differ from the lines written"
failed_by() {
	"$PYTHON3" -c 'import json, sys; print(json.loads(sys.argv[1]).get(sys.argv[2], 0))' \
	    "$(stat_of records_failed_by_code | tr "'" '"')" "$1"
}
n4303=$(failed_by DIS.4303)
n5000=$(failed_by DIS.5000)
echo "records refused: DIS.4303 $n4303, DIS.5000 $n5000"
[ "$n4303" -gt 0 ] || fail "the endpoint refused no record with DIS.4303"
[ "$n5000" -gt 0 ] || fail "the endpoint refused no record with DIS.5000"
if [ -s "$TMP/state/deadletter.jsonl" ]; then
	fail "retriable records were dead-lettered"
fi
grep -q "records sent again after a failure" "$TMP/agent.log" ||
	fail "no progress line reported the retried records"
# The progress lines break failures down by code, counting each once.
"$PYTHON3" - "$TMP/agent.log" "$n4303" "$n5000" <<'PY' || fail "failures by code"
import re, sys
log, want = open(sys.argv[1]).read(), {"DIS.4303": int(sys.argv[2]),
                                       "DIS.5000": int(sys.argv[3])}
got = {}
for m in re.finditer(r"failed records since the last report: (.*)", log):
    for part in m.group(1).split(", "):
        code, n = part.rsplit(" ", 1)
        got[code] = got.get(code, 0) + int(n)
print("failed by code in the progress lines:", got, "endpoint:", want)
sys.exit(0 if got == want else 1)
PY
no_secret_in "$TMP/agent.log"
pass
