#!/usr/bin/env python3
"""Check what a container flow delivered (containerRecord = json) against
what its containers printed.

  container_records.py --records F --stream S [--multiline java] [--ordered]
      [--omit PREFIX ...]
      --container SPEC [--container SPEC ...]

SPEC names a container and the emit.sh runs it printed, in order:
  k8s:NAMESPACE/POD/POD_UID/CONTAINER=TAG[,TAG...]
  docker:ID/NAME/IMAGE=TAG[,TAG...]
What each printed is "sh tests/fixtures/containers/emit.sh TAG", stdout and
stderr apart.  The records of stream S (tests/dis_server.py's records file)
must be JSON objects {"time","stream","log", "kubernetes": {namespace_name,
pod_name, pod_id, container_name}} or, for docker:, with "docker": {container_id,
container_name, image} (issue 38's record).  Per container and stream, the "log"
values must be exactly the lines printed, each once (with --ordered, also in
each partition in the order printed within each run: see in_order) (with
--multiline java, a Java stack trace from its exception line on is one
record, its lines joined by
"\\n"; lines starting with an --omit PREFIX are not expected, and records that
are pieces of them are passed over).  Prints a summary line; on a difference, up to 5 examples of each
kind.  Exit 0 when all match, 1 otherwise, 2 on usage errors.
"""

import argparse
import base64
import itertools
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
EMIT = os.path.join(HERE, "fixtures", "containers", "emit.sh")
# A trace's lines after its exception line (Fluent Bit's java rule: the
# exception line starts the record; the log line before it is its own).
CONT = ("\tat ", "Caused by:", "\t...")


def printed(tag, multiline):
    p = subprocess.run(["sh", EMIT, tag], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, check=True)
    out = {}
    for stream, data in (("stdout", p.stdout), ("stderr", p.stderr)):
        lines = data.decode().split("\n")[:-1]
        if multiline == "java":
            joined = []
            for ln in lines:
                if joined and ln.startswith(CONT):
                    joined[-1] += "\n" + ln
                else:
                    joined.append(ln)
            lines = joined
        out[stream] = lines
    return out


def key_of(obj):
    d = obj.get("docker")
    if isinstance(d, dict):
        return ("docker", d.get("container_id", d.get("id")),
                (d.get("container_name", d.get("name")) or "").lstrip("/"),
                d.get("image"))
    k = obj.get("kubernetes")
    if isinstance(k, dict):
        return ("k8s", k.get("namespace_name"), k.get("pod_name"),
                k.get("pod_id"), k.get("container_name"))
    return ("none",)


def in_order(runs, parts):
    """In each partition (by sequence number: requests in flight at once
    may land in any order), the lines of each run come in the order printed.
    Only lines printed once are compared (a stack trace's frames repeat
    from run to run); runs read at once (a rotated file and the new one)
    may interleave, and partitions keep no order between them."""
    count = {}
    for r in runs:
        for x in r:
            count[x] = count.get(x, 0) + 1
    for r in runs:
        pos = {x: i for i, x in enumerate(r) if count[x] == 1}
        for got in parts.values():
            seq = [pos[x] for x in got if x in pos]
            if any(a >= b for a, b in zip(seq, seq[1:])):
                return False
    return True


