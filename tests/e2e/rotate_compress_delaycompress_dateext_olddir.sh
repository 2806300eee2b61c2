#!/bin/sh
# logrotate with compress, delaycompress and dateext, three rotations while
# the agent runs, each right after a burst of lines (the agent is still
# reading when the file is renamed, and later gzip deletes it):
#  - flow "plain" (filePattern logs/*.log): app.log is moved to an olddir
#    outside the watched directory, web.log is rotated in place;
#  - flow "wide" (filePattern wide/*.log*): db.log is rotated in place, so
#    its rotated name still matches and its .gz files do too, except that
#    compressed names are skipped.
# Every line of every generation (the .gz ones decompressed for the
# comparison) arrives exactly once, in file order; no gzip bytes arrive.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/rotate_lib.sh"

start_server --stream s1 --stream s2 --latency-ms 20
mkdir -p "$TMP/logs" "$TMP/old" "$TMP/wide" "$TMP/expect"
opts="rotate 5
	create 0644 root root
	compress
	delaycompress
	dateext
	dateformat -%Y%m%d-%H%M%S"
lr_conf "$TMP/logs/app.log {
	$opts
	olddir $TMP/old
}
$TMP/logs/web.log $TMP/wide/db.log {
	$opts
}"
write_conf "$TMP/agent.ini"
add_flow "$TMP/agent.ini" plain s1 "$TMP/logs/*.log" "ordered = true"
add_flow "$TMP/agent.ini" wide s2 "$TMP/wide/*.log*" "ordered = true" \
    "rescanIntervalMillis = 500"

second_after() { [ "$(date +%s)" -gt "$1" ]; }
# Whether the agent tracks the file now at each path.  A rotation waits
# for it: a generation renamed away from its matching name before the
# agent ever looked at it (created, written and rotated within the
# agent's reaction time, as a loaded machine under ASan allows) is one
# no tailer that finds files by name can know of.  The agent is still
# reading each burst when its file is renamed.
tracks_current() {
	for _f in "$@"; do
		grep -qF "tracking $_f (inode $(stat -c %i "$_f")) " \
		    "$TMP/agent.log" || return 1
	done
}

start_agent "$TMP/agent.ini"
last=0
for gen in 0 1 2 3; do
	write_lines "$TMP/logs/app.log" "a$gen" 0 8000
	write_lines "$TMP/logs/web.log" "w$gen" 0 4000
	write_lines "$TMP/wide/db.log" "d$gen" 0 8000
	[ "$gen" = 3 ] && break
	wait_for 20 "the agent to track generation $gen" tracks_current \
	    "$TMP/logs/app.log" "$TMP/logs/web.log" "$TMP/wide/db.log"
	# dateext names have a one-second resolution: the next rotation must
	# come in a later second than this one, so take the second after it.
	wait_for 5 "the clock to move on" second_after "$last"
	lr_rotate
	last=$(date +%s)
done
[ "$(ls "$TMP/old"/app.log-*.gz | wc -l)" = 2 ] ||
	fail "logrotate did not compress app.log twice into the olddir"
[ "$(ls "$TMP/wide"/db.log-*.gz | wc -l)" = 2 ] ||
	fail "logrotate did not compress db.log twice"

# What each flow must have sent: every generation, decompressed.
for f in "$TMP"/old/app.log-* "$TMP"/logs/web.log-* "$TMP"/wide/db.log-*; do
	case $f in
	*.gz) gzip -dc "$f" >"$TMP/expect/$(basename "$f" .gz)" ;;
	*) cp "$f" "$TMP/expect/" ;;
	esac
done
set -- "$TMP"/expect/app.log-* "$TMP"/expect/web.log-* \
    "$TMP/logs/app.log" "$TMP/logs/web.log"
await_records s1 30 "$@"
set -- "$TMP"/expect/db.log-* "$TMP/wide/db.log"
await_records s2 30 "$@"
# Long enough for a wrongly read .gz file to show.
wait_progress 2
stop_agent
check_records s1 "$TMP"/expect/app.log-* "$TMP"/expect/web.log-* \
    "$TMP/logs/app.log" "$TMP/logs/web.log"
check_records s2 "$TMP"/expect/db.log-* "$TMP/wide/db.log"
# A .gz is opened only as the decompressed successor of a file it followed
# (an inode reused while its old file's entry is known), never as a file of
# its own: every "tracking X.gz" has its "was compressed into X.gz".
sed -n 's/.* tracking \(.*\.gz\) (inode .*/\1/p' "$TMP/agent.log" |
while read -r gz; do
	grep -qF "was compressed into $gz;" "$TMP/agent.log" ||
	    fail "the agent opened $gz as a file of its own"
done || exit 1
pass
