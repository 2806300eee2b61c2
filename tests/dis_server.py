#!/usr/bin/env python3
"""A DIS-compatible HTTPS test endpoint for the disagent tests.

Implements the parts of the Huawei Cloud DIS v2 API the agent uses
(spec/dis-api.md): PutRecords (sections 2-3, 7, 8), DescribeStream (5),
GetCursor and GetRecords, apps and checkpoints (10) and request
authentication (6), plus fault injection and an unauthenticated control
API under /_test/ that only this test server has.  Standard library
plus lz4 and zstandard (Debian: python3-lz4, python3-zstandard); without
them it refuses to start, naming the packages, rather than answer every
compressed body with an error.

PutRecords bodies are JSON, or protobuf when the Content-Type is
application/x-protobuf (section 1: PutRecordsRequest, field numbers as in
the DIS SDK); a protobuf request gets its 200 reply as a PutRecordsResult
in protobuf, and every error reply in JSON, as for JSON requests.  Both go
through the same checks, faults and records file.

Every accepted record is appended as one JSON line to --records-file:
  {"stream","partition_id","sequence_number","partition_key","data","req","t"}
where "data" is the Base64 text as received (for protobuf, the Base64 of
the record's bytes), "req" the request counter and
"t" the time the request was acknowledged (time.time_ns(), taken just
before its records are written and the reply is sent; bench/ measures
latency with it); the lines of one request are written with one write()
and flushed.

Authentication (HTTP 441 unless noted).  A request passes with either
X-Auth-Token equal to --token, or an Authorization header in one of three
dialects, verified by recomputing the signature from the request exactly as
received (method, path, query, signed header values incl. Host with its
port, SHA-256 of the raw body bytes before any decompression):
  SDK-HMAC-SHA256 Credential=AK/yyyyMMdd/region/dis/sdk_request, ...  (6.2)
  SDK-HMAC-SHA256 Access=AK, SignedHeaders=..., Signature=...         (6.3)
  V11-HMAC-SHA256 Credential=AK/yyyyMMdd/region/dis/sdk_request, ...  (6.3b)
Error codes chosen for this server:
  DIS.4100  no Authorization header (and no X-Auth-Token; no --token set)
  DIS.4101  malformed Authorization: unknown algorithm, unparsable fields,
            SignedHeaders without x-sdk-date or naming a header not sent
  DIS.4102  unknown access key (AK)
  DIS.4103  X-Sdk-Date more than 15 minutes away from the server clock
  DIS.4104  X-Sdk-Date missing or not yyyyMMdd'T'HHmmss'Z'
  DIS.4105  credential scope date differs from the X-Sdk-Date day
  DIS.4106  credential scope service/terminator wrong
  DIS.4111  credential scope region wrong (DIS's own "Invalid Region
            header")
  DIS.4110  signature mismatch
  DIS.4113  no X-Auth-Token and no Authorization while --token is set;
            temporary keys without X-Security-Token
  DIS.4114  X-Auth-Token present but not the configured token; a wrong or
            unsigned X-Security-Token
  DIS.4115  temporary keys past their expires_at
Temporary keys (--security-token, or POST /_test/temporary_keys) are
accepted only with their X-Security-Token, sent and signed (SignedHeaders
names x-security-token), as the DIS SDK sends it.
Other errors: 400 {"errorCode":"DIS.4117"} wrong project id (path or
X-Project-Id), DIS.4301 unknown stream, DIS.4202 empty records, DIS.4200
bad JSON/body/encoding, DIS.4201 bad partition_id; per-record DIS.4200 for
an oversize record; 413 (gateway-style body) when the raw data of a request
exceeds max_request_bytes; 404 (gateway-style) for an unknown path.

Reading back (section 10).  Accepted records are kept per partition in
sequence order (--retain-records per partition, default 1,000,000; past
that the oldest tenth is dropped, as retention would; none with
--ack-only), with the time of acknowledgement as their "timestamp"
(timestamp_type CreateTime).  DescribeStream gives each partition's
status and "[oldest : next]" as sequence_number_range (next being the
number the next record gets).  A cursor is standard Base64 of the
position and the time it was issued.  GetRecords returns the records from
the cursor that fit max_fetch_bytes (default 1 MiB of raw data; a first
record larger than that is not returned) and at most records_per_get
(default 1000), with a next cursor after them.  Errors (400): DIS.4215
cursor-type, DIS.4216 starting-sequence-number not a number, DIS.4224 out
of [oldest, next] (AFTER_SEQUENCE_NUMBER N asks for N + 1), DIS.4217 a
cursor that does not decode, DIS.4225 a cursor older than cursor_ttl_ms
(default 300000), DIS.4226 a cursor below the oldest record kept, DIS.4302
no such partition, DIS.4319 partition expired, DIS.4303 the partition's
read limit (read_limit_bytes per second, default 2 MB COMMON, 10 MB
ADVANCED; a token bucket one second deep that a reply may overdraw).

Write limit (write_limit_bytes, default 0: none).  Each partition takes at
most that many bytes of raw record data per second: a token bucket one
second deep, refilled continuously; a record that does not fit what is
left fails with DIS.4303 (per record, as DIS throttles a partition), unless
the bucket is full (so a record larger than the limit still passes, once a
second).  stats "write_limit" gives, per "STREAM/PARTITION", the bytes
accepted, the records it throttled, and the endpoint's time (time.time_ns())
of the first record it accepted or throttled and of the last it accepted:
the partition's capacity over that time is write_limit_bytes per second
plus the one second its bucket held at the start.  stats "retried" counts
the records a PutRecords carries that were refused one by one before (by a
fault or the write limit) and not accepted since: "records", those of them
in a request that also carries records never refused ("with_new"), and
the sum of the sizes of their requests ("request_records"; divided by
"records", the size of the request a retried record travels in).

Apps and checkpoints (section 10; shapes as in the DIS API reference and
the official Java and Python SDKs), kept in memory, signed like every
call.  App names are 1-200 characters of [A-Za-z0-9_-]; checkpoints are
LAST_READ only, one per app and stream partition.
  POST /v2/{pid}/apps {"app_name"}        CreateApp: 201, no body
  GET /v2/{pid}/apps?limit&start_app_name&stream_name
      ListApps: {"has_more_app", "apps": [app...], "total_number"}; apps
      by name after start_app_name (exclusive), limit 1-100 (default 10),
      stream_name: only apps with a checkpoint on that stream
  GET /v2/{pid}/apps/{app}                DescribeApp: {"app_id",
      "app_name", "create_time" (ms), "commit_checkpoint_stream_names"}
  DELETE /v2/{pid}/apps/{app}             DeleteApp: 204, checkpoints too
  POST /v2/{pid}/checkpoints {"app_name", "checkpoint_type": "LAST_READ",
      "stream_name" or "stream_id", "partition_id", "sequence_number",
      "metadata"?}                        CommitCheckpoint: 201, no body
  GET /v2/{pid}/checkpoints?app_name&checkpoint_type&stream_name&
      partition_id                        GetCheckpoint: 200
      {"sequence_number", "metadata"}; "-1" and "" before a first commit
      (the API reference says 204, which cannot carry a body)
  DELETE /v2/{pid}/checkpoints?app_name&stream_name[&partition_id]
      [&checkpoint_type]                  DeleteCheckpoint: 204; without
      partition_id (as the Python SDK sends it) all of the stream's
      partitions
partition_id is "shardId-0000000003" or "3"; sequence_number and
partition_id are JSON strings, as documented.  A checkpoint is stored
as committed and kept when retention (or a trim) passes it.  Errors
(400): DIS.4200 bad JSON, app_name, checkpoint_type, limit, a field
missing or of the wrong type, metadata over 1000 characters; DIS.4330
app exists; DIS.4329 more apps than app_quota (0: no limit); DIS.4331
DeleteApp of an app marked in use (/_test/apps); DIS.4332 no such app;
DIS.4301 no such stream; DIS.4201 malformed partition_id; DIS.4302 no
such partition; DIS.4319 commit on an expired partition; DIS.4216
sequence_number not a decimal number; DIS.4224 a commit outside the
records the partition holds, [oldest, next - 1], with DIS's message
"Sequence_number out of range. [N][ should be within ][A][ ][B]" (the
API reference: the sequence number must lie in the valid range; 4224 is
DIS's out-of-range code, and the Java SDK parses that message).

Signatures over Host without its port (the Python SDK's signer, section
6.3b) fail with DIS.4110 unless accept_portless_host is set (CLI
--accept-portless-host or /_test/faults): then a mismatch is retried once
with the port taken off Host, and counted in portless_host_signatures.

Faults (CLI --name or POST /_test/faults {"name": value}):
  drop, outage, latency_ms   every DIS API request (not /_test/)
  put_latency_ms             PutRecords only, after put_requests counts it:
                             the request lands (its records are stored)
                             when the delay is over, whether or not the
                             client is still there (a request held on its
                             way, landing after the client gave up or died)
  put_reply_latency_ms       PutRecords only: the records are stored on
                             receipt, as DIS does, and the reply waits this
                             long (a client that times out meanwhile does
                             not know they landed)
  reject_prefix              PutRecords records whose data starts with it
                             fail with DIS.4200 (rejected for good)
  req_500, req_429, req_400_4303, rec_4303, rec_5000, max_request_bytes
                             PutRecords only
  deny_reads                 GetCursor and GetRecords answer 403 DIS.4116
                             (keys without read permission: the RBAC
                             error of section 4), after authentication
  refuse_protobuf            "415": protobuf PutRecords answer 415 (an
                             endpoint that takes no protobuf); "json-only":
                             their bodies are read as JSON, so they answer
                             400 DIS.4200 "invalid JSON body" (one that
                             ignores the Content-Type); "": taken.  Either
                             way none of their records is stored; stats
                             protobuf_refused counts them
  short_replies, html_replies  the next N PutRecords are accepted, but
                             answered 200 with the reply's last entry
                             left out, or with an HTML page
max_request_bytes null or 0 means the stream type's cap (1 MiB COMMON,
5 MiB ADVANCED), compared with the sum of decoded record sizes.  A uniform
draw u per request (only while drop > 0) picks drop; one per PutRecords picks
u < req_500 -> 500, u < req_500+req_429 -> 429, u < ...+req_400_4303 -> 400
DIS.4303; one per record picks u < rec_4303 -> DIS.4303, u < rec_4303 +
rec_5000 -> DIS.5000.  All draws come from one random.Random(--seed) under
one lock.

A DIS API request is handled in this order: read the whole body; outage or
drop (close without a reply); latency; route (404); authentication (441);
project id (400 DIS.4117); PutRecords request faults; decode lz4/zstd; JSON
or protobuf and stream checks (400); the 413 size check; per-record results.
App and checkpoint calls, after the project id: fields (DIS.4200, 4216),
app (4332), stream (4301), partition (4201, 4302, 4319), range (4224).

Typical use (see tests/e2e/server_selftest.sh):
  sh tests/make_test_ca.sh DIR
  python3 tests/dis_server.py --cert DIR/server.pem --key DIR/server.key \
      --port 0 --port-file DIR/port --ak AK --sk SK --project-id PID \
      --stream app:COMMON:2 --records-file DIR/records.jsonl \
      --log-file DIR/server.log --seed 1 &
then point the agent at https://127.0.0.1:$(cat DIR/port) with CA DIR/ca.pem.

Knobs of the same API (CLI --cursor-ttl-ms ...): cursor_ttl_ms,
read_limit_bytes, records_per_get (0: the defaults above), app_quota,
accept_portless_host.

Control API (no authentication): GET/POST /_test/faults, POST /_test/streams
{"name","type","partitions"}, DELETE /_test/streams/NAME, POST
/_test/streams/NAME/partitions {"count": N} (add partitions up to N) or
{"expire": ID} (expire one: its records go, PutRecords leaves it out) or
{"trim": ID, "before": SEQ} (drop its records below SEQ), POST
/_test/credentials {"ak","sk"[,"also_sk"][,"token"]} (also_sk: a
  second secret key valid too, as in a key rotation's overlap), POST /_test/temporary_keys
{"keys": [{"ak","sk","security_token"[,"expires_at": epoch]}, ...]} (these
keys and no others from now on), POST /_test/apps {"app_name"[,
"in_use": bool]} (create the app if missing; mark it in use), POST
/_test/checkpoints {"app_name","stream_name","partition_id",
"sequence_number"[,"metadata"]} (set a checkpoint as if committed but
with no range check, creating the app if missing; sequence_number null
removes it; with a trim, this is how a test puts a checkpoint out of
range), GET /_test/apps (every app and its checkpoints), GET
/_test/stats.  Deleting a stream drops its checkpoints.  Counters in
stats cover DIS API requests only; put_by_content_type counts PutRecords
requests by media type ("application/json", "application/x-protobuf").
"""

