#!/bin/sh
# dataProcessingOptions end to end: three flows with a chain each (LOGTOJSON
# COMBINEDAPACHELOG + ADDMETADATA, CSVTOJSON, LOGTOJSON SYSLOG PRETTYPRINT)
# ship through the test endpoint, and every record decodes to the bytes the
# DIS Agent 1.2.4 sends for the same line (from tests/golden/run).  Lines
# LOGTOJSON cannot parse land in the dead-letter file, once each, are
# counted in the metrics file and logged; a file holding only such lines is
# committed to its end.  The agent is stopped half-way through a backlog and
# restarted: no record and no dead letter is sent twice.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

start_server --stream web --stream csv --stream sys --stream bulk --stream bad \
    --stream raw --latency-ms 30
D=$TMP/logs
mkdir -p "$D/web" "$D/csv" "$D/sys" "$D/bulk" "$D/bad" "$D/raw"

cat >"$D/web/access.log" <<'LOG'
203.0.113.9 - alice [12/Mar/2024:10:15:32 +0800] "GET /index.html?q=%E4%B8%AD HTTP/1.1" 200 5123 "https://example.com/" "Mozilla/5.0 (X11; Linux x86_64)"
198.51.100.7 - - [12/Mar/2024:10:15:33 +0800] "POST /api/v1/orders HTTP/2.0" 201 - "-" "curl/8.5.0"
this is not an access log line
2001:db8::1 - - [12/Mar/2024:10:15:34 +0800] "GET / HTTP/1.1" 200 12 "-" "curl/8.5.0"
LOG
printf 'a,,c\nx,y,z,w,extra\n\n' >"$D/csv/data.csv"
printf 'Mar  7 04:02:16 myhost sshd[1234]: Accepted publickey for root\n' \
    >"$D/sys/auth.log"
printf 'no match one\nno match two\n' >"$D/bad/only.log"
# LOGTOJSON.unmatched = raw: the line that does not parse goes up as read.
printf '%s\n%s\n' '10.0.0.1 - - [12/Mar/2024:10:15:32 +0800] "GET / HTTP/1.1" 200 1 "-" "x"' \
    'not an access line' >"$D/raw/access.log"
