#!/bin/sh
# `disagent -t` rejects each class of bad file with FILE:LINE: message and
# exit 1, and never prints the secret key.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

SECRET=TopSecretValue42
good() {
	cat <<EOF2
[agent]
region = cn-north-1
projectId = p
ak = a
sk = $SECRET

[flow:app]
DISStream = s
filePattern = /var/log/app/*.log
EOF2
}

# expect FILE-CONTENT-CMD EXPECTED-MESSAGE
expect() {
	_n=$((${_n:-0} + 1))
	_f="$TMP/bad$_n.ini"
	eval "$1" >"$_f"
	_rc=0
	"$DISAGENT" -t -c "$_f" >"$TMP/out" 2>&1 || _rc=$?
	[ "$_rc" = 1 ] || fail "case $_n: exit $_rc, not 1"
	_want="$_f:$2"
	grep -qxF -- "$_want" "$TMP/out" ||
		fail "case $_n: got '$(cat "$TMP/out")', want '$_want'"
	if grep -q "$SECRET" "$TMP/out"; then fail "case $_n: secret printed"; fi
}

good >"$TMP/good.ini"
"$DISAGENT" -t -c "$TMP/good.ini" >/dev/null || fail "good file rejected"

expect "good; echo 'fooBar = 1'" \
	"10: unknown key 'fooBar' in [flow:app]"
expect "good; echo 'maxBufferAgeMillis = 5'" \
	"10: maxBufferAgeMillis = 5 is out of range (100..900000)"
expect "good | sed '/^filePattern/d'" \
	"7: [flow:app] is missing required key 'filePattern'"
expect "good; echo '[flow:app]'; echo 'DISStream = t'; echo 'filePattern = /x/*.log'" \
	"10: duplicate section [flow:app] (first at line 7)"
expect "good | sed 's/^sk = .*/sk = $SECRET/; s/^ak = a/sk = other/'" \
	"5: duplicate key 'sk' in [agent] (first at line 4)"
pass