import argparse
import base64
import binascii
import datetime
import hashlib
import hmac
import http.server
import json
import os
import random
import re
import signal
import socket
import ssl
import sys
import threading
import time
import traceback
import urllib.parse

try:
    import lz4.block
    import zstandard
except ImportError as e:
    sys.exit("dis_server: %s: %s lacks the module; install python3-lz4 and "
             "python3-zstandard (Debian), or run the tests with the Python "
             "configure found (PYTHON3=/usr/bin/python3)"
             % (e, sys.executable))

# ---------------------------------------------------------------------------
# Signing primitives (importable; the self test checks them against 6.5).

EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()
DATE_FMT = "%Y%m%dT%H%M%SZ"
MAX_SKEW_SECONDS = 15 * 60
ALG_SDK = "SDK-HMAC-SHA256"
ALG_V11 = "V11-HMAC-SHA256"
SERVICE = "dis"
TERMINATOR = "sdk_request"
LONG_MAX = 2 ** 63 - 1
MIB = 1024 * 1024
RECORD_CAP = {"COMMON": MIB, "ADVANCED": 5 * MIB}
REQUEST_CAP = {"COMMON": MIB, "ADVANCED": 5 * MIB}
BODY_HARD_CAP = 64 * MIB
PROTOBUF_TYPE = "application/x-protobuf"
PROTOBUF_CTYPE = PROTOBUF_TYPE + "; charset=utf-8"


def sha256_hex(data):
    """Lowercase hex SHA-256 of bytes (str is UTF-8 encoded)."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    return hashlib.sha256(data).hexdigest()


def hmac_sha256(key, msg):
    """Raw HMAC-SHA256; str arguments are UTF-8 encoded."""
    if isinstance(key, str):
        key = key.encode("utf-8")
    if isinstance(msg, str):
        msg = msg.encode("utf-8")
    return hmac.new(key, msg, hashlib.sha256).digest()


def uri_encode(s):
    """Percent-encode everything except A-Za-z0-9-_.~ (uppercase %XX)."""
    return urllib.parse.quote(s, safe="-_.~")


def canonical_uri(path):
    """Canonical URI of 6.1 from a received (possibly encoded) path.

    Each "/"-separated segment is decoded then re-encoded; the result always
    ends in "/".
    """
    segs = [uri_encode(urllib.parse.unquote(s)) for s in path.split("/")]
    uri = "/".join(segs)
    if not uri.startswith("/"):
        uri = "/" + uri
    if not uri.endswith("/"):
        uri += "/"
    return uri


def canonical_query(query):
    """Canonical query string of 6.1 from a raw query string (may be "")."""
    if not query:
        return ""
    pairs = urllib.parse.parse_qsl(query, keep_blank_values=True)
    enc = sorted((uri_encode(k), uri_encode(v)) for k, v in pairs)
    return "&".join("%s=%s" % kv for kv in enc)


def canonical_headers(headers, signed):
    """The HEADERS block: "name:trimmed-value\\n" per signed name, sorted.

    headers maps lowercase names to values; signed is a list of lowercase
    names.  Raises KeyError when a signed header is absent.
    """
    return "".join("%s:%s\n" % (n, headers[n].strip())
                   for n in sorted(signed))


def build_canonical_request(method, uri, query, headers_block, signed,
                            body_hash):
    """Join the six parts of 6.1 literally (no normalization at all)."""
    return "%s\n%s\n%s\n%s\n%s\n%s" % (method, uri, query, headers_block,
                                       ";".join(sorted(signed)), body_hash)


def canonical_request(method, path, query, headers, signed, body):
    """Canonical request for a request as received (body: bytes)."""
    return build_canonical_request(method, canonical_uri(path),
                                   canonical_query(query),
                                   canonical_headers(headers, signed),
                                   signed, sha256_hex(body))


def string_to_sign(algorithm, sdk_date, scope, canonical_hash):
    """StringToSign of 6.2/6.3b (scope given) or 6.3 (scope None)."""
    if scope is None:
        return "%s\n%s\n%s" % (algorithm, sdk_date, canonical_hash)
    return "%s\n%s\n%s\n%s" % (algorithm, sdk_date, scope, canonical_hash)


def dis_signing_key(secret, date8, region, service=SERVICE):
    """kSigning of 6.2 from "SDK"+secret and the scope parts."""
    key = ("SDK" + secret).encode("utf-8")
    for part in (date8, region, service, TERMINATOR):
        key = hmac_sha256(key, part)
    return key


def v11_secret(ak, sk, date8, region, service=SERVICE):
    """Derived secret of 6.3b: hex HKDF-SHA256(salt=AK, ikm=SK, info)."""
    prk = hmac_sha256(ak, sk)
    info = ("%s/%s/%s" % (date8, region, service)).encode("utf-8")
    return hmac_sha256(prk, info + b"\x01").hex()


def signature_for(dialect, ak, sk, region, sdk_date, canonical_hash):
    """Hex signature for dialect "dis", "apig" or "v11"."""
    date8 = sdk_date[:8]
    scope = "%s/%s/%s/%s" % (date8, region, SERVICE, TERMINATOR)
    if dialect == "apig":
        sts = string_to_sign(ALG_SDK, sdk_date, None, canonical_hash)
        return hmac.new(sk.encode("utf-8"), sts.encode("utf-8"),
                        hashlib.sha256).hexdigest()
    if dialect == "v11":
        secret = v11_secret(ak, sk, date8, region)
        alg = ALG_V11
    else:
        secret = sk
        alg = ALG_SDK
    sts = string_to_sign(alg, sdk_date, scope, canonical_hash)
    return hmac.new(dis_signing_key(secret, date8, region),
                    sts.encode("utf-8"), hashlib.sha256).hexdigest()


class AuthError(Exception):
    """Authentication failure: HTTP status 441 and a DIS error code."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message


_AUTH_RE = re.compile(r"^\s*(\S+)\s+(.*)$", re.S)


def parse_authorization(value):
    """Parse an Authorization value into a dict or raise AuthError(4101).

    Keys: algorithm, dialect ("dis", "apig", "v11"), ak, scope (list of four
    strings or None), signed (list of names), signature.
    """
    m = _AUTH_RE.match(value or "")
    if not m or m.group(1) not in (ALG_SDK, ALG_V11):
        raise AuthError("DIS.4101", "unsupported Authorization algorithm")
    alg = m.group(1)
    fields = {}
    for part in m.group(2).split(","):
        if "=" not in part:
            raise AuthError("DIS.4101", "malformed Authorization field")
        k, v = part.split("=", 1)
        k = k.strip()
        if k in fields:
            raise AuthError("DIS.4101", "duplicate Authorization field")
        fields[k] = v.strip()
    sig = fields.get("Signature")
    sh = fields.get("SignedHeaders")
    if not sig or not sh or not re.fullmatch(r"[0-9a-fA-F]{64}", sig):
        raise AuthError("DIS.4101", "missing or bad Signature/SignedHeaders")
    signed = sh.split(";")
    if any(not n or n != n.lower() or n.strip() != n for n in signed):
        raise AuthError("DIS.4101", "SignedHeaders must be lowercase names")
    if "x-sdk-date" not in signed:
        raise AuthError("DIS.4101", "SignedHeaders lacks x-sdk-date")
    out = {"algorithm": alg, "signed": signed, "signature": sig.lower()}
    if "Credential" in fields and "Access" not in fields:
        parts = fields["Credential"].split("/")
        if len(parts) != 5 or not parts[0]:
            raise AuthError("DIS.4101", "malformed Credential")
        out.update(dialect="v11" if alg == ALG_V11 else "dis",
                   ak=parts[0], scope=parts[1:])
    elif "Access" in fields and "Credential" not in fields \
            and alg == ALG_SDK:
        if not fields["Access"]:
            raise AuthError("DIS.4101", "empty Access")
        out.update(dialect="apig", ak=fields["Access"], scope=None)
    else:
        raise AuthError("DIS.4101", "need exactly one of Credential/Access")
    return out


def verify_signature(method, path, query, headers, body, credentials,
                     region, now=None):
    """Verify a signed request as received; return the AK or raise AuthError.

    headers maps lowercase names to received values; credentials maps AK to
    SK; now is UTC epoch seconds (default: the clock).
    """
    auth = parse_authorization(headers.get("authorization"))
    for n in auth["signed"]:
        if n not in headers:
            raise AuthError("DIS.4101", "signed header %s not sent" % n)
    sdk_date = headers.get("x-sdk-date", "").strip()
    try:
        t = datetime.datetime.strptime(sdk_date, DATE_FMT).replace(
            tzinfo=datetime.timezone.utc)
    except ValueError:
        raise AuthError("DIS.4104", "X-Sdk-Date missing or malformed")
    if not re.fullmatch(r"\d{8}T\d{6}Z", sdk_date):
        raise AuthError("DIS.4104", "X-Sdk-Date malformed")
    if now is None:
        now = time.time()
    if abs(now - t.timestamp()) > MAX_SKEW_SECONDS:
        raise AuthError("DIS.4103", "X-Sdk-Date %s is more than 15 minutes "
                        "from the server clock" % sdk_date)
    scope = auth["scope"]
    if scope is not None:
        if scope[0] != sdk_date[:8]:
            raise AuthError("DIS.4105", "credential scope date differs "
                            "from X-Sdk-Date")
        if scope[1] != region:
            # DIS's own code for a region it does not serve.
            raise AuthError("DIS.4111", "Invalid Region header: %s, not "
                            "%s" % (scope[1], region))
        if scope[2:] != [SERVICE, TERMINATOR]:
            raise AuthError("DIS.4106", "credential scope must be "
                            "DATE/%s/%s/%s" % (region, SERVICE, TERMINATOR))
    sk = credentials.get(auth["ak"])
    if sk is None:
        raise AuthError("DIS.4102", "unknown access key")
    canon = canonical_request(method, path, query, headers, auth["signed"],
                              body)
    # A list: the secret keys of a rotation's overlap, each valid.
    for one in sk if isinstance(sk, list) else [sk]:
        want = signature_for(auth["dialect"], auth["ak"], one, region,
                             sdk_date, sha256_hex(canon))
        if hmac.compare_digest(want, auth["signature"]):
            return auth["ak"]
    raise AuthError("DIS.4110", "signature mismatch")


