#!/bin/sh
# make_test_ca.sh DIR
#
# Generates a throwaway test CA (DIR/ca.pem, DIR/ca.key) and a server
# certificate for CN=localhost with subjectAltName DNS:localhost and
# IP:127.0.0.1, signed by that CA (DIR/server.pem, DIR/server.key), so that a
# client using CAfile=ca.pem verifies https://127.0.0.1:PORT/ and
# https://localhost:PORT/.  EC P-256 keys, quiet and fast.  Idempotent: does
# nothing when all four files already exist.  Uses $OPENSSL (default
# "openssl") and its own config file, so the system openssl.cnf does not
# matter.  These files are test fixtures, generated at test time and never
# committed.
set -eu

if [ $# -ne 1 ] || [ -z "$1" ]; then
	echo "usage: $0 DIR" >&2
	exit 2
fi
dir=$1
OPENSSL=${OPENSSL:-openssl}

if [ -s "$dir/ca.pem" ] && [ -s "$dir/ca.key" ] &&
    [ -s "$dir/server.pem" ] && [ -s "$dir/server.key" ]; then
	exit 0
fi

mkdir -p "$dir"
tmp=$(mktemp -d "$dir/.make_test_ca.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

cat >"$tmp/openssl.cnf" <<'EOF'
[req]
distinguished_name = dn
prompt = no

[dn]
CN = localhost

[ca_dn]
CN = disagent throwaway test CA

[v3_ca]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash

[v3_server]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth
subjectAltName = DNS:localhost, IP:127.0.0.1
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
EOF

cd "$tmp"
umask 077

"$OPENSSL" genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 \
    -pkeyopt ec_param_enc:named_curve -out ca.key 2>/dev/null
"$OPENSSL" req -new -x509 -config openssl.cnf -key ca.key -sha256 \
    -days 3650 -subj "/CN=disagent throwaway test CA" \
    -extensions v3_ca -out ca.pem 2>/dev/null

"$OPENSSL" genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 \
    -pkeyopt ec_param_enc:named_curve -out server.key 2>/dev/null
"$OPENSSL" req -new -config openssl.cnf -key server.key -sha256 \
    -out server.csr 2>/dev/null
# A random serial avoids a serial file and clashes between runs.
serial=0x$("$OPENSSL" rand -hex 16)
"$OPENSSL" x509 -req -in server.csr -CA ca.pem -CAkey ca.key \
    -set_serial "$serial" -sha256 -days 3650 \
    -extfile openssl.cnf -extensions v3_server -out server.pem 2>/dev/null

# Verify before installing, so a broken openssl fails here, not in a test.
"$OPENSSL" verify -CAfile ca.pem server.pem >/dev/null

chmod 644 ca.pem server.pem
cd - >/dev/null
for f in ca.key ca.pem server.key server.pem; do
	mv -f "$tmp/$f" "$dir/$f"
done
exit 0
