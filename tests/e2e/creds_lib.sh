# Helpers for the credential and proxy tests, sourced after lib.sh: the fake
# ECS metadata service (tests/ecs_metadata.py), temporary keys on the test
# endpoint, the endpoint's control API, and the check that no secret of the
# test ever appears in anything the agent writes or prints.

META_PID=
EXTRA_PIDS=

creds_cleanup() {
	_rc=$?
	# Under set -e the "(exit $_rc)" below would end the shell here, and
	# e2e_cleanup, which stops the endpoint, would never run.
	set +e
	for _p in $META_PID $EXTRA_PIDS; do
		kill "$_p" 2>/dev/null || true
	done
	(exit "$_rc")
	e2e_cleanup
}
trap creds_cleanup EXIT


# by_ak AK: requests the endpoint authenticated with access key AK.
by_ak() {
	"$PYTHON3" - "$PORT" "$TMP/ca/ca.pem" "$1" <<'PY'
import http.client, json, ssl, sys
ctx = ssl.create_default_context(cafile=sys.argv[2])
c = http.client.HTTPSConnection("127.0.0.1", int(sys.argv[1]), context=ctx)
c.request("GET", "/_test/stats")
print(json.loads(c.getresponse().read())["requests_by_ak"].get(sys.argv[3], 0))
PY
}
used_ak() { [ "$(by_ak "$1")" -gt "${2:-0}" ]; }

# temporary_keys AK:SK:TOKEN[:EXPIRES_IN_S] ...: the endpoint accepts only
# these temporary keys, each with its X-Security-Token, from now on.
temporary_keys() {
	"$PYTHON3" - "$@" >"$TMP/tk.json" <<'PY'
import json, sys, time
keys = []
for a in sys.argv[1:]:
    p = a.split(":")
    k = {"ak": p[0], "sk": p[1], "security_token": p[2]}
    if len(p) > 3:
        k["expires_at"] = time.time() + float(p[3])
    keys.append(k)
print(json.dumps({"keys": keys}))
PY
	control POST /_test/temporary_keys "$(cat "$TMP/tk.json")" ||
		fail "cannot set temporary keys on the endpoint"
}

# start_meta [ecs_metadata.py options...]: the fake metadata service.
start_meta() {
	rm -f "$TMP/meta.port"
	"$PYTHON3" "$top_srcdir/tests/ecs_metadata.py" --port "${META_PORT:-0}" \
	    --port-file "$TMP/meta.port" --log-file "$TMP/meta.log" "$@" \
	    2>>"$TMP/meta.log" &
	META_PID=$!
	wait_for 20 "the metadata service to listen" test -s "$TMP/meta.port"
	META_PORT=$(cat "$TMP/meta.port")
}

stop_meta() {
	kill "$META_PID" 2>/dev/null || true
	wait "$META_PID" 2>/dev/null || true
	META_PID=
}

# meta METHOD PATH [JSON]: the metadata service's /_test/ API.
meta() {
	"$PYTHON3" - "$META_PORT" "$@" <<'PY'
import http.client, sys
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=10)
c.request(sys.argv[2], sys.argv[3], body=sys.argv[4] if len(sys.argv) > 4
          else None, headers={"Content-Type": "application/json"})
r = c.getresponse(); print(r.read().decode())
sys.exit(0 if r.status == 200 else 1)
PY
}

# meta_keys AK SK TOKEN TTL_S: the keys the metadata service hands out now.
meta_keys() {
	meta POST /_test/keys "{\"access\": \"$1\", \"secret\": \"$2\", \"securitytoken\": \"$3\", \"ttl\": $4}" \
	    >/dev/null || fail "cannot set the metadata service's keys"
}

meta_stat() {
	meta GET /_test/stats | "$PYTHON3" -c \
	    'import json, sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"
}
meta_stat_at_least() { [ "$(meta_stat "$1")" -ge "$2" ]; }

# free_port: a port nothing listens on right now.
free_port() {
	"$PYTHON3" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# save_outputs CONF: what else the agent shows about itself, for the
# secrets check: disagent -t and disagent status.
save_outputs() {
	"$DISAGENT" -t -c "$1" >>"$TMP/t.out" 2>&1 || true
	"$DISAGENT" status -c "$1" >>"$TMP/status.out" 2>&1 || true
}

# no_secrets SECRET...: none of them in any log, -t or status output,
# metrics file or state file of the test (and the checked files exist).
no_secrets() {
	_files=$(ls "$TMP"/agent*.log "$TMP"/*.out "$TMP"/*.prom \
	    "$TMP"/state/* 2>/dev/null)
	for _need in agent.log t.out status.out; do
		[ -s "$TMP/$_need" ] || fail "no $_need to check for secrets"
	done
	ls "$TMP"/state/state.json >/dev/null 2>&1 ||
		fail "no state file to check for secrets"
	for _s in "$@"; do
		[ -n "$_s" ] || continue
		# shellcheck disable=SC2086
		if grep -F -l -- "$_s" $_files; then
			fail "a secret appears in the files above"
		fi
	done
	echo "no secret in: $(echo "$_files" | tr '\n' ' ')"
}
