#!/usr/bin/env python3
"""Self test of the DIS test server (tests/dis_server.py) and its tools.

Offline part: a client-side signer written here, independently of the
server, and the server's own verification functions must both reproduce
the published vectors of spec/dis-api.md 6.5 (and the section 2 example),
and both must give the published values for the negative variants.

Online part (with --port): real HTTPS requests, verified against --ca, to
a running server started by tests/e2e/server_selftest.sh with the streams
app:COMMON:3, adv:ADVANCED:1 and verify:COMMON:1 and the credentials given
here.  Covers the three signing dialects, token mode, authentication
failures, DIS validation errors, fault injection, the /_test/ control API,
lz4/zstd bodies, size limits, the download API, apps and checkpoints
(every reply and error code, signed), the accept_portless_host knob, and
dis_records.py on the records file.

Prints "ok - NAME" or "FAIL - NAME: detail" per check and "N passed, N
failed" at the end; exit status 1 when any check failed.
"""

import argparse
import base64
import datetime
import hashlib
import hmac
import http.client
import json
import os
import socket
import ssl
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import dis_server  # noqa: E402  (the code under test)

PASSED = []
FAILED = []


def check(name, cond, detail=""):
    if cond:
        PASSED.append(name)
        print("ok - %s" % name)
    else:
        FAILED.append(name)
        print("FAIL - %s: %s" % (name, detail))
    sys.stdout.flush()
    return bool(cond)


# ---------------------------------------------------------------------------
# An independent client-side signer (spec 6.1-6.3b).

UNRESERVED = set(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                 b"0123456789-_.~")


def c_enc(s):
    return "".join(chr(b) if b in UNRESERVED else "%%%02X" % b
                   for b in s.encode("utf-8"))


def c_hmac(key, msg):
    return hmac.new(key, msg.encode("utf-8"), hashlib.sha256).digest()


def c_canonical(method, path, query_pairs, headers, body, uri=None):
    """path unencoded; query_pairs list of (k, v); headers {name: value}."""
    if uri is None:
        uri = "/".join(c_enc(seg) for seg in path.split("/"))
        if not uri.endswith("/"):
            uri += "/"
    q = "&".join(sorted("%s=%s" % (c_enc(k), c_enc(v))
                        for k, v in query_pairs))
    hs = sorted((k.lower(), v.strip()) for k, v in headers.items())
    hblock = "".join("%s:%s\n" % kv for kv in hs)
    signed = ";".join(k for k, _ in hs)
    return "\n".join([method, uri, q, hblock, signed,
                      hashlib.sha256(body).hexdigest()]), signed


def c_sign(dialect, ak, sk, region, date, canonical, signed):
    """Authorization header value for dialect dis / apig / v11."""
    ch = hashlib.sha256(canonical.encode("utf-8")).hexdigest()
    if dialect == "apig":
        sts = "SDK-HMAC-SHA256\n%s\n%s" % (date, ch)
        sig = c_hmac(sk.encode("utf-8"), sts).hex()
        return ("SDK-HMAC-SHA256 Access=%s, SignedHeaders=%s, Signature=%s"
                % (ak, signed, sig)), sig
    day = date[:8]
    scope = "%s/%s/dis/sdk_request" % (day, region)
    alg = "SDK-HMAC-SHA256"
    secret = sk
    if dialect == "v11":
        alg = "V11-HMAC-SHA256"
        prk = hmac.new(ak.encode(), sk.encode(), hashlib.sha256).digest()
        secret = hmac.new(prk, ("%s/%s/dis" % (day, region)).encode()
                          + b"\x01", hashlib.sha256).hexdigest()
    key = ("SDK" + secret).encode("utf-8")
    for part in (day, region, "dis", "sdk_request"):
        key = c_hmac(key, part)
    sts = "%s\n%s\n%s\n%s" % (alg, date, scope, ch)
    sig = c_hmac(key, sts).hex()
    return ("%s Credential=%s/%s, SignedHeaders=%s, Signature=%s"
            % (alg, ak, scope, signed, sig)), sig


def sha(s):
    if isinstance(s, str):
        s = s.encode("utf-8")
    return hashlib.sha256(s).hexdigest()


# ---------------------------------------------------------------------------
# Offline: published vectors.

PID0 = "0123456789abcdef0123456789abcdef"
V1_BODY = (b'{"stream_name": "mystream", "records": [{"data": "aGVsbG8=", '
           b'"partition_key": "1"}]}')
V0_BODY = (b'{"stream_name":"app-logs","records":[{"data":"MjAyNC0wMS0wMSAw'
           b'MDowMDowMCBJTkZPIHN0YXJ0","partition_key":"483021"},{"data":"MjA'
           b'yNC0wMS0wMSAwMDowMDowMSBXQVJOIHNsb3c=","partition_key":"77"},{"d'
           b'ata":"MjAyNC0wMS0wMSAwMDowMDowMiBJTkZPIGRvbmU=","partition_key":'
           b'"913456"}]}')
DIS_HEADERS = {
    "Content-Type": "application/json; charset=utf-8",
    "Host": "dis.cn-north-1.myhuaweicloud.com",
    "X-Project-Id": PID0,
}

VECTORS = [
    # name, dialect, ak, sk, region, date, method, path, query, headers,
    # body, canonical hash, signature
    ("V0 section 2 example", "dis", "MYAK", "MYSK", "cn-north-1",
     "20240101T000000Z", "POST", "/v2/%s/records/" % PID0, [],
     DIS_HEADERS, V0_BODY, None,
     "a469974d6ea73483b090767fd73c885500c44ec67117895f8fd147d703609345"),
    ("V1 DIS-scoped", "dis", "MYAK", "MYSK", "cn-north-1",
     "20240101T000000Z", "POST", "/v2/%s/records/" % PID0, [],
     DIS_HEADERS, V1_BODY,
     "a425db3a0a138e14ca54b2b65e3a9ca44d553958d31e62091d4d44ee0e898dc3",
     "30ff4359061bc57f8995f414d31c962db66dd650d6bb51f9195197f368e77d9f"),
    ("V2 APIG example", "apig", "QTWAOYTTINDUT2QVKYUC",
     "MFyfvK41ba2giqM7Uio6PznpdUKGpownRZlmVmHc", "unused",
     "20191115T033655Z", "GET", "/v1/77b6a44cba5143ab91d13ab9a8ff44fd/vpcs",
     [("marker", "13551d6b-755d-4757-b956-536f674975c0"), ("limit", "2")],
     {"Content-Type": "application/json",
      "Host": "service.region.example.com"}, b"",
     "b25362e603ee30f4f25e7858e8a7160fd36e803bb2dfe206278659d71a9bcd7a",
     "7be6668032f70418fcc22abc52071e57aff61b84a1d2381bb430d6870f4f6ebe"),
    ("V3 GOV3 GET", "apig", "AccessKey", "SecretKey", "unused",
     "20060102T150405Z", "GET", "/path", [("limit", "1")], {}, b"",
     "85c3b7730f308aee452b16138a42a914397e43a8f0d732dfa521c0ef2afa98a4",
     "5a2ce64c865e0e6046321c6f3d5a77ba8413eeaf355c3166c03d58d02ac79624"),
    ("V4 GOV3 POST", "apig", "AccessKey", "SecretKey", "unused",
     "20060102T150405Z", "POST", "/path", [("key", "value")], {},
     b'{"Name":"test","Id":1}\n',
     "13f75ff5f5216199f986c7e7f2f77834d5e160ad9e46f37319816dc72ba7eeab",
     "cecc2af119b18ab70b4d094c0750f3b42c02f254903179a0fc2cc72fc9db4f59"),
]


def server_side(dialect, ak, sk, region, date, method, path, query, hdrs,
                body):
    """Canonical hash and signature as the server's code computes them."""
    h = {k.lower(): v for k, v in hdrs.items()}
    h["x-sdk-date"] = date
    qs = "&".join("%s=%s" % kv for kv in query)
    canon = dis_server.canonical_request(method, path, qs, h, list(h), body)
    ch = dis_server.sha256_hex(canon)
    return ch, dis_server.signature_for(dialect, ak, sk, region, date, ch)


def test_vectors():
    for (name, dialect, ak, sk, region, date, method, path, query, hdrs,
         body, want_ch, want_sig) in VECTORS:
        h = dict(hdrs)
        h["X-Sdk-Date"] = date
        canon, signed = c_canonical(method, path, query, h, body)
        auth, sig = c_sign(dialect, ak, sk, region, date, canon, signed)
        if want_ch:
            check("client signer %s canonical hash" % name,
                  sha(canon) == want_ch, sha(canon))
        check("client signer %s signature" % name, sig == want_sig, sig)
        ch, ssig = server_side(dialect, ak, sk, region, date, method, path,
                               query, hdrs, body)
        if want_ch:
            check("server code %s canonical hash" % name, ch == want_ch, ch)
        check("server code %s signature" % name, ssig == want_sig, ssig)
        # The server's full verifier accepts the client's header.
        hv = {k.lower(): v for k, v in h.items()}
        hv["authorization"] = auth
        now = datetime.datetime.strptime(date, "%Y%m%dT%H%M%SZ").replace(
            tzinfo=datetime.timezone.utc).timestamp()
        qs = "&".join("%s=%s" % kv for kv in query)
        try:
            got = dis_server.verify_signature(method, path, qs, hv, body,
                                              {ak: sk}, region, now)
        except dis_server.AuthError as e:
            got = e.code
        check("server verifier accepts %s" % name, got == ak, got)
    check("V1 body hash", sha(V1_BODY) ==
          "013f80a1e3e303acc34a28c3bdebbbe3e98143470a2416a0c7478072ce6e9be1")
    check("V0 body is 265 bytes", len(V0_BODY) == 265, len(V0_BODY))
    check("V4 body hash", sha(b'{"Name":"test","Id":1}\n') ==
          "a29d7b4c5efd1a22011d69fd7b7aee76fe51e4083c609244228de258afd61289")


