#!/bin/sh
# The cursor of the last entry delivered is no longer in the journal (its
# file was rotated away or the files replaced): the agent goes on from the
# first entry after it, logs one WARN naming the gap, and counts it in
# disagent_journal_gaps_total; --once reads a journal to its end and exits
# 0; a cursor sd-journal refuses stops the run; and initialPosition =
# END_OF_FILE starts at the end but keeps the entries logged while the
# agent was stopped after its first start.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/journal_lib.sh"

J=$TMP/journal
mkdir -p "$J"
journal_entries "$J/a.journal" app 0 100 --expect "$TMP/first.exp"
start_server --stream s1 --stream s2
write_conf "$TMP/agent.ini" "metricsFile = $TMP/disagent.prom"
add_journal_flow "$TMP/agent.ini" j s1 "$J"

"$DISAGENT" -c "$TMP/agent.ini" --once >"$TMP/agent.log" 2>&1 ||
	fail "--once exited $?"
records verify --records "$TMP/records.jsonl" --stream s1 \
    --expect "$TMP/first.exp" || fail "--once: records differ"
grep -q "WARN" "$TMP/agent.log" && fail "a WARN before any gap: $(grep WARN "$TMP/agent.log")"

# The files are replaced: the delivered cursor's file is gone.
rm "$J/a.journal"
journal_entries "$J/b.journal" app 200 300 --expect "$TMP/second.exp"
"$DISAGENT" status -c "$TMP/agent.ini" >"$TMP/st" 2>&1 || fail "status: $(cat "$TMP/st")"
grep -q "^  position: .*, no longer in the journal: the agent goes on from the oldest entry left" \
    "$TMP/st" || fail "status: $(cat "$TMP/st")"
"$DISAGENT" -c "$TMP/agent.ini" --once >>"$TMP/agent.log" 2>&1 ||
	fail "the second --once exited $?"
cat "$TMP/first.exp" "$TMP/second.exp" >"$TMP/all.exp"
records verify --records "$TMP/records.jsonl" --stream s1 \
    --expect "$TMP/all.exp" || fail "after the gap: records differ"
n=$(grep -c "WARN.*\[j\] $J: the last entry delivered (2023-11-14 22:13:20 UTC, s=.*) is no longer in the journal, whose files were replaced: entries logged between then and 2023-11-14 22:13:20 UTC may be lost" \
    "$TMP/agent.log")
[ "$n" = 1 ] || fail "$n WARNs of the gap, not 1: $(grep WARN "$TMP/agent.log")"
grep -q '^disagent_journal_gaps_total{flow="j",stream="s1"} 1$' "$TMP/disagent.prom" ||
	fail "the gap is not counted: $(grep journal "$TMP/disagent.prom")"
# The next run has a cursor that is there: no WARN again.
journal_entries "$J/b.journal" app 300 310 --expect "$TMP/all.exp"
"$DISAGENT" -c "$TMP/agent.ini" --once >>"$TMP/agent.log" 2>&1 || fail "--once exited $?"
[ "$(grep -c WARN "$TMP/agent.log")" = 1 ] || fail "more WARNs: $(grep WARN "$TMP/agent.log")"
records verify --records "$TMP/records.jsonl" --stream s1 \
    --expect "$TMP/all.exp" || fail "the third run: records differ"

# A cursor sd-journal refuses (a state file edited by hand) stops the run
# with an error naming it, rather than read from elsewhere.
cp "$TMP/state/state.json" "$TMP/state.good"
"$PYTHON3" - "$TMP/state/state.json" <<'PY'
import json, sys, zlib
path = sys.argv[1]
lines = open(path, "rb").read().split(b"\n")[1:-1]
ents = [json.loads(l) for l in lines]
for e in ents:
    if e["flow"] == "j":
        e["cursor"] = "garbage"
body = b"".join(json.dumps(e, separators=(",", ":")).encode() + b"\n" for e in ents)
head = '{"version":2,"crc32":"%08x","entries":%d}\n' % (zlib.crc32(body), len(ents))
open(path, "wb").write(head.encode() + body)
PY
rc=0
"$DISAGENT" -c "$TMP/agent.ini" --once >"$TMP/bad.log" 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "--once with a bad cursor exited $rc: $(cat "$TMP/bad.log")"
grep -q "ERROR.*\[j\] $J: cannot seek to garbage: Invalid argument" "$TMP/bad.log" ||
	fail "no error naming the cursor: $(cat "$TMP/bad.log")"
cp "$TMP/state.good" "$TMP/state/state.json"

# END_OF_FILE: the first start skips what is there; what is logged while
# the agent is stopped after it is sent.
add_journal_flow "$TMP/agent.ini" e s2 "$J" "initialPosition = END_OF_FILE"
"$DISAGENT" -c "$TMP/agent.ini" --once >>"$TMP/agent.log" 2>&1 || fail "--once exited $?"
[ "$(records count --records "$TMP/records.jsonl" --stream s2)" = 0 ] ||
	fail "END_OF_FILE sent old entries"
journal_entries "$J/b.journal" app 310 320 --expect "$TMP/late.exp"
"$DISAGENT" -c "$TMP/agent.ini" --once >>"$TMP/agent.log" 2>&1 || fail "--once exited $?"
records verify --records "$TMP/records.jsonl" --stream s2 \
    --expect "$TMP/late.exp" || fail "END_OF_FILE: records differ"
pass
