#!/bin/sh
# One owner per struct: no file writes a field of a struct defined in
# another folder of src/, but those src/PARAMS lists with the reason.
# The check itself is checked: in a copy of src/, a planted write to
# another folder's struct must fail it, named by file and line, while a
# write to a listed struct and one to the folder's own struct pass.
set -eu
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${PYTHON3:=python3}"
check=$top_srcdir/tests/fieldwrites.py

"$PYTHON3" "$check" "$top_srcdir/src" || {
	echo "FAIL: a file writes another folder's struct (above)" >&2
	exit 1
}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/disagent-fieldwrites.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cp -r "$top_srcdir/src" "$tmp/src"
f=$tmp/src/agent/progress.c
n=$(($(wc -l <"$f") + 6))	# the line of b->len = 0 below
cat >>"$f" <<'C'

void	planted(struct buf *, struct tailer_quiet *, struct progress *);
void
planted(struct buf *b, struct tailer_quiet *q, struct progress *s)
{
	b->len = 0;
	q->miss_last = true;
	s->nlast_failed++;
}
C
rc=0
"$PYTHON3" "$check" "$tmp/src" >"$tmp/out" 2>&1 || rc=$?
[ "$rc" = 1 ] || { echo "FAIL: a planted write exits $rc, not 1" >&2; cat "$tmp/out" >&2; exit 1; }
want="agent/progress.c:$n: writes struct buf (base/) field len"
grep -qxF "$want" "$tmp/out" || {
	echo "FAIL: the planted write is not named as $want:" >&2
	cat "$tmp/out" >&2
	exit 1
}
[ "$(wc -l <"$tmp/out")" = 1 ] || {
	echo "FAIL: more than the planted write reported:" >&2
	cat "$tmp/out" >&2
	exit 1
}
# A struct PARAMS names that is defined nowhere is an error of its own.
echo "no_such_struct	planted" >>"$tmp/src/PARAMS"
rc=0
"$PYTHON3" "$check" "$tmp/src" >"$tmp/out" 2>&1 || rc=$?
[ "$rc" = 2 ] && grep -q "struct no_such_struct is defined nowhere" "$tmp/out" || {
	echo "FAIL: a stale PARAMS line is not refused" >&2; cat "$tmp/out" >&2; exit 1; }
echo "PASS: fieldwrites"