def test_negative_vectors():
    date = "20060102T150405Z"
    want_ch = "d1bfa182b237a4109589d47b65d3068879becab0c6419a5cce0685ff8cf21b08"
    want_sig = "b7934608bd995c6bc982344d1216a27813fc0d01b5e4eea2602d35b2462c679a"
    canon, signed = c_canonical("GET", None, [("limit", "1")],
                                {"X-Sdk-Date": date}, b"", uri="/path")
    _, sig = c_sign("apig", "AccessKey", "SecretKey", "", date, canon, signed)
    check("client signer V3 negative (no slash)",
          sha(canon) == want_ch and sig == want_sig, sig)
    canon = dis_server.build_canonical_request(
        "GET", "/path", "limit=1", "x-sdk-date:%s\n" % date, ["x-sdk-date"],
        dis_server.EMPTY_SHA256)
    ch = dis_server.sha256_hex(canon)
    sig = dis_server.signature_for("apig", "AccessKey", "SecretKey", "",
                                   date, ch)
    check("server code V3 negative (no slash)",
          ch == want_ch and sig == want_sig, "%s %s" % (ch, sig))
    check("server canonical URI always ends in /",
          dis_server.canonical_uri("/path") == "/path/")

    body = b'{"Name":"test","Id":1}'
    want_bh = "4beb4e25467baf0f987a4dbb1c8fd2d9f01c9a79992f8a4ac387eceb0d934dbc"
    want_sig = "83599e5230b5b31fb58837c5760b4c2d407542df1f9493834ead538696e17a35"
    canon, signed = c_canonical("POST", "/path", [("key", "value")],
                                {"X-Sdk-Date": date}, body)
    _, sig = c_sign("apig", "AccessKey", "SecretKey", "", date, canon, signed)
    check("client signer V4 negative (no newline)",
          sha(body) == want_bh and sig == want_sig, sig)
    _, ssig = server_side("apig", "AccessKey", "SecretKey", "", date, "POST",
                          "/path", [("key", "value")], {}, body)
    check("server code V4 negative (no newline)", ssig == want_sig, ssig)
    # The verifier rejects the V4 header when the body lost its newline.
    h = {"x-sdk-date": date, "authorization":
         "SDK-HMAC-SHA256 Access=AccessKey, SignedHeaders=x-sdk-date, "
         "Signature=cecc2af119b18ab70b4d094c0750f3b42c02f254903179a0fc2cc7"
         "2fc9db4f59"}
    now = 1136214245  # 2006-01-02T15:04:05Z
    try:
        dis_server.verify_signature("POST", "/path", "key=value", h, body,
                                    {"AccessKey": "SecretKey"}, "x", now)
        code = None
    except dis_server.AuthError as e:
        code = e.code
    check("server verifier rejects V4 with altered body", code == "DIS.4110",
          code)
    try:
        dis_server.verify_signature("POST", "/path", "key=value", h,
                                    body + b"\n", {"AccessKey": "SecretKey"},
                                    "x", now + 16 * 60)
        code = None
    except dis_server.AuthError as e:
        code = e.code
    check("server verifier rejects a 16 minute old date", code == "DIS.4103",
          code)


def test_v11_and_partitions():
    date = "20240101T000000Z"
    h = dict(DIS_HEADERS, **{"X-Sdk-Date": date})
    canon, signed = c_canonical("POST", "/v2/%s/records/" % PID0, [], h,
                                V1_BODY)
    _, csig = c_sign("v11", "MYAK", "MYSK", "cn-north-1", date, canon, signed)
    _, ssig = server_side("v11", "MYAK", "MYSK", "cn-north-1", date, "POST",
                          "/v2/%s/records/" % PID0, [], DIS_HEADERS, V1_BODY)
    check("V11 client and server signatures agree", csig == ssig,
          "%s %s" % (csig, ssig))
    _, dsig = c_sign("dis", "MYAK", "MYSK", "cn-north-1", date, canon, signed)
    check("V11 differs from the DIS-scoped signature", csig != dsig)
    check("partition key '1' hash", dis_server.key_hash("1") ==
          4956847150856741762)
    check("partition key '1' -> 1 of 2",
          dis_server.partition_for_hash(dis_server.key_hash("1"), 2) == 1)
    check("partition key 'hello' -> 2 of 3",
          dis_server.partition_for_hash(dis_server.key_hash("hello"), 3) == 2)
    ok = all(dis_server.hash_range(dis_server.partition_for_hash(x, n), n)[0]
             <= x <= dis_server.hash_range(
                 dis_server.partition_for_hash(x, n), n)[1]
             for n in (1, 2, 3, 7) for x in
             (0, 1, dis_server.LONG_MAX // n, dis_server.LONG_MAX // n + 1,
              dis_server.LONG_MAX - 1, dis_server.LONG_MAX)
             if x <= dis_server.LONG_MAX)
    check("hash ranges agree with the partition rule", ok)


# ---------------------------------------------------------------------------
# Online.

class Client:
    def __init__(self, opts):
        self.o = opts
        self.ctx = ssl.create_default_context(cafile=opts.ca)
        self.host = "127.0.0.1:%d" % opts.port

    def conn(self):
        return http.client.HTTPSConnection("127.0.0.1", self.o.port,
                                           context=self.ctx, timeout=30)

    def signed_headers(self, method, path, query, body, dialect="dis",
                       ak=None, sk=None, date=None, extra=None,
                       host=None):
        date = date or time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        h = {"Content-Type": "application/json; charset=utf-8",
             "Host": host or self.host, "X-Project-Id": self.o.project_id,
             "X-Sdk-Date": date}
        h.update(extra or {})
        if dialect is None:
            return h
        canon, signed = c_canonical(method, path, query, h, body)
        auth, _ = c_sign(dialect, ak or self.o.ak, sk or self.o.sk,
                         self.o.region, date, canon, signed)
        h["Authorization"] = auth
        return h

    def send(self, method, path, body=b"", headers=None, query=(),
             conn=None):
        """(status, headers dict, parsed JSON or None, raw); raises on a
        dropped connection."""
        c = conn or self.conn()
        url = path
        if query:
            url += "?" + "&".join("%s=%s" % (c_enc(k), c_enc(v))
                                  for k, v in query)
        try:
            c.request(method, url, body=body, headers=headers or {})
            r = c.getresponse()
            raw = r.read()
            hdrs = {k.lower(): v for k, v in r.getheaders()}
        finally:
            if conn is None:
                c.close()
        try:
            obj = json.loads(raw) if raw else None
        except ValueError:
            obj = None
        return r.status, hdrs, obj, raw

    def put(self, stream, records, dialect="dis", path=None, body=None,
            encode=None, extra=None, **kw):
        path = path or "/v2/%s/records/" % self.o.project_id
        if body is None:
            body = json.dumps({"stream_name": stream,
                               "records": records}).encode()
        ex = dict(extra or {})
        if encode == "lz4":
            import lz4.block
            ex.update({"Content-Encoding": "lz4", "Accept-Encoding": "lz4",
                       "x-dis-lz4-content-length": str(len(body))})
            body = lz4.block.compress(body, store_size=False)
        elif encode == "zstd":
            import zstandard
            ex.update({"Content-Encoding": "zstd",
                       "Accept-Encoding": "zstd",
                       "x-dis-zstd-content-length": str(len(body))})
            body = zstandard.ZstdCompressor(level=3).compress(body)
        h = self.signed_headers("POST", path, [], body, dialect, extra=ex,
                                **kw)
        return self.send("POST", path, body, h)

    def control(self, method, path, obj=None):
        body = json.dumps(obj).encode() if obj is not None else b""
        h = {"Content-Type": "application/json", "Host": self.host}
        st, _, out, _ = self.send(method, path, body, h)
        return st, out


def rec(data, key=None, **kw):
    r = {"data": base64.b64encode(data).decode()}
    if key is not None:
        r["partition_key"] = key
    r.update(kw)
    return r


def records_file_data(path, stream):
    out = []
    with open(path, "rb") as fp:
        for line in fp:
            if line.endswith(b"\n"):
                d = json.loads(line)
                if d["stream"] == stream:
                    out.append(base64.b64decode(d["data"]))
    return out


def err_code(obj):
    if not isinstance(obj, dict):
        return None
    return obj.get("errorCode") or obj.get("error_code")


def expect_dropped(cl, name, **kw):
    try:
        st, _, _, _ = cl.put("app", [rec(b"dropped " + name.encode())], **kw)
        check(name, False, "got status %d" % st)
    except (ConnectionError, http.client.HTTPException, ssl.SSLError,
            socket.timeout, OSError) as e:
        check(name, True, repr(e))


