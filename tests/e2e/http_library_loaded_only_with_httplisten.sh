#!/bin/sh
# libmicrohttpd is loaded (dlopen) only when httpListen is set: its
# constructor initializes GnuTLS, which the agent otherwise skips
# (gnutls_not_initialized_on_load.sh), and with MHD's own mapping that is
# about 1 MiB of RSS no agent without the server should pay.  A running
# agent without httpListen maps no libmicrohttpd and has not initialized
# GnuTLS: with GNUTLS_DEBUG_LEVEL set, gnutls_global_init() says so on
# stderr, and nothing does.  One with httpListen maps it and serves (and
# its GnuTLS, when MHD links one, says it was initialized: the check above
# would see it).  -t with httpListen and a libmicrohttpd.so.12 that cannot
# be loaded is an error naming the line and the package.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

# start_gnutls_debug CONF: start_agent with GnuTLS's debug log on stderr.
start_gnutls_debug() {
	GNUTLS_DEBUG_LEVEL=2 "$DISAGENT" -c "$1" >>"$TMP/agent.log" 2>&1 &
	AGENT_PID=$!
}

free_port() {
	"$PYTHON3" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

start_server --stream s1
mkdir -p "$TMP/logs"
write_lines "$TMP/logs/x.log" x 0 100
write_conf "$TMP/agent.ini"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/*.log"

# Without httpListen: running, shipping, and neither mapped nor GnuTLS
# initialized.
start_gnutls_debug "$TMP/agent.ini"
wait_for 60 "100 records" count_at_least s1 100
cp "/proc/$AGENT_PID/maps" "$TMP/maps" || fail "no agent"
if grep -q 'libmicrohttpd' "$TMP/maps"; then
	grep 'libmicrohttpd' "$TMP/maps" >&2
	fail "an agent without httpListen maps libmicrohttpd"
fi
if grep -q '^gnutls\[' "$TMP/agent.log"; then
	grep '^gnutls\[' "$TMP/agent.log" | head -n 5 >&2
	fail "an agent without httpListen initialized GnuTLS"
fi
stop_agent

# With httpListen: loaded, and the server answers.
HPORT=$(free_port)
write_conf "$TMP/http.ini" "httpListen = 127.0.0.1:$HPORT"
add_flow "$TMP/http.ini" app s1 "$TMP/logs/*.log"
: >"$TMP/agent.log"
start_gnutls_debug "$TMP/http.ini"
healthy() {
	[ "$(curl -s --max-time 20 "http://127.0.0.1:$HPORT/healthz")" = ok ]
}
wait_for 30 "/healthz to answer ok" healthy
cp "/proc/$AGENT_PID/maps" "$TMP/maps"
grep -q 'libmicrohttpd' "$TMP/maps" ||
	fail "an agent serving httpListen does not map libmicrohttpd"
# MHD's GnuTLS (when it links one) was initialized: the check without
# httpListen would have seen that.
if grep -q 'libgnutls' "$TMP/maps"; then
	grep -q '^gnutls\[' "$TMP/agent.log" ||
	    fail "GNUTLS_DEBUG_LEVEL shows nothing: the check proves nothing"
fi
stop_agent

# -t with httpListen and a library that cannot be loaded.
mkdir -p "$TMP/lib"
echo "not a library" >"$TMP/lib/libmicrohttpd.so.12"
rc=0
LD_LIBRARY_PATH="$TMP/lib" "$DISAGENT" -t -c "$TMP/http.ini" \
    >"$TMP/t.out" 2>&1 || rc=$?
line=$(grep -n '^httpListen' "$TMP/http.ini" | cut -d: -f1)
[ "$rc" = 1 ] && grep -q "http.ini:$line: httpListen needs libmicrohttpd: cannot load libmicrohttpd.so.12 (Debian: libmicrohttpd12, EL: libmicrohttpd)" \
    "$TMP/t.out" || fail "-t without a usable libmicrohttpd exited $rc: $(cat "$TMP/t.out")"
# Without httpListen the library is not needed.
LD_LIBRARY_PATH="$TMP/lib" "$DISAGENT" -t -c "$TMP/agent.ini" \
    >"$TMP/t.out" 2>&1 || fail "-t without httpListen: $(cat "$TMP/t.out")"
pass
