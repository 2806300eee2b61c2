#!/bin/sh
# source = containers on a kubelet node: a /var/log/pods tree with three
# namespaces, two flows routing prod to s1 and dev to s2 (kube-system
# excluded).  Every line gives one JSON record with its pod's metadata,
# the long lines the runtime cut into partial lines (with stderr lines
# between their partials) arrive joined, once each.  Then kubelet's
# rotation, 0.log -> 0.log.20261207-100000 (still written through the old
# descriptor) -> a new 0.log, and the rotated file gzipped and removed:
# nothing lost, nothing twice.  A new pod's first line arrives within a
# second or so (inotify, not the rescan: rescanIntervalMillis is a
# minute).  A pod deleted while its lines are unsent (the endpoint down):
# its lines still all arrive.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

gen() { "$PYTHON3" "$top_srcdir/tests/containers_gen.py" "$@"; }
check() {
	gen check --records "$TMP/records.jsonl" --stream "$@"
}
# got STREAM EXPECT...: as many records on STREAM as the files expect.
got() {
	_s=$1; shift
	count_at_least "$_s" "$(cat "$@" | wc -l)"
}

start_server --stream s1 --stream s2
P=$TMP/pods
WEB=$P/prod_web-1_6f1c0a2e-0001/app
API=$P/dev_api-1_6f1c0a2e-0002/api
DNS=$P/kube-system_coredns-1_6f1c0a2e-0003/coredns
mkdir -p "$WEB" "$API" "$DNS"
gen write "$WEB/0.log" cri prod web-1 6f1c0a2e-0001 app w 0 300
gen write "$API/0.log" cri dev api-1 6f1c0a2e-0002 api a 0 300
gen write "$DNS/0.log" cri kube-system coredns-1 6f1c0a2e-0003 coredns d 0 50

write_conf "$TMP/agent.ini"
cat >>"$TMP/agent.ini" <<EOF

[flow:prod]
source = containers
containerLogDirectory = $P
containerMatch = prod/*/*
DISStream = s1
maxBufferAgeMillis = 200
rescanIntervalMillis = 60000
retryMaxBackoffMillis = 200
partitionKeyOption = RANDOM_DOUBLE

[flow:dev]
source = containers
containerLogDirectory = $P
containerMatch = dev/*/*, kube-system/*/*
containerExclude = kube-system/*/*
DISStream = s2
maxBufferAgeMillis = 200
rescanIntervalMillis = 60000
retryMaxBackoffMillis = 200
partitionKeyOption = RANDOM_DOUBLE
EOF
"$DISAGENT" -t -c "$TMP/agent.ini" >/dev/null
start_agent "$TMP/agent.ini"
wait_for 60 "prod's records" got s1 "$WEB/0.log.expect"
wait_for 60 "dev's records" got s2 "$API/0.log.expect"
check s1 "$WEB/0.log.expect" || fail "prod's records"
check s2 "$API/0.log.expect" || fail "dev's records"

# kubelet's rotation.  containerd writes on through its descriptor until
# it reopens: lines land in the renamed file, then in the new one.
mv "$WEB/0.log" "$WEB/0.log.20261207-100000"
gen write "$WEB/0.log.20261207-100000" cri prod web-1 6f1c0a2e-0001 app w \
    300 400
cat "$WEB/0.log.20261207-100000.expect" >>"$WEB/0.log.expect"
rm "$WEB/0.log.20261207-100000.expect"
gen write "$WEB/0.log" cri prod web-1 6f1c0a2e-0001 app w 400 500
wait_for 60 "prod's records through the rotation" got s1 "$WEB/0.log.expect"
gzip -c "$WEB/0.log.20261207-100000" >"$WEB/0.log.20261207-100000.gz.tmp"
mv "$WEB/0.log.20261207-100000.gz.tmp" "$WEB/0.log.20261207-100000.gz"
rm "$WEB/0.log.20261207-100000"
gen write "$WEB/0.log" cri prod web-1 6f1c0a2e-0001 app w 500 520
wait_for 60 "prod's records after the gzip" got s1 "$WEB/0.log.expect"
check s1 "$WEB/0.log.expect" || fail "prod's records through the rotation"

# A new pod: found by inotify within a second or so.
NEW=$P/prod_new-1_6f1c0a2e-0004/app
t0=$(date +%s%N)
mkdir -p "$NEW"
gen write "$NEW/0.log" cri prod new-1 6f1c0a2e-0004 app n 0 1
wait_for 10 "the new pod's line" got s1 "$WEB/0.log.expect" \
    "$NEW/0.log.expect"
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
echo "new pod's first record after $ms ms"
[ "$ms" -lt 2500 ] || fail "a new pod took $ms ms"

# A pod deleted while its lines are unsent.
faults '{"outage": true}'
GONE=$P/dev_gone-1_6f1c0a2e-0005/app
mkdir -p "$GONE"
n0=$(stat_of dropped)
gen write "$GONE/0.log" cri dev gone-1 6f1c0a2e-0005 app g 0 200
cp "$GONE/0.log.expect" "$TMP/gone.expect"
dropped() { [ "$(stat_of dropped)" -gt "$n0" ]; }
wait_for 30 "a request with the pod's lines" dropped
rm -rf "$P/dev_gone-1_6f1c0a2e-0005"
faults '{"outage": false}'
wait_for 60 "the deleted pod's records" got s2 "$API/0.log.expect" \
    "$TMP/gone.expect"
check s2 "$API/0.log.expect" "$TMP/gone.expect" ||
    fail "the deleted pod's records"
check s1 "$WEB/0.log.expect" "$NEW/0.log.expect" || fail "s1 at the end"
stop_agent
pass
