#!/bin/sh
# A stop whose save fails is never called clean: the state directory is a
# full 1 MiB tmpfs, so the stop's save cannot be written.  The log says the
# state could not be saved and the file keeps its last save; it never says
# "state saved as a clean stop", and the state file on disk is not clean.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

if [ "$(id -u)" != 0 ] || ! command -v mount >/dev/null; then
	echo "SKIP: $E2E_NAME: needs root to mount a tmpfs" >&2
	E2E_OK=1
	exit 77
fi
start_server --stream s1:COMMON:1
mkdir -p "$TMP/logs" "$TMP/state"
mount -t tmpfs -o size=1m tmpfs "$TMP/state" 2>/dev/null || {
	echo "SKIP: $E2E_NAME: cannot mount a tmpfs here" >&2
	E2E_OK=1
	exit 77
}
E2E_ON_EXIT="umount '$TMP/state' 2>/dev/null; "
write_lines "$TMP/logs/a.log" t 0 100

write_conf "$TMP/agent.ini"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/*.log"
start_agent "$TMP/agent.ini"
wait_for 60 "every line" count_at_least s1 100
wait_for 30 "a save of the delivered lines" grep -q '"offset":7100' \
    "$TMP/state/state.json"
# Fill the file system: no save can be written from now on.
dd if=/dev/zero of="$TMP/state/fill" bs=64k 2>/dev/null || true
write_lines "$TMP/logs/a.log" t 100 200
wait_for 60 "the new lines" count_at_least s1 200
stop_agent

grep -E "state (saved|could not)" "$TMP/agent.log" || true
if grep -q "state saved as a clean stop" "$TMP/agent.log"; then
	fail "a failed save was called a clean stop"
fi
grep -q "stop: the state could not be saved to .*not a clean stop" \
    "$TMP/agent.log" || fail "the failed save at the stop was not reported"
if head -n 1 "$TMP/state/state.json" | grep -q '"clean":true'; then
	fail "the state file says clean"
fi
pass
