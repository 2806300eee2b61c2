#!/bin/sh
# What real runtimes wrote (tests/fixtures/containers, recorded by
# record.sh from podman's k8s-file and dockerd's json-file), laid out as
# the kubelet and Docker lay it out, shipped by two flows with
# source = containers: every line each container printed arrives once,
# as one JSON record per line (the 40 KiB lines, cut by conmon at 8 KiB
# and wherever its pipe read ended, by Docker at 16 KiB, joined) with its
# stream and metadata: the pod's namespace, name, uid and container from
# kubelet's path; the container's id, name and image from config.v2.json.
# A second Docker container, whose log json-file rotated (max-size): the
# agent reads its first part as -json.log, which is then renamed
# -json.log.1 and the rest written as a new -json.log, as dockerd did.
# Both parts end and start at a line: the recorded rotation cut a 40 KiB
# line's partials, tested by containers_docker_rotation_cut_line_arrives.sh:
# here that line's pieces are taken out of the files (the lines before
# and after are dockerd's bytes still).
#
# With CUT_LINE=1 (containers_docker_rotation_cut_line_arrives.sh) the
# pieces stay: the line cut by the rotation must arrive, every byte once,
# as the two records it was cut into (the 32 KiB that ended the rotated
# file, sent when that file went quiet, and the 8 KiB that start the new
# one); joining them across files is not done.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

F=$top_srcdir/tests/fixtures/containers
# Three flows with 40 KiB records (joined from partials) in their
# batches: the bound of memory_long_lines_under_24mib (21 MiB measured).
E2E_RSS_LIMIT_KB=24576
start_server --stream pods --stream docker --stream traces

# kubelet: NAMESPACE_POD_UID/CONTAINER/0.log
UID1=0b4e4e8e-7f9c-4a7e-9a51-3c1d2e7f6a10
mkdir -p "$TMP/pods/shop_web-0_$UID1/app"
gzip -dc "$F/podman-k8s-file.log.gz" >"$TMP/pods/shop_web-0_$UID1/app/0.log"
UID2=5d0c7b1a-2f4e-4c36-8d0b-9e1f3a2b4c5d
mkdir -p "$TMP/pods/shop_trace-0_$UID2/app"
cp "$TMP/pods/shop_web-0_$UID1/app/0.log" "$TMP/pods/shop_trace-0_$UID2/app/0.log"
# Docker: ID/ID-json.log and ID/config.v2.json.
docker_layout() {
	_id=$("$PYTHON3" -c 'import json, sys; print(json.load(open(sys.argv[1]))["ID"])' "$F/$1-config.v2.json")
	mkdir -p "$TMP/docker/$_id"
	cp "$F/$1-config.v2.json" "$TMP/docker/$_id/config.v2.json"
	cp "$F/$1-json.log$2.gz" "$TMP/docker/$_id/$_id-json.log.gz"
	gzip -d "$TMP/docker/$_id/$_id-json.log.gz"
	echo "$_id"
}
ID1=$(docker_layout docker "")
# The rotated one's first part, to be rotated below.
ID2=$(docker_layout docker-rotated .1)
D2=$TMP/docker/$ID2/$ID2-json.log
gzip -dc "$F/docker-rotated-json.log.gz" >"$TMP/rest"
# cut_line: the partials at the end of the first part, and the line that
# ends them at the start of the rest, left out.
cut_line() {
	"$PYTHON3" - "$D2" "$TMP/rest" <<'PY'
import json, sys
first, rest = sys.argv[1], sys.argv[2]
a = open(first, "rb").read().split(b"\n")[:-1]
b = open(rest, "rb").read().split(b"\n")[:-1]
streams = set()
while a and not json.loads(a[-1])["log"].endswith("\n"):
    streams.add(json.loads(a.pop())["stream"])
assert streams, "the recorded rotation no longer cuts a line"
for s in streams:
    i = next(i for i, l in enumerate(b) if json.loads(l)["stream"] == s)
    assert json.loads(b[i])["log"].endswith("\n")
    del b[i]
open(first, "wb").write(b"".join(l + b"\n" for l in a))
open(rest, "wb").write(b"".join(l + b"\n" for l in b))
print(",".join(sorted(streams)))
PY
}
omit=
cutl=
total=4036
if [ "${CUT_LINE:-0}" = 1 ]; then
	cutl="dockerrot out long "
	total=4037	# the cut line in its two pieces
else
	cut=$(cut_line) || fail "taking the cut line out"
	[ "$cut" = stdout ] || fail "the recorded rotation cut a $cut line"
	omit="dockerrot out long "
	total=4035
fi

write_conf "$TMP/agent.ini"
cat >>"$TMP/agent.ini" <<EOF

[flow:pods]
source = containers
containerLogDirectory = $TMP/pods
containerExclude = shop/trace-0/*
containerRecord = json
DISStream = pods
maxBufferAgeMillis = 200

[flow:traces]
source = containers
containerLogDirectory = $TMP/pods
containerMatch = shop/trace-0/*
multiLinePreset = java
multiLineFlushMillis = 200
DISStream = traces
maxBufferAgeMillis = 200

[flow:docker]
source = containers
containerLogDirectory = $TMP/docker
containerFormat = docker
containerRecord = json
DISStream = docker
maxBufferAgeMillis = 200
EOF
"$DISAGENT" -t -c "$TMP/agent.ini" >/dev/null
start_agent "$TMP/agent.ini"

verify() {
	_s=$1
	shift
	"$PYTHON3" "$top_srcdir/tests/container_records.py" \
	    --records "$TMP/records.jsonl" --stream "$_s" "$@" >"$TMP/verify-$_s.out" 2>&1
}
# Every record there first (2 x 1,009 per container), then the check.
wait_for 60 "the podman log's 2,018 records" count_at_least pods 2018
first=$(grep -c '\\n"' "$D2")
wait_for 60 "the first docker log's 2,018 records and the first part's $first" \
    count_at_least docker $((2018 + first))
# json-file's rotation, as dockerd made it.
mv "$D2" "$D2.1"
mv "$TMP/rest" "$D2"
wait_for 60 "the docker logs' $total records" count_at_least docker "$total"
verify pods --container "k8s:shop/web-0/$UID1/app=podman" ||
	{ cat "$TMP/verify-pods.out"; fail "podman's k8s-file log"; }
head -n 1 "$TMP/verify-pods.out"
# 1,009 lines per stream, the trace's 7 from its exception line one
# record: 1,003.
wait_for 60 "the traces flow's 2,006 records" count_at_least traces 2006
verify traces --multiline java --container "k8s:shop/trace-0/$UID2/app=podman" ||
	{ cat "$TMP/verify-traces.out"; fail "multiLinePreset = java"; }
head -n 1 "$TMP/verify-traces.out"
verify docker --container "docker:$ID1/disagent-fixture/disagent-emit:1=docker" \
    --container "docker:$ID2/disagent-fixture-rotated/disagent-emit:1=dockerrot" \
    ${omit:+--omit "$omit"} ${cutl:+--cut "$cutl"} ||
	{ cat "$TMP/verify-docker.out"; fail "docker's json-file logs"; }
head -n 1 "$TMP/verify-docker.out"
stop_agent
pass