# The backlog: access-log lines, every 100th one unparsable.
"$PYTHON3" - "$D/bulk/access.log" "$TMP/bulk-expected" <<'PY'
import sys
with open(sys.argv[1], "w") as log, open(sys.argv[2], "w") as exp:
    for i in range(30000):
        if i % 100 == 99:
            log.write("garbage %d\n" % i)
            continue
        log.write('10.0.%d.%d - - [12/Mar/2024:10:15:32 +0800] "GET /p/%d '
                  'HTTP/1.1" 200 %d "-" "bench/1.0"\n'
                  % (i // 256 % 256, i % 256, i, i))
        exp.write('{"host":"10.0.%d.%d","ident":null,"authuser":null,'
                  '"datetime":"12/Mar/2024:10:15:32 +0800","request":'
                  '"GET /p/%d HTTP/1.1","response":"200","bytes":"%d",'
                  '"referer":null,"agent":"bench/1.0"}\n'
                  % (i // 256 % 256, i % 256, i, i))
PY

write_conf "$TMP/agent.ini" "metricsFile = $TMP/disagent.prom" \
    "metricsIntervalMillis = 1000"
add_flow "$TMP/agent.ini" web web "$D/web/*.log" \
    "dataProcessingOptions = LOGTOJSON, ADDMETADATA" \
    "LOGTOJSON.logFormat = COMBINEDAPACHELOG" \
    'ADDMETADATA.metadata = {"app": "web", "env": "prod"}'
add_flow "$TMP/agent.ini" csv csv "$D/csv/*.csv" \
    "dataProcessingOptions = csvtojson" \
    "CSVTOJSON.customFieldNames = f1, f2, f3, f4"
add_flow "$TMP/agent.ini" sys sys "$D/sys/*.log" \
    "dataProcessingOptions = LOGTOJSON" "LOGTOJSON.logFormat = SYSLOG" \
    "LOGTOJSON.jsonFormat = PRETTYPRINT"
add_flow "$TMP/agent.ini" bad bad "$D/bad/*.log" \
    "dataProcessingOptions = LOGTOJSON" "LOGTOJSON.logFormat = SYSLOG"
add_flow "$TMP/agent.ini" raw raw "$D/raw/*.log" \
    "dataProcessingOptions = LOGTOJSON" \
    "LOGTOJSON.logFormat = COMBINEDAPACHELOG" "LOGTOJSON.unmatched = raw"
add_flow "$TMP/agent.ini" bulk bulk "$D/bulk/*.log" \
    "dataProcessingOptions = LOGTOJSON" \
    "LOGTOJSON.logFormat = COMBINEDAPACHELOG" "maxInFlightRequests = 2" \
    "maxBufferSizeRecords = 200"
"$DISAGENT" -t -c "$TMP/agent.ini" >/dev/null

dl=$TMP/state/deadletter.jsonl
metric() {
	grep -q "records_unmatched_total{flow=\"$1\",stream=\"$1\",action=\"deadletter\"} $2\$" \
	    "$TMP/disagent.prom"
}
start_agent "$TMP/agent.ini"
wait_for 60 "the small flows" count_at_least csv 3
wait_for 60 "the raw flow" count_at_least raw 2
wait_for 60 "some of the backlog" count_at_least bulk 3000
wait_for 30 "web's unmatched lines counted" metric web 2
wait_for 30 "bad's unmatched lines counted" metric bad 2
stop_agent
got=$(records count --records "$TMP/records.jsonl" --stream bulk)
[ "$got" -lt 29700 ] || fail "backlog finished before the stop ($got)"
before=$(grep -c '"flow":"bulk"' "$dl" || true)
echo "stopped after $got of 29700 records, $before of 300 dead letters"
start_agent "$TMP/agent.ini"
wait_for 120 "all of the backlog" count_at_least bulk 29700
wait_for 30 "the web records" count_at_least web 2
wait_for 30 "the syslog record" count_at_least sys 1
# Counters start again with the process; what was committed is not redone.
wait_for 30 "the rest of bulk's unmatched lines" metric bulk $((300 - before))
wait_for 30 "the metrics file" metric bad 0
stop_agent
# disagent verify expects the converted records (and no record for the
# dead-lettered lines): every one of bulk's is in the stream.
"$DISAGENT" verify -c "$TMP/agent.ini" "$D/bulk/access.log" \
    >"$TMP/verify.out" 2>&1 || fail "verify: $(cat "$TMP/verify.out")"
grep -q "29700 records, 29700 found, 0 missing" "$TMP/verify.out" ||
	fail "verify did not count the converted records: $(cat "$TMP/verify.out")"
# And with LOGTOJSON.unmatched = raw, the unparsed line as the agent sent
# it: without its newline.
"$DISAGENT" verify -c "$TMP/agent.ini" "$D/raw/access.log" \
    >"$TMP/verify-raw.out" 2>&1 || fail "verify raw: $(cat "$TMP/verify-raw.out")"
grep -q "2 records, 2 found, 0 missing" "$TMP/verify-raw.out" ||
	fail "verify of the raw flow: $(cat "$TMP/verify-raw.out")"
exact raw '{"host":"10.0.0.1","ident":null,"authuser":null,"datetime":"12/Mar/2024:10:15:32 +0800","request":"GET / HTTP/1.1","response":"200","bytes":"1","referer":null,"agent":"x"}' \
    'not an access line'

exact web '{"metadata":{"app":"web","env":"prod"},"data":"{\"host\":\"203.0.113.9\",\"ident\":null,\"authuser\":\"alice\",\"datetime\":\"12/Mar/2024:10:15:32 +0800\",\"request\":\"GET /index.html?q=%E4%B8%AD HTTP/1.1\",\"response\":\"200\",\"bytes\":\"5123\",\"referer\":\"https://example.com/\",\"agent\":\"Mozilla/5.0 (X11; Linux x86_64)\"}"}' \
    '{"metadata":{"app":"web","env":"prod"},"data":"{\"host\":\"198.51.100.7\",\"ident\":null,\"authuser\":null,\"datetime\":\"12/Mar/2024:10:15:33 +0800\",\"request\":\"POST /api/v1/orders HTTP/2.0\",\"response\":\"201\",\"bytes\":null,\"referer\":null,\"agent\":\"curl/8.5.0\"}"}'
exact csv '{"f1":"a","f2":"","f3":"c","f4":null}' \
    '{"f1":"x","f2":"y","f3":"z","f4":"w"}' \
    '{"f1":null,"f2":null,"f3":null,"f4":null}'
exact sys '{
  "timestamp" : "Mar  7 04:02:16",
  "hostname" : "myhost",
  "program" : "sshd",
  "processid" : "1234",
  "message" : "Accepted publickey for root"
}'
exact bad
records verify --records "$TMP/records.jsonl" --stream bulk \
    --expect "$TMP/bulk-expected" || fail "the backlog's records"

# Each unmatched line once, with its file and offset; the IPv6 client is
# one (the DIS Agent's IP pattern is IPv4 only).
"$PYTHON3" - "$dl" "$D" <<'PY' || fail "dead-letter file"
import base64, collections, json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
seen = collections.Counter((r["file"], r["offset"]) for r in recs)
dup = [k for k, n in seen.items() if n > 1]
assert not dup, "dead-lettered twice: %s" % dup[:3]
web = sorted(base64.b64decode(r["data"]).decode() for r in recs
             if r["flow"] == "web")
assert web[0].startswith("2001:db8::1 ") and \
    web[1] == "this is not an access log line", web
bad = [r for r in recs if r["flow"] == "bad"]
assert [base64.b64decode(r["data"]) for r in sorted(bad, key=lambda r: r["offset"])] \
    == [b"no match one", b"no match two"], bad
assert all(r["code"] == "UNMATCHED" and "SYSLOG" in r["message"] for r in bad)
bulk = [r for r in recs if r["flow"] == "bulk"]
assert len(bulk) == 300, len(bulk)
PY
# A file of unmatched lines only is committed to its end.
"$PYTHON3" - "$TMP/state/state.json" "$D/bad/only.log" <<'PY' || fail "offset"
import json, os, sys
size = os.path.getsize(sys.argv[2])
for line in open(sys.argv[1]):
    line = line.strip().rstrip(",")
    if sys.argv[2] in line and '"offset":%d' % size in line.replace(" ", ""):
        sys.exit(0)
sys.exit("no committed offset %d for %s in %s" % (size, sys.argv[2],
                                                  open(sys.argv[1]).read()))
PY
grep -q 'lines\? written to the dead-letter file (LOGTOJSON.unmatched = deadletter)' \
    "$TMP/agent.log" || fail "no WARN about unmatched lines"
n=$(grep -c 'written to the dead-letter file' "$TMP/agent.log")
[ "$n" -le 10 ] || fail "$n WARN lines for 304 unmatched lines"
# Each LOGTOJSON flow says at start how PCRE2 runs its pattern (here, with
# nothing forbidding executable memory, under the JIT); the CSV flow has
# no pattern.
for fl in web sys bad bulk; do
	grep -q "\[$fl\] LOGTOJSON matches with PCRE2's JIT" "$TMP/agent.log" ||
		fail "$fl: no line on PCRE2's JIT"
done
grep -q '\[csv\] LOGTOJSON matches' "$TMP/agent.log" &&
	fail "the CSV flow reports a LOGTOJSON pattern"
pass
