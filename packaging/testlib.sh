# packaging/testlib.sh: what packaging/test-deb and packaging/test-rpm share,
# sourced by both: the host tools, the PASS/FAIL bookkeeping, the cached
# Debian 12 root file system, the booted container and the commands run in
# it, and the delivery checks against the project's DIS test endpoint.
#
# The sourcing script sets "me" (its name, test-deb or test-rpm), "top"
# (the repository) and "keep" (yes: keep the work directory), and must run
# as root.  Sourcing sets up the work directory $tmp (with $tmp/t, bound at
# /srv/t in the container) and the clean-up on every exit.
#
# The root file system is cached in $DISAGENT_TEST_DEB_CACHE (default
# /var/cache/disagent-test-deb), keyed by its package list, and never
# modified: the container runs on an overlay (--volatile=overlay) with its
# own network namespace.  Both tests ask for the same list (the base
# system, rpm, and the .deb's run-time dependencies), so they share one
# root.
#
# shellcheck shell=sh
# shellcheck disable=SC2016 # scripts for the container, expanded there
# shellcheck disable=SC2154 # me, keep: set by the sourcing script

cache=${DISAGENT_TEST_DEB_CACHE:-/var/cache/disagent-test-deb}
machine=disagent-test-$$
tmp=$(mktemp -d "/tmp/disagent-$me.XXXXXX")
mkdir -p "$tmp/t"
nspawn_pid=
leader=
passed=0
failed=0
t0=$(date +%s)

say() { echo "$me: $*"; }

# --- clean-up --------------------------------------------------------------

# reap NSPAWN_PID LEADER: end a container of a run that died without
# cleaning up (killed with SIGKILL, say): poweroff inside, then kill the
# two processes by id, each only if it still is what it was.
reap() {
	if [ "$(cat "/proc/$2/comm" 2>/dev/null)" = systemd ]; then
		nsenter -t "$2" -a systemctl poweroff --no-block >/dev/null 2>&1 || true
		sleep 3
	fi
	if [ "$(cat "/proc/$1/comm" 2>/dev/null)" = systemd-nspawn ]; then
		kill -TERM "$1" 2>/dev/null || true
		sleep 3
		[ "$(cat "/proc/$1/comm" 2>/dev/null)" = systemd-nspawn ] &&
		    kill -KILL "$1" 2>/dev/null
	fi
	if [ "$(cat "/proc/$2/comm" 2>/dev/null)" = systemd ]; then
		kill -KILL "$2" 2>/dev/null || true
	fi
}

# Stop the container: poweroff from inside, then TERM and KILL to nspawn.
stop_container() {
	[ -n "$nspawn_pid" ] || return 0
	if kill -0 "$nspawn_pid" 2>/dev/null && [ -n "$leader" ]; then
		cexec systemctl poweroff --no-block >/dev/null 2>&1 || true
	fi
	i=0
	while kill -0 "$nspawn_pid" 2>/dev/null && [ $i -lt 300 ]; do
		sleep 0.1
		i=$((i + 1))
		[ $i = 150 ] && kill -TERM "$nspawn_pid" 2>/dev/null
	done
	if kill -0 "$nspawn_pid" 2>/dev/null; then
		kill -KILL "$nspawn_pid" 2>/dev/null || true
	fi
	wait "$nspawn_pid" 2>/dev/null || true
	# nspawn gone, a container init may survive it: end that too.
	if [ -n "$leader" ] && [ "$(cat "/proc/$leader/comm" 2>/dev/null)" = systemd ]; then
		kill -KILL "$leader" 2>/dev/null || true
	fi
	rm -f "$cache/run/$$"
	rmdir "/run/systemd/nspawn/propagate/$machine" 2>/dev/null || true
	nspawn_pid=
	leader=
}