def authenticate(method, path, query, headers, body, credentials, region,
                 token=None, now=None):
    """Token or signature authentication of 6.4/6.x; raise AuthError."""
    if "x-auth-token" in headers:
        got = headers["x-auth-token"].strip()
        if token is None or not hmac.compare_digest(got.encode(),
                                                    token.encode()):
            raise AuthError("DIS.4114", "invalid X-Auth-Token")
        return "token"
    if "authorization" not in headers:
        if token is not None:
            raise AuthError("DIS.4113", "missing X-Auth-Token")
        raise AuthError("DIS.4100", "missing Authorization header")
    return verify_signature(method, path, query, headers, body, credentials,
                            region, now)


def check_security_token(headers, ak, temporary, now=None):
    """Temporary keys need their X-Security-Token, signed; raise AuthError.

    temporary maps an AK to {"token", "expires"} (epoch seconds or None).
    """
    t = temporary.get(ak)
    if t is None:
        return
    got = headers.get("x-security-token")
    if got is None:
        raise AuthError("DIS.4113", "temporary access key without "
                        "X-Security-Token")
    signed = parse_authorization(headers.get("authorization"))["signed"]
    if "x-security-token" not in signed:
        raise AuthError("DIS.4114", "X-Security-Token is not signed")
    if not hmac.compare_digest(got.strip().encode(), t["token"].encode()):
        raise AuthError("DIS.4114", "wrong X-Security-Token")
    if t["expires"] is not None and (now or time.time()) >= t["expires"]:
        raise AuthError("DIS.4115", "the temporary access key has expired")


def portless_host(host):
    """host without its ":port", or None when it has none."""
    m = re.fullmatch(r"(\[[^\]]*\]|[^:\[\]]*):[0-9]+", host.strip())
    return m.group(1) if m else None


def authenticate_as_sent(state, method, path, query, headers, body,
                         credentials, token, portless):
    """authenticate() on the request as received; with portless, a
    signature mismatch is tried once more with the port taken off Host:
    the DIS Python SDK signs "host" without the port it sends (section
    6.3b).  Counts such requests in portless_host_signatures."""
    try:
        return authenticate(method, path, query, headers, body,
                            credentials, state.region, token)
    except AuthError as e:
        host = portless_host(headers.get("host", ""))
        if not portless or e.code != "DIS.4110" or host is None:
            raise
        try:
            ak = authenticate(method, path, query, dict(headers, host=host),
                              body, credentials, state.region, token)
        except AuthError:
            raise e
        state.count("portless_host_signatures")
        return ak


def parse_temporary_keys(obj):
    """{"keys": [...]} of /_test/temporary_keys -> (credentials, temporary)."""
    keys = obj.get("keys") if isinstance(obj, dict) else None
    if not isinstance(keys, list) or not keys:
        raise ValueError("keys must be a non-empty list")
    creds, temp = {}, {}
    for k in keys:
        ak, sk, tok = (k.get(n) if isinstance(k, dict) else None
                       for n in ("ak", "sk", "security_token"))
        exp = k.get("expires_at") if isinstance(k, dict) else None
        if not all(isinstance(v, str) and v for v in (ak, sk, tok)):
            raise ValueError("ak, sk and security_token must be non-empty "
                             "strings")
        if exp is not None and not isinstance(exp, (int, float)):
            raise ValueError("expires_at must be a number")
        creds[ak] = sk
        temp[ak] = {"token": tok, "expires": exp}
    return creds, temp


# ---------------------------------------------------------------------------
# Partitions (section 8).

def key_hash(partition_key):
    """MD5(key)[0..7] big-endian & 0x7FFFFFFFFFFFFFFF."""
    d = hashlib.md5(partition_key.encode("utf-8")).digest()
    return int.from_bytes(d[:8], "big") & LONG_MAX


def partition_for_hash(h, n):
    """Partition index of hash h among n partitions (SDKJ rule, clamped)."""
    step = LONG_MAX // n
    p = h // step
    if p > 0 and h % step == 0:
        p -= 1
    return min(p, n - 1)


def hash_range(i, n):
    """The inclusive hash range [lo, hi] that partition_for_hash maps to i."""
    step = LONG_MAX // n
    lo = 0 if i == 0 else i * step + 1
    hi = LONG_MAX if i == n - 1 else (i + 1) * step
    return lo, hi


def partition_name(i):
    return "shardId-%010d" % i


def parse_partition_id(v):
    """Index from "3" or "shardId-0000000003"; None when malformed."""
    if not isinstance(v, str):
        return None
    m = re.fullmatch(r"(?:shardId-)?(\d{1,10})", v)
    return int(m.group(1)) if m else None


def raw_len_b64(s):
    """Decoded length of well-formed padded Base64 text, without decoding."""
    n = len(s)
    pad = 2 if s.endswith("==") else 1 if s.endswith("=") else 0
    return n * 3 // 4 - pad


# ---------------------------------------------------------------------------
# Protobuf (section 1; proto2 wire format, by hand: standard library only).

# PutRecordsRequest and PutRecordsRequestEntry fields -> JSON names; each
# is length-delimited.  "data" is bytes, the others UTF-8 strings.
PB_REQUEST = {1: "stream_name", 30: "stream_id"}
PB_RECORDS = 2
PB_ENTRY = {3: "data", 4: "explicit_hash_key", 5: "partition_key",
            6: "partition_id"}


def pb_varint(buf, i):
    """(value, next index) of the varint at buf[i]; ValueError if bad."""
    v = shift = 0
    while True:
        if i >= len(buf) or shift >= 64:
            raise ValueError("truncated or overlong varint")
        c = buf[i]
        i += 1
        v |= (c & 0x7F) << shift
        if not c & 0x80:
            if v >= 1 << 64:
                raise ValueError("varint over 64 bits")
            return v, i
        shift += 7


def pb_fields(buf):
    """Yield (field, wire type, value) of a message: value is an int for
    wire types 0, 1, 5 and bytes for 2.  ValueError on groups, bad wire
    types, field 0 or anything past the end."""
    i = 0
    while i < len(buf):
        k, i = pb_varint(buf, i)
        f, wt = k >> 3, k & 7
        if f == 0:
            raise ValueError("field number 0")
        if wt == 0:
            v, i = pb_varint(buf, i)
        elif wt in (1, 5):
            n = 8 if wt == 1 else 4
            if i + n > len(buf):
                raise ValueError("truncated fixed%d" % (n * 8))
            v, i = int.from_bytes(buf[i:i + n], "little"), i + n
        elif wt == 2:
            n, i = pb_varint(buf, i)
            if i + n > len(buf):
                raise ValueError("length past the end")
            v, i = buf[i:i + n], i + n
        else:
            raise ValueError("wire type %d" % wt)
        yield f, wt, v


def pb_string(f, wt, v):
    if wt != 2:
        raise ValueError("field %d is not length-delimited" % f)
    return v.decode("utf-8")


def pb_decode_put(raw):
    """A PutRecordsRequest -> the dict a JSON body would give (data as
    Base64 text); ValueError or UnicodeDecodeError when malformed."""
    req, records = {}, []
    for f, wt, v in pb_fields(raw):
        if f in PB_REQUEST:
            req[PB_REQUEST[f]] = pb_string(f, wt, v)
        elif f == PB_RECORDS:
            if wt != 2:
                raise ValueError("records is not length-delimited")
            rec = {}
            for ef, ewt, ev in pb_fields(v):
                if ef == 3:
                    if ewt != 2:
                        raise ValueError("data is not length-delimited")
                    rec["data"] = base64.b64encode(ev).decode("ascii")
                elif ef in PB_ENTRY:
                    rec[PB_ENTRY[ef]] = pb_string(ef, ewt, ev)
            records.append(rec)
    req["records"] = records
    return req


def pb_key(f, wt):
    return pb_encode_varint(f << 3 | wt)


