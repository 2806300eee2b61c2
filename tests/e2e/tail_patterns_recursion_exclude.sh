#!/bin/sh
# filePattern globs in directory components, "**", directoryRecursionEnabled,
# excludePattern, and the names skipped unless the pattern names them
# (hidden, .gz, fileSuffix); directories created after start are picked up.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

start_server --stream s1 --stream s2 --stream s3
L=$TMP/logs
mkdir -p "$L/web1" "$L/web2" "$L/deep/a/b" "$L/rec/x/y"
write_lines "$L/web1/app-1.log" w1 0 300
write_lines "$L/web2/app-2.log" w2 0 300
write_lines "$L/web2/db-2.log" nodb 0 10           # name does not match
write_lines "$L/app-top.log" notop 0 10            # directory does not match
write_lines "$L/web1/app-debug.log" noexcl 0 10    # excluded
write_lines "$L/web1/.app-hidden.log" nohid 0 10   # hidden
write_lines "$L/deep/a/b/k.log" k 0 200
write_lines "$L/deep/z.log" z 0 100
write_lines "$L/rec/top.log" rt 0 50
write_lines "$L/rec/x/y/leaf.log" rl 0 50
write_lines "$L/rec/x/y/leaf.log.COMPLETED" nodone 0 10
printf 'not a log\n' | gzip >"$L/rec/x/old.log.gz"

write_conf "$TMP/agent.ini"
add_flow "$TMP/agent.ini" web s1 "$L/*/app-*.log" "ordered = true" \
    "excludePattern = *-debug.log, /nowhere/*"
add_flow "$TMP/agent.ini" deep s2 "$L/deep/**/*.log" "ordered = true"
add_flow "$TMP/agent.ini" rec s3 "$L/rec/*.log*" "ordered = true" \
    "directoryRecursionEnabled = true"
"$DISAGENT" -t -c "$TMP/agent.ini" >/dev/null

start_agent "$TMP/agent.ini"
wait_for 60 "s1 records" count_at_least s1 600
wait_for 60 "s2 records" count_at_least s2 300
wait_for 60 "s3 records" count_at_least s3 100

# A directory that appears after start, and a file in it.
mkdir -p "$L/web3" "$L/deep/new/er"
write_lines "$L/web3/app-3.log" w3 0 100
write_lines "$L/deep/new/er/n.log" n 0 100
wait_for 60 "the new directory's lines" count_at_least s1 700
wait_for 60 "the new deep directory's lines" count_at_least s2 400
stop_agent

records verify --records "$TMP/records.jsonl" --stream s1 --ordered \
    --expect "$L/web1/app-1.log" --expect "$L/web2/app-2.log" \
    --expect "$L/web3/app-3.log" || fail "flow web"
records verify --records "$TMP/records.jsonl" --stream s2 --ordered \
    --expect "$L/deep/a/b/k.log" --expect "$L/deep/z.log" \
    --expect "$L/deep/new/er/n.log" || fail "flow deep"
records verify --records "$TMP/records.jsonl" --stream s3 --ordered \
    --expect "$L/rec/top.log" --expect "$L/rec/x/y/leaf.log" ||
	fail "flow rec"
pass
