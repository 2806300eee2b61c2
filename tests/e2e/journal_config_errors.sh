#!/bin/sh
# The configuration of journal flows: disagent -t names the line of what
# is wrong.  On a host without systemd (this one, or a mount namespace in
# which /run/systemd, /run/log/journal and /var/log/journal are empty),
# source = journal without journalDirectory fails at the line of source
# with a clear reason, and an agent started so warns and keeps running; a
# journalDirectory that cannot be read fails at its line; a bad
# journalMatch at its; file keys in a journal flow and journal keys in a
# file flow at theirs.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/journal_lib.sh"

# no_systemd CMD...: exec CMD as on a host without systemd (in a
# subshell, or in the background: it replaces the shell it runs in).
no_systemd() {
	if [ ! -e /run/systemd/system ] &&
	    ! find /run/log/journal /var/log/journal -mindepth 1 2>/dev/null | grep -q .; then
		exec "$@"
	fi
	[ "$(id -u)" = 0 ] && _u=-m || _u=-rm
	exec unshare $_u sh -c 'for d in /run/systemd /run/log/journal /var/log/journal; do
		[ -d "$d" ] && mount -t tmpfs none "$d"
	done
	exec "$@"' sh "$@"
}
# fails_at FILE LINE TEXT: -t fails with "FILE:LINE: ...TEXT".
fails_at() {
	if (no_systemd "$DISAGENT" -t -c "$1") >"$TMP/t.out" 2>&1; then
		fail "-t accepts $1: $(cat "$TMP/t.out")"
	fi
	grep -qF "$1:$2: $3" "$TMP/t.out" || fail "-t says: $(cat "$TMP/t.out"), not $1:$2: $3"
}
line_of() { grep -n "^$2" "$1" | head -n 1 | cut -d: -f1; }

start_server --stream s1
mkdir -p "$TMP/journal"

write_conf "$TMP/a.ini"
add_journal_flow "$TMP/a.ini" j s1 "$TMP/journal"
sed -i '/^journalDirectory/d' "$TMP/a.ini"
fails_at "$TMP/a.ini" "$(line_of "$TMP/a.ini" "source = journal")" \
    "[flow:j]: source = journal: this host has no systemd journal to read: it was not booted with systemd (no /run/systemd/system) and there are no journal files in /run/log/journal or /var/log/journal; set journalDirectory to read journal files copied here"

# Started so, the agent warns and waits for a journal.
no_systemd "$DISAGENT" -c "$TMP/a.ini" >"$TMP/agent.log" 2>&1 &
AGENT_PID=$!
wait_for 30 "the WARN" grep -q "WARN.*\[j\] source = journal: this host has no systemd journal" "$TMP/agent.log"
wait_for 30 "the start" grep -q "Startup completed" "$TMP/agent.log"
kill -0 "$AGENT_PID" || fail "the agent exited"
kill -TERM "$AGENT_PID"
wait "$AGENT_PID" || fail "the agent exited with $? after SIGTERM"
AGENT_PID=

write_conf "$TMP/b.ini"
add_journal_flow "$TMP/b.ini" j s1 "$TMP/no-such-dir"
fails_at "$TMP/b.ini" "$(line_of "$TMP/b.ini" journalDirectory)" \
    "[flow:j]: journalDirectory = $TMP/no-such-dir: cannot read the directory: No such file or directory"

write_conf "$TMP/c.ini"
add_journal_flow "$TMP/c.ini" j s1 "$TMP/journal" "journalMatch = _SYSTEMD_UNIT=a+unit=b"
fails_at "$TMP/c.ini" "$(line_of "$TMP/c.ini" journalMatch)" \
    "journalMatch = _SYSTEMD_UNIT=a+unit=b is not a journal match: term 'unit=b' is not FIELD=VALUE"

write_conf "$TMP/d.ini"
add_journal_flow "$TMP/d.ini" j s1 "$TMP/journal" "filePattern = /var/log/*.log"
fails_at "$TMP/d.ini" "$(line_of "$TMP/d.ini" filePattern)" \
    "[flow:j]: filePattern is not used with source = journal (it applies to files)"

write_conf "$TMP/e.ini"
add_flow "$TMP/e.ini" f s1 "$TMP/logs/*.log" "journalFormat = JSON"
fails_at "$TMP/e.ini" "$(line_of "$TMP/e.ini" journalFormat)" \
    "[flow:f]: journalFormat applies to source = journal only"

# And a good one passes, also on a host without systemd.
write_conf "$TMP/ok.ini"
add_journal_flow "$TMP/ok.ini" j s1 "$TMP/journal" \
    "journalMatch = _SYSTEMD_UNIT=nginx.service+PRIORITY=0..4, SYSLOG_IDENTIFIER=app"
(no_systemd "$DISAGENT" -t -c "$TMP/ok.ini") >"$TMP/t.out" 2>&1 || fail "-t: $(cat "$TMP/t.out")"
pass