cleanup() {
	rc=$?
	trap - EXIT INT TERM HUP
	stop_container
	if [ "$keep" = yes ] || [ "$rc" != 0 ]; then
		say "work directory kept: $tmp"
	else
		rm -rf "$tmp"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# --- host tools ---------------------------------------------------------------

apt_install() {
	missing=""
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
		    grep -q "ok installed" || missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	say "installing$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing >/dev/null
}

# --- results ------------------------------------------------------------------

pass() { passed=$((passed + 1)); echo "PASS: $1"; }
fail() {
	failed=$((failed + 1))
	echo "FAIL: $1"
	if [ -s "$tmp/out" ]; then
		tail -n 25 "$tmp/out" | sed 's/^/    | /'
	fi
}

# check DESCRIPTION COMMAND...: run on the host, PASS when it succeeds.
check() {
	_d=$1
	shift
	if "$@" >"$tmp/out" 2>&1; then pass "$_d"; else fail "$_d"; fi
}

# abort WHAT: a step the rest cannot do without failed; count it, stop.
abort() {
	echo "FAIL: $1"
	echo "$passed passed, $((failed + 1)) failed"
	exit 1
}

# cexec COMMAND...: run in the container (all its namespaces), as root,
# with a clean environment.
cexec() {
	# In a session of its own: a stray "kill 0" must not reach this script.
	setsid -w nsenter -t "$leader" -a env -i \
	    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
	    LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive SYSTEMD_PAGER= \
	    SYSTEMD_COLORS=0 TERM=dumb "$@"
}

# csh DESCRIPTION SCRIPT: a check that runs SCRIPT with sh in the container.
csh() {
	check "$1" cexec sh -euc "$2"
}

# --- root file system --------------------------------------------------------------

# root_fs DEPENDS: set $root to the cached Debian 12 root file system with
# the base system, what the tests run (man-db lets systemd-analyze verify
# check Documentation=man:disagent(8); rpm is test-rpm's; the test endpoint
# refuses to start without python3-lz4 and python3-zstandard, and the
# latter needs python3-cffi-backend named: debootstrap does not resolve
# the virtual package it depends on), and the Debian packages DEPENDS (a
# Depends field: first alternatives, without versions), creating it with
# debootstrap if there is none.  Roots with other lists that no run used
# for a day are removed.
root_fs() {
	deps=$(echo "$1" | tr ',' '\n' |
	    sed -e 's/([^)]*)//g' -e 's/|.*//' -e 's/ //g' | grep -v '^$' || true)
	# shellcheck disable=SC2086
	include=$(printf '%s\n' systemd systemd-sysv dbus python3 openssl \
	    ca-certificates adduser man-db rpm python3-lz4 python3-zstandard \
	    python3-cffi-backend $deps | sort -u | tr '\n' ',' |
	    sed 's/,$//')
	debootstrap_root "$include"
}

# debootstrap_root INCLUDE: set $root to the cached Debian 12 minbase root
# file system with the packages INCLUDE (comma-separated, may be empty),
# creating it if there is none.
debootstrap_root() {
	include=$1
	key=$(printf '%s' "bookworm minbase $include" | sha256sum | cut -c1-12)
	root=$cache/bookworm-$key
	mkdir -p "$cache"
	exec 9>"$cache/lock"
	flock 9
	# Made in $cache/new and moved in place: one that is there is whole.
	if [ ! -x "$root/usr/bin/apt-get" ]; then
		# The host's bookworm mirror, as apt has it; else debootstrap's own.
		mirror=$(apt-get indextargets --format '$(SITE) $(RELEASE)' 2>/dev/null |
		    awk '$2 == "bookworm" { print $1; exit }')
		say "creating the root file system $root (debootstrap; a few minutes)"
		rm -rf "$cache/new"
		# shellcheck disable=SC2086
		if ! debootstrap --variant=minbase ${include:+--include="$include"} \
		    bookworm "$cache/new" $mirror >"$tmp/debootstrap.log" 2>&1; then
			tail -n 30 "$tmp/debootstrap.log"
			abort debootstrap
		fi
		rm -rf "$cache/new/var/cache/apt/archives"/*.deb
		mv "$cache/new" "$root"
	else
		say "using the cached root file system $root"
	fi
	touch "$root"
	# Roots no run used for a day, and the copies of build runs that were
	# killed (pristine_package).
	find "$cache" -mindepth 1 -maxdepth 1 \( -name 'bookworm-*' -o -name '.#machine.bookworm-*' \) \
	    ! -name "${root##*/}" -mmin +1440 -exec rm -rf {} + 2>/dev/null || true
	exec 9>&-
}

