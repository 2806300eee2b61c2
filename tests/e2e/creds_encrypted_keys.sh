#!/bin/sh
# Encrypted ak and sk in agent.ini, as the DIS Agent has them: ak made by
# `disagent encrypt` at a terminal (a pseudo-terminal here: neither the key
# nor the value is echoed), sk made by the DIS Agent's algorithm in Java (a
# fixture), on lines longer than 199 characters, with encrypt.key only in
# DIS_ENCRYPT_KEY.  -t passes with the key and fails naming the line (never
# the value) with a wrong one or none; agent.ini holding encrypt.key and
# readable by everyone gets a WARN naming its mode; every line arrives, and
# no secret is in any log, -t or status output, metrics or state file.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/creds_lib.sh"

EKEY=e2e-Encrypt-Key-42
# E2E_SK encrypted with EKEY by the Java algorithm (OpenJDK 17 javax.crypto:
# PBKDF2WithHmacSHA1, 1000 iterations, 128 bits; AES/CBC/PKCS5Padding).
JAVA_SK=383930326230663936383831313034653a3a65613634383065663463333630633236643366373039336531346239386230343a3a643237313732643333666361633263323330346430396263636162373364313439356339383165613030393133306139393837363666343862336561623939626265336434656436623665643332383832653866316363376136343938653934

start_server --stream s1
mkdir -p "$TMP/logs"
printf '%s\n' "$EKEY" >"$TMP/key"
chmod 600 "$TMP/key"

# `disagent encrypt` on a terminal: prompts for the key twice and the
# value, echoes none of them, prints the encrypted value.
"$PYTHON3" - "$DISAGENT" "$EKEY" "$E2E_AK" "$TMP/pty.out" >"$TMP/enc_ak" <<'PY' ||
import os, pty, select, sys, time
exe, key, value, transcript = sys.argv[1], sys.argv[2].encode(), \
    sys.argv[3].encode(), sys.argv[4]
pid, fd = pty.fork()
if pid == 0:
    os.execv(exe, [exe, "encrypt"])
seen = b""
def until(pat):
    global seen
    deadline = time.time() + 30
    while pat not in seen:
        if not select.select([fd], [], [], 1)[0]:
            if time.time() > deadline:
                sys.exit("timed out waiting for %r; got %r" % (pat, seen))
            continue
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            chunk = b""
        if not chunk:
            sys.exit("the pty closed; got %r" % seen)
        seen += chunk
until(b"encrypt.key: "); os.write(fd, key + b"\n")
until(b"encrypt.key again: "); os.write(fd, key + b"\n")
until(b"value to encrypt: "); os.write(fd, value + b"\n")
while True:
    try:
        chunk = os.read(fd, 4096)
    except OSError:
        break
    if not chunk:
        break
    seen += chunk
_, status = os.waitpid(pid, 0)
open(transcript, "wb").write(seen)
if status != 0:
    sys.exit("disagent encrypt exited %d: %r" % (status, seen))
if key in seen or value in seen:
    sys.exit("the terminal echoed the key or the value: %r" % seen)
print(seen.split(b"value to encrypt: ")[1].split()[0].decode())
PY
	fail "disagent encrypt at a terminal"
ENC_AK=$(cat "$TMP/enc_ak")
echo "$ENC_AK" | grep -Eq '^[0-9a-f]{168,}$' ||
	fail "not an encrypted value: $ENC_AK"
# From a pipe, with --key-file: a fresh salt and IV every time.
ENC2=$(printf '%s\n' "$E2E_AK" | "$DISAGENT" encrypt --key-file "$TMP/key") ||
	fail "disagent encrypt --key-file exited $?"
[ "$ENC2" != "$ENC_AK" ] || fail "two encryptions gave the same value"