def online_auth(cl, o):
    for dialect in ("dis", "apig", "v11"):
        data = ("hello via %s dialect" % dialect).encode()
        st, h, obj, _ = cl.put("app", [rec(data, "k1")], dialect=dialect)
        check("PutRecords signed with %s dialect -> 200" % dialect,
              st == 200 and obj["failed_record_count"] == 0, (st, obj))
        check("%s record in the records file" % dialect,
              data in records_file_data(o.records, "app"))
    st, h, obj, _ = cl.put("app", [rec(b"noslash")],
                           path="/v2/%s/records" % o.project_id)
    check("PutRecords path without trailing slash -> 200", st == 200,
          (st, obj))
    cases = [
        ("wrong SK -> 441 DIS.4110", dict(sk="wrong"), "DIS.4110"),
        ("unknown AK -> 441 DIS.4102", dict(ak="NOSUCHAK"), "DIS.4102"),
        ("stale date -> 441 DIS.4103", dict(date=time.strftime(
            "%Y%m%dT%H%M%SZ", time.gmtime(time.time() - 20 * 60))),
         "DIS.4103"),
        ("future date -> 441 DIS.4103", dict(date=time.strftime(
            "%Y%m%dT%H%M%SZ", time.gmtime(time.time() + 20 * 60))),
         "DIS.4103"),
        ("V11 signed over host without port -> 441 DIS.4110",
         dict(dialect="v11", host="127.0.0.1"), "DIS.4110"),
    ]
    for name, kw, code in cases:
        host = kw.pop("host", None)
        if host:
            # Sign with the port-less host, send the real one.
            body = json.dumps({"stream_name": "app",
                               "records": [rec(b"x")]}).encode()
            path = "/v2/%s/records/" % o.project_id
            h = cl.signed_headers("POST", path, [], body, host=host, **kw)
            h["Host"] = cl.host
            st, _, obj, _ = cl.send("POST", path, body, h)
        else:
            st, _, obj, _ = cl.put("app", [rec(b"x")], **kw)
        check(name, st == 441 and err_code(obj) == code, (st, obj))

    path = "/v2/%s/records/" % o.project_id
    body = json.dumps({"stream_name": "app",
                       "records": [rec(b"original")]}).encode()
    h = cl.signed_headers("POST", path, [], body)
    st, _, obj, _ = cl.send("POST", path, body.replace(b"b3Jp", b"b3Jq"), h)
    check("tampered body -> 441 DIS.4110",
          st == 441 and err_code(obj) == "DIS.4110", (st, obj))
    h = cl.signed_headers("POST", path, [], body)
    h["X-Project-Id"] = o.project_id.upper()
    st, _, obj, _ = cl.send("POST", path, body, h)
    check("tampered signed header -> 441 DIS.4110",
          st == 441 and err_code(obj) == "DIS.4110", (st, obj))

    h = cl.signed_headers("POST", path, [], body, dialect=None)
    st, _, obj, _ = cl.send("POST", path, body, h)
    check("missing auth with --token set -> 441 DIS.4113",
          st == 441 and err_code(obj) == "DIS.4113", (st, obj))
    h["Authorization"] = "HMAC-MD5 foo=bar"
    st, _, obj, _ = cl.send("POST", path, body, h)
    check("malformed Authorization -> 441 DIS.4101",
          st == 441 and err_code(obj) == "DIS.4101", (st, obj))
    h = cl.signed_headers("POST", path, [], body)
    h["Authorization"] = h["Authorization"].replace(
        ";x-sdk-date,", ",").replace("SignedHeaders=", "SignedHeaders=")
    st, _, obj, _ = cl.send("POST", path, body, h)
    check("SignedHeaders without x-sdk-date -> 441 DIS.4101",
          st == 441 and err_code(obj) == "DIS.4101", (st, obj))
    h = cl.signed_headers("POST", path, [], body)
    del h["X-Sdk-Date"]
    h["Authorization"] = h["Authorization"]
    st, _, obj, _ = cl.send("POST", path, body, h)
    check("X-Sdk-Date not sent -> 441 DIS.4101 or DIS.4104",
          st == 441 and err_code(obj) in ("DIS.4101", "DIS.4104"), (st, obj))

    h = cl.signed_headers("POST", path, [], body, dialect=None)
    h["X-Auth-Token"] = o.token
    st, _, obj, _ = cl.send("POST", path, body, h)
    check("token mode -> 200", st == 200 and obj["failed_record_count"] == 0,
          (st, obj))
    h["X-Auth-Token"] = o.token + "x"
    st, _, obj, _ = cl.send("POST", path, body, h)
    check("invalid token -> 441 DIS.4114",
          st == 441 and err_code(obj) == "DIS.4114", (st, obj))

    st, _ = cl.control("POST", "/_test/credentials",
                       {"ak": "NEWAK", "sk": "NEWSK", "token": None})
    check("POST /_test/credentials -> 200", st == 200, st)
    st, _, obj, _ = cl.put("app", [rec(b"x")])
    check("old credentials rejected after change -> 441 DIS.4102",
          st == 441 and err_code(obj) == "DIS.4102", (st, obj))
    st, _, obj, _ = cl.put("app", [rec(b"new creds")], ak="NEWAK",
                           sk="NEWSK")
    check("new credentials accepted -> 200", st == 200, (st, obj))
    h = cl.signed_headers("POST", path, [], body, dialect=None)
    st, _, obj, _ = cl.send("POST", path, body, h)
    check("missing auth without a token -> 441 DIS.4100",
          st == 441 and err_code(obj) == "DIS.4100", (st, obj))
    st, _ = cl.control("POST", "/_test/credentials",
                       {"ak": o.ak, "sk": o.sk, "token": o.token})
    check("credentials restored", st == 200, st)


def online_temporary_keys(cl, o):
    """Temporary keys: only with their X-Security-Token, sent and signed."""
    keys = [{"ak": "TMPAK1", "sk": "TMPSK1", "security_token": "TOK1"},
            {"ak": "TMPAK2", "sk": "TMPSK2", "security_token": "TOK2",
             "expires_at": time.time() - 1}]
    st, _ = cl.control("POST", "/_test/temporary_keys", {"keys": keys})
    check("POST /_test/temporary_keys -> 200", st == 200, st)
    ok = dict(ak="TMPAK1", sk="TMPSK1")
    st, _, obj, _ = cl.put("app", [rec(b"temporary")],
                           extra={"X-Security-Token": "TOK1"}, **ok)
    check("temporary keys with their token, signed -> 200", st == 200,
          (st, obj))
    st, _, obj, _ = cl.put("app", [rec(b"x")], **ok)
    check("temporary keys without X-Security-Token -> 441 DIS.4113",
          st == 441 and err_code(obj) == "DIS.4113", (st, obj))
    st, _, obj, _ = cl.put("app", [rec(b"x")],
                           extra={"X-Security-Token": "TOK2"}, **ok)
    check("temporary keys with another token -> 441 DIS.4114",
          st == 441 and err_code(obj) == "DIS.4114", (st, obj))
    path = "/v2/%s/records/" % o.project_id
    body = json.dumps({"stream_name": "app", "records": [rec(b"x")]}).encode()
    h = cl.signed_headers("POST", path, [], body, **ok)
    h["X-Security-Token"] = "TOK1"
    st, _, obj, _ = cl.send("POST", path, body, h)
    check("X-Security-Token sent but not signed -> 441 DIS.4114",
          st == 441 and err_code(obj) == "DIS.4114", (st, obj))
    st, _, obj, _ = cl.put("app", [rec(b"x")], ak="TMPAK2", sk="TMPSK2",
                           extra={"X-Security-Token": "TOK2"})
    check("expired temporary keys -> 441 DIS.4115",
          st == 441 and err_code(obj) == "DIS.4115", (st, obj))
    st, _, obj, _ = cl.put("app", [rec(b"x")])
    check("other keys refused meanwhile -> 441 DIS.4102",
          st == 441 and err_code(obj) == "DIS.4102", (st, obj))
    st, s = cl.control("GET", "/_test/stats")
    check("requests_by_ak counts authenticated requests",
          s["requests_by_ak"].get("TMPAK1") == 1, s.get("requests_by_ak"))
    st, _ = cl.control("POST", "/_test/credentials",
                       {"ak": o.ak, "sk": o.sk, "token": o.token})
    check("credentials restored after temporary keys", st == 200, st)