# --- the package, built as packagers build it -------------------------------------

# pristine_package deb|rpm OUTDIR [ARG...]: build the package with
# scripts/package from a clean export of the repository (git archive HEAD,
# or the working tree with --worktree) in a bare Debian 12 root
# (debootstrap --variant=minbase, nothing more: what sbuild and pbuilder
# start from), with the check step (make check) unless ARG has --nocheck.
# As root, scripts/package --install-deps installs the build tools and the
# Build-Depends with apt-get from Debian's archive (the Build-Depends of
# packaging/debian/control, for rpm too); then scripts/package builds, in
# a clean environment (nspawn's NOTIFY_SOCKET would reach the agents the
# tests start), as root (DISAGENT_BUILD_USER=builder: as an unprivileged
# user, as sbuild does; the rotation tests then skip, needing root for
# logrotate's "create root root").  The root is cached and
# never modified (systemd-nspawn --ephemeral runs on a copy); the
# downloaded packages are kept in $cache/apt.  The packages land in OUTDIR,
# the whole output in $tmp/pristine-KIND.log.
pristine_package() {
	_kind=$1
	_out=$2
	shift 2
	debootstrap_root ""
	_b=$tmp/pristine
	rm -rf "$_b"
	mkdir -p "$_b/src" "$_b/out" "$_b/tmp" "$cache/apt/partial"
	chmod 1777 "$_b/tmp"
	if [ -n "${worktree:-}" ]; then
		(cd "$top" && git ls-files -z -co --exclude-standard |
		    tar --null -T - --ignore-failed-read -c) | tar -x -C "$_b/src"
	else
		git -C "$top" archive HEAD | tar -x -C "$_b/src"
	fi
	_user=${DISAGENT_BUILD_USER:-root}
	say "building the $_kind in a bare Debian 12 root, as user $_user ($*)"
	# parallel= twice the CPUs, as scripts/test runs make check: the
	# tests mostly wait.
	# --as-pid2: a stub init reaps what the tests leave to PID 1.  /tmp,
	# where the build and the tests run, on the host's disk: nspawn's
	# tmpfs never reuses an inode number, which one test needs.
	systemd-nspawn --quiet --register=no --keep-unit --ephemeral --as-pid2 \
	    --console=pipe \
	    --directory="$root" --machine="disagent-build-$$" \
	    --bind="$_b:/srv/build" --bind="$_b/tmp:/tmp" \
	    --bind="$cache/apt:/var/cache/apt/archives" \
	    --setenv=LANG=C.UTF-8 --setenv=DEBIAN_FRONTEND=noninteractive \
	    --setenv=PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
	    /bin/sh -euc '
	user=$1
	kind=$2
	shift 2
	cd /srv/build/src
	sh scripts/package "$kind" --install-deps "$@"
	as=
	home=/root
	if [ "$user" != root ]; then
		useradd -m "$user"
		chown -R "$user:$user" /srv/build
		as="runuser -u $user --"
		home=/home/$user
	fi
	$as env -i HOME="$home" LANG=C.UTF-8 PATH="$PATH" \
	    DEB_BUILD_OPTIONS="parallel=$(( $(nproc) * 2 ))" \
	    sh scripts/package "$kind" --outdir /srv/build/out "$@"' \
	    sh "$_user" "$_kind" "$@" </dev/null >"$tmp/pristine-$_kind.log" 2>&1 || {
		cp "$_b"/out/* "$_out/" 2>/dev/null || true
		return 1
	}
	cp "$_b"/out/* "$_out/"
}

# --- boot ---------------------------------------------------------------------

# boot: boot a throwaway overlay of $root with systemd-nspawn, $tmp/t bound
# at /srv/t, and check that it comes up.
boot() {
	# Containers of earlier runs that died without cleaning up; each run
	# records "NSPAWN_PID LEADER_PID" in $cache/run/ITS_PID.
	mkdir -p "$cache/run"
	for f in "$cache"/run/*; do
		[ -f "$f" ] || continue
		kill -0 "${f##*/}" 2>/dev/null && continue
		read -r old_nspawn old_leader <"$f" || true
		say "ending the container of the dead run ${f##*/}"
		reap "${old_nspawn:-0}" "${old_leader:-0}"
		rmdir "/run/systemd/nspawn/propagate/disagent-test-${f##*/}" 2>/dev/null || true
		rm -f "$f"
	done

	# systemd-nspawn bind-mounts these over /proc files; PID 1 creates them
	# on a systemd host, and nothing does in a plain container or CI sandbox.
	inacc=/run/systemd/inaccessible
	if [ ! -e "$inacc/reg" ]; then
		mkdir -p "$inacc"
		(umask 777 && : >"$inacc/reg")
		[ -e "$inacc/dir" ] || mkdir -m 0 "$inacc/dir"
		[ -e "$inacc/fifo" ] || mkfifo -m 0 "$inacc/fifo"
		[ -e "$inacc/chr" ] || mknod -m 0 "$inacc/chr" c 0 0
		[ -e "$inacc/blk" ] || mknod -m 0 "$inacc/blk" b 0 0
	fi

	say "booting $machine"
	systemd-nspawn --quiet --register=no --keep-unit --boot \
	    --directory="$root" --volatile=overlay --private-network \
	    --machine="$machine" --bind="$tmp/t:/srv/t" --console=pipe \
	    </dev/null >"$tmp/boot.log" 2>&1 &
	nspawn_pid=$!

	# The container's PID 1 is the child of nspawn that runs systemd.
	i=0
	while [ -z "$leader" ] && [ $i -lt 300 ]; do
		for c in $(ps -o pid= --ppid "$nspawn_pid" 2>/dev/null); do
			[ "$(cat "/proc/$c/comm" 2>/dev/null)" = systemd ] && leader=$c
		done
		[ -n "$leader" ] || sleep 0.1
		i=$((i + 1))
	done
	[ -n "$leader" ] && echo "$nspawn_pid $leader" >"$cache/run/$$"
	if [ -z "$leader" ]; then
		cat "$tmp/boot.log"
		abort "the container did not start"
	fi
	check "the container boots (systemctl is-system-running)" \
	    timeout 90 sh -c 'while :; do
	s=$(nsenter -t "$1" -a systemctl is-system-running 2>/dev/null) || true
	case $s in running) exit 0 ;; degraded) nsenter -t "$1" -a systemctl --failed --no-legend; exit 1 ;; esac
	sleep 0.2
