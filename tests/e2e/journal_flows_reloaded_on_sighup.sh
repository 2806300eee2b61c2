#!/bin/sh
# A reload of journal flows, one SIGHUP each, in the same process:
#  - a journal flow of a drop-in whose journalMatch changes is a flow
#    changed: its successor goes on after the cursor its predecessor had
#    acknowledged (nothing sent again) with the new match;
#  - a journal flow of agent.ini that did not change is kept and goes on;
#  - the drop-in removed is the flow removed: entries logged afterwards
#    that only it selected are not sent.
# Every entry selected while its flow existed arrives exactly once.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/journal_lib.sh"

reloads() { [ "$(grep -c "configuration reloaded: $1 flow" "$TMP/agent.log")" -ge "$2" ]; }
J=$TMP/journal
mkdir -p "$J" "$TMP/agent.d"
journal_entries "$J/a.journal" app 0 200 --expect "$TMP/app.exp"
journal_entries "$J/a.journal" db 200 300 --expect "$TMP/db.exp"

start_server --stream s1 --stream s2
write_conf "$TMP/agent.ini"
add_journal_flow "$TMP/agent.ini" kept s2 "$J" "journalMatch = SYSLOG_IDENTIFIER=db"
# dropin MATCH: agent.d/j.ini, flow j on s1, written in one step.
dropin() {
	add_journal_flow "$TMP/agent.d/.j.tmp" j s1 "$J" "journalMatch = $1"
	mv "$TMP/agent.d/.j.tmp" "$TMP/agent.d/j.ini"
}
dropin "SYSLOG_IDENTIFIER=app"
"$DISAGENT" -t -c "$TMP/agent.ini" >"$TMP/t.out" 2>&1 || fail "-t: $(cat "$TMP/t.out")"

start_agent "$TMP/agent.ini"
pid=$AGENT_PID
wait_for 60 "flow j's 200 app records on s1" count_at_least s1 200
wait_for 60 "flow kept's 100 db records on s2" count_at_least s2 100
# Changed: flow j now takes the db entries too, from where it was.
dropin "SYSLOG_IDENTIFIER=app, SYSLOG_IDENTIFIER=db"
kill -HUP "$pid"
wait_for 30 "the reload with the changed drop-in" reloads 2 1
grep -q "reload: kept \[kept\], changed \[j (journalMatch)\]" "$TMP/agent.log" ||
	fail "the reload's plan: $(grep 'reload:' "$TMP/agent.log")"
journal_entries "$J/a.journal" app 300 350 --expect "$TMP/app.exp"
journal_entries "$J/a.journal" db 350 400 --expect "$TMP/db.exp"
# s1: 200 app, then the 150 db entries (after app 199) and 50 new app.
wait_for 60 "flow j's 400 records on s1" count_at_least s1 400
wait_for 60 "flow kept's 150 db records on s2" count_at_least s2 150

# Removed: the drop-in goes; new entries reach the kept flow only.
rm "$TMP/agent.d/j.ini"
kill -HUP "$pid"
wait_for 30 "the reload without the drop-in" reloads 1 1
journal_entries "$J/a.journal" app 400 450 --expect "$TMP/app-late.exp"
journal_entries "$J/a.journal" db 450 500 --expect "$TMP/db-late.exp"
wait_for 60 "flow kept's 200 db records on s2" count_at_least s2 200

kill -0 "$pid" || fail "the agent is gone"
stop_agent
n=$(grep -c "INFO .* disagent .* starting with" "$TMP/agent.log")
[ "$n" = 1 ] || fail "the agent started $n times"
records verify --records "$TMP/records.jsonl" --stream s1 \
    --expect "$TMP/app.exp" --expect "$TMP/db.exp" ||
	fail "flow j: records differ"
cat "$TMP/db.exp" "$TMP/db-late.exp" >"$TMP/kept.exp"
records verify --records "$TMP/records.jsonl" --stream s2 \
    --expect "$TMP/kept.exp" || fail "flow kept: records differ"
no_secret_in "$TMP/agent.log"
pass