def online_api(cl, o):
    p = "/v2/%s/streams/app/" % o.project_id
    st, hd, obj, _ = cl.send("GET", p, b"", cl.signed_headers(
        "GET", p, [], b""))
    check("DescribeStream -> 200 RUNNING COMMON 3 partitions",
          st == 200 and obj["status"] == "RUNNING" and
          obj["stream_type"] == "COMMON" and
          obj["writable_partition_count"] == 3 and
          len(obj["partitions"]) == 3 and
          obj["partitions"][2]["partition_id"] == "shardId-0000000002" and
          obj["has_more_partitions"] is False, (st, obj))
    check("reply carries Content-Length", "content-length" in hd, hd)
    p2 = "/v2/%s/streams/adv" % o.project_id
    q = [("limit_partitions", "1")]
    st, _, obj, _ = cl.send("GET", p2, b"", cl.signed_headers(
        "GET", p2, q, b""), query=q)
    check("DescribeStream without slash, with a query -> 200 ADVANCED",
          st == 200 and obj["stream_type"] == "ADVANCED", (st, obj))
    p3 = "/v2/%s/streams/nosuch/" % o.project_id
    st, _, obj, _ = cl.send("GET", p3, b"", cl.signed_headers(
        "GET", p3, [], b""))
    check("DescribeStream unknown stream -> 400 DIS.4301",
          st == 400 and err_code(obj) == "DIS.4301", (st, obj))

    st, _, obj, _ = cl.put("nosuch", [rec(b"x")])
    check("PutRecords unknown stream -> 400 DIS.4301",
          st == 400 and err_code(obj) == "DIS.4301", (st, obj))
    bad = "/v2/ffffffffffffffffffffffffffffffff/records/"
    st, _, obj, _ = cl.put("app", [rec(b"x")], path=bad)
    check("wrong project id -> 400 DIS.4117",
          st == 400 and err_code(obj) == "DIS.4117", (st, obj))
    st, _, obj, _ = cl.put("app", [])
    check("empty records -> 400 DIS.4202",
          st == 400 and err_code(obj) == "DIS.4202", (st, obj))
    st, _, obj, _ = cl.put("app", None, body=b'{"stream_name": "app", ')
    check("bad JSON -> 400 DIS.4200",
          st == 400 and err_code(obj) == "DIS.4200", (st, obj))
    st, _, obj, _ = cl.put("app", [{"data": "not base64!"}])
    check("bad Base64 -> 400 DIS.4200",
          st == 400 and err_code(obj) == "DIS.4200", (st, obj))
    st, hd, obj, _ = cl.send("GET", "/nowhere", b"", {"Host": cl.host})
    check("unknown path -> 404 JSON with Content-Length",
          st == 404 and err_code(obj) and "content-length" in hd, (st, obj))

    st, _, obj, _ = cl.put("app", [rec(b"key hello", "hello"),
                                   rec(b"pid 1", partition_id="1"),
                                   rec(b"pid shard 0",
                                       partition_id="shardId-0000000000")])
    parts = [r.get("partition_id") for r in obj["records"]] if obj else None
    check("partition_key and partition_id pick partitions", st == 200 and
          parts == ["shardId-0000000002", "shardId-0000000001",
                    "shardId-0000000000"], (st, obj))
    seqs = [int(r["sequence_number"]) for r in obj["records"]] if obj else []
    st, _, obj2, _ = cl.put("app", [rec(b"key hello 2", "hello")])
    check("sequence numbers grow per partition", st == 200 and
          int(obj2["records"][0]["sequence_number"]) == seqs[0] + 1,
          (seqs, obj2))
    st, _, obj, _ = cl.put("app", [rec(b"x", partition_id="3")])
    check("partition_id out of range -> 400 DIS.4201",
          st == 400 and err_code(obj) == "DIS.4201", (st, obj))

    st, _ = cl.control("POST", "/_test/streams",
                       {"name": "two", "type": "COMMON", "partitions": 2})
    check("POST /_test/streams creates a stream", st == 201, st)
    st, _, obj, _ = cl.put("two", [rec(b"key one", "1")])
    check("key '1' on a 2-partition stream -> shardId-0000000001",
          st == 200 and obj["records"][0]["partition_id"] ==
          "shardId-0000000001", (st, obj))
    st, _ = cl.control("DELETE", "/_test/streams/two")
    check("DELETE /_test/streams/NAME -> 200", st == 200, st)
    st, _, obj, _ = cl.put("two", [rec(b"x")])
    check("deleted stream -> 400 DIS.4301",
          st == 400 and err_code(obj) == "DIS.4301", (st, obj))

    # Keep-alive: two requests on one connection.
    c = cl.conn()
    try:
        ok = True
        for i in range(2):
            body = json.dumps({"stream_name": "app", "records":
                               [rec(b"keepalive %d" % i)]}).encode()
            path = "/v2/%s/records/" % o.project_id
            st, _, _, _ = cl.send("POST", path, body, cl.signed_headers(
                "POST", path, [], body), conn=c)
            ok = ok and st == 200
        check("two requests on one keep-alive connection", ok)
    finally:
        c.close()


def online_compression(cl, o):
    for enc, mod in (("lz4", "lz4.block"), ("zstd", "zstandard")):
        try:
            __import__(mod)
        except ImportError:
            print("SKIP - %s body: python module %s is missing" % (enc, mod))
            continue
        data = [("%s compressed record %d " % (enc, i) * 5).encode()
                for i in range(20)]
        st, _, obj, _ = cl.put("app", [rec(d) for d in data], encode=enc)
        got = records_file_data(o.records, "app")
        check("%s body decodes -> 200, records stored" % enc,
              st == 200 and obj["failed_record_count"] == 0 and
              all(d in got for d in data), (st, obj))
    path = "/v2/%s/records/" % o.project_id
    body = b"not lz4 at all"
    h = cl.signed_headers("POST", path, [], body, extra={
        "Content-Encoding": "lz4", "x-dis-lz4-content-length": "1000"})
    st, _, obj, _ = cl.send("POST", path, body, h)
    check("corrupt lz4 body -> 400 DIS.4200",
          st == 400 and err_code(obj) == "DIS.4200", (st, obj))


def set_faults(cl, **kw):
    st, out = cl.control("POST", "/_test/faults", kw)
    if st != 200:
        check("POST /_test/faults %r" % kw, False, (st, out))
    return st


def online_faults(cl, o):
    set_faults(cl, rec_4303=1.0)
    st, _, obj, _ = cl.put("app", [rec(b"throttled %d" % i)
                                   for i in range(10)])
    check("rec_4303=1.0 -> every record DIS.4303", st == 200 and
          obj["failed_record_count"] == 10 and
          all(r.get("error_code") == "DIS.4303" for r in obj["records"]),
          (st, obj))
    check("throttled records not stored",
          b"throttled 0" not in records_file_data(o.records, "app"))
    set_faults(cl, rec_4303=0.0, rec_5000=1.0)
    st, _, obj, _ = cl.put("app", [rec(b"x"), rec(b"y")])
    check("rec_5000=1.0 -> every record DIS.5000", st == 200 and
          obj["failed_record_count"] == 2 and
          all(r.get("error_code") == "DIS.5000" for r in obj["records"]),
          (st, obj))
    set_faults(cl, rec_5000=0.0)
    for knob, want_st, want_code in (("req_500", 500, "DIS.5000"),
                                     ("req_429", 429, None),
                                     ("req_400_4303", 400, "DIS.4303")):
        set_faults(cl, **{knob: 1.0})
        st, hd, obj, _ = cl.put("app", [rec(b"x")])
        check("%s=1.0 -> %d %s" % (knob, want_st, want_code or ""),
              st == want_st and (want_code is None or
                                 err_code(obj) == want_code) and
              "content-length" in hd, (st, obj))
        set_faults(cl, **{knob: 0.0})
    st, out = cl.control("POST", "/_test/faults", {"bogus": 1})
    check("unknown fault knob -> 400", st == 400, (st, out))
    st, out = cl.control("POST", "/_test/faults", {"drop": 2})
    check("fault rate above 1 -> 400", st == 400, (st, out))

    set_faults(cl, drop=1.0)
    expect_dropped(cl, "drop=1.0 closes the connection without a reply")
    set_faults(cl, drop=0.0, outage=True)
    expect_dropped(cl, "outage closes the connection without a reply")
    set_faults(cl, outage=False)
    st, _, obj, _ = cl.put("app", [rec(b"after outage")])
    check("requests succeed after the outage ends", st == 200, (st, obj))

    set_faults(cl, latency_ms=300)
    t0 = time.monotonic()
    st, _, _, _ = cl.put("app", [rec(b"slow")])
    dt = time.monotonic() - t0
    set_faults(cl, latency_ms=0)
    check("latency_ms=300 delays the reply", st == 200 and dt >= 0.3, dt)


def online_limits(cl, o):
    mib = 1024 * 1024
    set_faults(cl, max_request_bytes=4 * mib)
    big = b"B" * (mib + 1)
    st, _, obj, _ = cl.put("app", [rec(b"small before big"), rec(big),
                                   rec(b"small after big")])
    check("record over 1 MiB on COMMON -> record DIS.4200, others stored",
          st == 200 and obj["failed_record_count"] == 1 and
          obj["records"][1].get("error_code") == "DIS.4200" and
          "partition_id" in obj["records"][0] and
          "partition_id" in obj["records"][2], (st, obj and
                                                obj.get("records")))
    exact = b"E" * mib
    st, _, obj, _ = cl.put("app", [rec(exact)])
    check("record of exactly 1 MiB on COMMON -> accepted",
          st == 200 and obj["failed_record_count"] == 0, (st, obj))
    set_faults(cl, max_request_bytes=None)
    st, _, obj, _ = cl.put("app", [rec(b"C" * (600 * 1024)),
                                   rec(b"D" * (600 * 1024))])
    check("1.2 MiB raw on COMMON (default cap 1 MiB) -> 413",
          st == 413, (st, obj))
    st, _, obj, _ = cl.put("adv", [rec(b"A" * (2 * mib)),
                                   rec(b"a" * (2 * mib))])
    check("4 MiB raw with 2 MiB records on ADVANCED -> 200",
          st == 200 and obj["failed_record_count"] == 0, (st, obj))
    set_faults(cl, max_request_bytes=1000)
    st, _, obj, _ = cl.put("app", [rec(b"x" * 600), rec(b"y" * 600)])
    check("raw bytes over max_request_bytes=1000 -> 413", st == 413,
          (st, obj))
    st, _, obj, _ = cl.put("app", [rec(b"x" * 500), rec(b"y" * 500)])
    check("raw bytes equal to max_request_bytes -> 200", st == 200,
          (st, obj))
    set_faults(cl, max_request_bytes=None)


