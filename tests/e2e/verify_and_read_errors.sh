#!/bin/sh
# disagent verify exits 0 when every record of the files is in the stream,
# then 1, naming the missing count and the first missing lines with their
# offsets, once unshipped lines are appended; describe pages through 150
# partitions; read keeps to a small read limit, backing off on DIS.4303;
# a bad stream, a bad partition and bad credentials each give one clear
# line on stderr and exit status 1.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

start_server --stream s1:COMMON:2 --stream wide:COMMON:150
mkdir -p "$TMP/logs" "$TMP/other"
write_lines "$TMP/logs/a.log" a 0 3000
# A repeated line is expected (and found) as many times as it occurs.
printf 'same\nsame\nsame\n' >>"$TMP/logs/a.log"
write_lines "$TMP/logs/b.log" b 0 1000
write_conf "$TMP/agent.ini"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/*.log"
"$DISAGENT" -c "$TMP/agent.ini" --once >"$TMP/agent.log" 2>&1 ||
	fail "--once exited $?"

verify() { "$DISAGENT" verify -c "$TMP/agent.ini" "$@"; }

verify "$TMP/logs/a.log" "$TMP/logs/b.log" >"$TMP/v1" 2>"$TMP/v1.err" ||
	fail "verify exited $? with everything shipped: $(cat "$TMP/v1")"
grep -q "a.log (flow app, stream s1): 3003 records, 3003 found, 0 missing" \
    "$TMP/v1" || fail "verify did not count a.log: $(cat "$TMP/v1")"
grep -q "b.log (flow app, stream s1): 1000 records, 1000 found, 0 missing" \
    "$TMP/v1" || fail "verify did not count b.log: $(cat "$TMP/v1")"

# Appended lines the agent has not shipped yet are missing.
write_lines "$TMP/logs/a.log" a 3000 3042
rc=0; verify --since 1h "$TMP/logs/a.log" >"$TMP/v2" || rc=$?
[ "$rc" = 1 ] || fail "verify exited $rc with lines missing"
grep -q "3045 records, 3003 found, 42 missing" "$TMP/v2" ||
	fail "verify does not name 42 missing: $(cat "$TMP/v2")"
off=$(( $(head -n 3003 "$TMP/logs/a.log" | wc -c) ))
grep -q "missing: offset $off: \"a 0003000 " "$TMP/v2" ||
	fail "verify does not name the first missing line at $off"
# Shipped, they are found.
"$DISAGENT" -c "$TMP/agent.ini" --once >>"$TMP/agent.log" 2>&1 ||
	fail "second --once exited $?"
verify "$TMP/logs/a.log" >"$TMP/v3" || fail "verify exited $? after shipping"
grep -q "3045 found, 0 missing" "$TMP/v3" || fail "$(cat "$TMP/v3")"
# A file no flow ships.
printf 'x\n' >"$TMP/other/c.log"
rc=0; verify "$TMP/other/c.log" 2>"$TMP/v4.err" >/dev/null || rc=$?
[ "$rc" = 1 ] && grep -q "no enabled flow's filePattern matches" \
    "$TMP/v4.err" || fail "verify of an unshipped file: $rc"

# describe: every page of 150 partitions.
"$DISAGENT" describe -c "$TMP/agent.ini" wide >"$TMP/d1" ||
	fail "describe exited $?"
[ "$(grep -c 'shardId-' "$TMP/d1")" = 150 ] ||
	fail "describe listed $(grep -c 'shardId-' "$TMP/d1") partitions"
grep -q "shardId-0000000149" "$TMP/d1" || fail "last partition not listed"
"$DISAGENT" describe -c "$TMP/agent.ini" >"$TMP/d2" || fail "describe flows"
grep -q "^stream s1: COMMON, RUNNING" "$TMP/d2" || fail "$(cat "$TMP/d2")"

# A read limit of 50 kB/s per partition: about 2 s of throttled reading,
# every record once, and requests spaced by the backoff (no hammering).
faults '{"read_limit_bytes": 50000}' || fail "cannot set the read limit"
r0=$(stat_of get_records_requests)
"$DISAGENT" read -c "$TMP/agent.ini" s1 >"$TMP/limited" ||
	fail "throttled read exited $?"
records dump --records "$TMP/records.jsonl" --stream s1 |
	cmp -s - "$TMP/limited" || fail "throttled read differs"
throttled=$(stat_of read_throttled)
reqs=$(( $(stat_of get_records_requests) - r0 ))
echo "throttled read: $reqs GetRecords, $throttled throttled"
[ "$throttled" -ge 1 ] || fail "the read limit never throttled"
[ "$reqs" -le 40 ] || fail "$reqs GetRecords for 5 replies: hammering"
faults '{"read_limit_bytes": 0}'

# One line and status 1 for each error.
one_error() {	# WHAT PATTERN COMMAND...
	_what=$1; _pat=$2; shift 2
	_rc=0; "$@" >/dev/null 2>"$TMP/err" || _rc=$?
	[ "$_rc" = 1 ] || fail "$_what: exit status $_rc, not 1"
	[ "$(wc -l <"$TMP/err")" = 1 ] || fail "$_what: $(cat "$TMP/err")"
	grep -q -- "$_pat" "$TMP/err" || fail "$_what: $(cat "$TMP/err")"
}
one_error "read of a missing stream" "DIS.4301 Stream does not exist" \
    "$DISAGENT" read -c "$TMP/agent.ini" nosuch
one_error "describe of a missing stream" "DIS.4301" \
    "$DISAGENT" describe -c "$TMP/agent.ini" nosuch
one_error "a missing partition" "stream s1 has no partition shardId-0000000009" \
    "$DISAGENT" read -c "$TMP/agent.ini" s1 --partition 9
sed "s/^sk = .*/sk = WrongSecretValue987/" "$TMP/agent.ini" >"$TMP/bad.ini"
chmod 600 "$TMP/bad.ini"
one_error "read with a wrong sk" "HTTP 441 DIS.4110.*check ak/sk" \
    "$DISAGENT" read -c "$TMP/bad.ini" s1
one_error "verify with a wrong sk" "HTTP 441" \
    "$DISAGENT" verify -c "$TMP/bad.ini" "$TMP/logs/b.log"
if grep -rq WrongSecretValue987 "$TMP"/err; then fail "secret in output"; fi
pass
