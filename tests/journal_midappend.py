#!/usr/bin/env python3
"""Put a journal file in the state a reader sees in the middle of an append.

  journal_midappend.py FILE FIELD=VALUE --hide | --show

journald (and systemd-journal-remote) appends an entry in steps: the entry
is linked into the file's entry array and the header's n_entries grows,
then the entry is linked into the list of each of its fields' data
objects.  A reader with a match (sd_journal_add_match) that looks between
the two steps finds the header grown but no new entry for its match.
--hide makes that state for the newest entry with FIELD=VALUE: the data
object of FIELD=VALUE counts one entry fewer (the header is left as it
is).  --show ends the append: the count is restored, and the file is
truncated to its own size, as the writer does after each entry
(journal_file_post_change), so that inotify readers get IN_MODIFY.

The journal file format: systemd's docs/JOURNAL_FILE_FORMAT.md.
"""

import argparse
import os
import struct
import sys

SIGNATURE = b"LPKSHHRH"
OBJECT_DATA = 1
INCOMPATIBLE_COMPACT = 1 << 4
COMPRESSED = 1 | 2 | 4  # XZ, LZ4, ZSTD


def find_data(buf, payload):
    """Offset of the data object holding payload (uncompressed)."""
    incompat, = struct.unpack_from("<I", buf, 12)
    compact = incompat & INCOMPATIBLE_COMPACT
    header_size, = struct.unpack_from("<Q", buf, 88)
    tail, = struct.unpack_from("<Q", buf, 136)
    off = header_size
    while 0 < off <= tail:
        otype, flags = buf[off], buf[off + 1]
        size, = struct.unpack_from("<Q", buf, off + 8)
        if size < 16:
            break
        if otype == OBJECT_DATA and not flags & COMPRESSED:
            start = off + (72 if compact else 64)
            if buf[start:off + size] == payload:
                return off
        off = (off + size + 7) & ~7
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("field")
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--hide", action="store_true")
    g.add_argument("--show", action="store_true")
    a = ap.parse_args()
    with open(a.file, "r+b") as f:
        buf = f.read()
        if buf[:8] != SIGNATURE:
            sys.exit("%s: not a journal file" % a.file)
        off = find_data(buf, a.field.encode())
        if off is None:
            sys.exit("%s: no data object %s" % (a.file, a.field))
        n, = struct.unpack_from("<Q", buf, off + 56)
        if a.hide and n == 0:
            sys.exit("%s: %s has no entry" % (a.file, a.field))
        f.seek(off + 56)
        f.write(struct.pack("<Q", n - 1 if a.hide else n + 1))
        f.flush()
        if a.show:
            os.ftruncate(f.fileno(), os.fstat(f.fileno()).st_size)


if __name__ == "__main__":
    main()