done' sh "$leader"
}

# --- the package -----------------------------------------------------------------

# user_checks: the package made the system user and the state directory.
user_checks() {
	csh "user disagent: system user, home /var/lib/disagent, in group adm" '
	getent passwd disagent | awk -F: "\$3 < 1000 && \$6 == \"/var/lib/disagent\" { ok = 1 } END { exit !ok }"
	id -nG disagent | tr " " "\n" | grep -qx adm'
	csh "/var/lib/disagent is 0750 disagent:disagent" \
	    'test "$(stat -c "%a %U:%G" /var/lib/disagent)" = "750 disagent:disagent"'
}

# restarted_check OLD_PID: an upgrade restarted the service.
restarted_check() {
	csh "the upgrade restarted the service (new MainPID, active)" "
	systemctl is-active disagent
	test \"\$(systemctl show -p MainPID --value disagent)\" != $1"
}

# journal_check: no watchdog timeout and no crash of the service so far.
journal_check() {
	csh "no watchdog timeout and no crash in the journal" '
	! journalctl -u disagent --no-pager | grep -E "Watchdog timeout|dumped core|Main process exited, code=(exited|dumped)"'
}

# --- the unit -------------------------------------------------------------------

# verify_quiet UNIT_FILE: systemd-analyze verify succeeds and prints nothing.
verify_quiet() {
	cexec systemd-analyze verify "$1" \
	    >"$tmp/verify.txt" 2>&1 || { cat "$tmp/verify.txt"; return 1; }
	cat "$tmp/verify.txt"
	[ ! -s "$tmp/verify.txt" ]
}

