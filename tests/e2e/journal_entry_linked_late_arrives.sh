#!/bin/sh
# An entry the agent first sees in the middle of its append arrives.
#
# journald appends an entry in two steps: into the file's entry list (the
# header's count grows), then into each field's list.  A flow with
# journalMatch that reads between the two finds no entry for its match,
# and sd-journal then remembers the header's count as read: when the
# append ends (the writer's ftruncate wakes the agent), it finds nothing
# new until some other entry is logged -- for a quiet unit, for good.  The
# agent reads again from its position when a wake-up finds nothing.
#
# The state between the two steps is made in the file itself
# (tests/journal_midappend.py): the agent starts on it, sends what its
# match sees, and the end of the append must bring the last entry.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/journal_lib.sh"

midappend() { "$PYTHON3" "$top_srcdir/tests/journal_midappend.py" "$@"; }
J=$TMP/journal
mkdir -p "$J"
journal_entries "$J/a.journal" app 0 20
journal_entries "$J/a.journal" db 20 30 --expect "$TMP/db.exp"
# db 29 is in the header's count, not yet in SYSLOG_IDENTIFIER=db's list.
midappend "$J/a.journal" SYSLOG_IDENTIFIER=db --hide ||
	fail "cannot make the middle of an append"

start_server --stream s1
write_conf "$TMP/agent.ini"
add_journal_flow "$TMP/agent.ini" db s1 "$J" "journalMatch = SYSLOG_IDENTIFIER=db"
start_agent "$TMP/agent.ini"
# The agent read to the end of what its match saw before it sent these.
wait_for 60 "the 9 entries linked" count_at_least s1 9
# The append ends, as the writer ends it.
midappend "$J/a.journal" SYSLOG_IDENTIFIER=db --show ||
	fail "cannot end the append"
wait_for 30 "db 29, linked after the agent's read" count_at_least s1 10

# Entries logged later arrive as always, once.
journal_entries "$J/a.journal" db 30 40 --expect "$TMP/db.exp"
wait_for 30 "the later entries" count_at_least s1 20
stop_agent
records verify --records "$TMP/records.jsonl" --stream s1 \
    --expect "$TMP/db.exp" || fail "records differ"
pass
