#!/bin/sh
# Inode reuse (R5).  While the agent runs, a 2,000-line file and a 10-byte
# file (shorter than the 512-byte fingerprint) arrive.  The agent is
# stopped; both files are deleted and new files with other contents are
# created under the same names that get the same inodes (ext4 hands a freed
# inode out again at once): a larger one, so no size check can tell, and
# again exactly 10 bytes, the committed offset.  After a restart both new
# files are read from 0 and arrive whole, and nothing old is sent again.
# /tmp is often a tmpfs, which never reuses inode numbers: work in the
# build tree, which is on the disk the build uses.  There another process
# (a test running beside this one) may take the freed number first: then
# the case is made again in a new directory, up to three times.
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

# reuses_inodes DIR: whether the file system of DIR hands a freed inode
# number out again (tmpfs never does).
reuses_inodes() {
	"$PYTHON3" - "$1" <<'PY'
import os, sys
p = os.path.join(sys.argv[1], ".probe")
for _ in range(5):
    fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    ino = os.fstat(fd).st_ino
    os.close(fd)
    os.unlink(p)
    fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    again = os.fstat(fd).st_ino
    os.close(fd)
    os.unlink(p)
    if again == ino:
        sys.exit(0)
sys.exit(1)
PY
}

# attempt N: the case in $TMP/tN with stream sN and its own state file;
# 3 when the inode numbers could not be had again.
attempt() {
	D=$TMP/t$1
	S=s$1
	mkdir -p "$D/logs" "$D/expect" "$D/state"
	write_lines "$D/logs/a.log" A 0 2000
	printf 'tiny-0001\n' >"$D/logs/tiny.log"
	write_conf "$TMP/agent$1.ini"
	sed -i "s|^checkpointFile = .*|checkpointFile = $D/state/state.json|" \
	    "$TMP/agent$1.ini"
	add_flow "$TMP/agent$1.ini" app "$S" "$D/logs/*.log" "ordered = true"

	start_agent "$TMP/agent$1.ini"
	await_records "$S" 30 "$D/logs/a.log" "$D/logs/tiny.log"
	count_at_least "$S" 2001 || fail "the first files did not arrive"
	stop_agent
	cp "$D/logs/a.log" "$D/expect/old-a.log"
	cp "$D/logs/tiny.log" "$D/expect/old-tiny.log"
	ino_a=$(stat -c %i "$D/logs/a.log")
	ino_t=$(stat -c %i "$D/logs/tiny.log")

	write_lines "$D/new-a.log" B 0 3000
	printf 'tinY-0002\n' >"$D/new-tiny.log"
	_rc=0
	reuse_inode "$D/logs/tiny.log" "$D/new-tiny.log" || _rc=$?
	[ "$_rc" = 0 ] && { reuse_inode "$D/logs/a.log" "$D/new-a.log" || _rc=$?; }
	[ "$_rc" = 3 ] && return 3
	[ "$_rc" = 0 ] || fail "could not set up the inode reuse"
	[ "$(stat -c %i "$D/logs/a.log")" = "$ino_a" ] || fail "a.log inode differs"
	[ "$(stat -c %i "$D/logs/tiny.log")" = "$ino_t" ] ||
		fail "tiny.log inode differs"

	start_agent "$TMP/agent$1.ini"
	set -- "$D/expect/old-a.log" "$D/expect/old-tiny.log" \
	    "$D/logs/a.log" "$D/logs/tiny.log"
	await_records "$S" 30 "$@"
	wait_progress 2
	stop_agent
	check_records "$S" "$@"
}

start_server --stream s1 --stream s2 --stream s3
mkdir -p "$TMP/t0"
reuses_inodes "$TMP/t0" || skip "this file system does not reuse inode numbers"
n=1
while :; do
	rc=0
	attempt "$n" || rc=$?
	[ "$rc" = 3 ] || break
	echo "attempt $n: another process took a freed inode number first"
	[ "$n" -lt 3 ] || skip "other processes took the freed inode numbers 3 times"
	n=$((n + 1))
done
[ "$rc" = 0 ] || fail "attempt $n ended with status $rc"
pass
