#!/bin/sh
# `disagent -t` rejects each combination of the whole-file keys that cannot
# work, with FILE:LINE: message and exit 1 (the line of the key at fault),
# and accepts the ones that can.  The agent itself starts when only the
# file system is at fault (it can change), and warns.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

mkdir -p "$TMP/in" "$TMP/done" "$TMP/in/sub"
touch "$TMP/plainfile"
# flow LINES...: a configuration whose flow ends in LINES (from line 11).
flow() {
	cat <<EOF2
[agent]
region = cn-north-1
projectId = p
ak = a
sk = s
checkpointFile = $TMP/state/state.json

[flow:w]
DISStream = s
filePattern = $TMP/in/*.csv
EOF2
	for _l in "$@"; do echo "$_l"; done
}

# expect MESSAGE LINES...: -t fails with FILE:MESSAGE.
expect() {
	_n=$((${_n:-0} + 1))
	_f="$TMP/bad$_n.ini"
	_want=$1; shift
	flow "$@" >"$_f"
	_rc=0
	"$DISAGENT" -t -c "$_f" >"$TMP/out" 2>&1 || _rc=$?
	[ "$_rc" = 1 ] || fail "case $_n: exit $_rc, not 1 ($(cat "$TMP/out"))"
	grep -qxF -- "$_f:$_want" "$TMP/out" ||
		fail "case $_n: got '$(cat "$TMP/out")', want '$_f:$_want'"
}
# good LINES...: -t accepts it.
good() {
	flow "$@" >"$TMP/good.ini"
	"$DISAGENT" -t -c "$TMP/good.ini" >"$TMP/out" 2>&1 ||
		fail "rejected: $* ($(cat "$TMP/out"))"
}

good "isFileAppendable = false"
good "isFileAppendable = false" "deletePolicy = immediate"
good "isFileAppendable = false" "fileMoveToDir = $TMP/done"
good "isFileAppendable = false" "fileSuffix ="
good "deleteAfterDeliverySeconds = 60"

expect "12: [flow:w]: deletePolicy = immediate applies to whole files (isFileAppendable = false) only; tailed files rotated away can be removed with deleteAfterDeliverySeconds" \
    "isFileAppendable = true" "deletePolicy = immediate"
expect "11: [flow:w]: fileMoveToDir applies to whole files (isFileAppendable = false) only" \
    "fileMoveToDir = $TMP/done"
expect "12: [flow:w]: deleteAfterDeliverySeconds is for tailed files; whole files (isFileAppendable = false) are cleaned up by deletePolicy, fileMoveToDir or fileSuffix" \
    "isFileAppendable = false" "deleteAfterDeliverySeconds = 60"
expect "13: [flow:w]: fileMoveToDir and deletePolicy = immediate: a delivered file is either deleted or moved" \
    "isFileAppendable = false" "deletePolicy = immediate" \
    "fileMoveToDir = $TMP/done"
expect "12: [flow:w]: initialPosition = END_OF_FILE: whole files (isFileAppendable = false) are always sent from their start" \
    "isFileAppendable = false" "initialPosition = END_OF_FILE"
expect "12: [flow:w]: ignoreNotUpdatedFileSeconds: whole files (isFileAppendable = false) are sent however old they are" \
    "isFileAppendable = false" "ignoreNotUpdatedFileSeconds = 60"
expect "12: [flow:w]: fileMoveToDir = $TMP/nosuchdir: No such file or directory" \
    "isFileAppendable = false" "fileMoveToDir = $TMP/nosuchdir"
expect "12: [flow:w]: fileMoveToDir = $TMP/plainfile is not a directory" \
    "isFileAppendable = false" "fileMoveToDir = $TMP/plainfile"
expect "12: [flow:w]: fileMoveToDir = $TMP/in is a directory filePattern reads: moved files would be read again" \
    "isFileAppendable = false" "fileMoveToDir = $TMP/in"
expect "13: [flow:w]: fileMoveToDir = $TMP/in/sub is a directory filePattern reads: moved files would be read again" \
    "isFileAppendable = false" "directoryRecursionEnabled = true" \
    "fileMoveToDir = $TMP/in/sub"
ln -s "$TMP/in" "$TMP/inlink"
expect "12: [flow:w]: fileMoveToDir = $TMP/inlink is a directory filePattern reads: moved files would be read again" \
    "isFileAppendable = false" "fileMoveToDir = $TMP/inlink"
# Defaults at fault: the line of isFileAppendable.
{ flow "isFileAppendable = false"; } | sed "s|^filePattern = .*|filePattern = $TMP/in/*.COMPLETED*|" >"$TMP/suffix.ini"
_rc=0; "$DISAGENT" -t -c "$TMP/suffix.ini" >"$TMP/out" 2>&1 || _rc=$?
[ "$_rc" = 1 ] && grep -qxF "$TMP/suffix.ini:11: [flow:w]: filePattern names fileSuffix: files renamed with it would be read again" "$TMP/out" ||
	fail "a pattern naming fileSuffix: $(cat "$TMP/out")"

# Not writable, and on another file system: -t says so, the agent warns.
if [ "$(id -u)" != 0 ]; then
	unwritable "$TMP/done"
	expect "12: [flow:w]: fileMoveToDir = $TMP/done is not writable by uid $(id -u): Permission denied" \
	    "isFileAppendable = false" "fileMoveToDir = $TMP/done"
	writable "$TMP/done"
else
	unwritable "$TMP/done"
	expect "12: [flow:w]: fileMoveToDir = $TMP/done is not writable by uid 0: Operation not permitted" \
	    "isFileAppendable = false" "fileMoveToDir = $TMP/done"
	writable "$TMP/done"
fi
if [ -d /dev/shm ] && [ "$(stat -c %d /dev/shm)" != "$(stat -c %d "$TMP")" ]; then
	other=$(mktemp -d /dev/shm/disagent-other.XXXXXX)
	expect "12: [flow:w]: fileMoveToDir = $other is on another file system than $TMP/in: files are moved by rename, never copied" \
	    "isFileAppendable = false" "fileMoveToDir = $other"
	rmdir "$other"
else
	echo "no second file system here: that case is not tried"
fi

# The agent starts with a move directory it cannot use yet, and says so.
start_server --stream s
flow "isFileAppendable = false" "fileMoveToDir = $TMP/later" |
    sed "s|^region = .*|&\nendpoint = https://127.0.0.1:$PORT\ncaFile = $TMP/ca/ca.pem|" \
    >"$TMP/agent.ini"
mkdir -p "$TMP/state"
start_agent "$TMP/agent.ini"
wait_for 30 "the warning" grep -q "WARN.*\[w\] fileMoveToDir = $TMP/later: No such file or directory; delivered files stay until they can be moved" "$TMP/agent.log"
stop_agent
pass
