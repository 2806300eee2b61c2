# Helpers of the journal tests, sourced after lib.sh: journal files made
# without a running journald, from entries in systemd's export format
# (tests/journal_export.py) through systemd-journal-remote, which configure
# found outside PATH ($JOURNAL_REMOTE; package systemd-journal-remote).

[ -x "$JOURNAL_REMOTE" ] ||
	fail "systemd-journal-remote not found at '$JOURNAL_REMOTE': install the package systemd-journal-remote (scripts/deps --test) and run configure again"

# journal_entries FILE TAG FROM TO [journal_export.py options...]: append
# the entries FROM..TO-1 to the journal file FILE (made if missing).
journal_entries() {
	_jf=$1; shift
	"$PYTHON3" "$top_srcdir/tests/journal_export.py" "$@" |
	    "$JOURNAL_REMOTE" --output="$_jf" - 2>>"$TMP/journal-remote.log" ||
		fail "systemd-journal-remote could not write $_jf"
}

# add_journal_flow FILE NAME STREAM DIR [extra lines...]: a flow reading
# the journal files of DIR; maxBufferAgeMillis is 200.
add_journal_flow() {
	_f=$1; _n=$2; _s=$3; _d=$4; shift 4
	{
		echo
		echo "[flow:$_n]"
		echo "DISStream = $_s"
		echo "source = journal"
		echo "journalDirectory = $_d"
		echo "maxBufferAgeMillis = 200"
		for _l in "$@"; do echo "$_l"; done
	} >>"$_f"
}