write_conf "$TMP/agent.ini" "metricsFile = $TMP/metrics.prom"
sed -i "s/^ak = .*/ak = $ENC_AK/; s/^sk = .*/sk = $JAVA_SK/" "$TMP/agent.ini"
add_flow "$TMP/agent.ini" app s1 "$TMP/logs/app.log"
chmod 600 "$TMP/agent.ini"
[ "$(awk 'length > 199' "$TMP/agent.ini" | wc -l)" -ge 1 ] ||
	fail "the encrypted sk should be on a line over 199 characters"
akline=$(grep -n '^ak = ' "$TMP/agent.ini" | cut -d: -f1)
skline=$(grep -n '^sk = ' "$TMP/agent.ini" | cut -d: -f1)

DIS_ENCRYPT_KEY=$EKEY "$DISAGENT" -t -c "$TMP/agent.ini" >"$TMP/t.out" 2>&1 ||
	fail "-t with the key: $(cat "$TMP/t.out")"
rc=0
DIS_ENCRYPT_KEY=wrong-key "$DISAGENT" -t -c "$TMP/agent.ini" \
    >"$TMP/t_wrong.out" 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "-t with a wrong key exited $rc"
grep -qx "$TMP/agent.ini:$akline: ak: cannot decrypt the value with encrypt.key (a wrong key, or a damaged value)" \
    "$TMP/t_wrong.out" || fail "-t with a wrong key: $(cat "$TMP/t_wrong.out")"
rc=0
"$DISAGENT" -t -c "$TMP/agent.ini" >"$TMP/t_none.out" 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "-t without a key exited $rc"
grep -q "^$TMP/agent.ini:$akline: ak: cannot decrypt the value with the DIS Agent's built-in key; set encrypt.key" \
    "$TMP/t_none.out" || fail "-t without a key: $(cat "$TMP/t_none.out")"
# The sk line alone, with the ak in the clear: the error names its line.
sed "s/^ak = .*/ak = $E2E_AK/" "$TMP/agent.ini" >"$TMP/sk_only.ini"
rc=0
DIS_ENCRYPT_KEY=wrong-key "$DISAGENT" -t -c "$TMP/sk_only.ini" \
    >"$TMP/t_sk.out" 2>&1 || rc=$?
[ "$rc" = 1 ] && grep -q "sk_only.ini:$skline: sk: cannot decrypt" \
    "$TMP/t_sk.out" || fail "-t, wrong key for sk: $(cat "$TMP/t_sk.out")"

# encrypt.key beside the values in a file everyone can read: a WARN.
sed "s/^\[agent\]\$/[agent]\nencrypt.key = $EKEY/" "$TMP/agent.ini" \
    >"$TMP/open.ini"
chmod 644 "$TMP/open.ini"
"$DISAGENT" -t -c "$TMP/open.ini" >"$TMP/t_open.out" 2>&1 ||
	fail "-t with encrypt.key in the file: $(cat "$TMP/t_open.out")"
grep -q "WARN .*open.ini holds the secret .* and is readable by every user (mode 0644)" \
    "$TMP/t_open.out" || fail "no WARN for mode 0644: $(cat "$TMP/t_open.out")"
rm "$TMP/open.ini" "$TMP/t_open.out"	# it holds the key, on purpose

write_lines "$TMP/logs/app.log" e 0 3000
DIS_ENCRYPT_KEY=$EKEY start_agent "$TMP/agent.ini"
wait_for 60 "all 3,000 records" count_at_least s1 3000
write_lines "$TMP/logs/app.log" e 3000 4000
wait_for 60 "all 4,000 records" count_at_least s1 4000
wait_for 20 "the metrics file" test -s "$TMP/metrics.prom"
stop_agent
records verify --records "$TMP/records.jsonl" --stream s1 \
    --expect "$TMP/logs/app.log" || fail "records differ from the lines"
[ "$(stat_of auth_failures)" = 0 ] || fail "requests failed to authenticate"

DIS_ENCRYPT_KEY=$EKEY save_outputs "$TMP/agent.ini"
grep -q "configuration OK" "$TMP/t.out" || fail "-t: $(cat "$TMP/t.out")"
no_secrets "$E2E_SK" "$EKEY" "$E2E_AK"
pass
