#!/bin/sh
# A log line holding "ESC]0;PWNED BEL ESC[2J" (a terminal title, a screen
# clear) is shipped; `disagent read` on a terminal (a real pty) prints it
# escaped, as less and journalctl would, keeping newlines, tabs and UTF-8;
# --raw on the terminal, and a pipe, get the bytes as they are.  verify's
# listing on a terminal escapes a file name the same way.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

# on_tty OUT CMD...: CMD on a new pty; what it wrote into OUT.
on_tty() {
	"$PYTHON3" - "$@" <<'PY'
import os, pty, sys
out, argv = sys.argv[1], sys.argv[2:]
pid, fd = pty.fork()
if pid == 0:
    os.execv(argv[0], argv)
data = b""
while True:
    try:
        chunk = os.read(fd, 65536)
    except OSError:
        break
    if not chunk:
        break
    data += chunk
_, status = os.waitpid(pid, 0)
open(out, "wb").write(data)
sys.exit(os.waitstatus_to_exitcode(status))
PY
}

start_server --stream s1
mkdir -p "$TMP/logs"
name=$(printf 'a\033[2Jb.log')
printf 'evil \033]0;PWNED\007\033[2J end\tok\n\346\227\245\345\277\227\n' \
    >"$TMP/logs/$name"
write_conf "$TMP/agent.ini"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/*.log"
"$DISAGENT" -c "$TMP/agent.ini" --once >"$TMP/agent.log" 2>&1 ||
	fail "--once exited $?"

esc=$(printf '\033')
bel=$(printf '\007')
on_tty "$TMP/tty" "$DISAGENT" read -c "$TMP/agent.ini" s1 --max 2 ||
	fail "read on a terminal exited $?"
if grep -q "$esc\|$bel" "$TMP/tty"; then
	fail "read wrote control characters to a terminal: $(cat -A "$TMP/tty")"
fi
grep -qF 'evil \x1b]0;PWNED\x07\x1b[2J end	ok' "$TMP/tty" ||
	fail "read on a terminal: $(cat -A "$TMP/tty")"
grep -qF '日志' "$TMP/tty" || fail "UTF-8 not kept on a terminal"

on_tty "$TMP/tty-raw" "$DISAGENT" read -c "$TMP/agent.ini" s1 --max 2 \
    --raw || fail "read --raw exited $?"
grep -q "evil $esc]0;PWNED$bel$esc\[2J end" "$TMP/tty-raw" ||
	fail "read --raw did not print the bytes: $(cat -A "$TMP/tty-raw")"

"$DISAGENT" read -c "$TMP/agent.ini" s1 --max 2 >"$TMP/pipe" ||
	fail "read into a file exited $?"
printf 'evil \033]0;PWNED\007\033[2J end\tok\n\346\227\245\345\277\227\n' |
    cmp - "$TMP/pipe" || fail "read into a file changed the bytes"

on_tty "$TMP/verify" "$DISAGENT" verify -c "$TMP/agent.ini" \
    "$TMP/logs/$name" || fail "verify on a terminal exited $?"
if grep -q "$esc" "$TMP/verify"; then
	fail "verify wrote control characters: $(cat -A "$TMP/verify")"
fi
grep -qF 'logs/a\x1b[2Jb.log (flow app' "$TMP/verify" ||
	fail "verify on a terminal: $(cat -A "$TMP/verify")"
pass
