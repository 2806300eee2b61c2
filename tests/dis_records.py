#!/usr/bin/env python3
"""Inspect the records file written by tests/dis_server.py.

The records file holds one JSON object per accepted record:
  {"stream","partition_id","sequence_number","partition_key","data","req"}
with "data" the Base64 text the client sent.  Only complete ("\\n"-ended)
lines are read, so the file may be read while the server appends to it.

Commands:
  verify --records F --stream S --expect FILE [--expect FILE ...]
         [--ordered] [--allow-duplicates]
      The expected records are the complete lines of each FILE (a final line
      without "\\n" is not expected).  Compares them, as a multiset, with the
      decoded data of the accepted records of stream S; prints
        expected N, received M, missing A, duplicated B, unexpected C,
        out_of_order D
      and up to 5 examples of each problem.  Exit 0 only when A, C, B
      (unless --allow-duplicates) and D (only with --ordered) are 0.
      duplicated counts extra copies; out_of_order counts records of an
      expected file whose first arrival came after that of a later line of
      the same file.  Lines must be unique across all expected files.
  exact --records F --stream S --expected JSON
      The decoded records of S, in arrival order, must equal the JSON file's
      list exactly (each item a string, compared as UTF-8 bytes, or
      {"hex": "..."} for arbitrary bytes).  Prints the first difference.
  dump --records F --stream S [--partition P] [--ids]
      The decoded records of S, each followed by "\\n", in partition order
      and sequence order within each partition (what `disagent read`
      prints from TRIM_HORIZON); with --ids "PARTITION SEQUENCE" lines.
  count --records F [--stream S]          number of accepted records
  show --records F [--stream S] [-n 5] [--tail]
                                          a few decoded records (repr)
  wait --records F --stream S --count N [--timeout 60]
      polls until at least N records of S arrived (exit 0) or the timeout
      passes (exit 1, printing how many arrived).
Exit status 2 on usage or input errors.
"""

import argparse
import base64
import json
import os
import sys
import time

EXAMPLES = 5


class InputError(Exception):
    pass


def iter_lines(path, offset=0):
    """Yield (record dict or None for a blank line, end offset) for every
    complete line from offset on; nothing when the file does not exist."""
    try:
        fp = open(path, "rb")
    except FileNotFoundError:
        return
    with fp:
        fp.seek(offset)
        data = fp.read()
    end = data.rfind(b"\n")
    if end < 0:
        return
    pos = offset
    for line in data[:end].split(b"\n"):
        start = pos
        pos += len(line) + 1
        if not line.strip():
            yield None, pos
            continue
        try:
            yield json.loads(line), pos
        except ValueError:
            raise InputError("%s: malformed line at byte %d" % (path, start))


def iter_records(path, stream=None):
    """Yield the accepted records (dicts) of stream (None: all streams)."""
    for rec, _ in iter_lines(path):
        if rec is not None and (stream is None or
                                rec.get("stream") == stream):
            yield rec


def count_lines(path, stream=None, offset=0):
    """(records of stream in complete lines from offset, new offset).

    Fast path for the server's compact lines, which begin with
    {"stream":"NAME", (stream names need no JSON escapes); lines in any
    other form are parsed as JSON.
    """
    try:
        fp = open(path, "rb")
    except FileNotFoundError:
        return 0, offset
    with fp:
        fp.seek(offset)
        data = fp.read()
    end = data.rfind(b"\n")
    if end < 0:
        return 0, offset
    compact = b'{"stream":"'
    want = None if stream is None else \
        b'{"stream":' + json.dumps(stream).encode() + b","
    n = 0
    for line in data[:end].split(b"\n"):
        if not line.strip():
            continue
        if want is None or line.startswith(want):
            n += 1
        elif line.startswith(compact):
            pass    # a compact line of another stream
        else:
            try:
                n += json.loads(line).get("stream") == stream
            except ValueError:
                raise InputError("%s: malformed line" % path)
    return n, offset + end + 1


def decoded(rec):
    return base64.b64decode(rec.get("data", ""))


def short(b, width=100):
    """repr of bytes, shortened for one line."""
    r = repr(b)
    if len(r) > width:
        r = r[:width - 3] + "..."
    return r


def read_expected(paths):
    """Map line bytes -> (file index, line index); raise on duplicates."""
    where = {}
    counts = []
    for fi, path in enumerate(paths):
        try:
            with open(path, "rb") as fp:
                data = fp.read()
        except OSError as e:
            raise InputError("cannot read %s: %s" % (path, e))
        lines = data.split(b"\n")[:-1]
        for li, line in enumerate(lines):
            if line in where:
                ofi, oli = where[line]
                raise InputError("expected line %s occurs twice (%s:%d and "
                                 "%s:%d)" % (short(line), paths[ofi], oli + 1,
                                             path, li + 1))
            where[line] = (fi, li)
        counts.append(len(lines))
    return where, counts


