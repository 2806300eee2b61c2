#!/bin/sh
# The soak test (tests/soak) for two minutes (one in the sanitizer build
# and package builds): the real agent against the
# test endpoint with injected faults, logrotate-style rotation, and SIGKILL
# or SIGTERM every 5-15 s; every line written must arrive, and duplicates
# stay within the bound the soak computes.  SOAK_SECONDS and SOAK_SEED
# override the length and the seed (the seed is printed either way).
# Environment (set by `make check`, else tests/e2e/tools.sh finds them):
# top_srcdir, DISAGENT, PYTHON3, OPENSSL.
# Exit 0 pass, 1 fail (work directory kept and named).
set -u

: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$top_srcdir/tests/e2e/tools.sh"
set -- --seconds "${SOAK_SECONDS:-120}"
[ -n "${SOAK_SEED:-}" ] && set -- "$@" --seed "$SOAK_SEED"
exec "$PYTHON3" "$top_srcdir/tests/soak" "$@"
