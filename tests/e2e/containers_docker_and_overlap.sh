#!/bin/sh
# source = containers on a Docker host: /var/lib/docker/containers' layout
# (ID/ID-json.log, config.v2.json beside it).  containerMatch matches
# docker/NAME/NAME, so the flow reads web's container and not db's; each
# record carries the container's id, name and image, long lines cut into
# Docker's partial lines arrive joined, and Docker's rotation (ID-json.log
# renamed ID-json.log.1, a new ID-json.log) loses and repeats nothing.
# Lines in neither format (a runtime's, or a hand's) are sent as they are,
# counted in disagent_container_lines_malformed_total, with one WARN for
# the file; the partial joins are counted too.
# Then disagent -t refuses two flows that both read one container, naming
# both flows and the container.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

gen() { "$PYTHON3" "$top_srcdir/tests/containers_gen.py" "$@"; }
check() { gen check --records "$TMP/records.jsonl" --stream "$@"; }
got() {
	_s=$1; shift
	count_at_least "$_s" "$(cat "$@" | wc -l)"
}

WEB=3f4e5d6c7b8a90123456789abcdef0123456789abcdef0123456789abcdef01
DB=9a8b7c6d5e4f30123456789abcdef0123456789abcdef0123456789abcdef02
D=$TMP/containers
mkdir -p "$D/$WEB" "$D/$DB" "$TMP/expect"
printf '{"ID":"%s","Name":"/web","Config":{"Image":"nginx:1.27"}}' "$WEB" \
    >"$D/$WEB/config.v2.json"
printf '{"ID":"%s","Name":"/db","Config":{"Image":"postgres:17"}}' "$DB" \
    >"$D/$DB/config.v2.json"
# (gen's docker metadata: POD is the image, UID the id, CTR the name.)
gen write "$D/$WEB/$WEB-json.log" docker docker nginx:1.27 "$WEB" web w 0 200
gen write "$D/$DB/$DB-json.log" docker docker postgres:17 "$DB" db d 0 20

start_server --stream s1 --stream s2
write_conf "$TMP/agent.ini" "metricsFile = $TMP/disagent.prom" \
    "metricsIntervalMillis = 1000"
cat >>"$TMP/agent.ini" <<EOF

[flow:web]
source = containers
containerLogDirectory = $D
containerMatch = docker/web/*
containerFormat = docker
DISStream = s1
maxBufferAgeMillis = 200
EOF
"$DISAGENT" -t -c "$TMP/agent.ini" >/dev/null
start_agent "$TMP/agent.ini"
wait_for 60 "web's records" got s1 "$D/$WEB/$WEB-json.log.expect"
check s1 "$D/$WEB/$WEB-json.log.expect" || fail "web's records"

# Docker's json-file rotation (max-size): rename to .1, a new file.
mv "$D/$WEB/$WEB-json.log" "$D/$WEB/$WEB-json.log.1"
mv "$D/$WEB/$WEB-json.log.expect" "$TMP/expect/web"
gen write "$D/$WEB/$WEB-json.log" docker docker nginx:1.27 "$WEB" web w \
    200 300
wait_for 60 "web's records after the rotation" got s1 "$TMP/expect/web" \
    "$D/$WEB/$WEB-json.log.expect"
check s1 "$TMP/expect/web" "$D/$WEB/$WEB-json.log.expect" ||
    fail "web's records through the rotation"
n=$(grep -c 'in no container log format' "$TMP/agent.log" || true)
[ "$n" = 0 ] || fail "Docker's lines taken for malformed"

printf '%s\n' 'not json at all' '{"log":"no stream"}' 'third bad' \
    >>"$D/$WEB/$WEB-json.log"
has() {
	records dump --records "$TMP/records.jsonl" --stream s1 | grep -qxF "$1"
}
wait_for 30 "the malformed lines" has 'third bad'
has 'not json at all' || fail "a malformed line is missing"
has '{"log":"no stream"}' || fail "a malformed line is missing"
metric() {
	grep "^disagent_container_$1{flow=\"web\"," "$TMP/disagent.prom" |
	    awk '{ print $2 }'
}
# 300 lines, every 7th cut into partials: 43 joined records.
counted() {
	[ "$(metric lines_malformed_total)" = 3 ] &&
	    [ "$(metric partials_joined_total)" = 43 ]
}
wait_for 30 "the counts in the metrics file" counted
n=$(grep -c 'in no container log format' "$TMP/agent.log" || true)
[ "$n" = 1 ] || fail "$n WARNs for one file's malformed lines"
grep -q "WARN .*$WEB-json.log: a line near offset [0-9]* is in no container" \
    "$TMP/agent.log" || fail "the WARN does not name the file"
stop_agent

# Two flows that read one container: refused at -t, naming both.
P=$TMP/pods
mkdir -p "$P/prod_web-1_u1/app" "$P/prod_api-1_u2/app"
gen write "$P/prod_web-1_u1/app/0.log" cri prod web-1 u1 app x 0 1
gen write "$P/prod_api-1_u2/app/0.log" cri prod api-1 u2 app x 0 1
write_conf "$TMP/two.ini"
cat >>"$TMP/two.ini" <<EOF

[flow:all]
source = containers
containerLogDirectory = $P
containerMatch = prod/api-*/*
DISStream = s1

[flow:web]
source = containers
containerLogDirectory = $P
containerMatch = */web-*/*
DISStream = s2
EOF
"$DISAGENT" -t -c "$TMP/two.ini" >/dev/null || fail "disjoint flows refused"
sed -i 's|^containerMatch = prod/api-\*/\*$|containerMatch = prod/*/*|' \
    "$TMP/two.ini"
if "$DISAGENT" -t -c "$TMP/two.ini" >"$TMP/t.out" 2>&1; then
	fail "-t accepted two flows reading one container"
fi
cat "$TMP/t.out"
grep -q '\[flow:web\] and \[flow:all\] both read container prod/web-1/app' \
    "$TMP/t.out" || fail "-t does not name both flows and the container"
pass
