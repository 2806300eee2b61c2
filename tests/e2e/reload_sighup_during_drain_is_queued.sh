#!/bin/sh
# A SIGHUP while a reload drains (issue 36, item 6): `systemctl reload`
# has already said it worked, so the signal is queued, not dropped, and one
# more reload reads the file as it is once the drain is over.  Three
# SIGHUPs during one drain are one reload after it.
#
# A PutRecords held 6 s by the endpoint keeps the changed flow a draining;
# meanwhile agent.ini gains flow b and three SIGHUPs arrive.  Before: one
# WARN "send SIGHUP again" and b never read.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

log_has() { grep -q -- "$1" "$TMP/agent.log"; }
log_count() { grep -c -- "$1" "$TMP/agent.log" || true; }
# conf FILE AGE [b]: flow a with maxBufferAgeMillis = AGE, then b if asked.
conf() {
	write_conf "$1"
	add_flow "$1" a s1 "$TMP/logs/a/*.log" "maxBufferAgeMillis = $2"
	[ "${3:-}" = b ] && add_flow "$1" b s2 "$TMP/logs/b/*.log"
	return 0
}

start_server --stream s1 --stream s2
mkdir -p "$TMP/logs/a" "$TMP/logs/b"
write_lines "$TMP/a1.expect" a 0 100
cp "$TMP/a1.expect" "$TMP/logs/a/one.log"
conf "$TMP/agent.ini" 200
start_agent "$TMP/agent.ini"
pid=$AGENT_PID
wait_for 60 "100 records on s1" count_at_least s1 100

# A request held on the wire, then a reload that changes flow a: it
# drains until the reply.
faults '{"put_latency_ms": 6000}'
write_lines "$TMP/logs/a/one.log" a 100 200
wait_for 30 "a PutRecords held by the endpoint" endpoint_busy
conf "$TMP/new.ini" 300
mv "$TMP/new.ini" "$TMP/agent.ini"
kill -HUP "$pid"
wait_for 30 "the reload to begin" log_has "SIGHUP: reloading"
log_has "configuration reloaded" && fail "the reload did not drain"

# During the drain: flow b added, three SIGHUPs.
conf "$TMP/new.ini" 300 b
mv "$TMP/new.ini" "$TMP/agent.ini"
write_lines "$TMP/b.expect" b 0 300
cp "$TMP/b.expect" "$TMP/logs/b/two.log"
kill -HUP "$pid"; kill -HUP "$pid"; kill -HUP "$pid"
wait_for 30 "the SIGHUPs to be handled" grep -qE \
    "is read again once it is done|send SIGHUP again" "$TMP/agent.log"
log_has "configuration reloaded" && fail "the drain ended before the SIGHUPs"
faults '{"put_latency_ms": 0}'

wait_for 60 "the queued reload" log_has "configuration reloaded: 2 flows"
wait_for 60 "300 records on s2" count_at_least s2 300
test "$(log_count 'SIGHUP: reloading')" = 2 ||
	fail "$(log_count 'SIGHUP: reloading') reloads, expected 2 (three SIGHUPs in one drain are one)"
test "$(log_count 'is read again once it is done')" = 1 ||
	fail "the queued SIGHUP was logged more than once"
log_has "send SIGHUP again" && fail "a SIGHUP was dropped"
records verify --records "$TMP/records.jsonl" --stream s2 \
    --expect "$TMP/b.expect" || fail "stream s2: lines missing or duplicated"
kill -0 "$pid" || fail "the agent is gone"
stop_agent
pass
