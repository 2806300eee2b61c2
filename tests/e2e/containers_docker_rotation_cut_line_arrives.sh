#!/bin/sh
# Docker's json-file rotation (max-size) cut a 40 KiB line: its first two
# 16 KiB partials end -json.log.1, the rest starts the new -json.log (the
# bytes dockerd 20.10 wrote, tests/fixtures/containers).  Every byte of
# the line must arrive, once: the 32 KiB the rotated file ends with are
# sent when that file goes quiet (multiLineFlushMillis), before the file is
# let go, and the 8 KiB that start the new file are a record of their own.
# Before, a file gone from its path was closed with its unfinished partial
# line still in the framer, and those 32 KiB were lost.
CUT_LINE=1
export CUT_LINE
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/containers_fixture_replay.sh"
