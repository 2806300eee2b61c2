#!/bin/sh
# Inode reuse (R5).  While the agent runs, a 2,000-line file and a 10-byte
# file (shorter than the 512-byte fingerprint) arrive.  The agent is
# stopped; both files are deleted and new files with other contents are
# created under the same names that get the same inodes (ext4 hands a freed
# inode out again at once): a larger one, so no size check can tell, and
# again exactly 10 bytes, the committed offset.  After a restart both new
# files are read from 0 and arrive whole, and nothing old is sent again.
# /tmp is often a tmpfs, which never reuses inode numbers: work in the
# build tree, which is on the disk the build uses.
[ -n "${top_builddir:-}" ] && [ -d "$top_builddir" ] && TMPDIR=$top_builddir &&
	export TMPDIR
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/rotate_lib.sh"

# reuse_inode PATH CONTENT: delete PATH and create it again from the file
# CONTENT, with the same inode number.  Exit 3 if the file system does not
# hand the inode out again.
reuse_inode() {
	"$PYTHON3" - "$1" "$2" <<'PY'
import os, shutil, sys
path, content = sys.argv[1], sys.argv[2]
d = os.path.dirname(path)
ino = os.stat(path).st_ino
os.unlink(path)
tries = []
for i in range(2000):
    cand = os.path.join(d, ".reuse-%d" % i)
    fd = os.open(cand, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    got = os.fstat(fd).st_ino
    os.close(fd)
    if got == ino:
        shutil.copyfile(content, cand)
        os.rename(cand, path)
        break
    tries.append(cand)
else:
    sys.exit(3)
for cand in tries:
    os.unlink(cand)
PY
}

start_server --stream s1
mkdir -p "$TMP/logs" "$TMP/expect"
write_lines "$TMP/logs/a.log" A 0 2000
printf 'tiny-0001\n' >"$TMP/logs/tiny.log"
write_conf "$TMP/agent.ini"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/*.log" "ordered = true"

start_agent "$TMP/agent.ini"
await_records s1 30 "$TMP/logs/a.log" "$TMP/logs/tiny.log"
count_at_least s1 2001 || fail "the first files did not arrive"
stop_agent
cp "$TMP/logs/a.log" "$TMP/expect/old-a.log"
cp "$TMP/logs/tiny.log" "$TMP/expect/old-tiny.log"
ino_a=$(stat -c %i "$TMP/logs/a.log")
ino_t=$(stat -c %i "$TMP/logs/tiny.log")

write_lines "$TMP/new-a.log" B 0 3000
printf 'tinY-0002\n' >"$TMP/new-tiny.log"
rc=0
reuse_inode "$TMP/logs/tiny.log" "$TMP/new-tiny.log" || rc=$?
[ "$rc" = 0 ] && { reuse_inode "$TMP/logs/a.log" "$TMP/new-a.log" || rc=$?; }
[ "$rc" = 3 ] && skip "this file system does not reuse inode numbers"
[ "$rc" = 0 ] || fail "could not set up the inode reuse"
[ "$(stat -c %i "$TMP/logs/a.log")" = "$ino_a" ] || fail "a.log inode differs"
[ "$(stat -c %i "$TMP/logs/tiny.log")" = "$ino_t" ] ||
	fail "tiny.log inode differs"

start_agent "$TMP/agent.ini"
set -- "$TMP/expect/old-a.log" "$TMP/expect/old-tiny.log" \
    "$TMP/logs/a.log" "$TMP/logs/tiny.log"
await_records s1 30 "$@"
wait_progress 2
stop_agent
check_records s1 "$@"
pass
