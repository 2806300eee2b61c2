#!/bin/sh
# initialPosition = END_OF_FILE skips what files hold at the first start (and
# only then: a restart resumes from the saved offset), files created after
# start are read from their beginning, and ignoreNotUpdatedFileSeconds skips
# the old content of files not modified for that long.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

start_server --stream s1 --stream s2
mkdir -p "$TMP/a" "$TMP/b"
write_lines "$TMP/a/old.log" skip 0 100
write_lines "$TMP/b/stale.log" skip2 0 100
touch -d '2 hours ago' "$TMP/b/stale.log"
write_lines "$TMP/b/fresh.log" fr 0 50

write_conf "$TMP/agent.ini"
add_flow "$TMP/agent.ini" a s1 "$TMP/a/*.log" "initialPosition = END_OF_FILE"
add_flow "$TMP/agent.ini" b s2 "$TMP/b/*.log" "ignoreNotUpdatedFileSeconds = 3600"
start_agent "$TMP/agent.ini"
wait_for 30 "fresh.log" count_at_least s2 50
wait_for 30 "tracking old.log" grep -q "tracking $TMP/a/old.log" "$TMP/agent.log"

# Appended lines after the start, and a new file, arrive.
: >"$TMP/expect_a"
write_lines "$TMP/a/old.log" keep 0 30
write_lines "$TMP/expect_a" keep 0 30
write_lines "$TMP/a/new.log" new 0 20
write_lines "$TMP/b/stale.log" later 0 10
write_lines "$TMP/expect_b" later 0 10
wait_for 30 "a's new lines" count_at_least s1 50
wait_for 30 "b's new lines" count_at_least s2 60
stop_agent

# Lines written while stopped are read after a restart (the saved offset
# wins over initialPosition).
write_lines "$TMP/a/old.log" more 0 10
write_lines "$TMP/expect_a" more 0 10
start_agent "$TMP/agent.ini"
wait_for 30 "the lines written while stopped" count_at_least s1 60
stop_agent

records verify --records "$TMP/records.jsonl" --stream s1 \
    --expect "$TMP/expect_a" --expect "$TMP/a/new.log" || fail "flow a"
records verify --records "$TMP/records.jsonl" --stream s2 \
    --expect "$TMP/b/fresh.log" --expect "$TMP/expect_b" || fail "flow b"
pass
