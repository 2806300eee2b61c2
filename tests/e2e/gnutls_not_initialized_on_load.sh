#!/bin/sh
# GnuTLS is not initialized as it is loaded.  The agent never uses it
# (libcurl does TLS with OpenSSL), but Debian's libcurl links librtmp and
# libldap, which load it, and its constructor builds its ASN.1 trees and
# pages in much of its code, 0.6 MiB resident and more, unless the program
# defines _gnutls_global_init_skip() (gnutls.h's GNUTLS_SKIP_GLOBAL_INIT).
# The agent does: the constructor's call must bind to the agent's
# definition, and the agent must still ship over HTTPS.  Nothing else may
# initialize it either (libmicrohttpd's constructor would: it is loaded
# only for httpListen): gnutls_global_init() with GNUTLS_DEBUG_LEVEL set
# says "Enabled GnuTLS ... logging" on stderr, and the agent's has no
# "gnutls[" line.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

start_server --stream s1
mkdir -p "$TMP/logs"
write_lines "$TMP/logs/x.log" x 0 100
write_conf "$TMP/agent.ini"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/*.log"

GNUTLS_DEBUG_LEVEL=2 LD_DEBUG=bindings LD_DEBUG_OUTPUT="$TMP/ld" \
    "$DISAGENT" -c "$TMP/agent.ini" --once >"$TMP/agent.log" 2>&1 ||
	fail "--once exited $?"
records verify --records "$TMP/records.jsonl" --stream s1 \
    --expect "$TMP/logs/x.log" || fail "records differ"
if grep -q '^gnutls\[' "$TMP/agent.log"; then
	grep '^gnutls\[' "$TMP/agent.log" | head -n 5 >&2
	fail "GnuTLS was initialized"
fi

if ! LD_TRACE_LOADED_OBJECTS=1 "$DISAGENT" | grep -q 'libgnutls\.so'; then
	echo "libgnutls is not among the agent's libraries: nothing loads it"
	pass
	exit 0
fi
# ld.so writes one file per process: ld.PID.
cat "$TMP"/ld.* >"$TMP/bindings"
grep "_gnutls_global_init_skip" "$TMP/bindings" >&2 || true
want="binding file [^ ]*libgnutls\.so[^ ]* .* to [^ ]*disagent "
want="$want.*\`_gnutls_global_init_skip'"
grep -q "$want" "$TMP/bindings" ||
	fail "GnuTLS's _gnutls_global_init_skip is not the agent's"
pass
