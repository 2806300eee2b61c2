#!/bin/sh
# disagent --import-yml turns the DIS Agent's agent.yml (tests/data/agent.yml)
# into an agent.ini that `disagent -t` accepts, notes on stderr each key it
# could not carry over and then the import-state command to run next, never
# shows a secret in a note, works for a file
# without credentials once DIS_AK/DIS_SK are set, and fails with exit 1, the
# line number and no output on invalid YAML.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

yml=$top_srcdir/tests/data/agent.yml
"$DISAGENT" --import-yml "$yml" >"$TMP/out.ini" 2>"$TMP/notes" ||
	fail "--import-yml exited $? for $yml"
own_state_unless_default_usable "$TMP/out.ini"
env -u DIS_AK -u DIS_SK "$DISAGENT" -t -c "$TMP/out.ini" >"$TMP/t.out" 2>&1 ||
	fail "the imported file does not pass -t: $(cat "$TMP/t.out")"
grep -q "configuration OK (2 flows)" "$TMP/t.out" || fail "-t: $(cat "$TMP/t.out")"
grep -q '^\[flow:app-logs\]$' "$TMP/out.ini" || fail "no [flow:app-logs]"
grep -q '^\[flow:nginx-access\]$' "$TMP/out.ini" || fail "no [flow:nginx-access]"
grep -q '^maxFileCheckingMillis = 500$' "$TMP/out.ini" ||
	fail "maxFileCheckingMillis was not carried over"
grep -q '^multiLineStartPattern = ^\\d{4}-\\d{2}-\\d{2}$' "$TMP/out.ini" ||
	fail "multiLineStartPattern was not carried over"
grep -qx 'data.encrypt.enabled = true' "$TMP/out.ini" ||
	fail "dataEncryptEnabled was not carried over"
grep -qx 'data.password = p@ssw0rd-not-to-be-shown' "$TMP/out.ini" ||
	fail "dataPassword was not carried over"
grep -q 'agent.yml:29: dropped: useHttpGzip = true' "$TMP/notes" ||
	fail "no note for the dead key useHttpGzip"
grep -q 'agent.yml: 4 keys not carried over, 1 dropped' "$TMP/notes" ||
	fail "no summary on stderr: $(cat "$TMP/notes")"
# Last, what to run next: the DIS Agent's checkpointFile into the state.
tail -n 1 "$TMP/notes" | grep -q 'carry its positions over .*: disagent import-state -c [^ ]*/agent.ini /opt/dis-agent/data/dis-agent_since.db$' ||
	fail "no import-state command last on stderr: $(tail -n 1 "$TMP/notes")"
if grep -q 'p@ssw0rd' "$TMP/notes"; then
	fail "dataPassword appears in the notes"
fi

# Credentials from the environment instead of the file.
grep -v '^ak:\|^sk:' "$yml" >"$TMP/nokeys.yml"
"$DISAGENT" --import-yml "$TMP/nokeys.yml" >"$TMP/nokeys.ini" 2>/dev/null ||
	fail "--import-yml exited $? without ak and sk"
own_state_unless_default_usable "$TMP/nokeys.ini"
rc=0
env -u DIS_AK -u DIS_SK "$DISAGENT" -t -c "$TMP/nokeys.ini" >/dev/null 2>&1 ||
	rc=$?
[ "$rc" = 1 ] || fail "-t without any credentials exited $rc, not 1"
DIS_AK=$E2E_AK DIS_SK=$E2E_SK "$DISAGENT" -t -c "$TMP/nokeys.ini" \
    >/dev/null || fail "-t with DIS_AK and DIS_SK set failed"

# Invalid YAML: exit 1 with FILE:LINE:COLUMN, nothing on stdout.
printf 'region: cn-north-1\nflows:\n  - DISStream: s: t\n' >"$TMP/bad.yml"
rc=0
"$DISAGENT" --import-yml "$TMP/bad.yml" >"$TMP/bad.out" 2>"$TMP/bad.err" ||
	rc=$?
[ "$rc" = 1 ] || fail "invalid YAML exited $rc, not 1"
grep -q "^$TMP/bad.yml:3:17: " "$TMP/bad.err" ||
	fail "no line number: $(cat "$TMP/bad.err")"
[ ! -s "$TMP/bad.out" ] || fail "output written for invalid YAML"
rc=0
"$DISAGENT" --import-yml "$TMP/missing.yml" >/dev/null 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "a missing file exited $rc, not 1"
pass
