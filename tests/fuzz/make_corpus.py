#!/usr/bin/env python3
"""Write the seed corpora of the fuzz targets from real replies and files.

    make_corpus.py [--disagent PATH] TOPDIR

Every seed is something the agent really reads, made by the project's own
test services, never written by hand:

  corpus/pbuf      PutRecordsResult replies in protobuf, as
                   tests/dis_server.py answers protobuf requests (all
                   acknowledged, some failed per record, one short), each
                   behind a first byte saying how many records were sent
  corpus/read      tests/dis_server.py's DescribeStream pages, GetCursor and
                   GetRecords replies (records with and without keys, an
                   empty page) and its error bodies
  corpus/ecsmeta   tests/ecs_metadata.py's securitykey reply, session token
                   and error body, fetched over HTTP from the real service
  corpus/state     tests/data/state-v1.json and, with --disagent, the state
                   files the agent writes (tailed files, a whole file kept
                   with its complete mark, a file spooled at a stop), from
                   runs against tests/dis_server.py
  corpus/importyml tests/data/agent.yml and the agent.yml files the e2e
                   tests feed --import-yml (extracted from their
                   here-documents)

The files are committed; run this again (and commit) when a reply or the
state file changes shape.  Standard library plus what dis_server.py needs.
"""

import argparse
import base64
import http.client
import importlib.util
import json
import os
import re
import shutil
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from urllib.parse import quote


