#!/usr/bin/env python3
"""Container log files for the e2e tests of source = containers, and the
check of what arrived.

  write FILE FORMAT NS POD UID CTR TAG FROM TO
      Append lines FROM..TO-1 to FILE in FORMAT (cri or docker), as a
      runtime writes them: every 7th line is long and cut into three
      partial lines (P, P, F in CRI; "log" without "\\n" in Docker), with a
      whole stderr line written between its partials; the others are whole
      stdout lines.  The record each line must give is appended to
      FILE.expect (JSON lines; metadata from NS POD UID CTR, or "docker"
      with the container's name and image for Docker).
  partial FILE STREAM TEXT      one CRI partial line ("P"), no record
  full FILE STREAM TEXT         one CRI whole line ("F")
  check --records F --stream S EXPECT...
      The records of S, each parsed as JSON, equal the records of the
      EXPECT files as a multiset: none missing, none twice, none else.
"""

import argparse
import base64
import collections
import json
import sys

TIME = "2026-12-07T10:00:%02d.%09dZ"


def cri(stream, tag, text, i):
    return "%s %s %s %s\n" % (TIME % (i % 60, i), stream, tag, text)


def docker(stream, text, i, end):
    return json.dumps({"log": text + ("\n" if end else ""), "stream": stream,
                       "time": TIME % (i % 60, i)},
                      separators=(",", ":")) + "\n"


def meta(a):
    if a.format == "docker":
        return {"docker": {"container_id": a.uid, "container_name": a.ctr,
                           "image": a.pod}}
    return {"kubernetes": {"namespace_name": a.ns, "pod_name": a.pod,
                           "pod_id": a.uid, "container_name": a.ctr}}


def rec(i, stream, text, a):
    r = {"time": TIME % (i % 60, i), "stream": stream, "log": text}
    r.update(meta(a))
    return json.dumps(r, ensure_ascii=False) + "\n"


def write(a):
    out, exp = [], []
    for i in range(a.start, a.end):
        text = "%s %07d \u00e9 \"q\" tab\there" % (a.tag, i)
        if i % 7 != 3:
            out.append(cri("stdout", "F", text, i) if a.format == "cri"
                       else docker("stdout", text, i, True))
            exp.append(rec(i, "stdout", text, a))
            continue
        parts = [text + " " + "x" * 3000, "y" * 3000, " end %d" % i]
        err = "%s %07d error between partials" % (a.tag, i)
        for k, p in enumerate(parts):
            last = k == len(parts) - 1
            if a.format == "cri":
                out.append(cri("stdout", "F" if last else "P", p, i))
            else:
                out.append(docker("stdout", p, i, last))
            if k == 0:
                out.append(cri("stderr", "F", err, i) if a.format == "cri"
                           else docker("stderr", err, i, True))
                exp.append(rec(i, "stderr", err, a))
        exp.append(rec(i, "stdout", "".join(parts), a))
    with open(a.file, "a") as f:
        f.write("".join(out))
    with open(a.file + ".expect", "a") as f:
        f.write("".join(exp))


def one(a, tag):
    with open(a.file, "a") as f:
        f.write(cri(a.stream, tag, a.text, 0))


def check(a):
    want = collections.Counter()
    for path in a.expect:
        with open(path) as f:
            for line in f:
                want[json.dumps(json.loads(line), sort_keys=True)] += 1
    got = collections.Counter()
    with open(a.records) as f:
        for line in f:
            if not line.endswith("\n"):
                break
            r = json.loads(line)
            if r["stream"] != a.stream:
                continue
            data = base64.b64decode(r["data"]).decode("utf-8")
            try:
                key = json.dumps(json.loads(data), sort_keys=True)
            except ValueError:
                key = "NOT JSON: " + data
            got[key] += 1
    missing = want - got
    extra = got - want
    print("expected %d, received %d, missing %d, extra %d" % (
        sum(want.values()), sum(got.values()), sum(missing.values()),
        sum(extra.values())))
    for k in list(missing)[:3]:
        print("missing:", k[:300])
    for k in list(extra)[:3]:
        print("extra:", k[:300])
    return 0 if not missing and not extra else 1


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("write")
    for k in ("file", "format", "ns", "pod", "uid", "ctr", "tag"):
        w.add_argument(k)
    w.add_argument("start", type=int)
    w.add_argument("end", type=int)
    for name in ("partial", "full"):
        o = sub.add_parser(name)
        o.add_argument("file")
        o.add_argument("stream")
        o.add_argument("text")
    c = sub.add_parser("check")
    c.add_argument("--records", required=True)
    c.add_argument("--stream", required=True)
    c.add_argument("expect", nargs="+")
    a = p.parse_args()
    if a.cmd == "write":
        write(a)
    elif a.cmd == "partial":
        one(a, "P")
    elif a.cmd == "full":
        one(a, "F")
    else:
        sys.exit(check(a))


if __name__ == "__main__":
    main()