def run_tool(o, *args):
    r = subprocess.run([sys.executable, os.path.join(HERE, "dis_records.py")]
                       + list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, universal_newlines=True)
    return r.returncode, r.stdout


def online_records_tool(cl, o):
    lines = [("line %05d of the verify stream" % i).encode()
             for i in range(3000)]
    exp1 = os.path.join(o.tmp, "expect1.log")
    exp2 = os.path.join(o.tmp, "expect2.log")
    with open(exp1, "wb") as fp:
        fp.write(b"\n".join(lines[:2000]) + b"\n" + b"partial last line")
    with open(exp2, "wb") as fp:
        fp.write(b"\n".join(lines[2000:]) + b"\n")
    t0 = time.monotonic()
    ok = True
    for i in range(0, 3000, 500):
        st, _, obj, _ = cl.put("verify", [rec(x, str(j)) for j, x in
                                          enumerate(lines[i:i + 500])])
        ok = ok and st == 200 and obj["failed_record_count"] == 0
    check("6 requests x 500 records -> 200", ok)
    print("# 3000 records in %.2f s" % (time.monotonic() - t0))
    rc, out = run_tool(o, "wait", "--records", o.records, "--stream",
                       "verify", "--count", "3000", "--timeout", "5")
    check("dis_records wait sees 3000 records", rc == 0, out)
    rc, out = run_tool(o, "wait", "--records", o.records, "--stream",
                       "verify", "--count", "3001", "--timeout", "0.3")
    check("dis_records wait times out at 3001", rc == 1 and
          "3000 of 3001" in out, out)
    rc, out = run_tool(o, "count", "--records", o.records, "--stream",
                       "verify")
    check("dis_records count -> 3000", rc == 0 and out.strip() == "3000",
          out)
    rc, out = run_tool(o, "verify", "--records", o.records, "--stream",
                       "verify", "--expect", exp1, "--expect", exp2,
                       "--ordered")
    check("dis_records verify --ordered passes", rc == 0 and
          out.startswith("expected 3000, received 3000, missing 0, "
                         "duplicated 0, unexpected 0, out_of_order 0"), out)
    rc, out = run_tool(o, "show", "--records", o.records, "--stream",
                       "verify", "-n", "2", "--tail")
    check("dis_records show --tail", rc == 0 and "line 02999" in out and
          len(out.splitlines()) == 2, out)

    # Now a duplicate, an unexpected record and reordering.
    cl.put("verify", [rec(lines[10]), rec(b"stranger"), rec(lines[2001]),
                      rec(lines[2000])])
    extra = os.path.join(o.tmp, "expect3.log")
    with open(extra, "wb") as fp:
        fp.write(b"never sent\n")
    rc, out = run_tool(o, "verify", "--records", o.records, "--stream",
                       "verify", "--expect", exp1, "--expect", exp2,
                       "--expect", extra)
    check("dis_records verify reports problems", rc == 1 and out.startswith(
        "expected 3001, received 3004, missing 1, duplicated 3, "
        "unexpected 1, out_of_order 0") and "never sent" in out and
        "stranger" in out, out)
    rc, out = run_tool(o, "verify", "--records", o.records, "--stream",
                       "verify", "--expect", exp1, "--expect", exp2,
                       "--allow-duplicates")
    check("verify exits 1 on an unexpected record despite "
          "--allow-duplicates", rc == 1, out)
    cl.put("verify", [rec(lines[2999] + b"!"), rec(lines[2998] + b"!"),
                      rec(lines[2997] + b"!")])
    exp4 = os.path.join(o.tmp, "expect4.log")
    with open(exp4, "wb") as fp:
        fp.write(lines[2997] + b"!\n" + lines[2998] + b"!\n" +
                 lines[2999] + b"!\n")
    rc, out = run_tool(o, "verify", "--records", o.records, "--stream",
                       "verify", "--expect", exp1, "--expect", exp2,
                       "--expect", exp4, "--ordered", "--allow-duplicates")
    check("verify --ordered counts out-of-order arrivals",
          rc == 1 and "out_of_order 2" in out.splitlines()[0], out)
    dup = os.path.join(o.tmp, "dup.log")
    with open(dup, "wb") as fp:
        fp.write(lines[0] + b"\n")
    rc, out = run_tool(o, "verify", "--records", o.records, "--stream",
                       "verify", "--expect", exp1, "--expect", dup)
    check("verify errors out on lines repeated across expected files",
          rc == 2, out)


def dl_get(cl, o, what, query, **kw):
    """A signed GetCursor ("cursors") or GetRecords ("records")."""
    path = "/v2/%s/%s/" % (o.project_id, what)
    q = [(k, str(v)) for k, v in query]
    st, _, obj, _ = cl.send("GET", path, b"", cl.signed_headers(
        "GET", path, q, b"", **kw), query=q)
    return st, obj


def dl_cursor(cl, o, part, ctype, **extra):
    q = [("stream-name", "dl"), ("partition-id", part),
         ("cursor-type", ctype)] + list(extra.items())
    return dl_get(cl, o, "cursors", [(k.replace("_", "-"), v)
                                     for k, v in q])


def dl_read(cl, o, cursor, fetch=None):
    q = [("partition-cursor", cursor)]
    if fetch is not None:
        q.append(("max_fetch_bytes", fetch))
    return dl_get(cl, o, "records", q)


def dl_records(cl, o, part, ctype, **extra):
    st, obj = dl_cursor(cl, o, part, ctype, **extra)
    if st != 200:
        return st, obj
    return dl_read(cl, o, obj["partition_cursor"])


def dl_describe(cl, o):
    p = "/v2/%s/streams/dl/" % o.project_id
    return cl.send("GET", p, b"", cl.signed_headers("GET", p, [], b""))[2]