def pb_encode_varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append(v & 0x7F | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def pb_bytes(f, b):
    if isinstance(b, str):
        b = b.encode("utf-8")
    return pb_key(f, 2) + pb_encode_varint(len(b)) + b


def pb_encode_result(obj):
    """A PutRecords reply dict -> PutRecordsResult bytes (fields 21-26)."""
    out = [pb_key(21, 0), pb_encode_varint(obj["failed_record_count"])]
    names = (("partition_id", 23), ("sequence_number", 24),
             ("error_code", 25), ("error_message", 26))
    for r in obj["records"]:
        e = b"".join(pb_bytes(f, r[k]) for k, f in names if k in r)
        out.append(pb_bytes(22, e))
    return b"".join(out)


class RawReply:
    """A reply body that is not JSON: its Content-Type and bytes."""

    def __init__(self, ctype, body):
        self.ctype = ctype
        self.body = body


def media_type(headers):
    return headers.get("content-type", "").split(";")[0].strip().lower()


# ---------------------------------------------------------------------------
# Server state.

class HttpError(Exception):
    """A request-level reply: status and a JSON-able body."""

    def __init__(self, status, body, code=None):
        super().__init__("%s %s" % (status, body))
        self.status = status
        self.body = body
        self.code = code


def dis_error(status, code, message):
    return HttpError(status, {"errorCode": code, "message": message}, code)


def gw_error(status, code, message):
    return HttpError(status, {"error_code": code, "error_msg": message,
                              "request_id": os.urandom(16).hex()}, code)


class Stream:
    def __init__(self, name, stype, partitions):
        self.name = name
        self.type = stype
        self.partitions = partitions
        self.id = "sid-" + hashlib.md5(name.encode()).hexdigest()[:16]
        self.create_time = int(time.time() * 1000)
        self.seq = [0] * partitions
        self.logs = [PartitionLog() for _ in range(partitions)]

    def active_partitions(self):
        """Indexes of the partitions PutRecords spreads records over."""
        return [i for i in range(self.partitions)
                if self.logs[i].status == "ACTIVE"]


FAULT_KNOBS = {
    "rec_4303": float, "rec_5000": float, "req_500": float,
    "req_429": float, "req_400_4303": float, "drop": float,
    "latency_ms": int, "outage": bool, "max_request_bytes": int,
    "put_latency_ms": int, "put_reply_latency_ms": int,
    "reject_prefix": str,
    "cursor_ttl_ms": int, "read_limit_bytes": int, "records_per_get": int,
    "deny_reads": bool,
    "write_limit_bytes": int,
    "app_quota": int, "accept_portless_host": bool,
    "short_replies": int, "html_replies": int,
    "refuse_protobuf": str,
}

# refuse_protobuf: how an endpoint that takes no protobuf answers it.
REFUSE_PROTOBUF = ("", "415", "json-only")

STREAM_NAME_RE = re.compile(r"[A-Za-z0-9_-]{1,64}")


def parse_stream_spec(spec):
    """NAME[:TYPE[:PARTITIONS]] -> (name, type, partitions)."""
    parts = spec.split(":")
    if len(parts) > 3:
        raise ValueError("bad stream spec %r" % spec)
    name = parts[0]
    stype = parts[1].upper() if len(parts) > 1 and parts[1] else "COMMON"
    n = int(parts[2]) if len(parts) > 2 else 1
    check_stream(name, stype, n)
    return name, stype, n


def check_stream(name, stype, n):
    if not isinstance(name, str) or not STREAM_NAME_RE.fullmatch(name):
        raise ValueError("bad stream name %r" % (name,))
    if stype not in RECORD_CAP:
        raise ValueError("stream type must be COMMON or ADVANCED")
    if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= 1000:
        raise ValueError("partitions must be 1..1000")


class State:
    """Everything mutable, guarded by one lock."""

    def __init__(self, args):
        self.lock = threading.Lock()
        self.rng = random.Random(args.seed)
        self.project_id = args.project_id
        self.region = args.region
        self.credentials = {args.ak: args.sk}
        self.token = args.token
        self.temporary = {}
        if args.security_token:
            self.temporary[args.ak] = {"token": args.security_token,
                                       "expires": None}
        self.ack_only = args.ack_only
        self.quiet = args.quiet
        self.streams = {}
        for spec in args.stream or []:
            name, stype, n = parse_stream_spec(spec)
            self.streams[name] = Stream(name, stype, n)
        self.faults = {
            "rec_4303": args.rec_4303, "rec_5000": args.rec_5000,
            "req_500": args.req_500, "req_429": args.req_429,
            "req_400_4303": args.req_400_4303, "drop": args.drop,
            "latency_ms": args.latency_ms, "outage": args.outage,
            "put_latency_ms": 0, "put_reply_latency_ms": 0,
            "reject_prefix": "",
            "max_request_bytes": args.max_request_bytes,
            "cursor_ttl_ms": args.cursor_ttl_ms,
            "read_limit_bytes": args.read_limit_bytes,
            "records_per_get": args.records_per_get,
            "deny_reads": args.deny_reads,
            "write_limit_bytes": args.write_limit_bytes,
            "app_quota": args.app_quota,
            "accept_portless_host": args.accept_portless_host,
            "short_replies": 0, "html_replies": 0,
            "refuse_protobuf": args.refuse_protobuf,
        }
        self.apps = {}
        self.app_serial = 0
        self.reqno = 0
        self.stats = {"requests": 0, "put_requests": 0,
                      "records_received": 0, "records_accepted": 0,
                      "records_failed_by_code": {}, "status_counts": {},
                      "auth_failures": 0, "dropped": 0,
                      "requests_by_ak": {},
                      "put_bytes_sent": 0, "put_bytes_decoded": 0,
                      "put_by_encoding": {}, "put_by_content_type": {},
                      "get_cursor_requests": 0, "get_records_requests": 0,
                      "records_read": 0, "read_throttled": 0,
                      "app_requests": 0, "checkpoint_requests": 0,
                      "portless_host_signatures": 0,
                      "protobuf_refused": 0,
                      "write_limit": {},
                      "retried": {"records": 0, "with_new": 0,
                                  "request_records": 0}}
        # Data of the records refused one by one and not accepted since:
        # how the retries travel (stats "retried").
        self.refused = set()
        self.retain_records = args.retain_records
        self.records_fp = None
        if args.records_file:
            self.records_fp = open(args.records_file, "a", encoding="utf-8")
        self.log_fp = sys.stderr
        if args.log_file:
            self.log_fp = open(args.log_file, "a", encoding="utf-8")

    def log(self, msg, force=False):
        if self.quiet and not force:
            return
        ts = datetime.datetime.now().strftime("%H:%M:%S.%f")[:-3]
        with self.lock:
            self.log_fp.write("%s %s\n" % (ts, msg))
            self.log_fp.flush()

    def next_request(self):
        with self.lock:
            self.reqno += 1
            self.stats["requests"] += 1
            return self.reqno

    def count(self, key, n=1):
        with self.lock:
            self.stats[key] += n

    def count_status(self, status):
        with self.lock:
            sc = self.stats["status_counts"]
            sc[str(status)] = sc.get(str(status), 0) + 1

    def draw(self):
        with self.lock:
            return self.rng.random()

    def set_faults(self, obj):
        if not isinstance(obj, dict):
            raise ValueError("expected a JSON object")
        new = {}
        for k, v in obj.items():
            typ = FAULT_KNOBS.get(k)
            if typ is None:
                raise ValueError("unknown fault knob %r" % k)
            if typ is bool:
                if not isinstance(v, bool):
                    raise ValueError("%s must be a boolean" % k)
            elif typ is str:
                if not isinstance(v, str):
                    raise ValueError("%s must be a string" % k)
                if k == "refuse_protobuf" and v not in REFUSE_PROTOBUF:
                    raise ValueError("refuse_protobuf must be one of %s"
                                     % ", ".join(map(repr,
                                                     REFUSE_PROTOBUF)))
            elif v is None and k == "max_request_bytes":
                pass
            elif isinstance(v, bool) or not isinstance(v, (int, float)):
                raise ValueError("%s must be a number" % k)
            elif typ is float and not 0.0 <= v <= 1.0:
                raise ValueError("%s must be within 0..1" % k)
            elif typ is int and (v < 0 or v != int(v)):
                raise ValueError("%s must be a non-negative integer" % k)
            new[k] = typ(v) if v is not None else None
        with self.lock:
            self.faults.update(new)
            return dict(self.faults)

    def snapshot(self):
        with self.lock:
            return json.loads(json.dumps(self.stats))

    def lookup_stream(self, name=None, sid=None):
        with self.lock:
            if name is not None:
                return self.streams.get(name)
            for s in self.streams.values():
                if s.id == sid:
                    return s
            return None


# ---------------------------------------------------------------------------
# DIS operations.

def decode_body(headers, body):
    """Undo Content-Encoding lz4/zstd (section 7); raise HttpError."""
    enc = headers.get("content-encoding", "").strip().lower()
    if enc in ("", "identity"):
        return body
    if enc not in ("lz4", "zstd"):
        raise dis_error(400, "DIS.4200", "unsupported Content-Encoding %s"
                        % enc)
    size = headers.get("x-dis-%s-content-length" % enc, "").strip()
    if enc == "lz4" and not size.isdigit():
        raise dis_error(400, "DIS.4200", "lz4 body needs "
                        "x-dis-lz4-content-length")
    try:
        if enc == "lz4":
            out = lz4.block.decompress(body, uncompressed_size=int(size))
        else:
            dobj = zstandard.ZstdDecompressor().decompressobj()
            out = dobj.decompress(body)
    except Exception as e:
        raise dis_error(400, "DIS.4200", "cannot decode %s body: %s"
                        % (enc, e))
    if size.isdigit() and int(size) != len(out):
        raise dis_error(400, "DIS.4200", "x-dis-%s-content-length %s but "
                        "body decodes to %d bytes" % (enc, size, len(out)))
    return out


def validate_put(state, headers, body):
    """Parse and check a PutRecords body; return (stream, records, raws)."""
    raw = decode_body(headers, body)
    enc = headers.get("content-encoding", "").strip().lower() or "identity"
    mtype = media_type(headers)
    with state.lock:
        st = state.stats
        st["put_bytes_sent"] += len(body)
        st["put_bytes_decoded"] += len(raw)
        st["put_by_encoding"][enc] = st["put_by_encoding"].get(enc, 0) + 1
        bt = st["put_by_content_type"]
        bt[mtype] = bt.get(mtype, 0) + 1
    with state.lock:
        refuse = state.faults["refuse_protobuf"]
    if mtype == PROTOBUF_TYPE and refuse == "415":
        with state.lock:
            state.stats["protobuf_refused"] += 1
        raise dis_error(415, "DIS.4200", "Unsupported Media Type: %s"
                        % mtype)
    if mtype == PROTOBUF_TYPE and refuse == "json-only":
        # A JSON-only endpoint reads any body as JSON.
        with state.lock:
            state.stats["protobuf_refused"] += 1
        mtype = "application/json"
    if mtype == PROTOBUF_TYPE:
        try:
            req = pb_decode_put(raw)
        except (ValueError, UnicodeDecodeError) as e:
            raise dis_error(400, "DIS.4200", "invalid protobuf body: %s"
                            % e)
        return check_put(state, req)
    try:
        req = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as e:
        raise dis_error(400, "DIS.4200", "invalid JSON body: %s" % e)
    return check_put(state, req)


def check_put(state, req):
    """Check a decoded PutRecords request; return (stream, records, raws)."""
    if not isinstance(req, dict):
        raise dis_error(400, "DIS.4200", "body must be a JSON object")
    name, sid = req.get("stream_name"), req.get("stream_id")
    if not isinstance(name, str) and not isinstance(sid, str):
        raise dis_error(400, "DIS.4200", "stream_name or stream_id needed")
    stream = state.lookup_stream(name=name) if isinstance(name, str) \
        else state.lookup_stream(sid=sid)
    if stream is None:
        raise dis_error(400, "DIS.4301", "Stream does not exist. [%s]"
                        % (name if isinstance(name, str) else sid))
    records = req.get("records")
    if not isinstance(records, list):
        raise dis_error(400, "DIS.4200", "records must be an array")
    if not records:
        raise dis_error(400, "DIS.4202", "Empty records.")
    raws = []
    for i, r in enumerate(records):
        raws.append(check_record(state, stream, i, r))
    return stream, records, raws


def check_record(state, stream, i, r):
    """Validate one record; return its decoded bytes (or length in ack-only
    mode)."""
    if not isinstance(r, dict) or not isinstance(r.get("data"), str):
        raise dis_error(400, "DIS.4200", "records[%d].data missing" % i)
    for k in ("partition_key", "partition_id", "explicit_hash_key"):
        if k in r and not isinstance(r[k], str):
            raise dis_error(400, "DIS.4200", "records[%d].%s must be a "
                            "string" % (i, k))
    if "partition_id" in r:
        p = parse_partition_id(r["partition_id"])
        if p is None or p >= stream.partitions:
            raise dis_error(400, "DIS.4201", "Invalid partition_id %r"
                            % r["partition_id"])
    if "explicit_hash_key" in r:
        e = r["explicit_hash_key"]
        if not e.isdigit() or int(e) > LONG_MAX:
            raise dis_error(400, "DIS.4200", "Invalid explicit_hash_key")
    if state.ack_only:
        return raw_len_b64(r["data"])
    try:
        return base64.b64decode(r["data"], validate=True)
    except (binascii.Error, ValueError):
        raise dis_error(400, "DIS.4200", "records[%d].data is not valid "
                        "Base64" % i)


def choose_partition(state, stream, r):
    """Partition index for a record: partition_id, hash key, random."""
    if "partition_id" in r:
        return parse_partition_id(r["partition_id"])
    # Over the ACTIVE partitions, as after a scale-down (all of them
    # unless /_test/ expired some).
    active = stream.active_partitions() or [0]
    if "explicit_hash_key" in r:
        return active[partition_for_hash(int(r["explicit_hash_key"]),
                                         len(active))]
    if "partition_key" in r:
        return active[partition_for_hash(key_hash(r["partition_key"]),
                                         len(active))]
    return active[state.rng.randrange(len(active))]


def put_records(state, reqno, headers, body):
    """PutRecords: return (reply dict, log summary)."""
    stream, records, raws = validate_put(state, headers, body)
    state.count("records_received", len(records))
    sizes = [r if isinstance(r, int) else len(r) for r in raws]
    with state.lock:
        limit = state.faults["max_request_bytes"] or REQUEST_CAP[stream.type]
        f = dict(state.faults)
    if sum(sizes) > limit:
        raise gw_error(413, "APIG.0201", "Request entity too large: %d raw "
                       "bytes > %d" % (sum(sizes), limit))
    cap = RECORD_CAP[stream.type]
    out, lines, failed = [], [], {}
    acked_ns = time.time_ns()
    with state.lock:
        count_retried(state, records)
        reject = f["reject_prefix"].encode()
        for r, raw, size in zip(records, raws, sizes):
            code = None
            if size > cap:
                code, msg = "DIS.4200", "Record data exceeds %d bytes" % cap
            elif reject and not isinstance(raw, int) and \
                    raw.startswith(reject):
                code, msg = "DIS.4200", "Invalid record data"
            else:
                u = state.rng.random()
                if u < f["rec_4303"]:
                    code, msg = "DIS.4303", "Exceeded traffic control limit."
                elif u < f["rec_4303"] + f["rec_5000"]:
                    code, msg = "DIS.5000", "System error."
            if not code:
                p = choose_partition(state, stream, r)
                if not take_write(state, stream, p, size, acked_ns):
                    code = "DIS.4303"
                    msg = "Exceeded traffic control limit."
            if code:
                out.append({"error_code": code, "error_message": msg})
                failed[code] = failed.get(code, 0) + 1
                state.refused.add(r["data"])
                continue
            state.refused.discard(r["data"])
            seq = str(stream.seq[p])
            stream.seq[p] += 1
            out.append({"partition_id": partition_name(p),
                        "sequence_number": seq})
            if not state.ack_only:
                keep_for_reading(state, stream, p, r, acked_ns)
            if state.records_fp is not None and not state.ack_only:
                lines.append(json.dumps({
                    "stream": stream.name, "partition_id": partition_name(p),
                    "sequence_number": seq,
                    "partition_key": r.get("partition_key"),
                    "data": r["data"], "req": reqno, "t": acked_ns},
                    separators=(",", ":")))
        if lines:
            state.records_fp.write("\n".join(lines) + "\n")
            state.records_fp.flush()
        st = state.stats
        st["records_accepted"] += len(records) - sum(failed.values())
        fb = st["records_failed_by_code"]
        for code, n in failed.items():
            fb[code] = fb.get(code, 0) + n
    nfail = sum(failed.values())
    summary = "PutRecords stream=%s records=%d ok=%d failed=%d" % (
        stream.name, len(records), len(records) - nfail, nfail)
    return {"failed_record_count": nfail, "records": out}, summary


def describe_stream(state, name, query):
    stream = state.lookup_stream(name=name)
    if stream is None:
        raise dis_error(400, "DIS.4301", "Stream does not exist. [%s]" % name)
    q = dict(urllib.parse.parse_qsl(query or "", keep_blank_values=True))
    try:
        limit = int(q.get("limit_partitions", "100"))
    except ValueError:
        limit = 0
    if not 1 <= limit <= 1000:
        raise dis_error(400, "DIS.4200", "limit_partitions must be 1..1000")
    start = -1
    if q.get("start_partitionId"):
        start = parse_partition_id(q["start_partitionId"])
        if start is None:
            raise dis_error(400, "DIS.4200", "bad start_partitionId")
    n = stream.partitions
    parts = []
    with state.lock:
        for i in range(start + 1, min(n, start + 1 + limit)):
            lo, hi = hash_range(i, n)
            # [oldest : next]: the next record gets "next" (DIS console).
            parts.append({
                "status": stream.logs[i].status,
                "partition_id": partition_name(i),
                "hash_range": "[%d : %d]" % (lo, hi),
                "sequence_number_range": "[%d : %d]" % (
                    stream.logs[i].first, stream.seq[i])})
        writable = len(stream.active_partitions())
        readable = sum(1 for lg in stream.logs if lg.status != "EXPIRED")
    reply = {
        "stream_id": stream.id, "stream_name": stream.name,
        "create_time": stream.create_time, "last_modified_time":
        stream.create_time, "retention_period": 24, "status": "RUNNING",
        "stream_type": stream.type, "data_type": "BLOB",
        "writable_partition_count": writable,
        "readable_partition_count": readable,
        "tags": [], "auto_scale_enabled": False,
        "partitions": parts,
        "has_more_partitions": start + 1 + limit < n,
    }
    return reply, "DescribeStream stream=%s" % name


# ---------------------------------------------------------------------------
# Download API (section 10): GetCursor and GetRecords over the records
# accepted, kept per partition in sequence order.

READ_LIMIT = {"COMMON": 2000000, "ADVANCED": 10000000}
CURSOR_TYPES = ("AT_SEQUENCE_NUMBER", "AFTER_SEQUENCE_NUMBER",
                "TRIM_HORIZON", "LATEST", "AT_TIMESTAMP")


class PartitionLog:
    """The records of one partition: entries (seq, key, data, ms) from
    sequence number "first" on, the partition's status, and its read
    bucket (bytes that may be read now, refilled at the read limit)."""

    def __init__(self):
        self.records = []
        self.first = 0
        self.status = "ACTIVE"
        self.bucket = None
        self.bucket_t = 0.0
        self.wbucket = None
        self.wbucket_t = 0.0

    def trim(self, before):
        """Drop the records below sequence number before."""
        if before > self.first:
            del self.records[:before - self.first]
            self.first = before

    def at_time(self, ms, nxt):
        """Sequence number of the first record at or after ms."""
        lo, hi = 0, len(self.records)
        while lo < hi:
            mid = (lo + hi) // 2
            if self.records[mid][3] < ms:
                lo = mid + 1
            else:
                hi = mid
        return self.first + lo if lo < len(self.records) else nxt


def keep_for_reading(state, stream, p, r, acked_ns):
    """Keep an accepted record for GetRecords (state.lock held).  Past
    --retain-records per partition the oldest tenth goes, as retention
    would take it."""
    lg = stream.logs[p]
    lg.records.append((stream.seq[p] - 1, r.get("partition_key"), r["data"],
                       acked_ns // 1000000))
    cap = state.retain_records
    if cap and len(lg.records) > cap:
        lg.trim(lg.first + len(lg.records) - cap + cap // 10)


def encode_cursor(stream, p, n):
    """An opaque cursor: standard Base64 (so +, / and = travel in queries)
    of stream, partition, position and the time it was issued."""
    raw = json.dumps({"s": stream.name, "p": p, "n": n,
                      "t": int(time.time() * 1000),
                      "r": os.urandom(3).hex()}, separators=(",", ":"))
    return base64.b64encode(b"\xfb" + raw.encode()).decode("ascii")


def decode_cursor(text):
    """(stream name, partition, position, issued ms) or None."""
    try:
        raw = base64.b64decode(text, validate=True)
        if raw[:1] != b"\xfb":
            return None
        c = json.loads(raw[1:])
        return str(c["s"]), int(c["p"]), int(c["n"]), int(c["t"])
    except (ValueError, KeyError, TypeError, binascii.Error):
        return None


def readable_partition(stream, pid_text):
    """Partition index of a readable partition; raise DIS.4302/4319."""
    p = parse_partition_id(pid_text)
    if p is None or p >= stream.partitions:
        raise dis_error(400, "DIS.4302", "Partition does not exist. [%s]"
                        % pid_text)
    if stream.logs[p].status == "EXPIRED":
        raise dis_error(400, "DIS.4319", "Partition is expired. [%s]"
                        % pid_text)
    return p


def cursor_position(lg, nxt, ctype, q):
    """The position a cursor of type ctype starts at; raise 4215/4216/4224
    (state.lock held)."""
    if ctype not in CURSOR_TYPES:
        raise dis_error(400, "DIS.4215", "Invalid cursor type. [%s]" % ctype)
    if ctype == "TRIM_HORIZON":
        return lg.first
    if ctype == "LATEST":
        return nxt
    if ctype == "AT_TIMESTAMP":
        ts = q.get("timestamp", "")
        if not ts.isdigit():
            raise dis_error(400, "DIS.4200", "timestamp is required")
        return lg.at_time(int(ts), nxt)
    sn = q.get("starting-sequence-number", "")
    if not sn.isdigit() or int(sn) > LONG_MAX:
        raise dis_error(400, "DIS.4216", "Invalid sequence number. [%s]"
                        % sn)
    n = int(sn) + (1 if ctype == "AFTER_SEQUENCE_NUMBER" else 0)
    if not lg.first <= n <= nxt:
        raise dis_error(400, "DIS.4224", "Sequence number out of range. "
                        "[%s not in %d..%d]" % (sn, lg.first, nxt))
    return n


def get_cursor(state, query):
    """GetCursor: return (reply dict, log summary)."""
    state.count("get_cursor_requests")
    q = dict(urllib.parse.parse_qsl(query or "", keep_blank_values=True))
    name = q.get("stream-name")
    stream = state.lookup_stream(name=name) if name \
        else state.lookup_stream(sid=q.get("stream-id"))
    if stream is None:
        raise dis_error(400, "DIS.4301", "Stream does not exist. [%s]"
                        % (name or q.get("stream-id")))
    ctype = q.get("cursor-type") or "AT_SEQUENCE_NUMBER"
    with state.lock:
        p = readable_partition(stream, q.get("partition-id", ""))
        n = cursor_position(stream.logs[p], stream.seq[p], ctype, q)
    return ({"partition_cursor": encode_cursor(stream, p, n)},
            "GetCursor stream=%s partition=%d type=%s at=%d" % (
                stream.name, p, ctype, n))


def count_retried(state, records):
    """Stats "retried" (state.lock held): for each record of this request
    that was refused one by one before, count it, whether the request
    also carries records never refused, and the request's size."""
    n = sum(1 for r in records if r["data"] in state.refused)
    if n == 0:
        return
    st = state.stats["retried"]
    st["records"] += n
    st["request_records"] += n * len(records)
    if n < len(records):
        st["with_new"] += n


def take_write(state, stream, p, size, now_ns):
    """The write limit of partition p (state.lock held): whether a record
    of size raw bytes may be stored now; its bytes are then spent."""
    rate = state.faults["write_limit_bytes"]
    if not rate:
        return True
    lg = stream.logs[p]
    now = time.monotonic()
    if lg.wbucket is None:
        lg.wbucket = float(rate)
    lg.wbucket = min(float(rate), lg.wbucket + (now - lg.wbucket_t) * rate)
    lg.wbucket_t = now
    st = state.stats["write_limit"].setdefault(
        "%s/%d" % (stream.name, p), {"accepted_bytes": 0, "throttled": 0,
                                     "first_t": now_ns, "last_t": now_ns})
    if lg.wbucket < size and lg.wbucket < rate:
        st["throttled"] += 1
        return False
    lg.wbucket -= size
    st["accepted_bytes"] += size
    st["last_t"] = now_ns
    return True


def take_read(state, stream, lg, nbytes=0):
    """The read limit of a partition, as a token bucket that may go into
    debt: False (throttled) while it is empty; nbytes is then spent
    (state.lock held)."""
    rate = state.faults["read_limit_bytes"] or READ_LIMIT[stream.type]
    now = time.monotonic()
    if lg.bucket is None:
        lg.bucket = float(rate)
    lg.bucket = min(float(rate), lg.bucket + (now - lg.bucket_t) * rate)
    lg.bucket_t = now
    if lg.bucket <= 0:
        return False
    lg.bucket -= nbytes
    return True


def records_from(lg, n, max_bytes, max_records):
    """The entries from position n that fit max_bytes (raw) and
    max_records, and the position after them."""
    out, total, i = [], 0, n - lg.first
    while i < len(lg.records) and len(out) < max_records:
        size = raw_len_b64(lg.records[i][2])
        if total + size > max_bytes:
            break
        out.append(lg.records[i])
        total += size
        i += 1
    return out, total, lg.first + i


def get_records(state, query):
    """GetRecords: return (reply dict, log summary)."""
    state.count("get_records_requests")
    q = dict(urllib.parse.parse_qsl(query or "", keep_blank_values=True))
    c = decode_cursor(q.get("partition-cursor", ""))
    if c is None:
        raise dis_error(400, "DIS.4217", "Invalid partition cursor.")
    name, p, n, issued = c
    stream = state.lookup_stream(name=name)
    if stream is None:
        raise dis_error(400, "DIS.4301", "Stream does not exist. [%s]"
                        % name)
    mfb = q.get("max_fetch_bytes", str(MIB))
    if not mfb.isdigit() or int(mfb) < 1:
        raise dis_error(400, "DIS.4200", "Invalid max_fetch_bytes.")
    with state.lock:
        ttl = state.faults["cursor_ttl_ms"] or 300000
        limit = state.faults["records_per_get"] or 1000
        p = readable_partition(stream, str(p))
        lg = stream.logs[p]
        if int(time.time() * 1000) - issued > ttl:
            raise dis_error(400, "DIS.4225", "Expired partition cursor.")
        if n < lg.first:
            raise dis_error(400, "DIS.4226", "The sequence number of the "
                            "partition cursor has expired.")
        if not take_read(state, stream, lg):
            state.stats["read_throttled"] += 1
            raise dis_error(400, "DIS.4303", "Exceeded traffic control "
                            "limit.")
        got, nbytes, after = records_from(lg, n, int(mfb), limit)
        take_read(state, stream, lg, nbytes)
        state.stats["records_read"] += len(got)
    recs = []
    for seq, key, data, ms in got:
        rec = {"sequence_number": str(seq), "data": data, "timestamp": ms,
               "timestamp_type": "CreateTime"}
        if key is not None:
            rec["partition_key"] = key
        recs.append(rec)
    return ({"records": recs,
             "next_partition_cursor": encode_cursor(stream, p, after)},
            "GetRecords stream=%s partition=%d at=%d records=%d" % (
                stream.name, p, n, len(recs)))


def change_partitions(state, name, obj):
    """POST /_test/streams/NAME/partitions: {"count": N} adds partitions
    up to N (a scale-up); {"expire": ID} expires one (its records go, reads
    get DIS.4319, PutRecords leaves it out); {"trim": ID, "before": SEQ}
    drops a partition's records below SEQ, as retention does."""
    if not isinstance(obj, dict):
        raise ValueError("expected a JSON object")
    with state.lock:
        stream = state.streams.get(name)
        if stream is None:
            return 404, {"error": "no such stream"}
        if "count" in obj:
            n = obj["count"]
            if not isinstance(n, int) or not stream.partitions <= n <= 1000:
                raise ValueError("count must grow, up to 1000")
            add = n - stream.partitions
            stream.seq += [0] * add
            stream.logs += [PartitionLog() for _ in range(add)]
            stream.partitions = n
        for key in ("expire", "trim"):
            if key not in obj:
                continue
            p = parse_partition_id(str(obj[key]))
            if p is None or p >= stream.partitions:
                raise ValueError("no partition %r" % obj[key])
            lg = stream.logs[p]
            if key == "expire":
                lg.status = "EXPIRED"
                lg.trim(stream.seq[p])
            else:
                lg.trim(min(int(obj.get("before", 0)), stream.seq[p]))
        return 200, {"partitions": stream.partitions,
                     "status": [lg.status for lg in stream.logs],
                     "first": [lg.first for lg in stream.logs]}


# ---------------------------------------------------------------------------
# Apps and checkpoints (section 10): consumer apps and, per app, one
# LAST_READ checkpoint per stream partition, all in memory.

APP_NAME_RE = re.compile(r"[A-Za-z0-9_-]{1,200}")
SEQ_RE = re.compile(r"[0-9]{1,19}")
CHECKPOINT_TYPE = "LAST_READ"
METADATA_MAX = 1000
LIST_APPS_DEFAULT = 10
LIST_APPS_MAX = 100


class App:
    """A consumer app; checkpoints maps (stream name, partition index) to
    (sequence number text, metadata)."""

    def __init__(self, name, serial):
        self.name = name
        self.id = "app" + hashlib.md5(("%s:%d" % (name, serial)).encode()
                                      ).hexdigest()[:16]
        self.create_time = int(time.time() * 1000)
        self.checkpoints = {}
        self.in_use = False

    def describe(self):
        return {"app_id": self.id, "app_name": self.name,
                "create_time": self.create_time,
                "commit_checkpoint_stream_names":
                sorted({s for s, _ in self.checkpoints})}


def new_app(state, name):
    """Create app name (state.lock held)."""
    state.app_serial += 1
    app = state.apps[name] = App(name, state.app_serial)
    return app


def query_dict(query):
    return dict(urllib.parse.parse_qsl(query or "", keep_blank_values=True))


def json_body(headers, body):
    """The JSON object of a request body; raise DIS.4200."""
    try:
        obj = json.loads(decode_body(headers, body))
    except (ValueError, UnicodeDecodeError) as e:
        raise dis_error(400, "DIS.4200", "invalid JSON body: %s" % e)
    if not isinstance(obj, dict):
        raise dis_error(400, "DIS.4200", "body must be a JSON object")
    return obj


def check_app_name(name):
    if not isinstance(name, str) or not APP_NAME_RE.fullmatch(name):
        raise dis_error(400, "DIS.4200", "Invalid request. [app_name must "
                        "be 1-200 characters of A-Za-z0-9_-: %r]" % (name,))
    return name


def app_of(state, name):
    """The app called name; raise DIS.4332 (state.lock held)."""
    app = state.apps.get(name)
    if app is None:
        raise dis_error(400, "DIS.4332", "app not found. [%s]" % name)
    return app


def create_app(state, headers, body):
    """CreateApp: POST /v2/{pid}/apps {"app_name"} -> 201, no body."""
    name = check_app_name(json_body(headers, body).get("app_name"))
    with state.lock:
        if name in state.apps:
            raise dis_error(400, "DIS.4330", "app already exist. [%s]"
                            % name)
        quota = state.faults["app_quota"]
        if quota and len(state.apps) >= quota:
            raise dis_error(400, "DIS.4329", "app quota exceeded. [%d]"
                            % quota)
        new_app(state, name)
    return 201, None, "CreateApp app=%s" % name


def list_apps(state, query):
    """ListApps: apps by name after start_app_name (exclusive), at most
    limit (1-100, default 10), only those with checkpoints on stream_name
    when given."""
    q = query_dict(query)
    limit = q.get("limit", str(LIST_APPS_DEFAULT))
    if not SEQ_RE.fullmatch(limit) or not 1 <= int(limit) <= LIST_APPS_MAX:
        raise dis_error(400, "DIS.4200", "Invalid request. [limit must be "
                        "1..%d]" % LIST_APPS_MAX)
    limit = int(limit)
    start = q.get("start_app_name", "")
    sname = q.get("stream_name")
    with state.lock:
        if sname is not None and sname not in state.streams:
            raise dis_error(400, "DIS.4301", "Stream does not exist. [%s]"
                            % sname)
        names = sorted(n for n, a in state.apps.items() if sname is None
                       or any(s == sname for s, _ in a.checkpoints))
        after = [n for n in names if n > start]
        apps = [state.apps[n].describe() for n in after[:limit]]
    return (200, {"has_more_app": len(after) > limit, "apps": apps,
                  "total_number": len(names)},
            "ListApps apps=%d" % len(apps))


def describe_app(state, name):
    check_app_name(name)
    with state.lock:
        obj = app_of(state, name).describe()
    return 200, obj, "DescribeApp app=%s" % name


def delete_app(state, name):
    """DeleteApp: 204; its checkpoints go with it."""
    check_app_name(name)
    with state.lock:
        app = app_of(state, name)
        if app.in_use:
            raise dis_error(400, "DIS.4331", "app is using. [%s]" % name)
        del state.apps[name]
    return 204, None, "DeleteApp app=%s" % name


def checkpoint_fields(src, delete=False):
    """Check the fields every checkpoint call names (body or query):
    app_name, checkpoint_type (optional on DELETE, which SDKPY leaves
    out), stream_name or stream_id, partition_id (optional on DELETE:
    then all of the stream's partitions); raise DIS.4200."""
    check_app_name(src.get("app_name"))
    ctype = src.get("checkpoint_type")
    if ctype != CHECKPOINT_TYPE and not (delete and ctype is None):
        raise dis_error(400, "DIS.4200", "Invalid request. [checkpoint_type "
                        "must be %s: %r]" % (CHECKPOINT_TYPE, ctype))
    if not isinstance(src.get("stream_name"), str) and \
            not isinstance(src.get("stream_id"), str):
        raise dis_error(400, "DIS.4200", "Invalid request. [stream_name or "
                        "stream_id needed]")
    pid = src.get("partition_id")
    if not isinstance(pid, str) and not (delete and pid is None):
        raise dis_error(400, "DIS.4200", "Invalid request. [partition_id "
                        "must be a string: %r]" % (pid,))


def checkpoint_target(state, src):
    """(app, stream, partition index or None) that checked fields name;
    raise DIS.4332, DIS.4301, DIS.4201, DIS.4302 (state.lock held)."""
    app = app_of(state, src["app_name"])
    name = src.get("stream_name")
    if isinstance(name, str):
        stream = state.streams.get(name)
    else:
        name = src["stream_id"]
        stream = next((s for s in state.streams.values() if s.id == name),
                      None)
    if stream is None:
        raise dis_error(400, "DIS.4301", "Stream does not exist. [%s]"
                        % name)
    pid = src.get("partition_id")
    if pid is None:
        return app, stream, None
    p = parse_partition_id(pid)
    if p is None:
        raise dis_error(400, "DIS.4201", "Invalid partition_id. [%s]" % pid)
    if p >= stream.partitions:
        raise dis_error(400, "DIS.4302", "Partition does not exist. [%s]"
                        % pid)
    return app, stream, p


def commit_checkpoint(state, headers, body):
    """CommitCheckpoint: 201, no body.  sequence_number (a string) must
    be a record the partition still holds: [oldest, next - 1]."""
    req = json_body(headers, body)
    checkpoint_fields(req)
    seq = req.get("sequence_number")
    if not isinstance(seq, str):
        raise dis_error(400, "DIS.4200", "Invalid request. [sequence_number "
                        "must be a string: %r]" % (seq,))
    if not SEQ_RE.fullmatch(seq) or int(seq) > LONG_MAX:
        raise dis_error(400, "DIS.4216", "Invalid sequence_number. [%s]"
                        % seq)
    meta = req.get("metadata")
    if meta is None:
        meta = ""
    if not isinstance(meta, str) or len(meta) > METADATA_MAX:
        raise dis_error(400, "DIS.4200", "Invalid request. [metadata must "
                        "be a string of at most %d characters]"
                        % METADATA_MAX)
    n = int(seq)
    with state.lock:
        app, stream, p = checkpoint_target(state, req)
        lg = stream.logs[p]
        if lg.status == "EXPIRED":
            raise dis_error(400, "DIS.4319", "Partition is expired. [%s]"
                            % req["partition_id"])
        if not lg.first <= n < stream.seq[p]:
            raise dis_error(400, "DIS.4224", "Sequence_number out of range. "
                            "[%d][ should be within ][%d][ ][%d]"
                            % (n, lg.first, stream.seq[p] - 1))
        app.checkpoints[(stream.name, p)] = (str(n), meta)
    return 201, None, "CommitCheckpoint app=%s stream=%s partition=%d " \
        "seq=%d" % (app.name, stream.name, p, n)


def get_checkpoint(state, query):
    """GetCheckpoint: {"sequence_number", "metadata"}; "-1" and "" when
    the app has committed none for the partition."""
    q = query_dict(query)
    checkpoint_fields(q)
    with state.lock:
        app, stream, p = checkpoint_target(state, q)
        seq, meta = app.checkpoints.get((stream.name, p), ("-1", ""))
    return (200, {"sequence_number": seq, "metadata": meta},
            "GetCheckpoint app=%s stream=%s partition=%d seq=%s" % (
                app.name, stream.name, p, seq))


def delete_checkpoint(state, query):
    """DeleteCheckpoint: 204, whether or not there was one."""
    q = query_dict(query)
    checkpoint_fields(q, delete=True)
    with state.lock:
        app, stream, p = checkpoint_target(state, q)
        gone = [k for k in app.checkpoints
                if k[0] == stream.name and p in (None, k[1])]
        for k in gone:
            del app.checkpoints[k]
    return 204, None, "DeleteCheckpoint app=%s stream=%s deleted=%d" % (
        app.name, stream.name, len(gone))


APP_OPS = {"CreateApp", "ListApps", "DescribeApp", "DeleteApp"}
CHECKPOINT_OPS = {"CommitCheckpoint", "GetCheckpoint", "DeleteCheckpoint"}


def app_op(state, op, name, query, headers, body):
    """Run one app or checkpoint call: (status, reply or None, summary)."""
    state.count("app_requests" if op in APP_OPS else "checkpoint_requests")
    if op == "CreateApp":
        return create_app(state, headers, body)
    if op == "ListApps":
        return list_apps(state, query)
    if op == "DescribeApp":
        return describe_app(state, name)
    if op == "DeleteApp":
        return delete_app(state, name)
    if op == "CommitCheckpoint":
        return commit_checkpoint(state, headers, body)
    if op == "GetCheckpoint":
        return get_checkpoint(state, query)
    return delete_checkpoint(state, query)


def control_apps(state, obj):
    """POST /_test/apps {"app_name"[, "in_use": bool]}: create the app if
    it is missing; in_use true makes DeleteApp answer DIS.4331."""
    if not isinstance(obj, dict):
        raise ValueError("expected a JSON object")
    name = obj.get("app_name")
    if not isinstance(name, str) or not APP_NAME_RE.fullmatch(name):
        raise ValueError("bad app_name %r" % (name,))
    in_use = obj.get("in_use", False)
    if not isinstance(in_use, bool):
        raise ValueError("in_use must be a boolean")
    with state.lock:
        app = state.apps.get(name)
        created = app is None
        if created:
            app = new_app(state, name)
        app.in_use = in_use
        return 200, dict(app.describe(), in_use=app.in_use,
                         created=created)


def control_checkpoint(state, obj):
    """POST /_test/checkpoints {"app_name", "stream_name", "partition_id",
    "sequence_number"[, "metadata"]}: set a checkpoint as if committed,
    without the range check (so it may lie outside the partition's
    records); the app is created if missing; sequence_number null
    removes the checkpoint."""
    if not isinstance(obj, dict):
        raise ValueError("expected a JSON object")
    name = obj.get("app_name")
    if not isinstance(name, str) or not APP_NAME_RE.fullmatch(name):
        raise ValueError("bad app_name %r" % (name,))
    seq = obj.get("sequence_number")
    if seq is not None and not (
            isinstance(seq, int) and not isinstance(seq, bool) and seq >= 0
            or isinstance(seq, str) and SEQ_RE.fullmatch(seq)):
        raise ValueError("sequence_number must be a non-negative integer "
                         "or null")
    meta = obj.get("metadata", "")
    if not isinstance(meta, str):
        raise ValueError("metadata must be a string")
    with state.lock:
        stream = state.streams.get(obj.get("stream_name"))
        if stream is None:
            return 404, {"error": "no such stream"}
        p = parse_partition_id(str(obj.get("partition_id")))
        if p is None or p >= stream.partitions:
            raise ValueError("no partition %r" % (obj.get("partition_id"),))
        app = state.apps.get(name)
        created = app is None
        if created:
            app = new_app(state, name)
        if seq is None:
            app.checkpoints.pop((stream.name, p), None)
        else:
            app.checkpoints[(stream.name, p)] = (str(int(seq)), meta)
        return 200, {"app_name": name, "app_id": app.id,
                     "created_app": created}


def control_dump_apps(state):
    """GET /_test/apps: every app with its checkpoints."""
    out = {}
    with state.lock:
        for name, app in state.apps.items():
            cps = {}
            for (s, p), (seq, meta) in sorted(app.checkpoints.items()):
                cps.setdefault(s, {})[partition_name(p)] = {
                    "sequence_number": seq, "metadata": meta}
            out[name] = dict(app.describe(), in_use=app.in_use,
                             checkpoints=cps)
    return 200, {"apps": out}


# ---------------------------------------------------------------------------
# HTTP layer.

RECORDS_RE = re.compile(r"^/v2/([^/]+)/records/?$")
CURSORS_RE = re.compile(r"^/v2/([^/]+)/cursors/?$")
STREAM_RE = re.compile(r"^/v2/([^/]+)/streams/([^/]+)/?$")
APPS_RE = re.compile(r"^/v2/([^/]+)/apps/?$")
APP_RE = re.compile(r"^/v2/([^/]+)/apps/([^/]+)/?$")
CHECKPOINTS_RE = re.compile(r"^/v2/([^/]+)/checkpoints/?$")
ROUTES = (
    (APPS_RE, {"POST": "CreateApp", "GET": "ListApps"}),
    (APP_RE, {"GET": "DescribeApp", "DELETE": "DeleteApp"}),
    (CHECKPOINTS_RE, {"POST": "CommitCheckpoint", "GET": "GetCheckpoint",
                      "DELETE": "DeleteCheckpoint"}),
)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "dis-test-server/1"
    sys_version = ""
    disable_nagle_algorithm = True
    timeout = 300

    def version_string(self):
        return self.server_version

    def log_request(self, code="-", size="-"):
        pass

    def log_message(self, fmt, *args):
        self.server.state.log("http: " + (fmt % args))

    def do_GET(self):
        self.dispatch()

    def do_POST(self):
        self.dispatch()

    def do_DELETE(self):
        self.dispatch()

    def do_PUT(self):
        self.dispatch()

    def read_body(self):
        """The raw request body, or None after replying 4xx itself."""
        te = self.headers.get("Transfer-Encoding", "").lower()
        if "chunked" in te:
            return self.read_chunked()
        cl = self.headers.get("Content-Length")
        if cl is None:
            return b""
        if not cl.strip().isdigit():
            self.reply(400, {"errorCode": "DIS.4200",
                             "message": "bad Content-Length"}, close=True)
            return None
        n = int(cl)
        if n > BODY_HARD_CAP:
            self.reply(413, {"error_code": "APIG.0201", "error_msg":
                             "Request entity too large"}, close=True)
            return None
        body = self.rfile.read(n)
        if len(body) < n:
            self.close_connection = True    # the peer went away
            return None
        return body

    def read_chunked(self):
        chunks, total = [], 0
        while True:
            line = self.rfile.readline(1024)
            try:
                size = int(line.split(b";")[0].strip(), 16)
            except ValueError:
                self.reply(400, {"errorCode": "DIS.4200", "message":
                                 "bad chunked encoding"}, close=True)
                return None
            if size == 0:
                while self.rfile.readline(1024) not in (b"\r\n", b"\n", b""):
                    pass
                return b"".join(chunks)
            total += size
            if total > BODY_HARD_CAP:
                self.reply(413, {"error_code": "APIG.0201", "error_msg":
                                 "Request entity too large"}, close=True)
                return None
            chunks.append(self.rfile.read(size))
            self.rfile.readline(1024)

    def reply(self, status, obj, close=False):
        """Send status and obj: JSON, a RawReply, or None for no body
        (201 with Content-Length 0; 204 with no Content-Length at all, as
        RFC 9110 asks)."""
        ctype = "application/json; charset=utf-8"
        if obj is None:
            ctype, body = None, b""
        elif isinstance(obj, RawReply):
            ctype, body = obj.ctype, obj.body
        else:
            body = json.dumps(obj, separators=(",", ":")).encode("utf-8")
        self.send_response(status)
        if ctype is not None:
            self.send_header("Content-Type", ctype)
        if status != 204:
            self.send_header("Content-Length", str(len(body)))
        if close:
            self.send_header("Connection", "close")
            self.close_connection = True
        # Headers and body in one write: no Nagle/delayed-ACK stall.
        self._headers_buffer.append(b"\r\n")
        self._headers_buffer.append(body)
        self.flush_headers()

    def lower_headers(self):
        out = {}
        for k, v in self.headers.items():
            k = k.lower()
            out[k] = out[k] + "," + v if k in out else v
        return out

    def dispatch(self):
        state = self.server.state
        try:
            body = self.read_body()
            if body is None:
                return
            split = urllib.parse.urlsplit(self.path)
            if split.path.startswith("/_test/"):
                self.control(split.path, body)
            else:
                self.api(split.path, split.query, body)
        except (ConnectionError, ssl.SSLError, socket.timeout):
            self.close_connection = True
        except Exception:
            state.log("exception handling %s %s:\n%s" % (
                self.command, self.path, traceback.format_exc()), force=True)
            try:
                self.reply(500, {"errorCode": "DIS.5000",
                                 "message": "test server exception"},
                           close=True)
            except Exception:
                self.close_connection = True

    # -- DIS API ------------------------------------------------------------

    def route(self, path):
        m = RECORDS_RE.match(path)
        if m and self.command == "POST":
            return "PutRecords", m.group(1), None
        if m and self.command == "GET":
            return "GetRecords", m.group(1), None
        m = CURSORS_RE.match(path)
        if m and self.command == "GET":
            return "GetCursor", m.group(1), None
        m = STREAM_RE.match(path)
        if m and self.command == "GET":
            return ("DescribeStream", m.group(1),
                    urllib.parse.unquote(m.group(2)))
        for regex, ops in ROUTES:
            m = regex.match(path)
            if m and self.command in ops:
                name = m.group(2) if regex.groups > 1 else None
                return (ops[self.command], m.group(1),
                        name and urllib.parse.unquote(name))
        return None, None, None

    def api(self, path, query, body):
        state = self.server.state
        reqno = state.next_request()
        with state.lock:
            f = dict(state.faults)
        if f["outage"] or (f["drop"] > 0 and state.draw() < f["drop"]):
            state.count("dropped")
            state.log("#%d drop %s %s" % (reqno, self.command, path))
            self.close_connection = True
            return
        if f["latency_ms"]:
            time.sleep(f["latency_ms"] / 1000.0)
        op, pid, name = self.route(path)
        status, obj, summary = self.run_op(reqno, op, pid, name, path,
                                           query, body, f)
        state.count_status(status)
        state.log("#%d %s status=%d" % (reqno, summary, status))
        self.reply(status, obj)

    def run_op(self, reqno, op, pid, name, path, query, body, f):
        state = self.server.state
        if op is None:
            return (404, gw_error(404, "APIG.0101", "The API does not exist "
                                  "or has not been published").body,
                    "NotFound %s %s" % (self.command, path))
        headers = self.lower_headers()
        if op == "PutRecords":
            state.count("put_requests")
            if f["put_latency_ms"]:
                time.sleep(f["put_latency_ms"] / 1000.0)
        try:
            with state.lock:
                creds = dict(state.credentials)
                token = state.token
                temporary = dict(state.temporary)
            ak = authenticate_as_sent(state, self.command, path, query,
                                      headers, body, creds, token,
                                      f["accept_portless_host"])
            check_security_token(headers, ak, temporary)
            with state.lock:
                by_ak = state.stats["requests_by_ak"]
                by_ak[ak] = by_ak.get(ak, 0) + 1
        except AuthError as e:
            state.count("auth_failures")
            return (441, {"errorCode": e.code, "message": e.message},
                    "%s auth=%s (%s)" % (op, e.code, e.message))
        try:
            if pid != state.project_id or headers.get(
                    "x-project-id", pid).strip() != state.project_id:
                raise dis_error(400, "DIS.4117", "Invalid project id.")
            if op == "DescribeStream":
                obj, summary = describe_stream(state, name, query)
                return 200, obj, summary
            if op in APP_OPS or op in CHECKPOINT_OPS:
                return app_op(state, op, name, query, headers, body)
            if op in ("GetCursor", "GetRecords"):
                if f["deny_reads"]:
                    raise dis_error(403, "DIS.4116", "The user has no "
                                    "permission to perform this operation.")
                op_fn = get_cursor if op == "GetCursor" else get_records
                obj, summary = op_fn(state, query)
                return 200, obj, summary
            self.request_faults(f)
            obj, summary = put_records(state, reqno, headers, body)
            if f["put_reply_latency_ms"]:
                time.sleep(f["put_reply_latency_ms"] / 1000.0)
            bad = self.bad_reply(obj)
            if bad is not None:
                return 200, bad[0], summary + " reply=" + bad[1]
            if media_type(headers) == PROTOBUF_TYPE:
                obj = RawReply(PROTOBUF_CTYPE, pb_encode_result(obj))
            return 200, obj, summary
        except HttpError as e:
            return e.status, e.body, "%s error=%s" % (op, e.code)

    def bad_reply(self, obj):
        """A 200 that acknowledges nothing, while short_replies or
        html_replies count down (the records were accepted all the same):
        the reply without its last entry, or an HTML page.  None, or
        (reply, what it is)."""
        state = self.server.state
        with state.lock:
            f = state.faults
            if f["html_replies"] > 0:
                f["html_replies"] -= 1
                return (RawReply("text/html", b"<html><body><h1>502 Bad "
                                 b"Gateway</h1></body></html>\n"), "html")
            if f["short_replies"] > 0:
                f["short_replies"] -= 1
                short = dict(obj, records=obj["records"][:-1])
                if media_type(self.lower_headers()) == PROTOBUF_TYPE:
                    short = RawReply(PROTOBUF_CTYPE,
                                     pb_encode_result(short))
                return short, "short"
        return None

    def request_faults(self, f):
        u = self.server.state.draw()
        if u < f["req_500"]:
            raise dis_error(500, "DIS.5000", "System error.")
        u -= f["req_500"]
        if u < f["req_429"]:
            raise gw_error(429, "APIG.0308", "The throttling threshold has "
                           "been reached")
        u -= f["req_429"]
        if u < f["req_400_4303"]:
            raise dis_error(400, "DIS.4303", "Exceeded traffic control "
                            "limit.")

    # -- /_test/ control API ------------------------------------------------

    def control(self, path, body):
        state = self.server.state
        try:
            obj = json.loads(body) if body else {}
        except ValueError:
            self.reply(400, {"error": "invalid JSON"})
            return
        try:
            status, out = self.control_op(state, path, obj)
        except (ValueError, TypeError) as e:
            status, out = 400, {"error": str(e)}
        state.log("control %s %s status=%d" % (self.command, path, status))
        self.reply(status, out)

    def control_op(self, state, path, obj):
        cmd = self.command
        if path == "/_test/faults" and cmd == "GET":
            with state.lock:
                return 200, dict(state.faults)
        if path == "/_test/faults" and cmd == "POST":
            return 200, state.set_faults(obj)
        if path == "/_test/stats" and cmd == "GET":
            return 200, state.snapshot()
        if path == "/_test/streams" and cmd == "POST":
            if not isinstance(obj, dict):
                raise ValueError("expected a JSON object")
            name = obj.get("name")
            stype = str(obj.get("type", "COMMON")).upper()
            n = obj.get("partitions", 1)
            check_stream(name, stype, n)
            with state.lock:
                if name in state.streams:
                    return 409, {"error": "stream exists"}
                state.streams[name] = Stream(name, stype, n)
            return 201, {"name": name, "type": stype, "partitions": n}
        m = re.fullmatch(r"/_test/streams/([^/]+)/partitions", path)
        if m and cmd == "POST":
            return change_partitions(state, urllib.parse.unquote(
                m.group(1)), obj)
        if path.startswith("/_test/streams/") and cmd == "DELETE":
            name = urllib.parse.unquote(path[len("/_test/streams/"):])
            with state.lock:
                if state.streams.pop(name, None) is None:
                    return 404, {"error": "no such stream"}
                for app in state.apps.values():
                    for k in [k for k in app.checkpoints if k[0] == name]:
                        del app.checkpoints[k]
            return 200, {"deleted": name}
        if path == "/_test/apps" and cmd == "GET":
            return control_dump_apps(state)
        if path == "/_test/apps" and cmd == "POST":
            return control_apps(state, obj)
        if path == "/_test/checkpoints" and cmd == "POST":
            return control_checkpoint(state, obj)
        if path == "/_test/credentials" and cmd == "POST":
            if not isinstance(obj, dict):
                raise ValueError("expected a JSON object")
            ak, sk = obj.get("ak"), obj.get("sk")
            also = obj.get("also_sk")
            if not isinstance(ak, str) or not isinstance(sk, str) \
                    or not ak or not sk or \
                    (also is not None and (not isinstance(also, str) or
                                           not also)):
                raise ValueError("ak and sk (and also_sk) must be "
                                 "non-empty strings")
            with state.lock:
                state.credentials = {ak: sk if also is None else [sk, also]}
                state.temporary = {}
                if "token" in obj:
                    state.token = obj["token"]
            return 200, {"ak": ak}
        if path == "/_test/temporary_keys" and cmd == "POST":
            creds, temp = parse_temporary_keys(obj)
            with state.lock:
                state.credentials = creds
                state.temporary = temp
            return 200, {"aks": sorted(creds)}
        return 404, {"error": "unknown control endpoint"}


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128
    allow_reuse_address = True

    def __init__(self, addr, state, ctx):
        self.state = state
        self.ctx = ctx
        super().__init__(addr, Handler)

    def get_request(self):
        # The TLS handshake runs in the handler thread (first read), so a
        # slow client never blocks accept().
        sock, addr = self.socket.accept()
        return self.ctx.wrap_socket(sock, server_side=True,
                                    do_handshake_on_connect=False), addr

    def handle_error(self, request, client_address):
        exc = sys.exc_info()[1]
        if isinstance(exc, (ConnectionError, ssl.SSLError, socket.timeout,
                            OSError)):
            self.state.log("connection %s: %s" % (client_address[1], exc))
            return
        self.state.log("error on connection %s:\n%s" % (
            client_address[1], traceback.format_exc()), force=True)


def parse_args(argv):
    p = argparse.ArgumentParser(description="DIS-compatible HTTPS test "
                                "server (see the file header).")
    p.add_argument("--cert", required=True)
    p.add_argument("--key", required=True)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--port-file")
    p.add_argument("--ak", required=True)
    p.add_argument("--sk", required=True)
    p.add_argument("--token")
    p.add_argument("--security-token",
                   help="--ak/--sk are temporary keys: accepted only with "
                   "this X-Security-Token, signed")
    p.add_argument("--project-id", required=True)
    p.add_argument("--region", default="cn-north-1")
    p.add_argument("--stream", action="append",
                   help="NAME[:COMMON|ADVANCED[:PARTITIONS]]")
    p.add_argument("--records-file")
    p.add_argument("--log-file")
    p.add_argument("--quiet", action="store_true")
    p.add_argument("--seed", type=int)
    for k in ("rec-4303", "rec-5000", "req-500", "req-429", "req-400-4303",
              "drop"):
        p.add_argument("--" + k, type=float, default=0.0)
    p.add_argument("--latency-ms", type=int, default=0)
    p.add_argument("--outage", action="store_true")
    p.add_argument("--deny-reads", action="store_true")
    p.add_argument("--max-request-bytes", type=int)
    p.add_argument("--ack-only", action="store_true")
    p.add_argument("--cursor-ttl-ms", type=int, default=0)
    p.add_argument("--read-limit-bytes", type=int, default=0)
    p.add_argument("--records-per-get", type=int, default=0)
    p.add_argument("--write-limit-bytes", type=int, default=0)
    p.add_argument("--retain-records", type=int, default=1000000)
    p.add_argument("--app-quota", type=int, default=0,
                   help="CreateApp answers DIS.4329 past this many apps "
                   "(0: no limit)")
    p.add_argument("--refuse-protobuf", default="", choices=REFUSE_PROTOBUF,
                   help="answer protobuf PutRecords 415 (415), or read "
                   "them as JSON, so 400 DIS.4200 (json-only)")
    p.add_argument("--accept-portless-host", action="store_true",
                   help="also accept a signature computed over Host "
                   "without its :port (the DIS Python SDK's signer)")
    args = p.parse_args(argv)
    for k in ("rec_4303", "rec_5000", "req_500", "req_429", "req_400_4303",
              "drop"):
        if not 0.0 <= getattr(args, k) <= 1.0:
            p.error("--%s must be within 0..1" % k.replace("_", "-"))
    if args.seed is None:
        args.seed = int.from_bytes(os.urandom(4), "big")
    try:
        for spec in args.stream or []:
            parse_stream_spec(spec)
    except ValueError as e:
        p.error(str(e))
    return args


def write_port_file(path, port):
    tmp = "%s.tmp.%d" % (path, os.getpid())
    with open(tmp, "w") as fp:
        fp.write("%d\n" % port)
    os.rename(tmp, path)


def main(argv=None):
    stop = threading.Event()

    def on_signal(signum, frame):
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    args = parse_args(argv)
    state = State(args)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(args.cert, args.key)
    server = Server((args.host, args.port), state, ctx)
    port = server.server_address[1]
    t = threading.Thread(target=server.serve_forever,
                         kwargs={"poll_interval": 0.2}, daemon=True)
    t.start()
    if args.port_file:
        write_port_file(args.port_file, port)
    state.log("dis_server: listening on https://%s:%d/ seed=%d project=%s "
              "streams=%s" % (args.host, port, args.seed, args.project_id,
                              ",".join(sorted(state.streams))), force=True)
    while not stop.wait(0.5):
        pass
    server.shutdown()
    server.server_close()
    with state.lock:
        if state.records_fp is not None:
            state.records_fp.close()
            state.records_fp = None
    state.log("dis_server: stopped after %d requests" % state.reqno,
              force=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
