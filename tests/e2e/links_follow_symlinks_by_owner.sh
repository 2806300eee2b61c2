#!/bin/sh
# followSymlinks (issue 37 §2): whoever may write to a watched directory
# must not be able to make the agent ship a file of someone else through a
# link.  Three flows read the same directory, one per value; the links
# are made by root and handed to nobody (chown -h), as an unprivileged
# user with write access to the directory would make them:
#   evil.log  (nobody) -> a root file, mode 0600 (the issue's case)
#   ok.log    (nobody) -> nobody's own file
#   root.log  (root)   -> a root file
#   chain.log (nobody) -> hop (root) -> a root file
#   chain2.log (root)  -> hop2 (nobody) -> the root file of evil.log
#   d         (nobody) -> a root directory with x.log (a directory under **)
#   current   (nobody) -> a root file: no WARN or INFO, its name does not
#             match the pattern
# owner ships real.log, ok.log and root.log, and says once of each refused
# link (evil.log, chain.log, hop2, d) which it is, across rescans; always
# ships everything, each file once (evil.log and chain2.log lead to the
# same file); never ships real.log alone, one INFO line per link.  A
# fourth flow's literal directory is a link of nobody's to a root
# directory: nothing of it is read.  Runs as root.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

if [ "$(id -u)" != 0 ]; then
	echo "SKIP: links owned by another user need root (chown -h)"
	E2E_OK=1
	exit 77
fi

start_server --stream s1 --stream s2 --stream s3 --stream s4
mkdir -p "$TMP/logs" "$TMP/secret/dir" "$TMP/theirs" "$TMP/hops"
write_lines "$TMP/logs/real.log" real 0 10
write_lines "$TMP/secret/shadow" shadow 0 5
chmod 600 "$TMP/secret/shadow"
write_lines "$TMP/secret/shadow2" shadow2 0 5
chmod 600 "$TMP/secret/shadow2"
write_lines "$TMP/secret/public.log" public 0 5
write_lines "$TMP/secret/dir/x.log" dirx 0 5
write_lines "$TMP/theirs/own.log" own 0 5
chown nobody "$TMP/theirs/own.log"

ln -s ../secret/shadow "$TMP/logs/evil.log"
chown -h nobody "$TMP/logs/evil.log"
ln -s ../theirs/own.log "$TMP/logs/ok.log"
chown -h nobody "$TMP/logs/ok.log"
ln -s ../secret/public.log "$TMP/logs/root.log"
ln -s ../secret/shadow2 "$TMP/hops/hop"
ln -s ../hops/hop "$TMP/logs/chain.log"
chown -h nobody "$TMP/logs/chain.log"
ln -s ../secret/shadow "$TMP/hops/hop2"
chown -h nobody "$TMP/hops/hop2"
ln -s ../hops/hop2 "$TMP/logs/chain2.log"
ln -s ../secret/dir "$TMP/logs/d"
chown -h nobody "$TMP/logs/d"
# A name the pattern does not match: judged, but not worth a line.
ln -s ../secret/shadow "$TMP/logs/current"
chown -h nobody "$TMP/logs/current"
ln -s secret/dir "$TMP/blink"
chown -h nobody "$TMP/blink"

write_conf "$TMP/agent.ini"
add_flow "$TMP/agent.ini" owner s1 "$TMP/logs/**/*.log" \
    "rescanIntervalMillis = 100"
add_flow "$TMP/agent.ini" always s2 "$TMP/logs/**/*.log" \
    "rescanIntervalMillis = 100" "followSymlinks = always"
add_flow "$TMP/agent.ini" never s3 "$TMP/logs/**/*.log" \
    "rescanIntervalMillis = 100" "followSymlinks = never"
add_flow "$TMP/agent.ini" base s4 "$TMP/blink/*.log" \
    "rescanIntervalMillis = 100"
"$DISAGENT" -t -c "$TMP/agent.ini" >"$TMP/t.log" 2>&1 ||
	fail "-t refuses followSymlinks: $(cat "$TMP/t.log")"
start_agent "$TMP/agent.ini"

wait_for 30 "the owner flow's 20 records" count_at_least s1 20
wait_for 30 "the always flow's 35 records" count_at_least s2 35
wait_for 30 "the never flow's 10 records" count_at_least s3 10
# Two more files, each found by a scan of its own: the refused links are
# met by many scans meanwhile.
for late in late1 late2; do
	write_lines "$TMP/logs/$late.log" "$late" 0 3
	n=$(records count --records "$TMP/records.jsonl" --stream s3)
	wait_for 30 "$late.log" count_at_least s3 $((n + 3))
done
wait_for 30 "the late files (owner)" count_at_least s1 26
wait_for 30 "the late files (always)" count_at_least s2 41
stop_agent

L=$TMP/logs
records verify --records "$TMP/records.jsonl" --stream s1 \
    --expect "$L/real.log" --expect "$TMP/theirs/own.log" \
    --expect "$TMP/secret/public.log" --expect "$L/late1.log" \
    --expect "$L/late2.log" || fail "followSymlinks = owner"
records verify --records "$TMP/records.jsonl" --stream s2 \
    --expect "$L/real.log" --expect "$TMP/theirs/own.log" \
    --expect "$TMP/secret/public.log" --expect "$TMP/secret/shadow" \
    --expect "$TMP/secret/shadow2" --expect "$TMP/secret/dir/x.log" \
    --expect "$L/late1.log" --expect "$L/late2.log" ||
	fail "followSymlinks = always"
records verify --records "$TMP/records.jsonl" --stream s3 \
    --expect "$L/real.log" --expect "$L/late1.log" \
    --expect "$L/late2.log" || fail "followSymlinks = never"
n=$(records count --records "$TMP/records.jsonl" --stream s4)
[ "$n" = 0 ] || fail "$n records read through the literal directory's link"

# owner: one WARN per refused link, naming it and the owners.
uid=$(id -u nobody)
for l in "$L/evil.log" "$L/chain.log" "$TMP/hops/hop2" "$L/d" "$TMP/blink"; do
	n=$(grep -c "WARN .*\[owner\] $l: a link owned by uid $uid to a .* owned by uid 0; not followed\|WARN .*\[base\] $l: a link owned by uid $uid to a directory owned by uid 0; .* is not read" "$TMP/agent.log" || true)
	[ "$n" = 1 ] || fail "$n WARN lines for $l, not 1"
done
grep -q "WARN .*$L/evil.log: a link owned by uid $uid to a file owned" "$TMP/agent.log" ||
	fail "the WARN for evil.log does not say it leads to a file"
grep -q "WARN .*$L/d: a link owned by uid $uid to a directory owned" "$TMP/agent.log" ||
	fail "the WARN for d does not say it leads to a directory"
grep -q "WARN .*$TMP/hops/hop2: .*, so skipping $L/chain2.log" "$TMP/agent.log" ||
	fail "the WARN for hop2 does not name chain2.log"
n=$(grep -c 'WARN .*\[owner\]' "$TMP/agent.log" || true)
[ "$n" = 4 ] || fail "$n WARN lines of the owner flow, not 4"
if grep -q 'WARN .*\[\(always\|never\)\]' "$TMP/agent.log"; then
	fail "a WARN of the always or never flow"
fi
# never: one INFO line per link met.
n=$(grep -c 'INFO .*\[never\] .* is a link: not followed' "$TMP/agent.log" || true)
[ "$n" = 6 ] || fail "$n INFO lines of the never flow, not 6 (one per link)"
pass