def online_download(cl, o):
    st, _ = cl.control("POST", "/_test/streams",
                       {"name": "dl", "type": "COMMON", "partitions": 2})
    check("POST /_test/streams dl -> 201", st == 201, st)
    d = dl_describe(cl, o)
    check("an empty partition is [0 : 0]",
          d["partitions"][0]["sequence_number_range"] == "[0 : 0]", d)
    datas = [("rec %d" % i).encode() for i in range(5)]
    for i, data in enumerate(datas):
        st, _, obj, _ = cl.put("dl", [rec(data, key="k%d" % i,
                                          partition_id="0")])
        check("put dl %d -> 200" % i, st == 200, (st, obj))
    d = dl_describe(cl, o)
    check("DescribeStream: [oldest : next] after 5 records",
          d["partitions"][0]["sequence_number_range"] == "[0 : 5]" and
          d["partitions"][1]["sequence_number_range"] == "[0 : 0]", d)
    st, obj = dl_cursor(cl, o, "0", "TRIM_HORIZON")
    cur = obj and obj.get("partition_cursor")
    check("GetCursor TRIM_HORIZON -> 200 with a cursor",
          st == 200 and isinstance(cur, str), (st, obj))
    st, obj = dl_read(cl, o, cur)
    recs = obj["records"] if st == 200 else []
    check("GetRecords -> the 5 records in order, with key and time",
          [base64.b64decode(r["data"]) for r in recs] == datas and
          [r["sequence_number"] for r in recs] == ["0", "1", "2", "3", "4"]
          and recs[0]["partition_key"] == "k0" and
          isinstance(recs[0]["timestamp"], int) and
          recs[0]["timestamp_type"] == "CreateTime", (st, obj))
    st, obj2 = dl_read(cl, o, obj["next_partition_cursor"])
    check("GetRecords at the end -> no records and a next cursor",
          st == 200 and obj2["records"] == [] and
          obj2["next_partition_cursor"], (st, obj2))
    for ctype, extra, want in (
            ("AT_SEQUENCE_NUMBER", {"starting_sequence_number": "2"},
             ["2", "3", "4"]),
            ("AFTER_SEQUENCE_NUMBER", {"starting_sequence_number": "2"},
             ["3", "4"]),
            ("AT_SEQUENCE_NUMBER", {"starting_sequence_number": "5"}, []),
            ("LATEST", {}, []),
            ("AT_TIMESTAMP", {"timestamp": "0"},
             ["0", "1", "2", "3", "4"]),
            ("AT_TIMESTAMP", {"timestamp": str(int(time.time() * 1000) +
                                               60000)}, [])):
        st, obj = dl_records(cl, o, "0", ctype, **extra)
        got = [r["sequence_number"] for r in obj["records"]] \
            if st == 200 else (st, obj)
        check("%s %s -> %s" % (ctype, extra, want), got == want, got)
    st, obj = dl_cursor(cl, o, "0", "TRIM_HORIZON")
    cur = obj["partition_cursor"]
    size = len(datas[0])
    st, obj = dl_read(cl, o, cur, fetch=size - 1)
    check("max_fetch_bytes below the first record -> none",
          st == 200 and obj["records"] == [], (st, obj))
    st, obj = dl_read(cl, o, cur, fetch=size)
    check("max_fetch_bytes of one record -> one",
          st == 200 and len(obj["records"]) == 1, (st, obj))
    for name, (st, obj), code in (
            ("cursor-type BOGUS", dl_cursor(cl, o, "0", "BOGUS"),
             "DIS.4215"),
            ("starting-sequence-number x", dl_cursor(
                cl, o, "0", "AT_SEQUENCE_NUMBER",
                starting_sequence_number="x"), "DIS.4216"),
            ("AT_SEQUENCE_NUMBER past next", dl_cursor(
                cl, o, "0", "AT_SEQUENCE_NUMBER",
                starting_sequence_number="6"), "DIS.4224"),
            ("partition 9", dl_cursor(cl, o, "9", "LATEST"), "DIS.4302"),
            ("a cursor that does not decode", dl_read(cl, o, "zzzz"),
             "DIS.4217")):
        check("%s -> 400 %s" % (name, code),
              st == 400 and err_code(obj) == code, (st, obj))
    path = "/v2/%s/cursors/" % o.project_id
    st, _, obj, _ = cl.send("GET", path, b"", cl.signed_headers(
        "GET", path, [], b"", sk="wrong"))
    check("GetCursor with a bad signature -> 441", st == 441, (st, obj))

    set_faults(cl, deny_reads=True)
    st_c, obj_c = dl_cursor(cl, o, "0", "TRIM_HORIZON")
    st_r, obj_r = dl_read(cl, o, cur)
    check("deny_reads: GetCursor and GetRecords -> 403 DIS.4116",
          st_c == 403 and err_code(obj_c) == "DIS.4116" and st_r == 403 and
          err_code(obj_r) == "DIS.4116", (st_c, obj_c, st_r, obj_r))
    set_faults(cl, deny_reads=False)
    set_faults(cl, cursor_ttl_ms=1)
    time.sleep(0.05)
    st, obj = dl_read(cl, o, cur)
    check("an old cursor -> 400 DIS.4225",
          st == 400 and err_code(obj) == "DIS.4225", (st, obj))
    set_faults(cl, cursor_ttl_ms=0)
    st, out = cl.control("POST", "/_test/streams/dl/partitions",
                         {"trim": "0", "before": 3})
    check("trim partition 0 below 3 -> 200", st == 200, (st, out))
    st, obj = dl_read(cl, o, cur)
    check("a cursor below the oldest record -> 400 DIS.4226",
          st == 400 and err_code(obj) == "DIS.4226", (st, obj))
    st, obj = dl_cursor(cl, o, "0", "AT_SEQUENCE_NUMBER",
                        starting_sequence_number="1")
    check("AT_SEQUENCE_NUMBER below the oldest -> 400 DIS.4224",
          st == 400 and err_code(obj) == "DIS.4224", (st, obj))
    st, obj = dl_records(cl, o, "0", "TRIM_HORIZON")
    check("TRIM_HORIZON after the trim starts at 3",
          st == 200 and [r["sequence_number"] for r in obj["records"]] ==
          ["3", "4"], (st, obj))

    st, out = cl.control("POST", "/_test/streams/dl/partitions",
                         {"count": 3, "expire": "1"})
    check("add a partition and expire one -> 200",
          st == 200 and out["partitions"] == 3, (st, out))
    d = dl_describe(cl, o)
    check("DescribeStream: 3 partitions, one EXPIRED, 2 writable",
          len(d["partitions"]) == 3 and
          d["partitions"][1]["status"] == "EXPIRED" and
          d["writable_partition_count"] == 2, d)
    st, obj = dl_cursor(cl, o, "1", "TRIM_HORIZON")
    check("GetCursor on the expired partition -> 400 DIS.4319",
          st == 400 and err_code(obj) == "DIS.4319", (st, obj))
    for i in range(20):
        st, _, obj, _ = cl.put("dl", [rec(b"spread", key=str(i))])
    st, obj = dl_records(cl, o, "1", "LATEST")
    check("PutRecords leaves the expired partition out",
          st == 400 and err_code(obj) == "DIS.4319" and
          dl_describe(cl, o)["partitions"][1]["sequence_number_range"] ==
          "[0 : 0]", (st, obj))

    set_faults(cl, read_limit_bytes=10)
    st, obj = dl_records(cl, o, "0", "TRIM_HORIZON")
    st2, obj2 = dl_read(cl, o, obj.get("next_partition_cursor", "")) \
        if st == 200 else (st, obj)
    check("over the read limit -> 400 DIS.4303",
          st == 200 and st2 == 400 and err_code(obj2) == "DIS.4303",
          (st, st2, obj2))
    set_faults(cl, read_limit_bytes=0)


def api_call(cl, o, method, what, query=(), obj=None, raw=None, **kw):
    """A signed DIS call on /v2/PID/what: (status, headers, JSON, raw)."""
    path = "/v2/%s/%s" % (o.project_id, what)
    body = raw if raw is not None else \
        json.dumps(obj).encode() if obj is not None else b""
    q = [(k, str(v)) for k, v in query]
    return cl.send(method, path, body, cl.signed_headers(
        method, path, q, body, **kw), query=q)


def expect_error(name, got, status, code):
    st, _, obj, _ = got
    check("%s -> %d %s" % (name, status, code),
          st == status and err_code(obj) == code, (st, obj))


def no_body(got, status):
    """A reply of status with no body: Content-Length 0 on 201, none at
    all on 204."""
    st, h, _, raw = got
    cl_ok = "content-length" not in h if status == 204 else \
        h.get("content-length") == "0"
    return st == status and raw == b"" and cl_ok


def create_app(cl, o, name):
    return api_call(cl, o, "POST", "apps", obj={"app_name": name})


def ckpt_query(app="ckapp", stream="ck", part="0", **extra):
    q = {"app_name": app, "stream_name": stream, "partition_id": part,
         "checkpoint_type": "LAST_READ"}
    q.update(extra)
    return [(k, v) for k, v in q.items() if v is not None]


def commit(cl, o, seq, app="ckapp", stream="ck", part="0", **extra):
    body = dict(ckpt_query(app, stream, part), sequence_number=seq)
    body.update(extra)
    return api_call(cl, o, "POST", "checkpoints",
                    obj={k: v for k, v in body.items() if v is not None})


def get_ckpt(cl, o, **kw):
    return api_call(cl, o, "GET", "checkpoints", query=ckpt_query(**kw))


