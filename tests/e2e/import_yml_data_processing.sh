#!/bin/sh
# --import-yml carries dataProcessingOptions over: an agent.yml using every
# option (LOGTOJSON with a format and with a matchPattern, ADDMETADATA with
# a YAML map read as SnakeYAML reads it, CSVTOJSON with a custom delimiter
# and a name holding a comma, ADDBRACKETS, SINGLELINE, an optionParameters
# mapping) converts to an agent.ini that passes -t, reports nothing about
# those keys as not carried over, and ships the records the DIS Agent 1.2.4
# sends for the same lines (expected bytes from tests/golden/run).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

start_server --stream web --stream csv --stream sys
D=$TMP/logs
mkdir -p "$D/web" "$D/csv" "$D/sys"
printf '198.51.100.7 - - [12/Mar/2024:10:15:33 +0800] "POST /api/v1/orders HTTP/2.0" 201 - "-" "curl/8.5.0"\nnot an access line\n' \
    >"$D/web/access.log"
printf '7;Ann Lee 2024\n8\n' >"$D/csv/people.csv"
printf 'Mar  7 04:02:16 myhost sshd[1234]: Accepted\nMar  7 04:02:17 myhost cron: x\n' \
    >"$D/sys/syslog"

cat >"$TMP/agent.yml" <<EOF
region: cn-north-1
ak: $E2E_AK
sk: $E2E_SK
projectId: $E2E_PID
endpoint: https://127.0.0.1:$PORT
flows:
  - DISStream: web
    filePattern: $D/web/*.log
    maxBufferAgeMillis: 500
    dataProcessingOptions:
      - optionName: LOGTOJSON
        logFormat: COMBINEDAPACHELOG
      - optionName: ADDMETADATA
        metadata:
          app: web
          n: 0x1F
          f: 1e3
          t: yes
          none: ~
          list: [a, "b", 2.50]
        jsonFormat: PRETTYPRINT
  - DISStream: csv
    filePattern: $D/csv/*.csv
    maxBufferAgeMillis: 500
    dataProcessingOptions:
      - optionName: CSVTOJSON
        customFieldNames: [id, "name, full", when]
        delimiter: "; "
      - optionName: ADDBRACKETS
  - DISStream: sys
    filePattern: $D/sys/syslog
    maxBufferAgeMillis: 500
    dataProcessingOptions:
      - optionName: SINGLELINE
      - optionName: LOGTOJSON
        optionParameters:
          logFormat: SYSLOG
          matchPattern: '^(\S+ +\d+ [\d:]+) (\S+) (\S+?)(?:\[(\d+)\])?: (.*)\$'
          customFieldNames: [timestamp, hostname, program, processid, message]
EOF
"$DISAGENT" --import-yml "$TMP/agent.yml" >"$TMP/imported.ini" \
    2>"$TMP/import.err" || fail "import failed: $(cat "$TMP/import.err")"
if grep -i 'dataProcessingOptions\|metadata\|customFieldNames' "$TMP/import.err"
then
	fail "options reported as not carried over"
fi
# What agent.yml cannot say about this test's endpoint and state.
sed -e "/^\[agent\]/a caFile = $TMP/ca/ca.pem" \
    -e "/^\[agent\]/a checkpointFile = $TMP/state/state.json" \
    "$TMP/imported.ini" >"$TMP/agent.ini"
mkdir -p "$TMP/state"
"$DISAGENT" -t -c "$TMP/agent.ini" || fail "-t rejects the imported file"

start_agent "$TMP/agent.ini"
wait_for 60 "web" count_at_least web 1
wait_for 60 "csv" count_at_least csv 2
wait_for 60 "sys" count_at_least sys 2
wait_for 30 "the unmatched line" grep -q UNMATCHED "$TMP/state/deadletter.jsonl"
stop_agent

exact web '{
  "metadata" : {
    "app" : "web",
    "n" : 31,
    "f" : 1000.0,
    "t" : true,
    "none" : null,
    "list" : [ "a", "b", 2.5 ]
  },
  "data" : "{\"host\":\"198.51.100.7\",\"ident\":null,\"authuser\":null,\"datetime\":\"12/Mar/2024:10:15:33 +0800\",\"request\":\"POST /api/v1/orders HTTP/2.0\",\"response\":\"201\",\"bytes\":null,\"referer\":null,\"agent\":\"curl/8.5.0\"}"
}'
exact csv '{{"id":"7","name, full":"Ann","when":"Lee"}
}' '{{"id":"8","name, full":null,"when":null}
}'
exact sys '{"timestamp":"Mar  7 04:02:16","hostname":"myhost","program":"sshd","processid":"1234","message":"Accepted"}' \
    '{"timestamp":"Mar  7 04:02:17","hostname":"myhost","program":"cron","processid":null,"message":"x"}'
pass
