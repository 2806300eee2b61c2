#!/bin/sh
# body.serialize.type = auto, the default: protobuf while the endpoint
# takes it; an endpoint that refuses it -- 415 Unsupported Media Type, or
# one that reads every body as JSON and answers 400 DIS.4200 -- gets the
# refused requests again as JSON, and JSON for the rest of the run, with
# one INFO line saying why.  Several requests are out when the first
# refusal comes back: every line arrives exactly once all the same, and
# the records' bytes in DIS (lines holding every byte value but the
# delimiter) are the same in the three runs: the line without its
# delimiter, as the DIS Agent sends it.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

start_server --stream pb --stream r415 --stream jsononly
mkdir -p "$TMP/logs"
write_lines "$TMP/logs/app.log" auto 0 3000
"$PYTHON3" - "$TMP/logs/app.log" <<'PY'
import sys
body = bytes(b for b in range(256) if b not in (10, 13))
with open(sys.argv[1], "ab") as f:
    for i in range(50):
        f.write(b"bin %02d " % i + body[i:] + body[:i] + b"\n")
PY

# run NAME STREAM REFUSE: one --once run of the default configuration
# against an endpoint that refuses protobuf as REFUSE says ("": never).
run() {
	faults "{\"refuse_protobuf\": \"$3\"}" || fail "faults $3"
	write_conf "$TMP/$1.ini"
	sed -i "s|^checkpointFile = .*|checkpointFile = $TMP/state/$1.json|" \
	    "$TMP/$1.ini"
	! grep -q "^body.serialize" "$TMP/$1.ini" || fail "the test sets the format"
	add_flow "$TMP/$1.ini" "$1" "$2" "$TMP/logs/app.log" \
	    "maxBufferSizeRecords = 100" "maxInFlightRequests = 8"
	"$DISAGENT" -c "$TMP/$1.ini" --once >"$TMP/agent-$1.log" 2>&1 ||
		fail "$1: --once exited $?"
	records verify --records "$TMP/records.jsonl" --stream "$2" \
	    --expect "$TMP/logs/app.log" || fail "$1: lines lost or duplicated"
	records dump --records "$TMP/records.jsonl" --stream "$2" |
	    LC_ALL=C sort >"$TMP/$1.sorted"
}

run pb pb ""
types=$(stat_of put_by_content_type)
[ "$types" = "{'application/x-protobuf': $(stat_of put_requests)}" ] ||
	fail "auto against an endpoint taking protobuf sent $types"
! grep -q "refused a protobuf" "$TMP/agent-pb.log" ||
	fail "a fallback with nothing refused"

for r in 415 json-only; do
	before=$(stat_of put_by_content_type)
	run "r$r" "$([ $r = 415 ] && echo r415 || echo jsononly)" "$r"
	n=$(grep -c "refused a protobuf PutRecords" "$TMP/agent-r$r.log")
	[ "$n" = 1 ] || fail "$r: $n INFO lines about the refusal, not 1"
	grep "refused a protobuf PutRecords" "$TMP/agent-r$r.log" |
	    grep -q "INFO.*HTTP $([ $r = 415 ] && echo 415 || echo 400).*JSON bodies from now on" ||
		fail "$r: $(grep "refused a protobuf" "$TMP/agent-r$r.log")"
	refused=$(stat_of protobuf_refused)
	echo "$r: before $before, after $(stat_of put_by_content_type), protobuf refused $refused"
	[ "$refused" -ge 1 ] || fail "$r: the endpoint refused nothing"
	if grep -Eq " (WARN|ERROR) " "$TMP/agent-r$r.log"; then
		fail "$r: $(grep -E " (WARN|ERROR) " "$TMP/agent-r$r.log" | head -3)"
	fi
	grep -q " 0 dead-lettered" "$TMP/agent-r$r.log" ||
		fail "$r: records dead-lettered"
	cmp -s "$TMP/pb.sorted" "$TMP/r$r.sorted" ||
		fail "$r: the records' bytes differ from protobuf's"
done
pass