def cmd_verify(args):
    where, counts = read_expected(args.expect)
    seen = {}
    arrivals = [[] for _ in args.expect]
    unexpected = []
    nunexpected = 0
    received = 0
    for rec in iter_records(args.records, args.stream):
        received += 1
        data = decoded(rec)
        pos = where.get(data)
        if pos is None:
            nunexpected += 1
            if len(unexpected) < EXAMPLES:
                unexpected.append(data)
            continue
        n = seen.get(data, 0)
        seen[data] = n + 1
        if n == 0:
            arrivals[pos[0]].append(pos[1])
    expected = sum(counts)
    missing = [line for line in where if line not in seen]
    dups = [(line, n - 1) for line, n in seen.items() if n > 1]
    ndup = sum(n for _, n in dups)
    disorder = []
    nooo = 0
    for fi, arr in enumerate(arrivals):
        hi = -1
        for li in arr:
            if li < hi:
                nooo += 1
                if len(disorder) < EXAMPLES:
                    disorder.append((fi, li, hi))
            else:
                hi = li
    print("expected %d, received %d, missing %d, duplicated %d, "
          "unexpected %d, out_of_order %d" % (expected, received,
                                              len(missing), ndup,
                                              nunexpected, nooo))
    missing.sort(key=lambda line: where[line])
    for line in missing[:EXAMPLES]:
        fi, li = where[line]
        print("  missing %s:%d %s" % (args.expect[fi], li + 1, short(line)))
    for line, n in dups[:EXAMPLES]:
        print("  duplicated x%d %s" % (n, short(line)))
    for data in unexpected:
        print("  unexpected %s" % short(data))
    for fi, li, hi in disorder:
        print("  out_of_order %s:%d arrived after line %d" % (
            args.expect[fi], li + 1, hi + 1))
    ok = not missing and not nunexpected
    ok = ok and (args.allow_duplicates or ndup == 0)
    ok = ok and (not args.ordered or nooo == 0)
    return 0 if ok else 1


def cmd_exact(args):
    with open(args.expected, encoding="utf-8") as fp:
        items = json.load(fp)
    want = [bytes.fromhex(x["hex"]) if isinstance(x, dict)
            else x.encode("utf-8") for x in items]
    got = [decoded(r) for r in iter_records(args.records, args.stream)]
    for i, (w, g) in enumerate(zip(want, got)):
        if w != g:
            print("record %d differs: got %s, want %s"
                  % (i, short(g, 200), short(w, 200)))
            return 1
    if len(want) != len(got):
        print("expected %d records, received %d%s" % (
            len(want), len(got),
            "; first extra: " + short(got[len(want)], 200)
            if len(got) > len(want) else ""))
        return 1
    print("all %d records as expected" % len(got))
    return 0


def cmd_dump(args):
    recs = [r for r in iter_records(args.records, args.stream)
            if args.partition is None or r.get("partition_id") ==
            args.partition]
    recs.sort(key=lambda r: (r.get("partition_id"),
                             int(r.get("sequence_number"))))
    out = sys.stdout.buffer
    for r in recs:
        if args.ids:
            out.write(("%s %s\n" % (r.get("partition_id"),
                                    r.get("sequence_number"))).encode())
        else:
            out.write(decoded(r) + b"\n")
    return 0


def cmd_count(args):
    print(count_lines(args.records, args.stream)[0])
    return 0


def cmd_show(args):
    recs = list(iter_records(args.records, args.stream))
    recs = recs[-args.n:] if args.tail else recs[:args.n]
    for r in recs:
        print("%s %s seq=%s key=%s req=%s %s" % (
            r.get("stream"), r.get("partition_id"), r.get("sequence_number"),
            r.get("partition_key"), r.get("req"), short(decoded(r), 200)))
    return 0


def cmd_wait(args):
    deadline = time.monotonic() + args.timeout
    n, offset = 0, 0
    while True:
        k, offset = count_lines(args.records, args.stream, offset)
        n += k
        if n >= args.count:
            print("%d records of %s arrived" % (n, args.stream))
            return 0
        if time.monotonic() >= deadline:
            print("timeout: %d of %d records of %s arrived"
                  % (n, args.count, args.stream))
            return 1
        time.sleep(0.1)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    v = sub.add_parser("verify", help="compare with expected files")
    v.add_argument("--records", required=True)
    v.add_argument("--stream", required=True)
    v.add_argument("--expect", action="append", required=True)
    v.add_argument("--ordered", action="store_true")
    v.add_argument("--allow-duplicates", action="store_true")
    x = sub.add_parser("exact", help="records equal a JSON list, in order")
    x.add_argument("--records", required=True)
    x.add_argument("--stream", required=True)
    x.add_argument("--expected", required=True)
    d = sub.add_parser("dump", help="decoded records in partition order")
    d.add_argument("--records", required=True)
    d.add_argument("--stream", required=True)
    d.add_argument("--partition")
    d.add_argument("--ids", action="store_true")
    c = sub.add_parser("count", help="count accepted records")
    c.add_argument("--records", required=True)
    c.add_argument("--stream")
    s = sub.add_parser("show", help="print a few decoded records")
    s.add_argument("--records", required=True)
    s.add_argument("--stream")
    s.add_argument("-n", type=int, default=5)
    s.add_argument("--tail", action="store_true")
    w = sub.add_parser("wait", help="wait for N records")
    w.add_argument("--records", required=True)
    w.add_argument("--stream", required=True)
    w.add_argument("--count", type=int, required=True)
    w.add_argument("--timeout", type=float, default=60.0)
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    cmds = {"verify": cmd_verify, "count": cmd_count, "show": cmd_show,
            "dump": cmd_dump,
            "wait": cmd_wait, "exact": cmd_exact}
    try:
        return cmds[args.cmd](args)
    except InputError as e:
        print("dis_records: %s" % e, file=sys.stderr)
        return 2
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
