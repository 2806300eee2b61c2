#!/usr/bin/env python3
"""Journal entries in systemd's export format, for systemd-journal-remote.

  journal_export.py TAG FROM TO [--ident NAME] [--unit UNIT]
                    [--priority N] [--expect FILE] [--binary-every N]
                    [--no-message-every N]

writes to stdout the entries FROM..TO-1, each with
  MESSAGE=TAG NNNNNNN payload
  SYSLOG_IDENTIFIER=NAME (default TAG), _SYSTEMD_UNIT=UNIT (if given),
  PRIORITY=N (default 6), _HOSTNAME=e2e-host, _PID=4242,
  _BOOT_ID (fixed), __REALTIME_TIMESTAMP and __MONOTONIC_TIMESTAMP growing
  with N (1 ms apart, from 2023-11-14T22:13:20Z), so that the entries of
  later calls sort after those of earlier ones in any file;
and appends each MESSAGE as one line to --expect FILE.  --binary-every N
gives every Nth entry a message with an embedded newline, written in the
binary form of the format (and to FILE with the newline as "|");
--no-message-every N leaves the MESSAGE field out of every Nth entry (and
out of FILE).  Pipe it into
  systemd-journal-remote --output=DIR/NAME.journal -
to get a journal file without a running journald.
"""

import argparse
import struct
import sys

BOOT = "0123456789abcdef0123456789abcdef"
BASE_US = 1700000000000000


def field(out, name, value):
    value = value.encode() if isinstance(value, str) else value
    if b"\n" in value:
        out.write(name.encode() + b"\n" + struct.pack("<Q", len(value)) +
                  value + b"\n")
    else:
        out.write(name.encode() + b"=" + value + b"\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tag")
    ap.add_argument("first", type=int)
    ap.add_argument("end", type=int)
    ap.add_argument("--ident")
    ap.add_argument("--unit")
    ap.add_argument("--priority", default="6")
    ap.add_argument("--expect")
    ap.add_argument("--binary-every", type=int, default=0)
    ap.add_argument("--no-message-every", type=int, default=0)
    a = ap.parse_args()
    out = sys.stdout.buffer
    exp = open(a.expect, "a") if a.expect else None
    for i in range(a.first, a.end):
        msg = "%s %07d payload" % (a.tag, i)
        if a.binary_every and i % a.binary_every == 0:
            msg += "\nsecond line"
        field(out, "__REALTIME_TIMESTAMP", str(BASE_US + i * 1000))
        field(out, "__MONOTONIC_TIMESTAMP", str(1000000 + i * 1000))
        field(out, "_BOOT_ID", BOOT)
        if not (a.no_message_every and i % a.no_message_every == 0):
            field(out, "MESSAGE", msg)
            if exp:
                exp.write(msg.replace("\n", "|") + "\n")
        field(out, "SYSLOG_IDENTIFIER", a.ident or a.tag)
        if a.unit:
            field(out, "_SYSTEMD_UNIT", a.unit)
        field(out, "PRIORITY", a.priority)
        field(out, "_HOSTNAME", "e2e-host")
        field(out, "_PID", "4242")
        out.write(b"\n")
    if exp:
        exp.close()


if __name__ == "__main__":
    main()