def short(s, n=90):
    s = repr(s)
    return s if len(s) <= n else s[:n] + "...(%d chars)" % len(s)


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", required=True)
    ap.add_argument("--stream", required=True)
    ap.add_argument("--container", action="append", required=True)
    ap.add_argument("--multiline", choices=["java"])
    ap.add_argument("--ordered", action="store_true")
    ap.add_argument("--omit", action="append", default=[])
    # A line starting with PREFIX may arrive cut in pieces (a rotation cut
    # it): the pieces, in some order, must make it exactly, each once.
    ap.add_argument("--cut", action="append", default=[])
    a = ap.parse_args(argv)
    want = {}
    omitted = []
    for spec in a.container:
        try:
            who, tags = spec.split("=", 1)
            kind, rest = who.split(":", 1)
            parts = rest.split("/")
            if kind not in ("k8s", "docker") or len(parts) != (
                    4 if kind == "k8s" else 3):
                raise ValueError
        except ValueError:
            ap.error("bad --container %r" % spec)
        key = (kind, *parts)
        for tag in tags.split(","):
            for stream, lines in printed(tag, a.multiline).items():
                omitted.extend(x for x in lines
                               if any(x.startswith(o) for o in a.omit))
                lines = [x for x in lines
                         if not any(x.startswith(o) for o in a.omit)]
                want.setdefault((key, stream), []).append(lines)
    got = {}
    parts = {}
    bad = []
    try:
        fp = open(a.records, "rb")
    except FileNotFoundError:
        fp = None
    if fp:
        with fp:
            for raw in fp:
                if not raw.endswith(b"\n") or not raw.strip():
                    continue
                rec = json.loads(raw)
                if rec.get("stream") != a.stream:
                    continue
                data = base64.b64decode(rec["data"])
                try:
                    obj = json.loads(data)
                    assert isinstance(obj, dict)
                    assert obj.get("stream") in ("stdout", "stderr")
                    assert isinstance(obj.get("time"), str) and obj["time"]
                    assert isinstance(obj.get("log"), str)
                except (ValueError, AssertionError):
                    bad.append(short(data))
                    continue
                k = (key_of(obj), obj["stream"])
                if any(obj["log"] in x for x in omitted):
                    continue  # a piece of an omitted line
                got.setdefault(k, []).append(obj["log"])
                parts.setdefault(k, {}).setdefault(
                    rec.get("partition_id"), []).append(
                        (int(rec.get("sequence_number", 0)), obj["log"]))
    n_want = sum(len(r) for v in want.values() for r in v)
    n_got = sum(len(v) for v in got.values())
    problems = []
    for k in sorted(set(want) | set(got), key=str):
        runs, g = want.get(k, []), got.get(k, [])
        w = [x for r in runs for x in r]
        if w == g:
            continue
        if not w:
            problems.append("%s: %d records from no expected container, e.g. %s"
                            % (k, len(g), short(g[0])))
            continue
        ws, gs = {}, {}
        for x in w:
            ws[x] = ws.get(x, 0) + 1
        for x in g:
            gs[x] = gs.get(x, 0) + 1
        missing = [x for x in ws if gs.get(x, 0) < ws[x]]
        dup = [x for x in gs if gs[x] > ws.get(x, 0) and x in ws]
        unexp = [x for x in gs if x not in ws]
        for x in [m for m in missing
                  if any(m.startswith(c) for c in a.cut)]:
            pieces = [u for u in unexp if gs[u] == 1 and u in x]
            for n in range(2, min(len(pieces), 4) + 1):
                hit = next((c for c in itertools.permutations(pieces, n)
                            if "".join(c) == x), None)
                if hit:
                    missing.remove(x)
                    unexp = [u for u in unexp if u not in hit]
                    print("cut line %s arrived in %d pieces of %s bytes"
                          % (short(x, 40), n, "+".join(str(len(h)) for h in hit)))
                    break
        byseq = {p: [x for _, x in sorted(v)] for p, v in parts[k].items()}
        if not (missing or dup or unexp) and (
                not a.ordered or in_order(runs, byseq)):
            continue
        problems.append("%s: expected %d, received %d: missing %d, duplicated %d, "
                        "unexpected %d%s" % (k, len(w), len(g), len(missing), len(dup),
                                             len(unexp), "" if missing or dup or unexp
                                             else ", out of order"))
        for what, xs in (("missing", missing), ("duplicated", dup),
                         ("unexpected", unexp)):
            for x in xs[:5]:
                problems.append("  %s: %s" % (what, short(x)))
    print("expected %d, received %d in %d (container, stream) pairs, %d not "
          "container records" % (n_want, n_got, len(want), len(bad)))
    for b in bad[:5]:
        print("  not a container record: %s" % b)
    for p in problems:
        print(p)
    return 0 if not problems and not bad else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
