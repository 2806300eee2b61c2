#!/bin/sh
# Whole-file flows (isFileAppendable = false), one per cleanup policy: each
# file is sent once, its last record too when it has no final delimiter,
# then renamed with fileSuffix, moved into fileMoveToDir, deleted
# (deletePolicy = immediate) or kept (fileSuffix empty).  Empty files are
# left alone under isIgnoreEmptyData and delivered (and deleted) without
# it.  A restart sends nothing again: a canary file written after it
# arrives, and nothing before it does twice.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

start_server --stream s1 --stream s2 --stream s3 --stream s4
for d in ren mov del keep done expect; do mkdir -p "$TMP/$d"; done

# write_file DIR NAME TAG N [nonl]: N lines; the last without "\n" if nonl.
# The expected records (every line, "\n"-ended) go to expect/DIR-NAME.
write_file() {
	write_lines "$TMP/$1/$2" "$3" 0 "$4"
	cp "$TMP/$1/$2" "$TMP/expect/$1-$2"
	if [ "${5:-}" = nonl ]; then
		printf '%s last-line-without-delimiter' "$3" >>"$TMP/$1/$2"
		printf '%s last-line-without-delimiter\n' "$3" \
		    >>"$TMP/expect/$1-$2"
	fi
	cp "$TMP/$1/$2" "$TMP/expect/orig-$1-$2"
}
write_file ren a.csv ra 50
write_file ren b.csv rb 50 nonl
: >"$TMP/ren/empty.csv"
write_file mov c.csv mc 30 nonl
write_file del d.csv dd 40
: >"$TMP/del/empty.csv"
write_file keep e.csv ke 20 nonl

write_conf "$TMP/agent.ini"
common="isFileAppendable = false
maxFileCheckingMillis = 300
rescanIntervalMillis = 300"
add_flow "$TMP/agent.ini" ren s1 "$TMP/ren/*.csv" "$common"
add_flow "$TMP/agent.ini" mov s2 "$TMP/mov/*.csv" "$common" \
    "fileMoveToDir = $TMP/done"
add_flow "$TMP/agent.ini" del s3 "$TMP/del/*.csv" "$common" \
    "deletePolicy = immediate" "isIgnoreEmptyData = false"
add_flow "$TMP/agent.ini" keep s4 "$TMP/keep/*.csv" "$common" "fileSuffix ="
"$DISAGENT" -t -c "$TMP/agent.ini" || fail "the configuration is rejected"

cleaned() {
	[ -f "$TMP/ren/a.csv.COMPLETED" ] && [ -f "$TMP/ren/b.csv.COMPLETED" ] &&
	    [ ! -e "$TMP/ren/a.csv" ] && [ ! -e "$TMP/ren/b.csv" ] &&
	    [ -f "$TMP/done/c.csv" ] && [ ! -e "$TMP/mov/c.csv" ] &&
	    [ ! -e "$TMP/del/d.csv" ] && [ ! -e "$TMP/del/empty.csv" ] &&
	    grep -q "keep/e.csv delivered; left in place" "$TMP/agent.log"
}
verify() {
	records verify --records "$TMP/records.jsonl" --stream s1 \
	    --expect "$TMP/expect/ren-a.csv" --expect "$TMP/expect/ren-b.csv" ||
		fail "stream s1 (renamed)"
	records verify --records "$TMP/records.jsonl" --stream s2 \
	    --expect "$TMP/expect/mov-c.csv" || fail "stream s2 (moved)"
	records verify --records "$TMP/records.jsonl" --stream s3 \
	    --expect "$TMP/expect/del-d.csv" || fail "stream s3 (deleted)"
	records verify --records "$TMP/records.jsonl" --stream s4 \
	    --expect "$TMP/expect/keep-e.csv" ${1:-} || fail "stream s4 (kept)"
}

start_agent "$TMP/agent.ini"
wait_for 60 "every file delivered and cleaned up" cleaned
verify
# Renamed and moved files are whole, unchanged.
cmp -s "$TMP/done/c.csv" "$TMP/expect/orig-mov-c.csv" || fail "moved file"
cmp -s "$TMP/ren/b.csv.COMPLETED" "$TMP/expect/orig-ren-b.csv" ||
	fail "renamed file"
[ -f "$TMP/ren/empty.csv" ] || fail "an ignored empty file was touched"
[ -f "$TMP/keep/e.csv" ] || fail "the kept file is gone"
grep -q "ren/empty.csv is empty: not sent (isIgnoreEmptyData)" \
    "$TMP/agent.log" || fail "the ignored empty file is not logged"
# Only the kept file is remembered, marked complete (once the drops of
# the others are saved too).
only_kept_in_state() {
	"$PYTHON3" - "$TMP/state/state.json" "$top_srcdir/tests" <<'PY'
import sys
sys.path.insert(0, sys.argv[2])
import state_file
e = state_file.entries(sys.argv[1])
sys.exit(not (len(e) == 1 and e[0]["flow"] == "keep" and
              e[0]["path"].endswith("keep/e.csv") and "complete" in e[0]))
PY
}
wait_for 30 "only keep/e.csv, complete, in the state file" only_kept_in_state
stop_agent

# A restart sends nothing again; a canary file proves it has looked.
start_agent "$TMP/agent.ini"
write_file keep f.csv kf 5
wait_for 60 "the canary file" grep -q "keep/f.csv delivered; left in place" \
    "$TMP/agent.log"
stop_agent
cat "$TMP/expect/keep-f.csv" >>"$TMP/expect/keep-e.csv"
verify
"$DISAGENT" status -c "$TMP/agent.ini" >"$TMP/status.out" ||
	fail "status failed"
grep -q "2 whole files delivered, waiting for cleanup" "$TMP/status.out" ||
	fail "status does not count the kept files: $(cat "$TMP/status.out")"
grep -q "keep/e.csv (delivered; cleanup pending)" "$TMP/status.out" ||
	fail "status does not mark the kept file"
pass
