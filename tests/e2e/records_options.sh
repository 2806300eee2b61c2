#!/bin/sh
# The record options of the DIS Agent, each checked record by record against
# what the file holds: multi-line records (Java-style pattern, flushed after
# multiLineFlushMillis of quiet), CRLF kept or stripped, a custom delimiter
# kept in the data, skipHeaderLines, empty lines sent or skipped, a last
# line without delimiter sent after maxFileCheckingMillis, and GBK converted
# to UTF-8.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

start_server --stream ml --stream crlf --stream strip --stream pipe \
    --stream hdr --stream last --stream gbk
D=$TMP/logs
mkdir -p "$D/ml" "$D/crlf" "$D/strip" "$D/pipe" "$D/hdr" "$D/last" "$D/gbk"

printf '%s\n' 'stray line before the first record' \
    '2026-11-30 10:00:00 ERROR boom' \
    'java.lang.IllegalStateException: bad' \
    '	at com.example.A.run(A.java:10)' \
    'Caused by: java.io.IOException' \
    '2026-11-30 10:00:01 INFO fine' \
    '2026-11-30 10:00:02 WARN last one' \
    '	at com.example.B.go(B.java:2)' >"$D/ml/app.log"
printf 'one\r\ntwo\r\n\r\nthree\r\n' >"$D/crlf/app.log"
cp "$D/crlf/app.log" "$D/strip/app.log"
printf 'a|b||c|partial' >"$D/pipe/app.log"
printf 'h1,h2\nh3\nv1\nv2\n' >"$D/hdr/app.csv"
printf 'first\nno newline at the end' >"$D/last/app.log"
printf '\326\320\316\304 line\n\326\320\n' >"$D/gbk/app.log"

write_conf "$TMP/agent.ini"
add_flow "$TMP/agent.ini" ml ml "$D/ml/*.log" \
    'multiLineStartPattern = ^\d{4}-\d{2}-\d{2} ' "multiLineFlushMillis = 300"
add_flow "$TMP/agent.ini" crlf crlf "$D/crlf/*.log"
add_flow "$TMP/agent.ini" strip strip "$D/strip/*.log" \
    "stripCarriageReturn = true" "skipEmptyLines = true"
add_flow "$TMP/agent.ini" pipe pipe "$D/pipe/*.log" "recordDelimiter = |" \
    "isRemainRecordDelimiter = true"
add_flow "$TMP/agent.ini" hdr hdr "$D/hdr/*.csv" "skipHeaderLines = 2"
add_flow "$TMP/agent.ini" last last "$D/last/*.log" \
    "isMissLastRecordDelimiter = true" "maxFileCheckingMillis = 300"
add_flow "$TMP/agent.ini" gbk gbk "$D/gbk/*.log" "fileEncoding = GBK"
"$DISAGENT" -t -c "$TMP/agent.ini" >/dev/null

start_agent "$TMP/agent.ini"
wait_for 30 "the multi-line records" count_at_least ml 4
wait_for 30 "the last line without newline" count_at_least last 2
all_arrived() { [ "$(records count --records "$TMP/records.jsonl")" -ge 21 ]; }
wait_for 30 "all 21 records" all_arrived
stop_agent

NL='
'
TAB='	'
exact ml 'stray line before the first record' \
    "2026-11-30 10:00:00 ERROR boom${NL}java.lang.IllegalStateException: bad${NL}${TAB}at com.example.A.run(A.java:10)${NL}Caused by: java.io.IOException" \
    '2026-11-30 10:00:01 INFO fine' \
    "2026-11-30 10:00:02 WARN last one${NL}${TAB}at com.example.B.go(B.java:2)"
CR=$(printf '\r')
exact crlf "one$CR" "two$CR" "$CR" "three$CR"
exact strip one two three
exact pipe 'a|' 'b|' '|' 'c|'
exact hdr v1 v2
exact last first 'no newline at the end'
exact gbk '中文 line' '中'
pass
