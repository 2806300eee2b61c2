#!/bin/sh
# lineIncludePattern and lineExcludePattern: of a file of DEBUG, INFO, WARN
# and ERROR lines, flow a (exclude \bDEBUG\b) sends exactly the others and
# flow b (include WARN|ERROR, multi-line records) exactly the WARN and
# ERROR records with their continuation lines.  The left-out records are
# not lost: the committed offsets reach the end of each file (status shows
# 0 bytes behind, though the file ends with filtered lines), a restart
# sends nothing again, disagent_records_filtered_total{flow=...} and the
# progress line count them, and disagent verify expects none of them.  A
# bad pattern fails -t at its line.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

start_server --stream s1 --stream s2
mkdir -p "$TMP/logs/a" "$TMP/logs/b"
# levels FILE: 1,200 lines "a NNNNNNN LEVEL payload", levels in turn,
# ending with DEBUG lines; the expected files of flow a and flow b.
"$PYTHON3" - "$TMP" <<'PY'
import sys
tmp = sys.argv[1]
levels = ["DEBUG", "INFO", "WARN", "ERROR", "DEBUG"]
with open(tmp + "/logs/a/a.log", "w") as a, open(tmp + "/a.want", "w") as aw, \
        open(tmp + "/logs/b/b.log", "w") as b, open(tmp + "/b.want", "w") as bw:
    for i in range(1200):
        lv = levels[i % len(levels)] if i < 1190 else "DEBUG"
        line = "a %07d %s payload\n" % (i, lv)
        a.write(line)
        if lv != "DEBUG":
            aw.write(line)
        # b: a record is a start line and two continuation lines.
        rec = "2026-12-01 b %07d %s\n  at one\n  at two\n" % (i, lv)
        b.write(rec)
        if lv in ("WARN", "ERROR"):
            # The records flow b sends, one a line for the comparison.
            bw.write(rec.replace("\n", "|")[:-1] + "\n")
PY
afiltered=$(grep -c DEBUG "$TMP/logs/a/a.log")
bfiltered=$(grep -c '^2026.*\(DEBUG\|INFO\)' "$TMP/logs/b/b.log")

write_conf "$TMP/agent.ini" "metricsFile = $TMP/disagent.prom" \
    "metricsIntervalMillis = 1000"
add_flow "$TMP/agent.ini" a s1 "$TMP/logs/a/*.log" \
    'lineExcludePattern = \bDEBUG\b'
add_flow "$TMP/agent.ini" b s2 "$TMP/logs/b/*.log" \
    'lineIncludePattern = ^\S+ b \d+ (WARN|ERROR)' \
    'multiLineStartPattern = ^\d{4}-' 'multiLineFlushMillis = 300'

# A bad pattern: -t names its line.
cp "$TMP/agent.ini" "$TMP/bad.ini"
echo 'lineExcludePattern = (DEBUG' >>"$TMP/bad.ini"
sed -i '/^lineIncludePattern/d' "$TMP/bad.ini"
line=$(grep -n '^lineExcludePattern = (DEBUG' "$TMP/bad.ini" | cut -d: -f1)
if "$DISAGENT" -t -c "$TMP/bad.ini" >"$TMP/t.out" 2>&1; then
	fail "-t accepts a bad pattern"
fi
grep -q "^$TMP/bad.ini:$line: lineExcludePattern = (DEBUG is not a valid regular expression" \
    "$TMP/t.out" || fail "-t says: $(cat "$TMP/t.out")"

start_agent "$TMP/agent.ini"
awant=$(wc -l <"$TMP/a.want")
bwant=$(wc -l <"$TMP/b.want")
wait_for 60 "flow a's $awant records" count_at_least s1 "$awant"
wait_for 60 "flow b's $bwant records" count_at_least s2 "$bwant"
metric() {
	grep "^disagent_records_filtered_total{flow=\"$1\"," "$TMP/disagent.prom" |
	    awk '{ print $2 }'
}
counted() { [ "$(metric a)" = "$afiltered" ] && [ "$(metric b)" = "$bfiltered" ]; }
wait_for 30 "the filtered counts in the metrics file" counted
behind0() {
	"$DISAGENT" status -c "$TMP/agent.ini" >"$TMP/st" 2>&1 &&
	    grep -q '^\[flow:a\] stream s1: 1 file, 0 bytes behind$' "$TMP/st" &&
	    grep -q '^\[flow:b\] stream s2: 1 file, 0 bytes behind$' "$TMP/st"
}
# The trailing DEBUG lines are committed too.
wait_for 30 "both files committed to their end" behind0
wait_for 30 "the progress line with the filtered records" grep -q \
    "Agent: $((afiltered + bfiltered)) records left out by lineIncludePattern / lineExcludePattern" \
    "$TMP/agent.log"
stop_agent

records verify --records "$TMP/records.jsonl" --stream s1 \
    --expect "$TMP/a.want" || fail "flow a: records differ"
records dump --records "$TMP/records.jsonl" --stream s2 >"$TMP/b.got"
"$PYTHON3" - "$TMP/b.got" "$TMP/b.got1" <<'PY'
import sys
# Each record of b ends at "  at two"; one a line, as b.want has them.
data = open(sys.argv[1]).read()
recs = [r for r in data.split("  at two\n") if r]
open(sys.argv[2], "w").write("".join(r.replace("\n", "|") + "  at two\n" for r in recs))
PY
sort "$TMP/b.got1" >"$TMP/b.got2"
sort "$TMP/b.want" >"$TMP/b.want2"
cmp -s "$TMP/b.got2" "$TMP/b.want2" ||
	fail "flow b: records differ: $(diff "$TMP/b.want2" "$TMP/b.got2" | head -5)"

# verify expects no filtered record, and says how many it left out.
"$DISAGENT" verify -c "$TMP/agent.ini" "$TMP/logs/a/a.log" >"$TMP/verify.out" 2>&1 ||
	fail "verify: $(cat "$TMP/verify.out")"
grep -q "a.log (flow a, stream s1): $awant records, $awant found, 0 missing, $afiltered left out by the line filters" \
    "$TMP/verify.out" || fail "verify says: $(cat "$TMP/verify.out")"

# A restart sends nothing again.
n1=$(records count --records "$TMP/records.jsonl")
start_agent "$TMP/agent.ini"
write_lines "$TMP/logs/a/a.log" z 0 10
wait_for 60 "the 10 new lines" count_at_least s1 $((awant + 10))
stop_agent
n2=$(records count --records "$TMP/records.jsonl")
[ "$n2" = $((n1 + 10)) ] || fail "the restart sent $((n2 - n1 - 10)) records again"
pass
