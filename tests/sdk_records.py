#!/usr/bin/env python3
"""The DIS SDK's per-record codecs, for the end-to-end tests of issue 24.

A reader of data.compress.enabled (raw snappy) and data.encrypt.enabled
(EncryptUtils: hex of "saltHex::ivHex::ctHex", PBKDF2-HMAC-SHA1 with 1000
iterations, AES-128-CBC/PKCS#5), written here from the format the SDK's own
vectors pin down (tests/data/sdk-record-codecs.txt), independently of
disagent: hashlib, the openssl command (configure's $OPENSSL) and a raw
snappy decoder of the format description.  Every command first checks this
reader against every CBC row of the vectors, so what it accepts is what
the SDK writes.

Commands:
  selfcheck --vectors F
      decode every row the SDK made (encrypt, gen, snappy, snappy+encrypt,
      snappy+gen, key) and compare with its input; exit 1 on a mismatch.
  check --vectors F --records R --stream S --password PW [--compress]
        --expect FILE
      every record the test endpoint accepted for S (its records file R)
      must be in the SDK's wire format as gen() writes it (lowercase hex,
      an 8-byte salt, a 16-byte IV, whole blocks) and decode, with PW, to
      a line of FILE (without its newline): the multisets must be equal.
  put --port N --ca CA --ak AK --sk SK --project-id P --stream S
      --vectors F --password-hex HEX --kinds K,K... --expect OUT
      PutRecords (signed, JSON) the SDK-made data of the rows of those
      kinds made with that password, in file order, and write to OUT the
      base64 of each row's input, one a line: what `disagent read --format
      json` must give back, in that order, from a one-partition stream.
Exit status 2 on usage or input errors.
"""

import argparse
import base64
import hashlib
import hmac
import http.client
import json
import os
import ssl
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import dis_server  # noqa: E402  (the endpoint's canonical request)

OPENSSL = os.environ.get("OPENSSL") or "openssl"
REGION = "cn-north-1"


class Bad(Exception):
    """A record that is not in the SDK's format, or does not decode."""


# --- the SDK's codecs ----------------------------------------------------

def snappy_uncompress(b):
    """Raw snappy block: varint length, then literal and copy elements."""
    n, shift, i = 0, 0, 0
    while True:
        if i >= len(b) or shift > 35:
            raise Bad("bad snappy length")
        c = b[i]
        i += 1
        n |= (c & 0x7f) << shift
        if c < 0x80:
            break
        shift += 7
    out = bytearray()
    while i < len(b):
        tag = b[i]
        i += 1
        kind = tag & 3
        if kind == 0:
            ln = tag >> 2
            if ln >= 60:
                nb = ln - 59
                ln = int.from_bytes(b[i:i + nb], "little")
                i += nb
            ln += 1
            if i + ln > len(b):
                raise Bad("snappy literal past the end")
            out += b[i:i + ln]
            i += ln
            continue
        if kind == 1:
            ln = ((tag >> 2) & 7) + 4
            off = ((tag >> 5) << 8) | b[i]
            i += 1
        else:
            nb = 2 if kind == 2 else 4
            ln = (tag >> 2) + 1
            off = int.from_bytes(b[i:i + nb], "little")
            i += nb
        if off == 0 or off > len(out):
            raise Bad("snappy copy out of range")
        for _ in range(ln):
            out.append(out[-off])
    if len(out) != n:
        raise Bad("snappy length %d, got %d" % (n, len(out)))
    return bytes(out)


def aes_cbc_decrypt(key, iv, ct):
    p = subprocess.run([OPENSSL, "enc", "-d", "-aes-128-cbc", "-K", key.hex(),
                        "-iv", iv.hex()], input=ct, capture_output=True)
    if p.returncode != 0:
        raise Bad("does not decrypt")
    return p.stdout


def fields(wire, strict):
    """(salt, iv, ct) of a wire text; strict: exactly what gen() writes."""
    try:
        text = wire.decode("ascii")
        if strict and text != text.lower():
            raise Bad("not lowercase hex")
        inner = bytes.fromhex(text).decode("ascii")
        salt, iv, ct = inner.split("::")
        if strict and inner != inner.lower():
            raise Bad("inner text not lowercase hex")
        salt, iv, ct = bytes.fromhex(salt), bytes.fromhex(iv), \
            bytes.fromhex(ct)
    except (ValueError, UnicodeError) as e:
        raise Bad("not an EncryptUtils text: %s" % e)
    if len(iv) != 16 or not ct or len(ct) % 16 or not salt or \
            (strict and len(salt) != 8):
        raise Bad("salt %d, iv %d, ct %d bytes" % (len(salt), len(iv),
                                                    len(ct)))
    return salt, iv, ct


def decrypt(wire, password, strict=False):
    salt, iv, ct = fields(wire, strict)
    key = hashlib.pbkdf2_hmac("sha1", password, salt, 1000, 16)
    return aes_cbc_decrypt(key, iv, ct)


def decode(wire, password, compress, encrypt=True, strict=False):
    data = decrypt(wire, password, strict) if encrypt else wire
    return snappy_uncompress(data) if compress else data


# --- the vectors ---------------------------------------------------------

