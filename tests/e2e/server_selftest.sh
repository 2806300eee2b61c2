#!/bin/sh
# Self test of the DIS test server (tests/dis_server.py), its records tool
# and the test CA script, run by `make check`.  In a fresh temporary
# directory: makes a throwaway CA, starts the server on 127.0.0.1 port 0,
# runs tests/dis_server_selftest.py against it (signing vectors, then real
# HTTPS requests), stops the server with SIGTERM and requires exit status 0.
# Environment: PYTHON3, OPENSSL, top_srcdir (tests/e2e/tools.sh finds
# them when run by hand).  Exit 0 on success, 1 on failure.
set -u

: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$top_srcdir/tests/e2e/tools.sh"
tests=$top_srcdir/tests

if ! "$PYTHON3" -c 'import ssl, http.server, lz4.block, zstandard'; then
	echo "FAIL: $PYTHON3 cannot run the test server (python3-lz4 and python3-zstandard needed)"
	exit 1
fi
if ! "$OPENSSL" version >/dev/null 2>&1; then
	echo "FAIL: no openssl ($OPENSSL)"
	exit 1
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/dis-server-selftest.XXXXXX") || exit 1
server_pid=
cleanup() {
	if [ -n "$server_pid" ]; then
		kill "$server_pid" 2>/dev/null
		wait "$server_pid" 2>/dev/null
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

fail() {
	echo "FAIL: $*"
	if [ -f "$tmp/server.log" ]; then
		echo "--- last lines of the server log:"
		tail -n 40 "$tmp/server.log"
	fi
	exit 1
}

sh "$tests/make_test_ca.sh" "$tmp/ca" || fail "make_test_ca.sh"
sh "$tests/make_test_ca.sh" "$tmp/ca" || fail "make_test_ca.sh (rerun)"
"$OPENSSL" verify -CAfile "$tmp/ca/ca.pem" "$tmp/ca/server.pem" \
    >/dev/null || fail "server certificate does not verify"

# Without lz4 (or zstandard) the endpoint refuses to start and names the
# packages, instead of answering every compressed body with an error.
for mod in lz4 zstandard; do
	rc=0
	"$PYTHON3" -c 'import runpy, sys
sys.modules[sys.argv[1]] = None		# as if not installed
path = sys.argv[2]
sys.argv = [path] + sys.argv[3:]
runpy.run_path(path, run_name="__main__")' \
	    "$mod" "$tests/dis_server.py" --cert x --key y --ak a --sk b \
	    --project-id p \
	    >"$tmp/nomod.out" 2>&1 || rc=$?
	[ "$rc" != 0 ] || fail "the endpoint started without $mod"
	grep -q "install python3-lz4 and python3-zstandard" "$tmp/nomod.out" ||
		fail "no package named without $mod: $(cat "$tmp/nomod.out")"
done

AK=SELFTESTAK
SK=selftest-secret-key
TOKEN=selftest-token
PID=0123456789abcdef0123456789abcdef

"$PYTHON3" "$tests/dis_server.py" \
    --cert "$tmp/ca/server.pem" --key "$tmp/ca/server.key" \
    --host 127.0.0.1 --port 0 --port-file "$tmp/port" \
    --ak "$AK" --sk "$SK" --token "$TOKEN" --project-id "$PID" \
    --stream app:COMMON:3 --stream adv:ADVANCED:1 --stream verify \
    --records-file "$tmp/records.jsonl" --log-file "$tmp/server.log" \
    --seed 1 &
server_pid=$!

i=0
while [ ! -s "$tmp/port" ]; do
	i=$((i + 1))
	[ $i -le 100 ] || fail "server did not write its port file in 10 s"
	kill -0 "$server_pid" 2>/dev/null || fail "server exited early"
	sleep 0.1
done
port=$(cat "$tmp/port")
echo "# server on 127.0.0.1:$port (pid $server_pid)"
grep -q "seed=1 " "$tmp/server.log" || fail "server did not log its seed"

rc=0
"$PYTHON3" "$tests/dis_server_selftest.py" --port "$port" \
    --ca "$tmp/ca/ca.pem" --records "$tmp/records.jsonl" --tmp "$tmp" \
    --project-id "$PID" --ak "$AK" --sk "$SK" --token "$TOKEN" || rc=1

kill -TERM "$server_pid"
status=0
wait "$server_pid" || status=$?
server_pid=
if [ "$status" -eq 0 ]; then
	echo "ok - server exits 0 on SIGTERM"
else
	echo "FAIL - server exit status $status after SIGTERM"
	rc=1
fi
if grep -q "Traceback" "$tmp/server.log"; then
	echo "FAIL - the server logged a traceback"
	rc=1
fi
[ "$rc" -eq 0 ] || fail "see above"
exit 0
