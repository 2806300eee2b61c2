#!/bin/sh
# The soak test (tests/soak) for two minutes: the real agent against the
# test endpoint with injected faults, logrotate-style rotation, and SIGKILL
# or SIGTERM every 5-15 s; every line written must arrive, and duplicates
# stay within the bound the soak computes.  SOAK_SECONDS and SOAK_SEED
# override the length and the seed (the seed is printed either way).
# Environment (set by `make check`): top_srcdir, DISAGENT, PYTHON3, OPENSSL.
# Exit 0 pass, 1 fail (work directory kept and named), 77 without python3.
set -u

: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${PYTHON3:=python3}"
: "${OPENSSL:=openssl}"
: "${DISAGENT:=$top_srcdir/src/disagent}"
export top_srcdir DISAGENT PYTHON3 OPENSSL

if ! "$PYTHON3" -c 'import ssl, http.server' 2>/dev/null; then
	echo "SKIP: no usable python3 ($PYTHON3)"
	exit 77
fi
set -- --seconds "${SOAK_SECONDS:-120}"
[ -n "${SOAK_SEED:-}" ] && set -- "$@" --seed "$SOAK_SEED"
exec "$PYTHON3" "$top_srcdir/tests/soak" "$@"
