#!/bin/sh
# The "Put N records to [S] spend Tms" INFO line is logged for at most 4
# requests a second; the requests past them are summed into one line of
# the same form at the next progress report or at the stop.  20,000 lines
# in requests of 50 records (400 requests, one at a time) by --once: at
# most 4 such lines for each second the run took, then the summed ones;
# the records of all the Put lines add up to the lines written.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/rotate_lib.sh"

start_server --stream s1
mkdir -p "$TMP/logs"
write_lines "$TMP/logs/a.log" a 0 20000
write_conf "$TMP/agent.ini"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/*.log" \
    "maxBufferSizeRecords = 50" "ordered = true"
t0=$(date +%s)
"$DISAGENT" -c "$TMP/agent.ini" --once >"$TMP/agent.log" 2>&1 ||
	fail "--once exited $?"
t1=$(date +%s)
check_records s1 "$TMP/logs/a.log"
single=$(grep -c 'Put [0-9]* records to \[s1\] spend [0-9]*ms$' \
    "$TMP/agent.log" || true)
summed=$(grep -c 'Put [0-9]* records to \[s1\] spend [0-9]*ms on average, in [0-9]* requests' \
    "$TMP/agent.log" || true)
echo "$single single Put lines, $summed summed, over $((t1 - t0 + 1)) s"
[ "$single" -le $((4 * (t1 - t0 + 2))) ] ||
	fail "$single Put lines in $((t1 - t0 + 1)) s: more than 4 a second"
[ "$summed" -ge 1 ] || fail "no summed Put line"
total=$(sed -n 's/.*Put \([0-9]*\) records to \[s1\] spend.*/\1/p' \
    "$TMP/agent.log" | awk '{ n += $1 } END { print n + 0 }')
[ "$total" = 20000 ] ||
	fail "the Put lines count $total records, not the 20000 sent"
reqs=$(sed -n 's/.* in \([0-9]*\) requests (more than 4 a second.*/\1/p' \
    "$TMP/agent.log" | awk '{ n += $1 } END { print n + 0 }')
[ $((reqs + single)) -ge 400 ] ||
	fail "the Put lines count $((reqs + single)) requests, fewer than 400"
pass