def rows(path):
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if line.startswith("#") or not line.strip():
                continue
            kind, pw, salt, iv, inp, out, get = line.rstrip("\n").split("\t")
            unhex = (lambda s: b"" if s == "-" else bytes.fromhex(s))
            yield {"line": n, "kind": kind, "pw": unhex(pw),
                   "salt": unhex(salt), "iv": unhex(iv), "in": unhex(inp),
                   "out": b"" if out == "-" else out.encode("ascii"),
                   "get": get}


def selfcheck(path):
    """Decode every CBC row the SDK made; the number of rows checked."""
    n = 0
    for r in rows(path):
        k = r["kind"]
        if k == "key":
            got = hashlib.pbkdf2_hmac("sha1", r["pw"], r["salt"], 1000, 16)
            ok = got.hex() == r["out"].decode()
        elif k == "snappy":
            ok = snappy_uncompress(bytes.fromhex(r["out"].decode())) == \
                r["in"]
        elif k in ("encrypt", "gen", "snappy+encrypt", "snappy+gen"):
            ok = decode(r["out"], r["pw"], k.startswith("snappy"),
                        strict=True) == r["in"]
        else:
            continue
        if not ok:
            sys.exit("sdk_records: line %d (%s) does not decode as the SDK "
                     "made it" % (r["line"], k))
        n += 1
    if n < 60:
        sys.exit("sdk_records: only %d vectors checked" % n)
    return n


# --- commands ------------------------------------------------------------

def cmd_check(a):
    n = selfcheck(a.vectors)
    want = {}
    with open(a.expect, "rb") as f:
        for line in f.read().splitlines():
            want[line] = want.get(line, 0) + 1
    got, bad = {}, []
    for line in open(a.records):
        r = json.loads(line)
        if r["stream"] != a.stream:
            continue
        wire = base64.b64decode(r["data"])
        try:
            d = decode(wire, a.password.encode("utf-8"), a.compress,
                       strict=True)
        except Bad as e:
            bad.append("%s %s: %s" % (r["partition_id"],
                                      r["sequence_number"], e))
            continue
        got[d] = got.get(d, 0) + 1
    print("sdk_records: %d vectors; %d records decoded, %d not, %d "
          "expected" % (n, sum(got.values()), len(bad), sum(want.values())))
    for b in bad[:5]:
        print("  not the SDK's:", b)
    if bad or got != want:
        missing = [k for k in want if got.get(k, 0) < want[k]]
        extra = [k for k in got if want.get(k, 0) < got[k]]
        for k in missing[:3]:
            print("  missing:", k[:60])
        for k in extra[:3]:
            print("  unexpected:", k[:60])
        return 1
    return 0


def signed_put(a, body):
    path = "/v2/%s/records/" % a.project_id
    date = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    h = {"content-type": "application/json; charset=utf-8",
         "host": "127.0.0.1:%d" % a.port, "x-project-id": a.project_id,
         "x-sdk-date": date}
    signed = sorted(h)
    canon = dis_server.canonical_request("POST", path, "", h, signed, body)
    sig = dis_server.signature_for("dis", a.ak, a.sk, REGION, date,
                                   dis_server.sha256_hex(canon))
    h["authorization"] = ("SDK-HMAC-SHA256 Credential=%s/%s/%s/dis/"
                          "sdk_request, SignedHeaders=%s, Signature=%s"
                          % (a.ak, date[:8], REGION, ";".join(signed), sig))
    ctx = ssl.create_default_context(cafile=a.ca)
    c = http.client.HTTPSConnection("127.0.0.1", a.port, context=ctx,
                                    timeout=30)
    c.request("POST", path, body=body, headers=h)
    resp = c.getresponse()
    reply = resp.read()
    if resp.status != 200 or json.loads(reply).get("failed_record_count"):
        sys.exit("sdk_records: PutRecords: %d %s" % (resp.status, reply))


def cmd_put(a):
    selfcheck(a.vectors)
    kinds = a.kinds.split(",")
    pw = bytes.fromhex(a.password_hex)
    recs, expect = [], []
    for r in rows(a.vectors):
        if r["kind"] in kinds and r["pw"] == pw:
            recs.append({"data": base64.b64encode(r["out"]).decode(),
                         "partition_key": "k%d" % r["line"]})
            expect.append(base64.b64encode(r["in"]).decode())
    if not recs:
        sys.exit("sdk_records: no rows of %s with that password" % a.kinds)
    signed_put(a, json.dumps({"stream_name": a.stream,
                              "records": recs}).encode())
    with open(a.expect, "w") as f:
        f.write("".join(e + "\n" for e in expect))
    print("sdk_records: put %d SDK-made records" % len(recs))
    return 0


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("selfcheck")
    s.add_argument("--vectors", required=True)
    s = sub.add_parser("check")
    for k in ("vectors", "records", "stream", "password", "expect"):
        s.add_argument("--" + k, required=True)
    s.add_argument("--compress", action="store_true")
    s = sub.add_parser("put")
    for k in ("ca", "ak", "sk", "project-id", "stream", "vectors",
              "password-hex", "kinds", "expect"):
        s.add_argument("--" + k, required=True)
    s.add_argument("--port", type=int, required=True)
    a = p.parse_args(argv)
    if a.cmd == "selfcheck":
        print("sdk_records: %d vectors decode" % selfcheck(a.vectors))
        return 0
    return cmd_check(a) if a.cmd == "check" else cmd_put(a)


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except (OSError, ValueError, KeyError) as e:
        print("sdk_records: %s" % e, file=sys.stderr)
        sys.exit(2)
