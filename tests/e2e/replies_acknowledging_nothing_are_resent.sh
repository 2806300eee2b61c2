#!/bin/sh
# A 200 that acknowledges no record -- an HTML page, a reply one record
# short -- is not taken for a delivery: the request goes again whole, the
# WARN says how many records the short reply acknowledges, the metrics
# count it in disagent_replies_unacknowledged_total and the records sent
# again, and the progress line names such replies.  Every line arrives
# (twice for those the endpoint took before its bad reply).  In protobuf
# too.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

start_server --stream s1
mkdir -p "$TMP/logs"
write_lines "$TMP/logs/a.log" a 0 200

for ser in json protobuf; do
	: >"$TMP/records.jsonl"
	faults '{"html_replies": 1, "short_replies": 1}'
	write_conf "$TMP/$ser.ini" "metricsFile = $TMP/$ser.prom" \
	    "body.serialize.type = $ser"
	sed -i "s|^checkpointFile = .*|checkpointFile = $TMP/state/$ser.json|" \
	    "$TMP/$ser.ini"
	add_flow "$TMP/$ser.ini" app s1 "$TMP/logs/a.log" "ordered = true" \
	    "maxBufferSizeRecords = 100"
	"$DISAGENT" -c "$TMP/$ser.ini" --once >"$TMP/agent-$ser.log" 2>&1 ||
		fail "$ser: --once exited $?"
	records verify --records "$TMP/records.jsonl" --stream s1 \
	    --expect "$TMP/logs/a.log" --allow-duplicates ||
		fail "$ser: lines missing"
	n=$(records count --records "$TMP/records.jsonl" --stream s1)
	[ "$n" = 200 ] || fail "$ser: $n records accepted, not 200"
	[ "$(grep -c "settled by reading the stream: 100 of its records had landed" \
	    "$TMP/agent-$ser.log")" = 2 ] ||
		fail "$ser: the bad replies were not settled by reading"
	grep -q "PutRecords to \[s1\]: unparsable reply ([0-9]* bytes); resending all 100" \
	    "$TMP/agent-$ser.log" || fail "$ser: no WARN for the HTML page"
	grep -q "PutRecords to \[s1\]: the reply acknowledges 99 of 100 records; resending all 100" \
	    "$TMP/agent-$ser.log" || fail "$ser: no WARN for the short reply"
	grep -q '^disagent_replies_unacknowledged_total{flow="app",stream="s1"} 2$' \
	    "$TMP/$ser.prom" || fail "$ser: metrics: $(grep unack "$TMP/$ser.prom")"
	grep -q '^disagent_records_retried_total{flow="app",stream="s1"} 200$' \
	    "$TMP/$ser.prom" || fail "$ser: records sent again: $(grep retried "$TMP/$ser.prom")"
	grep -q "Agent: 200 records sent again after a failure, 0 dead-lettered, 0 truncated to the record limit, 2 PutRecords replies acknowledged no record; 0 flows paused" \
	    "$TMP/agent-$ser.log" || fail "$ser: progress: $(grep 'Agent: [0-9]* records' "$TMP/agent-$ser.log")"
done
pass
