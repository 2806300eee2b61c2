#!/bin/sh
# multiLinePreset in a container flow groups per stream, after partial
# lines are joined: a Java trace on stderr, one of its frames cut into
# partial lines, stays one record while stdout lines come between its
# lines, and those stdout lines stay records of their own.  Then kill -9
# while a second trace is open (its first lines read, stdout lines after
# them sent): the restart sends the trace once, whole, and the stdout
# lines sent while a trace was open once too (they are not committed past
# the trace's start, but the restart's read-back finds them by their own
# offsets).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

T=2026-12-07T10:00:00.123456789Z
put() {
	"$PYTHON3" - "$@" <<'PY'
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
os.write(fd, "".join(l + "\n" for l in sys.argv[2:]).encode())
os.close(fd)
PY
}
times() {
	"$PYTHON3" - "$TMP/records.jsonl" "$1" <<'PY'
import base64, json, sys
n = 0
for line in open(sys.argv[1]):
    r = json.loads(line)
    if base64.b64decode(r["data"]).decode() == sys.argv[2]:
        n += 1
print(n)
PY
}
has() { [ "$(times "$1")" -ge 1 ]; }

start_server --stream s1
C=$TMP/pods/prod_shop-1_6f1c0a2e-0001/shop
mkdir -p "$C"
write_conf "$TMP/agent.ini" "socketTimeOutSeconds = 5"
cat >>"$TMP/agent.ini" <<EOF

[flow:pods]
source = containers
containerLogDirectory = $TMP/pods
containerRecord = message
multiLinePreset = java
multiLineFlushMillis = 300
DISStream = s1
maxBufferAgeMillis = 200
EOF
"$DISAGENT" -t -c "$TMP/agent.ini" >/dev/null

TAB=$(printf '\t')
put "$C/0.log" \
    "$T stdout F 2026-12-07 10:00:00 INFO start" \
    "$T stderr F java.lang.IllegalStateException: order 42 has no lines" \
    "$T stdout F 2026-12-07 10:00:00 INFO between" \
    "$T stderr P ${TAB}at com.example.shop.Order.tot" \
    "$T stderr F al(Order.java:88)" \
    "$T stdout F 2026-12-07 10:00:01 INFO still up" \
    "$T stderr F ${TAB}at java.base/java.lang.Thread.run(Thread.java:833)" \
    "$T stderr F Caused by: java.lang.NullPointerException: no list" \
    "$T stderr F ${TAB}at com.example.shop.Order.lines(Order.java:120)" \
    "$T stdout F 2026-12-07 10:00:02 INFO after"
TRACE1="java.lang.IllegalStateException: order 42 has no lines
${TAB}at com.example.shop.Order.total(Order.java:88)
${TAB}at java.base/java.lang.Thread.run(Thread.java:833)
Caused by: java.lang.NullPointerException: no list
${TAB}at com.example.shop.Order.lines(Order.java:120)"
start_agent "$TMP/agent.ini"
wait_for 30 "the first trace" has "$TRACE1"
wait_for 30 "the stdout lines" has "2026-12-07 10:00:02 INFO after"

# kill -9 with a trace open on stderr and stdout lines sent after it.
put "$C/0.log" \
    "$T stderr F java.io.UncheckedIOException: disk gone" \
    "$T stderr F ${TAB}at com.example.Store.write(Store.java:10)" \
    "$T stdout F 2026-12-07 10:00:03 INFO mid"
wait_for 30 "the stdout line after the open trace" has \
    "2026-12-07 10:00:03 INFO mid"
kill -9 "$AGENT_PID"
wait "$AGENT_PID" 2>/dev/null || true
AGENT_PID=
put "$C/0.log" \
    "$T stderr F ${TAB}at com.example.Main.main(Main.java:5)" \
    "$T stdout F 2026-12-07 10:00:04 INFO end"
TRACE2="java.io.UncheckedIOException: disk gone
${TAB}at com.example.Store.write(Store.java:10)
${TAB}at com.example.Main.main(Main.java:5)"
start_agent "$TMP/agent.ini"
wait_for 60 "the second trace" has "$TRACE2"
wait_for 30 "the last line" has "2026-12-07 10:00:04 INFO end"
stop_agent

for r in "$TRACE1" "$TRACE2" "2026-12-07 10:00:00 INFO start" \
    "2026-12-07 10:00:04 INFO end" "2026-12-07 10:00:00 INFO between" \
    "2026-12-07 10:00:01 INFO still up" "2026-12-07 10:00:02 INFO after" \
    "2026-12-07 10:00:03 INFO mid"; do
	[ "$(times "$r")" = 1 ] || fail "arrived $(times "$r") times: $r"
done
n=$(records count --records "$TMP/records.jsonl" --stream s1)
want=8
[ "$n" = "$want" ] || fail "$n records, not $want: a trace split? $(records \
    dump --records "$TMP/records.jsonl" --stream s1 | tr '\n\t' '| ')"
pass
