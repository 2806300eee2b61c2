#!/bin/sh
# The sample configuration is what the key table generates, it passes
# `disagent -t`, and the basic command-line options behave.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

"$DISAGENT" --sample-config >"$TMP/sample.ini"
cmp "$TMP/sample.ini" "$top_srcdir/etc/agent.ini" ||
	fail "etc/agent.ini differs from disagent --sample-config"
# The sample needs credentials; its other values are valid as they stand
# (checkpointFile's default where this user cannot make /var/lib/disagent).
cp "$top_srcdir/etc/agent.ini" "$TMP/agent.ini"
own_state_unless_default_usable "$TMP/agent.ini"
DIS_AK=x DIS_SK=y "$DISAGENT" -t -c "$TMP/agent.ini" >"$TMP/out" ||
	fail "the sample configuration does not pass -t"
grep -q "configuration OK" "$TMP/out" || fail "-t printed no verdict"
"$DISAGENT" -V | grep -q "^disagent [0-9]" || fail "-V"
"$DISAGENT" -h | grep -q -- "--once" || fail "-h"
rc=0; "$DISAGENT" --no-such-option 2>/dev/null || rc=$?
[ "$rc" = 2 ] || fail "an unknown option exits $rc, not 2"
pass