def online_apps(cl, o):
    """CreateApp, DescribeApp, ListApps, DeleteApp (section 10)."""
    got = create_app(cl, o, "ckapp")
    check("CreateApp -> 201 with no body", no_body(got, 201), got[:3])
    expect_error("CreateApp of an existing app", create_app(cl, o, "ckapp"),
                 400, "DIS.4330")
    for label, name in (("empty", ""), ("a space", "a b"),
                        ("201 characters", "x" * 201), ("a non-ASCII",
                                                        "caf\u00e9"),
                        ("a number", 7), ("a missing", None)):
        expect_error("CreateApp with %s app_name" % label,
                     api_call(cl, o, "POST", "apps", obj={} if name is None
                              else {"app_name": name}), 400, "DIS.4200")
    expect_error("CreateApp with a body that is not JSON", api_call(
        cl, o, "POST", "apps", raw=b"{app_name"), 400, "DIS.4200")
    got = create_app(cl, o, "A_" + "z" * 197 + "-")
    check("CreateApp of 200 characters of [A-Za-z0-9_-] -> 201",
          no_body(got, 201), got[:3])
    expect_error("CreateApp with a wrong SK", api_call(
        cl, o, "POST", "apps", obj={"app_name": "signed"}, sk="wrong"),
        441, "DIS.4110")
    st, _, obj, _ = api_call(cl, o, "POST", "apps",
                             obj={"app_name": "signed"},
                             extra={"X-Project-Id": "0" * 32})
    check("CreateApp with another project id -> 400 DIS.4117",
          st == 400 and err_code(obj) == "DIS.4117", (st, obj))

    st, _, obj, _ = api_call(cl, o, "GET", "apps/ckapp")
    check("DescribeApp -> app_name, app_id, create_time, no streams",
          st == 200 and obj["app_name"] == "ckapp" and
          isinstance(obj["app_id"], str) and obj["app_id"] and
          isinstance(obj["create_time"], int) and
          abs(obj["create_time"] - time.time() * 1000) < 600000 and
          obj["commit_checkpoint_stream_names"] == [], (st, obj))
    expect_error("DescribeApp of a missing app",
                 api_call(cl, o, "GET", "apps/nosuch"), 400, "DIS.4332")
    for bad in ("a.b", "x" * 201):
        expect_error("DescribeApp of the bad name %.10s" % bad,
                     api_call(cl, o, "GET", "apps/" + bad), 400, "DIS.4200")

    for n in ("la-3", "la-1", "la-2"):
        create_app(cl, o, n)
    st, _, obj, _ = api_call(cl, o, "GET", "apps", query=[("limit", 2)])
    names = [a["app_name"] for a in obj["apps"]] if st == 200 else None
    check("ListApps limit=2 -> first 2 by name, has_more_app, total",
          st == 200 and names == ["A_" + "z" * 197 + "-", "ckapp"] and
          obj["has_more_app"] is True and obj["total_number"] == 5 and
          all("app_id" in a and "create_time" in a for a in obj["apps"]),
          (st, obj))
    st, _, obj, _ = api_call(cl, o, "GET", "apps", query=[
        ("limit", 2), ("start_app_name", "ckapp")])
    check("ListApps after ckapp -> la-1, la-2, more",
          st == 200 and [a["app_name"] for a in obj["apps"]] ==
          ["la-1", "la-2"] and obj["has_more_app"] is True, (st, obj))
    st, _, obj, _ = api_call(cl, o, "GET", "apps", query=[
        ("start_app_name", "la-2")])
    check("ListApps default limit after la-2 -> la-3, no more",
          st == 200 and [a["app_name"] for a in obj["apps"]] == ["la-3"]
          and obj["has_more_app"] is False and obj["total_number"] == 5,
          (st, obj))
    for bad in ("0", "101", "x"):
        expect_error("ListApps limit=%s" % bad, api_call(
            cl, o, "GET", "apps", query=[("limit", bad)]), 400, "DIS.4200")
    expect_error("ListApps on a missing stream", api_call(
        cl, o, "GET", "apps", query=[("stream_name", "nosuch")]),
        400, "DIS.4301")

    got = api_call(cl, o, "DELETE", "apps/la-3/")
    check("DeleteApp -> 204 with no body", no_body(got, 204), got[:3])
    expect_error("DescribeApp after DeleteApp",
                 api_call(cl, o, "GET", "apps/la-3"), 400, "DIS.4332")
    expect_error("DeleteApp of a missing app",
                 api_call(cl, o, "DELETE", "apps/la-3"), 400, "DIS.4332")
    st, out = cl.control("POST", "/_test/apps",
                         {"app_name": "la-2", "in_use": True})
    check("POST /_test/apps in_use -> 200", st == 200 and out["in_use"] and
          not out["created"], (st, out))
    expect_error("DeleteApp of an app in use",
                 api_call(cl, o, "DELETE", "apps/la-2"), 400, "DIS.4331")
    cl.control("POST", "/_test/apps", {"app_name": "la-2", "in_use": False})
    check("DeleteApp once no longer in use -> 204",
          no_body(api_call(cl, o, "DELETE", "apps/la-2"), 204))

    st, out = cl.control("GET", "/_test/apps")
    set_faults(cl, app_quota=len(out["apps"]))
    expect_error("CreateApp past app_quota", create_app(cl, o, "la-4"),
                 400, "DIS.4329")
    set_faults(cl, app_quota=0)
    check("CreateApp with no quota -> 201",
          no_body(create_app(cl, o, "la-4"), 201))


def online_checkpoints(cl, o):
    """CommitCheckpoint, GetCheckpoint, DeleteCheckpoint (section 10)."""
    st, _ = cl.control("POST", "/_test/streams",
                       {"name": "ck", "type": "COMMON", "partitions": 2})
    check("POST /_test/streams ck -> 201", st == 201, st)
    for i in range(3):
        cl.put("ck", [rec(b"ck %d" % i, partition_id="0")])
    st, _, obj, _ = get_ckpt(cl, o)
    check("GetCheckpoint before any commit -> 200 sequence_number -1",
          st == 200 and obj == {"sequence_number": "-1", "metadata": ""},
          (st, obj))
    got = commit(cl, o, "1", part="shardId-0000000000", metadata="m1")
    check("CommitCheckpoint -> 201 with no body", no_body(got, 201),
          got[:3])
    st, _, obj, _ = get_ckpt(cl, o, part="0")
    check("GetCheckpoint by the bare partition number -> 1, m1",
          st == 200 and obj == {"sequence_number": "1", "metadata": "m1"},
          (st, obj))
    check("CommitCheckpoint of the last record -> 201",
          no_body(commit(cl, o, "2"), 201))
    st, _, obj, _ = get_ckpt(cl, o, part="shardId-0000000000")
    check("GetCheckpoint after a commit without metadata -> 2, ''",
          st == 200 and obj == {"sequence_number": "2", "metadata": ""},
          (st, obj))
    st, _, obj, _ = commit(cl, o, "3")
    check("CommitCheckpoint past the last record -> 400 DIS.4224 with "
          "the range", st == 400 and err_code(obj) == "DIS.4224" and
          "[3][ should be within ][0][ ][2]" in obj["message"], (st, obj))
    expect_error("CommitCheckpoint on an empty partition",
                 commit(cl, o, "0", part="1"), 400, "DIS.4224")
    st, _, obj, _ = get_ckpt(cl, o, part="1")
    check("GetCheckpoint of another partition -> -1",
          st == 200 and obj["sequence_number"] == "-1", (st, obj))
    sid = dis_server_stream_id(cl, o, "ck")
    check("CommitCheckpoint by stream_id -> 201", no_body(commit(
        cl, o, "0", stream=None, stream_id=sid), 201))
    st, _, obj, _ = api_call(cl, o, "GET", "checkpoints", query=ckpt_query(
        stream=None, stream_id=sid))
    check("GetCheckpoint by stream_id -> 0",
          st == 200 and obj["sequence_number"] == "0", (st, obj))

    for name, got, code in (
            ("a missing app", commit(cl, o, "1", app="nosuch"), "DIS.4332"),
            ("a missing stream", commit(cl, o, "1", stream="nosuch"),
             "DIS.4301"),
            ("a missing stream_id", commit(cl, o, "1", stream=None,
                                           stream_id="nosuch"), "DIS.4301"),
            ("partition 9", commit(cl, o, "1", part="9"), "DIS.4302"),
            ("partition shardId-0000000002", commit(
                cl, o, "1", part="shardId-0000000002"), "DIS.4302"),
            ("partition 'bogus'", commit(cl, o, "1", part="bogus"),
             "DIS.4201"),
            ("no partition_id", commit(cl, o, "1", part=None), "DIS.4200"),
            ("a numeric partition_id", commit(cl, o, "1", part=0),
             "DIS.4200"),
            ("sequence_number 'x'", commit(cl, o, "x"), "DIS.4216"),
            ("sequence_number '-1'", commit(cl, o, "-1"), "DIS.4216"),
            ("a numeric sequence_number", commit(cl, o, 1), "DIS.4200"),
            ("no sequence_number", commit(cl, o, None), "DIS.4200"),
            ("metadata of 1001 characters", commit(
                cl, o, "1", metadata="x" * 1001), "DIS.4200"),
            ("numeric metadata", commit(cl, o, "1", metadata=5),
             "DIS.4200"),
            ("checkpoint_type BOGUS", commit(cl, o, "1",
                                             checkpoint_type="BOGUS"),
             "DIS.4200"),
            ("a bad app_name", commit(cl, o, "1", app="a/b"), "DIS.4200"),
            ("a body that is not JSON", api_call(
                cl, o, "POST", "checkpoints", raw=b"["), "DIS.4200")):
        expect_error("CommitCheckpoint with %s" % name, got, 400, code)
    check("CommitCheckpoint with metadata of 1000 characters -> 201",
          no_body(commit(cl, o, "1", metadata="\u00e9" * 1000), 201))
    st, _, obj, _ = get_ckpt(cl, o)
    check("GetCheckpoint -> the 1000 characters of metadata",
          st == 200 and obj["metadata"] == "\u00e9" * 1000, st)
    for name, kw, code in (("a missing app", {"app": "nosuch"}, "DIS.4332"),
                           ("a missing stream", {"stream": "nosuch"},
                            "DIS.4301"),
                           ("partition 5", {"part": "5"}, "DIS.4302"),
                           ("no partition_id", {"part": None}, "DIS.4200"),
                           ("no checkpoint_type", {"checkpoint_type": None},
                            "DIS.4200")):
        expect_error("GetCheckpoint with %s" % name, get_ckpt(cl, o, **kw),
                     400, code)
    expect_error("GetCheckpoint with a wrong SK", api_call(
        cl, o, "GET", "checkpoints", query=ckpt_query(), sk="wrong"),
        441, "DIS.4110")

    st, _, obj, _ = api_call(cl, o, "GET", "apps/ckapp")
    check("DescribeApp lists the stream it committed on",
          st == 200 and obj["commit_checkpoint_stream_names"] == ["ck"],
          (st, obj))
    st, _, obj, _ = api_call(cl, o, "GET", "apps", query=[
        ("stream_name", "ck")])
    check("ListApps stream_name=ck -> only ckapp",
          st == 200 and [a["app_name"] for a in obj["apps"]] == ["ckapp"]
          and obj["total_number"] == 1, (st, obj))

    # A checkpoint that falls out of range, as an e2e test makes one.
    st, out = cl.control("POST", "/_test/checkpoints", {
        "app_name": "ckapp", "stream_name": "ck", "partition_id": "0",
        "sequence_number": 0, "metadata": "preset"})
    check("POST /_test/checkpoints -> 200", st == 200 and
          out["created_app"] is False, (st, out))
    cl.control("POST", "/_test/streams/ck/partitions",
               {"trim": "0", "before": 2})
    st, _, obj, _ = get_ckpt(cl, o)
    check("GetCheckpoint keeps a checkpoint the trim left behind",
          st == 200 and obj == {"sequence_number": "0",
                                "metadata": "preset"}, (st, obj))
    st, cur = dl_get(cl, o, "cursors", [
        ("stream-name", "ck"), ("partition-id", "0"),
        ("cursor-type", "AFTER_SEQUENCE_NUMBER"),
        ("starting-sequence-number", obj["sequence_number"])])
    check("GetCursor after that checkpoint -> 400 DIS.4224",
          st == 400 and err_code(cur) == "DIS.4224", (st, cur))
    expect_error("CommitCheckpoint below the oldest record kept",
                 commit(cl, o, "1"), 400, "DIS.4224")
    check("CommitCheckpoint of the oldest record kept -> 201",
          no_body(commit(cl, o, "2"), 201))
    st, out = cl.control("POST", "/_test/checkpoints", {
        "app_name": "fresh", "stream_name": "ck", "partition_id": "1",
        "sequence_number": "99"})
    check("POST /_test/checkpoints creates the app, any sequence number",
          st == 200 and out["created_app"] is True, (st, out))
    st, _, obj, _ = get_ckpt(cl, o, app="fresh", part="1")
    check("GetCheckpoint of the preset app -> 99",
          st == 200 and obj["sequence_number"] == "99", (st, obj))
    for body, want in (({"app_name": "fresh", "stream_name": "nosuch",
                         "partition_id": "0", "sequence_number": 1}, 404),
                       ({"app_name": "fresh", "stream_name": "ck",
                         "partition_id": "7", "sequence_number": 1}, 400),
                       ({"app_name": "a b", "stream_name": "ck",
                         "partition_id": "0", "sequence_number": 1}, 400),
                       ({"app_name": "fresh", "stream_name": "ck",
                         "partition_id": "0", "sequence_number": -2}, 400)):
        st, out = cl.control("POST", "/_test/checkpoints", body)
        check("POST /_test/checkpoints %r -> %d" % (body, want),
              st == want, (st, out))
    cl.control("POST", "/_test/checkpoints", {
        "app_name": "fresh", "stream_name": "ck", "partition_id": "1",
        "sequence_number": None})
    st, _, obj, _ = get_ckpt(cl, o, app="fresh", part="1")
    check("POST /_test/checkpoints sequence_number null removes it",
          st == 200 and obj["sequence_number"] == "-1", (st, obj))
    cl.control("POST", "/_test/checkpoints", {
        "app_name": "fresh", "stream_name": "ck", "partition_id": "1",
        "sequence_number": 5})
    st, out = cl.control("GET", "/_test/apps")
    check("GET /_test/apps shows the checkpoints",
          st == 200 and out["apps"]["ckapp"]["checkpoints"]["ck"][
              "shardId-0000000000"] == {"sequence_number": "2",
                                        "metadata": ""} and
          out["apps"]["fresh"]["checkpoints"]["ck"][
              "shardId-0000000001"]["sequence_number"] == "5", (st, out))

    # Deleting: one partition, then the SDKPY form (no partition_id and
    # no checkpoint_type): all of the stream's partitions.
    cl.control("POST", "/_test/checkpoints", {
        "app_name": "ckapp", "stream_name": "ck", "partition_id": "1",
        "sequence_number": 7})
    got = api_call(cl, o, "DELETE", "checkpoints", query=ckpt_query())
    check("DeleteCheckpoint of one partition -> 204 with no body",
          no_body(got, 204), got[:3])
    a, b = get_ckpt(cl, o), get_ckpt(cl, o, part="1")
    check("DeleteCheckpoint took partition 0 only",
          a[2]["sequence_number"] == "-1" and
          b[2]["sequence_number"] == "7", (a[2], b[2]))
    got = api_call(cl, o, "DELETE", "checkpoints", query=[
        ("stream_name", "ck"), ("app_name", "ckapp")])
    check("DeleteCheckpoint without partition_id -> 204",
          no_body(got, 204), got[:3])
    st, _, obj, _ = get_ckpt(cl, o, part="1")
    check("DeleteCheckpoint without partition_id took them all",
          st == 200 and obj["sequence_number"] == "-1", (st, obj))
    for name, q, code in (
            ("a missing app", ckpt_query(app="nosuch"), "DIS.4332"),
            ("a missing stream", ckpt_query(stream="nosuch"), "DIS.4301"),
            ("partition 4", ckpt_query(part="4"), "DIS.4302"),
            ("checkpoint_type BOGUS", ckpt_query(checkpoint_type="BOGUS"),
             "DIS.4200")):
        expect_error("DeleteCheckpoint with %s" % name, api_call(
            cl, o, "DELETE", "checkpoints", query=q), 400, code)

    # DeleteApp takes its checkpoints; a stream deleted takes its own.
    commit(cl, o, "2")
    api_call(cl, o, "DELETE", "apps/ckapp")
    create_app(cl, o, "ckapp")
    st, _, obj, _ = get_ckpt(cl, o)
    check("an app deleted and created again has no checkpoint",
          st == 200 and obj["sequence_number"] == "-1", (st, obj))
    cl.control("POST", "/_test/streams",
               {"name": "ck2", "type": "COMMON", "partitions": 1})
    cl.control("POST", "/_test/checkpoints", {
        "app_name": "ckapp", "stream_name": "ck2", "partition_id": "0",
        "sequence_number": 3})
    cl.control("DELETE", "/_test/streams/ck2")
    st, out = cl.control("GET", "/_test/apps")
    check("DELETE /_test/streams drops the stream's checkpoints",
          st == 200 and "ck2" not in out["apps"]["ckapp"]["checkpoints"],
          (st, out))
    cl.control("POST", "/_test/streams/ck/partitions", {"expire": "1"})
    expect_error("CommitCheckpoint on an expired partition",
                 commit(cl, o, "0", part="1"), 400, "DIS.4319")