# analyze_unit UNIT_FILE: systemd-analyze verify prints nothing for the
# installed unit; its security score is kept for the report.
analyze_unit() {
	check "systemd-analyze verify disagent.service prints nothing" verify_quiet "$1"
	cexec systemd-analyze security --no-pager disagent.service >"$tmp/security.txt" 2>&1 || true
	score=$(grep 'Overall exposure level' "$tmp/security.txt" || echo "(no score)")
	check "systemd-analyze security: $score" grep -q 'Overall exposure level' "$tmp/security.txt"
}

# --- deliver -------------------------------------------------------------------

AK=$(echo "TEST${me#test-}ACCESSKEY" | tr '[:lower:]' '[:upper:]')
SK=$me-Secret-Key-0123456789
PID=0123456789abcdef0123456789abcdef

# start_endpoint: the DIS test endpoint (its own CA) on 127.0.0.1 in the
# container; sets $port.
start_endpoint() {
	csh "the DIS test endpoint starts in the container" "
	sh /srv/t/make_test_ca.sh /srv/t/ca >/dev/null
	install -m 0644 /srv/t/ca/ca.pem /usr/local/share/disagent-test-ca.pem
	systemd-run --quiet --unit=dis-endpoint -p Type=exec python3 /srv/t/dis_server.py \
	    --cert /srv/t/ca/server.pem --key /srv/t/ca/server.key \
	    --host 127.0.0.1 --port 0 --port-file /srv/t/port \
	    --ak $AK --sk $SK --project-id $PID --stream testapp:COMMON:2 \
	    --stream access:COMMON:1 --stream journal:COMMON:1 \
	    --records-file /srv/t/records.jsonl --log-file /srv/t/server.log --quiet
	i=0; while [ ! -s /srv/t/port ] && [ \$i -lt 200 ]; do sleep 0.1; i=\$((i+1)); done
	test -s /srv/t/port"
	port=$(cat "$tmp/t/port" 2>/dev/null || echo 0)
}

