"""The agent's state file as the tests read it.

entries(path) is the list of its entries (dicts: flow, dev, ino,
fingerprint, path, offset, updated), from either format the agent reads:
version 2, JSON Lines (a header line {"version":2,"crc32":...,"entries":N},
then one entry a line, the crc32 covering every byte after the header), or
version 1, one JSON document {"version": 1, "crc32": ..., "files": [...]}.
Version 2 is checked as the agent checks it (crc32 and count), so a test
never reads a file the agent would refuse.  Raises OSError when the file
cannot be read and ValueError when it is not a valid state file.

Run as a script, prints the entries of FILE one JSON object a line.
"""
import json
import sys
import zlib


def entries(path):
    with open(path, "rb") as fp:
        text = fp.read()
    first, nl, body = text.partition(b"\n")
    try:
        head = json.loads(first)
    except ValueError:
        head = None
    if not (isinstance(head, dict) and head.get("version") == 2):
        return json.loads(text)["files"]
    if not nl or "%08x" % zlib.crc32(body) != head.get("crc32"):
        raise ValueError("%s: crc32 mismatch" % path)
    out = [json.loads(line) for line in body.split(b"\n")[:-1]]
    if len(out) != head.get("entries") or not body.endswith(b"\n") and body:
        raise ValueError("%s: %d entries, the header says %r" % (
            path, len(out), head.get("entries")))
    return out


if __name__ == "__main__":
    for e in entries(sys.argv[1]):
        print(json.dumps(e))