def dis_server_stream_id(cl, o, name):
    p = "/v2/%s/streams/%s/" % (o.project_id, name)
    return cl.send("GET", p, b"", cl.signed_headers("GET", p, [], b""))[2][
        "stream_id"]


def online_portless_host(cl, o):
    """accept_portless_host: the DIS Python SDK signs Host without the
    port it sends (spec 6.3b); off by default, so the agent is held to
    what it sends."""
    path = "/v2/%s/apps" % o.project_id
    q = [("limit", "1")]

    def portless(**kw):
        h = cl.signed_headers("GET", path, q, b"", host="127.0.0.1",
                              dialect="v11", **kw)
        h["Host"] = cl.host
        return cl.send("GET", path, b"", h, query=q)

    expect_error("signed over Host without port, knob off", portless(),
                 441, "DIS.4110")
    _, before = cl.control("GET", "/_test/stats")
    set_faults(cl, accept_portless_host=True)
    st, _, obj, _ = portless()
    check("signed over Host without port, accept_portless_host -> 200",
          st == 200 and "apps" in obj, (st, obj))
    expect_error("accept_portless_host still checks the key",
                 portless(sk="wrong"), 441, "DIS.4110")
    st, _, obj, _ = api_call(cl, o, "GET", "apps", query=q)
    check("accept_portless_host: signed with the port -> 200", st == 200,
          (st, obj))
    _, after = cl.control("GET", "/_test/stats")
    check("portless_host_signatures counts the one accepted",
          after["portless_host_signatures"] ==
          before["portless_host_signatures"] + 1, after)
    set_faults(cl, accept_portless_host=False)
    expect_error("signed over Host without port, knob off again",
                 portless(), 441, "DIS.4110")


def online_stats(cl, o):
    st, s = cl.control("GET", "/_test/stats")
    check("GET /_test/stats", st == 200 and s["auth_failures"] >= 10 and
          s["dropped"] >= 2 and s["records_accepted"] >= 3000 and
          s["records_failed_by_code"].get("DIS.4303", 0) >= 10 and
          s["status_counts"].get("441", 0) >= 10 and
          s["put_requests"] > 0 and s["requests"] >= s["put_requests"] and
          s["records_received"] >= s["records_accepted"], s)


def online(o):
    cl = Client(o)
    for step in (online_auth, online_temporary_keys, online_api,
                 online_compression, online_faults, online_limits,
                 online_records_tool, online_download, online_apps,
                 online_checkpoints, online_portless_host, online_stats):
        try:
            step(cl, o)
        except Exception as e:
            import traceback
            traceback.print_exc()
            check(step.__name__ + " ran to completion", False, repr(e))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--port", type=int, help="server port (online tests)")
    p.add_argument("--ca")
    p.add_argument("--records")
    p.add_argument("--tmp")
    p.add_argument("--project-id")
    p.add_argument("--region", default="cn-north-1")
    p.add_argument("--ak")
    p.add_argument("--sk")
    p.add_argument("--token")
    o = p.parse_args()
    test_vectors()
    test_negative_vectors()
    test_v11_and_partitions()
    if o.port:
        online(o)
    else:
        print("# no --port: offline checks only")
    print("%d passed, %d failed" % (len(PASSED), len(FAILED)))
    return 1 if FAILED or not PASSED else 0


if __name__ == "__main__":
    sys.exit(main())