# write_agent_ini: $tmp/t/agent.ini, a local edit of the conffile pointing
# at the endpoint, with the marker "$me-local-edit-$$" an upgrade must keep.
write_agent_ini() {
	cat >"$tmp/t/agent.ini" <<EOF
; Local edit by packaging/$me (marker: $me-local-edit-$$).
[agent]
region = cn-north-1
projectId = $PID
endpoint = https://127.0.0.1:$port
ak = $AK
sk = $SK
caFile = /usr/local/share/disagent-test-ca.pem
checkpointIntervalMillis = 200
log.statusReportingPeriodSeconds = 5
; After a SIGKILL the restart holds the files whose records may still land
; until no request of the killed run can: up to socketTimeOutSeconds (60 s
; by default).  10 s keeps the checks after the kill within their minute.
socketTimeOutSeconds = 10

[flow:testapp]
DISStream = testapp
filePattern = /var/log/testapp/*.log
maxBufferAgeMillis = 200
EOF
}

# lines FROM TO: append "testapp line N" lines to the root-owned log file
# (if that fails, the next delivery check does).
lines() {
	cexec sh -c 'seq "$1" "$2" | sed "s/^/testapp line /" >>/var/log/testapp/app.log' \
	    sh "$1" "$2" || say "could not append lines $1 to $2"
}
# delivered [--allow-duplicates]: within 30 s, every line of the log
# arrived, once (or at least once: after a SIGKILL, lines sent but not yet
# checkpointed are sent again).
delivered() {
	cexec sh -c 'i=0
	while ! python3 /srv/t/dis_records.py verify --records /srv/t/records.jsonl \
	    --stream testapp --expect /var/log/testapp/app.log \
	    "$@" >/srv/t/verify.out 2>&1; do
		i=$((i + 1))
		if [ $i -ge 300 ]; then cat /srv/t/verify.out; exit 1; fi
		sleep 0.2
	done
	head -n 1 /srv/t/verify.out' sh "$@"
}
mainpid() { cexec systemctl show -p MainPID --value disagent; }

# deliver_and_reload: with the endpoint started, install the edited
# agent.ini and a log directory only group adm can read, (re)start the
# service, and check that 300 lines arrive, once, around a good and a bad
# "systemctl reload"; that the agent runs without GnuTLS initialised under
# 20 MiB and writes its checkpoint as user disagent.
deliver_and_reload() {
	write_agent_ini
	csh "agent.ini edited; log directory /var/log/testapp readable by group adm only" '
	install -m 0640 -o root -g disagent /srv/t/agent.ini /etc/disagent/agent.ini
	install -d -m 0750 -o root -g adm /var/log/testapp
	install -m 0640 -o root -g adm /dev/null /var/log/testapp/app.log
	disagent -t -c /etc/disagent/agent.ini'
	lines 1 200
	csh "systemctl restart disagent: active with the new configuration" '
	systemctl restart disagent
	systemctl is-active disagent'
	check "200 lines written to /var/log/testapp/app.log arrive at the endpoint, once" delivered
	csh "the service runs without GnuTLS initialised and peaks under 20 MiB" '
	p=$(systemctl show -p MainPID --value disagent)
	tr "\\0" "\\n" < /proc/$p/environ | grep -qx GNUTLS_NO_IMPLICIT_INIT=1
	hwm=$(awk "/^VmHWM:/ { print \$2 }" /proc/$p/status)
	echo "peak RSS $hwm KiB"
	test "$hwm" -le 20480'
	csh "the checkpoint /var/lib/disagent/state.json is written by user disagent" '
	i=0; while [ ! -s /var/lib/disagent/state.json ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done
	test "$(stat -c %U /var/lib/disagent/state.json)" = disagent'

	pid1=$(mainpid)
	csh "systemctl reload disagent succeeds; same MainPID, still active" "
	systemctl reload disagent
	sleep 1
	systemctl is-active disagent
	test \"\$(systemctl show -p MainPID --value disagent)\" = $pid1"
	csh "systemctl reload with an invalid agent.ini fails; the agent keeps running" "
	cp -p /etc/disagent/agent.ini /srv/t/agent.ini.good
	sed -i 's/^maxBufferAgeMillis = .*/maxBufferAgeMillis = 1/' /etc/disagent/agent.ini
	if disagent -t -c /etc/disagent/agent.ini; then exit 1; fi
	if systemctl reload disagent; then exit 1; fi
	cp -p /srv/t/agent.ini.good /etc/disagent/agent.ini
	systemctl is-active disagent
	test \"\$(systemctl show -p MainPID --value disagent)\" = $pid1"
	lines 201 300
	check "100 more lines arrive after the reloads, once" delivered
}

# --- report ---------------------------------------------------------------------

# finish: on failure the journal of the service and the endpoint's log;
# the security report; stop the container; "N passed, N failed"; the exit
# status is 0 only when nothing failed.
finish() {
	if [ "$failed" != 0 ]; then
		echo "--- journal of disagent.service (last 60 lines)"
		cexec journalctl -u disagent --no-pager -n 60 2>&1 | sed 's/^/    /' || true
		echo "--- endpoint log (last 20 lines)"
		tail -n 20 "$tmp/t/server.log" 2>/dev/null | sed 's/^/    /' || true
	fi
	echo "--- systemd-analyze security disagent.service"
	sed 's/^/    /' "$tmp/security.txt"
	stop_container
	say "$(( $(date +%s) - t0 )) s"
	echo "$passed passed, $failed failed"
	[ "$failed" = 0 ]
}