def load_module(top, name):
    spec = importlib.util.spec_from_file_location(
        name, os.path.join(top, "tests", name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def write(d, name, data):
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def dis_state(dis, extra=()):
    args = dis.parse_args(["--cert", "-", "--key", "-", "--ak", "AK",
                           "--sk", "SK", "--project-id", "P", "--seed", "7",
                           "--stream", "s1:COMMON:3",
                           "--stream", "big:ADVANCED:12"] + list(extra))
    st = dis.State(args)
    st.log_fp = open(os.devnull, "w")
    return st


def put_body(records, stream="s1", protobuf=False):
    if not protobuf:
        return json.dumps({"stream_name": stream, "records": [
            {"data": base64.b64encode(r).decode(),
             "partition_key": "k%d" % i} for i, r in enumerate(records)
        ]}).encode()
    out = bytearray()

    def field(f, b):
        out.extend(varint(f << 3 | 2) + varint(len(b)) + b)

    for f, b in ((1, stream.encode()),):
        field(f, b)
    for i, r in enumerate(records):
        e = varint(3 << 3 | 2) + varint(len(r)) + r
        k = ("k%d" % i).encode()
        e += varint(5 << 3 | 2) + varint(len(k)) + k
        field(2, e)
    return bytes(out)


def varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append(v & 0x7f | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def json_bytes(obj):
    # As dis_server.py's reply() writes them.
    return json.dumps(obj, separators=(",", ":")).encode("utf-8")


def put(dis, st, records, protobuf, reqno=1, stream="s1"):
    hdr = {"content-type": dis.PROTOBUF_TYPE if protobuf else
           "application/json"}
    obj, _ = dis.put_records(st, reqno, hdr, put_body(records, stream,
                                                      protobuf))
    return obj


def make_pbuf(dis, out):
    d = os.path.join(out, "pbuf")
    st = dis_state(dis)
    recs = [b"line %d" % i for i in range(5)]
    ok = put(dis, st, recs, True)
    write(d, "all_ok_5", bytes([5]) + dis.pb_encode_result(ok))
    write(d, "one_ok_1", bytes([1]) + dis.pb_encode_result(
        put(dis, st, [b"x"], True)))
    # Some records failed (the endpoint's per-record faults).
    st.faults["rec_4303"] = 0.3
    st.faults["rec_5000"] = 0.3
    mixed = put(dis, st, [b"r%d" % i for i in range(8)], True)
    write(d, "mixed_8", bytes([8]) + dis.pb_encode_result(mixed))
    st.faults["rec_4303"] = st.faults["rec_5000"] = 0.0
    st.faults["reject_prefix"] = "bad"
    rej = put(dis, st, [b"bad record", b"good record"], True)
    write(d, "rejected_2", bytes([2]) + dis.pb_encode_result(rej))
    # A reply one record short of the request, and one too long.
    short = dict(ok, records=ok["records"][:4])
    write(d, "short_4_of_5", bytes([5]) + dis.pb_encode_result(short))
    write(d, "long_5_of_4", bytes([4]) + dis.pb_encode_result(ok))
    # The record cap: a record over it is refused with DIS.4200.
    cap = dis.RECORD_CAP["COMMON"]
    st.faults["max_request_bytes"] = 4 * cap
    big = put(dis, st, [b"y" * (cap + 1), b"z"], True)
    write(d, "oversize_2", bytes([2]) + dis.pb_encode_result(big))


def make_read(dis, out):
    d = os.path.join(out, "read")
    st = dis_state(dis)
    for i in range(3):
        put(dis, st, [b"record %d-%d" % (i, j) for j in range(4)], False,
            reqno=i + 1)
    obj, _ = dis.describe_stream(st, "s1", "")
    write(d, "describe_s1", json_bytes(obj))
    obj, _ = dis.describe_stream(st, "big", "limit_partitions=5")
    write(d, "describe_page1", json_bytes(obj))
    obj, _ = dis.describe_stream(st, "big",
                                 "limit_partitions=5&start_partitionId="
                                 "shardId-0000000009")
    write(d, "describe_last_page", json_bytes(obj))
    for ctype, extra in (("TRIM_HORIZON", ""), ("LATEST", ""),
                         ("AT_SEQUENCE_NUMBER",
                          "&starting-sequence-number=1")):
        obj, _ = dis.get_cursor(st, "stream-name=s1&partition-id=0&"
                                "cursor-type=" + ctype + extra)
        write(d, "cursor_" + ctype.lower(), json_bytes(obj))
    for p in range(3):
        obj, _ = dis.get_cursor(st, "stream-name=s1&partition-id=%d&"
                                "cursor-type=TRIM_HORIZON" % p)
        recs, _ = dis.get_records(st, "partition-cursor=" + quote(
            obj["partition_cursor"]))
        write(d, "records_p%d" % p, json_bytes(recs))
    obj, _ = dis.get_cursor(st, "stream-name=s1&partition-id=0&"
                            "cursor-type=LATEST")
    recs, _ = dis.get_records(st, "partition-cursor=" + quote(
        obj["partition_cursor"]))
    write(d, "records_empty", json_bytes(recs))
    # Error bodies of both shapes, as the endpoint sends them.
    for name, fn in (("error_no_stream",
                      lambda: dis.describe_stream(st, "nope", "")),
                     ("error_bad_cursor",
                      lambda: dis.get_records(st, "partition-cursor=x"))):
        try:
            fn()
        except dis.HttpError as e:
            write(d, name, json_bytes(e.body))
    write(d, "error_gateway", json_bytes(dis.gw_error(
        404, "APIG.0101", "The API does not exist").body))


def make_ecsmeta(top, out):
    d = os.path.join(out, "ecsmeta")
    ecs = load_module(top, "ecs_metadata")
    args = argparse.Namespace(no_session=False, access="ECSAK0123",
                              secret="ecs-secret/+=", securitytoken="T" * 60,
                              ttl=3600, log_file=os.devnull)
    state = ecs.State(args)
    server = ecs.Server(("127.0.0.1", 0), state)
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    port = server.server_address[1]

    def call(method, path, headers):
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        c.request(method, path, headers=headers)
        r = c.getresponse()
        return r.status, r.read()

    status, tok = call("PUT", ecs.TOKEN_PATH,
                       {"X-Metadata-Token-Ttl-Seconds": "21600"})
    assert status == 200
    write(d, "session_token", tok)
    status, keys = call("GET", ecs.KEYS_PATH, {"X-Metadata-Token":
                                               tok.decode()})
    assert status == 200
    write(d, "securitykey", keys)
    _, body = call("GET", ecs.KEYS_PATH, {"X-Metadata-Token": "unknown"})
    write(d, "unauthorized", body)
    state.keys = None
    _, body = call("GET", ecs.KEYS_PATH, {"X-Metadata-Token":
                                          tok.decode()})
    write(d, "no_agency", body)
    server.shutdown()
    server.server_close()


def make_importyml(top, out):
    d = os.path.join(out, "importyml")
    os.makedirs(d, exist_ok=True)
    shutil.copy(os.path.join(top, "tests", "data", "agent.yml"),
                os.path.join(d, "agent.yml"))
    e2e = os.path.join(top, "tests", "e2e")
    for name in sorted(os.listdir(e2e)):
        if not name.startswith("import_yml") or not name.endswith(".sh"):
            continue
        text = open(os.path.join(e2e, name)).read()
        docs = re.findall(r"<<'?(\w+)'?\n(.*?)\n\1\n", text, re.S)
        for i, (_, body) in enumerate(docs):
            if "flows:" not in body:
                continue
            # The tests' shell variables as a test run would set them.
            body = body.replace("$TMP", "/tmp/disagent-e2e")
            write(d, "%s_%d.yml" % (name[:-3], i), body + "\n")


def make_state(top, out, disagent):
    d = os.path.join(out, "state")
    os.makedirs(d, exist_ok=True)
    shutil.copy(os.path.join(top, "tests", "data", "state-v1.json"),
                os.path.join(d, "state-v1.json"))
    if not disagent:
        return
    tmp = tempfile.mkdtemp(prefix="make_corpus.")
    try:
        agent_state_files(top, tmp, disagent, d)
    finally:
        shutil.rmtree(tmp)


def agent_state_files(top, tmp, disagent, d):
    py = sys.executable
    subprocess.run(["sh", os.path.join(top, "tests", "make_test_ca.sh"),
                    tmp + "/ca"], check=True, stdout=subprocess.DEVNULL)
    srv = subprocess.Popen([py, os.path.join(top, "tests", "dis_server.py"),
                            "--cert", tmp + "/ca/server.pem", "--key",
                            tmp + "/ca/server.key", "--port", "0",
                            "--port-file", tmp + "/port", "--ak", "AK",
                            "--sk", "SK", "--project-id", "0" * 32,
                            "--stream", "s1", "--seed", "1", "--quiet"])
    try:
        for _ in range(200):
            if os.path.exists(tmp + "/port"):
                break
            time.sleep(0.05)
        port = open(tmp + "/port").read().strip()
        os.makedirs(tmp + "/logs/sub")
        os.makedirs(tmp + "/whole")
        # A file in the way of the move: the cleanup fails, and the
        # whole file's entry keeps its complete mark.
        os.makedirs(tmp + "/done")
        open(tmp + "/done/w.csv", "w").close()
        for i in range(3):
            with open(tmp + "/logs/app%d.log" % i, "w") as f:
                f.write("".join("line %d %d\n" % (i, j)
                                for j in range(50 + i)))
        with open(tmp + "/logs/sub/deep.log", "w") as f:
            f.write("a line without its end")
        with open(tmp + "/whole/w.csv", "w") as f:
            f.write("a,b\n1,2\n")
        past = time.time() - 3600
        os.utime(tmp + "/whole/w.csv", (past, past))
        ini = ("[agent]\nregion = cn-north-1\nprojectId = %s\n"
               "endpoint = https://127.0.0.1:%s\nak = AK\nsk = SK\n"
               "caFile = %s/ca/ca.pem\ncheckpointFile = %s/st/state.json\n"
               "\n[flow:app]\nDISStream = s1\nfilePattern = %s/logs/**/*.log"
               "\ndirectoryRecursionEnabled = true\n"
               "\n[flow:whole]\nDISStream = s1\nfilePattern = %s/whole/*.csv"
               "\nisFileAppendable = false\nmaxFileCheckingMillis = 100\n"
               "fileMoveToDir = %s/done\n"
               % ("0" * 32, port, tmp, tmp, tmp, tmp, tmp))
        with open(tmp + "/agent.ini", "w") as f:
            f.write(ini)
        os.chmod(tmp + "/agent.ini", 0o600)
        for run in (1, 2):
            # Exit 1: the cleanup failed, as it is meant to.
            subprocess.run([disagent, "--once", "-c", tmp + "/agent.ini"],
                           stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, timeout=120)
            shutil.copy(tmp + "/st/state.json",
                        os.path.join(d, "agent_run%d.json" % run))
            with open(tmp + "/logs/app0.log", "a") as f:
                f.write("more\n")
        shutil.copy(tmp + "/st/state.json.bak",
                    os.path.join(d, "agent_run1.json.bak"))
        spooled_state(tmp, disagent, port, d)
    finally:
        srv.terminate()
        srv.wait()


def spooled_state(tmp, disagent, port, d):
    """A stop with a file deleted while the agent still read it (DIS
    down): its entry in the state file names the spool file."""
    ctx = ssl.create_default_context(cafile=tmp + "/ca/ca.pem")
    c = http.client.HTTPSConnection("127.0.0.1", int(port), context=ctx)
    c.request("POST", "/_test/faults", body=json.dumps({"outage": True}),
              headers={"Content-Type": "application/json"})
    c.getresponse().read()
    with open(tmp + "/logs/gone.log", "w") as f:
        f.write("".join("gone %d\n" % j for j in range(40)))
    log = open(tmp + "/agent-spool.log", "w")
    agent = subprocess.Popen([disagent, "-c", tmp + "/agent.ini"],
                             stdout=log, stderr=log)
    try:
        for _ in range(400):
            if "tracking %s/logs/gone.log" % tmp in open(
                    tmp + "/agent-spool.log").read():
                break
            time.sleep(0.05)
        os.unlink(tmp + "/logs/gone.log")
        agent.terminate()
        agent.wait(timeout=60)
    finally:
        if agent.poll() is None:
            agent.kill()
        log.close()
    shutil.copy(tmp + "/st/state.json", os.path.join(d, "agent_spool.json"))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--disagent", help="the agent, for its state files")
    p.add_argument("top")
    a = p.parse_args()
    out = os.path.join(a.top, "tests", "fuzz", "corpus")
    dis = load_module(a.top, "dis_server")
    make_pbuf(dis, out)
    make_read(dis, out)
    make_ecsmeta(a.top, out)
    make_importyml(a.top, out)
    make_state(a.top, out, a.disagent)
    return 0


if __name__ == "__main__":
    sys.exit(main())
