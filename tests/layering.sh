#!/bin/sh
# src/ keeps its layers (src/LAYERS): every #include "folder/x.h" points to
# the file's own folder or one LAYERS puts below it, no more than three
# files of a folder call one another in a circle, and no file of it is
# over 750 lines.  The check itself is
# checked: an upward include planted in a copy of src/ must fail it, named
# by file and line.
set -eu
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${PYTHON3:=python3}"
check=$top_srcdir/tests/layering.py

"$PYTHON3" "$check" "$top_srcdir/src" || {
	echo "FAIL: an include goes against src/LAYERS (above)" >&2
	exit 1
}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/disagent-layering.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cp -r "$top_srcdir/src" "$tmp/src"
# A build in the source tree (./configure && make, as dpkg-buildpackage
# does) leaves automake's src/.deps and .dirstamp files: not layers, and
# no failure (issue 37).
mkdir -p "$tmp/src/.deps" "$tmp/src/base/.deps"
: >"$tmp/src/.deps/disagent-main.Po"
: >"$tmp/src/.dirstamp"
: >"$tmp/src/base/.dirstamp"
"$PYTHON3" "$check" "$tmp/src" >"$tmp/out" 2>&1 || {
	echo "FAIL: a build's src/.deps and .dirstamp files are refused:" >&2
	cat "$tmp/out" >&2
	exit 1
}
# base/ is the bottom layer: it may include no other folder.
line=$(grep -n '^#include "base/log.h"' "$tmp/src/base/log.c" | head -n 1 |
    cut -d: -f1)
[ -n "$line" ] || { echo "FAIL: base/log.c has no include to plant at" >&2; exit 1; }
sed -i "${line}a #include \"agent/agent.h\"" "$tmp/src/base/log.c"
rc=0
"$PYTHON3" "$check" "$tmp/src" >"$tmp/out" 2>&1 || rc=$?
[ "$rc" = 1 ] || { echo "FAIL: a planted upward include exits $rc, not 1" >&2; exit 1; }
want="$tmp/src/base/log.c:$((line + 1)): base includes \"agent/agent.h\""
grep -qF "$want" "$tmp/out" || {
	echo "FAIL: the planted include is not named as $want:" >&2
	cat "$tmp/out" >&2
	exit 1
}
[ "$(wc -l <"$tmp/out")" = 1 ] || { echo "FAIL: more than the planted include reported:" >&2; cat "$tmp/out" >&2; exit 1; }
# A header beside main.c is refused too: only main.c sits at the top.
: >"$tmp/src/stray.h"
sed -i "$((line + 1))d" "$tmp/src/base/log.c"
rc=0
"$PYTHON3" "$check" "$tmp/src" >"$tmp/out" 2>&1 || rc=$?
[ "$rc" = 1 ] && grep -q "stray.h: only main.c" "$tmp/out" || {
	echo "FAIL: a file beside main.c is not refused" >&2; cat "$tmp/out" >&2; exit 1; }
# Four files of one folder calling one another in a circle are refused
# (issue 40), named with a call of each: escape.c made to call util.c
# closes escape -> util -> log -> escape, and util <-> pool joins them.
cp "$top_srcdir/src/base/escape.c" "$tmp/src/base/escape.c"
printf '\nvoid *esc_planted(void);\nvoid *\nesc_planted(void)\n{\n\treturn xcalloc(1, 1);\n}\n' >>"$tmp/src/base/escape.c"
rm -f "$tmp/src/stray.h"
rc=0
"$PYTHON3" "$check" "$tmp/src" >"$tmp/out" 2>&1 || rc=$?
[ "$rc" = 1 ] && grep -q "base: escape.c log.c pool.c util.c call one another in a circle of 4 files" "$tmp/out" &&
    grep -q "escape.c -> util.c (xcalloc)" "$tmp/out" || {
	echo "FAIL: a circle of four files is not refused" >&2; cat "$tmp/out" >&2; exit 1; }
# And no source file grows past 750 lines (issues 22, 40): split it by
# concept, before a feature forces a split by line count.
long=$(find "$top_srcdir/src" -name '*.[ch]' -exec wc -l {} + |
    awk '$2 != "total" && $1 > 750 { print $2 ": " $1 " lines" }')
[ -z "$long" ] || { echo "FAIL: over 750 lines:" >&2; echo "$long" >&2; exit 1; }
echo "PASS: layering"
