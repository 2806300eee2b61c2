#!/bin/sh
# What disagent(8) and operations.md say the agent does, it does: every
# default disagent(8) gives in a "KEY (default VALUE)" is the key table's
# (the sample file's), and -t catches the mistakes operations.md says it
# catches (a filePattern ending in '/').
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

"$DISAGENT" --sample-config >"$TMP/sample.ini"
"$PYTHON3" - "$top_srcdir/docs/disagent.8" "$TMP/sample.ini" <<'PY' ||
import re, sys
page, sample = open(sys.argv[1]).read(), open(sys.argv[2]).read()
defaults = dict(re.findall(r"^;?([\w.]+) = (.*)$", sample, re.M))
units = {"seconds": 1000, "second": 1000, "MiB": 1 << 20, "KiB": 1 << 10}
bad, seen = [], 0
for key, text in re.findall(r"^\.BR? ([\w.]+)\s*\n\(default ([^)]*)\)", page,
                            re.M):
    if key not in defaults:
        continue
    seen += 1
    m = re.match(r"(\d+)(?: (\w+))?$", text)
    if m is None:
        bad.append("%s: cannot read '(default %s)'" % (key, text))
        continue
    n, unit = int(m.group(1)), m.group(2)
    if unit in ("seconds", "second") and key.endswith("Seconds"):
        unit = None
    got = n * units.get(unit, 1) if unit else n
    if str(got) != defaults[key]:
        bad.append("%s: disagent(8) says %s, the agent's default is %s" %
                   (key, text, defaults[key]))
if seen < 3:
    bad.append("only %d defaults found in disagent(8)" % seen)
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
PY
	fail "disagent(8) gives defaults the agent does not have"

# operations.md: -t refuses a filePattern that names a directory.
cat >"$TMP/dir.ini" <<EOF
[agent]
region = cn-north-1
projectId = $E2E_PID
ak = $E2E_AK
sk = $E2E_SK
checkpointFile = $TMP/state/state.json

[flow:app]
DISStream = s1
filePattern = $TMP/logs/
EOF
chmod 600 "$TMP/dir.ini"
rc=0; "$DISAGENT" -t -c "$TMP/dir.ini" >"$TMP/t.out" 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "-t accepted filePattern = $TMP/logs/"
grep -q "^$TMP/dir.ini:10: filePattern = $TMP/logs/ must name files" \
    "$TMP/t.out" || fail "-t: $(cat "$TMP/t.out")"
if grep -q "disagent -t. does not catch" "$top_srcdir/docs/operations.md"; then
	fail "operations.md says -t does not catch what it catches"
fi
pass
