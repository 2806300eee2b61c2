# The tools every test script uses, when `make check` did not set them
# (a test run by hand): top_srcdir, DISAGENT, and the PYTHON3, OPENSSL and
# JOURNAL_REMOTE (systemd-journal-remote) that configure found, read from the build's tests/e2e/config.sh -- never
# the first python3 on PATH, which may lack python3-lz4 and
# python3-zstandard.  Sourced by lib.sh and the scripts that do not use it.

: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
if [ -z "${DISAGENT:-}" ]; then
	DISAGENT=$top_srcdir/src/disagent
	[ -x "$DISAGENT" ] || [ ! -x "$top_srcdir/build/src/disagent" ] ||
		DISAGENT=$top_srcdir/build/src/disagent
fi
if [ -z "${PYTHON3:-}" ]; then
	for _cfg in "${top_builddir:-/nonexistent}/tests/e2e/config.sh" \
	    "$(dirname "$DISAGENT")/../tests/e2e/config.sh"; do
		if [ -f "$_cfg" ]; then
			. "$_cfg"
			break
		fi
	done
fi
# configure's own first choice, when no build says otherwise.
: "${PYTHON3:=/usr/bin/python3}"
: "${OPENSSL:=openssl}"
: "${JOURNAL_REMOTE:=/lib/systemd/systemd-journal-remote}"
export top_srcdir DISAGENT PYTHON3 OPENSSL JOURNAL_REMOTE
