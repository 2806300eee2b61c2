#!/usr/bin/env python3
"""A fake ECS metadata service for the disagent tests (plain HTTP, 127.0.0.1).

Serves what credentialSource = ecs-metadata asks for, as Huawei Cloud ECS
does (and the Huawei Cloud SDKs read it, e.g. huaweicloud-sdk-go-v3
core/auth/internal/metadata_accessor.go):

  PUT /meta-data/latest/api/token   header X-Metadata-Token-Ttl-Seconds
      -> 200, a session token as the body (404 with --no-session)
  GET /openstack/latest/securitykey header X-Metadata-Token (required unless
      --no-session; a missing or unknown one -> 401)
      -> 200 {"credential": {"access", "secret", "securitytoken",
              "expires_at": "2024-01-31T12:34:56.000000Z"}}
      -> 404 {"error": "Please configure Cloud Service Agency first"} while
         no keys are set

Control API for the test (no authentication), JSON bodies:
  POST /_test/keys {"access","secret","securitytoken","ttl": seconds}
      the keys handed out from now on, valid ttl seconds from now
  POST /_test/down {"down": true|false}   while down, every metadata
      request is answered by closing the connection
  POST /_test/expire_sessions             forget every session token
  GET  /_test/stats  {"token_puts", "key_gets", "keys_served",
      "unauthorized", "refused_down"}

Keys are never logged.  Standard library only.
"""

import argparse
import datetime
import http.server
import json
import os
import secrets
import signal
import sys
import threading

TOKEN_PATH = "/meta-data/latest/api/token"
KEYS_PATH = "/openstack/latest/securitykey"
NO_AGENCY = "Please configure Cloud Service Agency first"


class State:
    def __init__(self, args):
        self.lock = threading.Lock()
        self.no_session = args.no_session
        self.sessions = set()
        self.down = False
        self.keys = None
        if args.access:
            self.set_keys({"access": args.access, "secret": args.secret,
                           "securitytoken": args.securitytoken,
                           "ttl": args.ttl})
        self.stats = {"token_puts": 0, "key_gets": 0, "keys_served": 0,
                      "unauthorized": 0, "refused_down": 0}
        self.log_fp = open(args.log_file, "a") if args.log_file else \
            sys.stderr

    def log(self, msg):
        ts = datetime.datetime.now().strftime("%H:%M:%S.%f")[:-3]
        with self.lock:
            self.log_fp.write("%s %s\n" % (ts, msg))
            self.log_fp.flush()

    def set_keys(self, obj):
        for k in ("access", "secret", "securitytoken"):
            if not isinstance(obj.get(k), str) or not obj[k]:
                raise ValueError("%s must be a non-empty string" % k)
        ttl = obj.get("ttl", 3600)
        if not isinstance(ttl, (int, float)):
            raise ValueError("ttl must be a number")
        exp = datetime.datetime.now(datetime.timezone.utc) + \
            datetime.timedelta(seconds=ttl)
        with self.lock:
            self.keys = {"access": obj["access"], "secret": obj["secret"],
                         "securitytoken": obj["securitytoken"],
                         "expires_at": exp.strftime(
                             "%Y-%m-%dT%H:%M:%S.000000Z")}

    def count(self, key):
        with self.lock:
            self.stats[key] += 1


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "ecs-metadata-test/1"
    sys_version = ""

    def log_message(self, fmt, *args):
        pass

    def reply(self, status, body, ctype="application/json"):
        if not isinstance(body, bytes):
            body = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def do_PUT(self):
        self.dispatch()

    def do_GET(self):
        self.dispatch()

    def do_POST(self):
        self.dispatch()

    def dispatch(self):
        st = self.server.state
        raw = self.body()
        if self.path.startswith("/_test/"):
            self.control(st, raw)
            return
        with st.lock:
            down = st.down
        if down:
            st.count("refused_down")
            st.log("%s %s: down, connection closed" % (self.command,
                                                        self.path))
            self.close_connection = True
            return
        if self.command == "PUT" and self.path == TOKEN_PATH:
            self.put_token(st)
        elif self.command == "GET" and self.path == KEYS_PATH:
            self.get_keys(st)
        else:
            self.reply(404, {"error": "not found"})

    def put_token(self, st):
        st.count("token_puts")
        if st.no_session:
            st.log("PUT token: 404 (no session tokens)")
            self.reply(404, {"error": "not found"})
            return
        if not self.headers.get("X-Metadata-Token-Ttl-Seconds"):
            self.reply(400, {"error": "X-Metadata-Token-Ttl-Seconds"})
            return
        tok = secrets.token_urlsafe(24)
        with st.lock:
            st.sessions.add(tok)
        st.log("PUT token: 200")
        self.reply(200, tok.encode(), "text/plain")

    def get_keys(self, st):
        st.count("key_gets")
        tok = self.headers.get("X-Metadata-Token")
        with st.lock:
            ok = st.no_session or tok in st.sessions
            keys = dict(st.keys) if st.keys else None
        if not ok:
            st.count("unauthorized")
            st.log("GET securitykey: 401 (session token %s)" %
                   ("missing" if tok is None else "unknown"))
            self.reply(401, {"error": "unauthorized"})
            return
        if keys is None:
            st.log("GET securitykey: 404 (no agency)")
            self.reply(404, {"error": NO_AGENCY})
            return
        st.count("keys_served")
        st.log("GET securitykey: 200, keys until %s" % keys["expires_at"])
        self.reply(200, {"credential": keys})

    def control(self, st, raw):
        try:
            obj = json.loads(raw) if raw else {}
            if self.path == "/_test/keys" and self.command == "POST":
                st.set_keys(obj)
                out = {"ok": True}
            elif self.path == "/_test/down" and self.command == "POST":
                with st.lock:
                    st.down = bool(obj.get("down"))
                out = {"down": st.down}
            elif self.path == "/_test/expire_sessions":
                with st.lock:
                    st.sessions.clear()
                out = {"ok": True}
            elif self.path == "/_test/stats" and self.command == "GET":
                with st.lock:
                    out = dict(st.stats)
            else:
                self.reply(404, {"error": "unknown control endpoint"})
                return
        except (ValueError, TypeError, AttributeError) as e:
            self.reply(400, {"error": str(e)})
            return
        st.log("control %s %s" % (self.command, self.path))
        self.reply(200, out)


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, addr, state):
        self.state = state
        super().__init__(addr, Handler)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--port-file")
    p.add_argument("--log-file")
    p.add_argument("--no-session", action="store_true",
                   help="no session tokens: PUT gets 404, GET needs none")
    p.add_argument("--access")
    p.add_argument("--secret")
    p.add_argument("--securitytoken")
    p.add_argument("--ttl", type=float, default=3600)
    args = p.parse_args(argv)
    state = State(args)
    server = Server((args.host, args.port), state)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *a: stop.set())
    signal.signal(signal.SIGINT, lambda *a: stop.set())
    t = threading.Thread(target=server.serve_forever,
                         kwargs={"poll_interval": 0.2}, daemon=True)
    t.start()
    port = server.server_address[1]
    if args.port_file:
        tmp = "%s.tmp.%d" % (args.port_file, os.getpid())
        with open(tmp, "w") as fp:
            fp.write("%d\n" % port)
        os.rename(tmp, args.port_file)
    state.log("ecs_metadata: listening on http://%s:%d/%s" % (
        args.host, port, " (no session tokens)" if args.no_session else ""))
    while not stop.wait(0.5):
        pass
    server.shutdown()
    server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
