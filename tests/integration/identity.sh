#!/usr/bin/env bash
# timeout: 900
# --identity and --dir-order end to end (issue 28, docs/identity.md): a probe
# per language (tests/identity/) prints every axis it can read. Under
# --identity fixed it prints the same when enroll itself runs under two
# different machines' worth of settings (affinity, time zone, locale,
# hostname in a UTS namespace of the test's own, umask, descriptor limit);
# under host (the default) what it prints bare. --dir-order lists one set
# of names in one order on ext4 and tmpfs under one seed, another under
# another seed. A journal keeps the identity and replay restores it.
source "$(dirname "$0")/../lib.sh"
need_root identity || exit 0
# (a test user for the unprivileged case at the end: the daemon's socket is its group's)
test_user U || U=
start_daemon || exit 1
cd "$T" || exit 1
P=$TOP/tests/identity
H() { timeout 120 "$HERMETIC" "$@"; }
flat() { tr '\n' '|' <<<"$1" | tail -c 700; }

# The probes: C dynamic and static, Go (static), Python, Node, Java.
PROBES=()
if cc -O2 -o "$T/probe_dyn" "$P/probe.c" 2>"$T/cc.log" &&
	cc -O2 -static -o "$T/probe_static" "$P/probe.c" 2>>"$T/cc.log"; then
	PROBES+=("c-dynamic:$T/probe_dyn" "c-static:$T/probe_static")
else
	fail "build the C probes" "$(tail -n 3 "$T/cc.log")"
fi
mkdir -p "$T/go" && cp "$P/main.go" "$T/go/"
if go_static "$T/go" "$T/probe_go"; then
	PROBES+=("go:$T/probe_go")
else
	fail "build the Go probe" "$(tail -n 3 "$T/go.log")"
fi
PROBES+=("python:python3 $P/probe.py" "node:node $P/probe.js" "java:java $P/Probe.java")

# outside SETTING CMD...: run CMD (enroll) under one of two sets of the
# machine's settings; the hostname in a UTS namespace of its own, never
# the machine's.
outside() {
	local which=$1
	shift
	if [ "$which" = 1 ]; then
		(umask 077 && ulimit -Sn 4096 && TZ=Asia/Tokyo LANG=C LC_ALL=C \
			taskset -c 0 unshare --uts sh -c 'hostname hm-one && exec "$@"' sh "$@")
	else
		(umask 002 && ulimit -Sn 2048 && TZ=America/New_York LANG=C.UTF-8 LC_ALL=C.UTF-8 \
			taskset -c 0,1 unshare --uts sh -c 'hostname hm-two && exec "$@"' sh "$@")
	fi
}

# --- fixed: the same under two different outsides -------------------------------
for p in "${PROBES[@]}"; do
	name=${p%%:*} cmd=${p#*:}
	# shellcheck disable=SC2086 # cmd is a command line of words without spaces inside
	# (stdout only: the JVM's housekeeping waits may add lag-bound lines on stderr)
	a=$(outside 1 "$HERMETIC" enroll --seed 7 --identity fixed -- $cmd 2>"$T/a.err")
	# shellcheck disable=SC2086
	b=$(outside 2 "$HERMETIC" enroll --seed 7 --identity fixed -- $cmd 2>"$T/b.err")
	# shellcheck disable=SC2086
	c=$(outside 1 "$HERMETIC" enroll --seed 7 -- $cmd 2>/dev/null)
	# shellcheck disable=SC2086
	d=$(outside 2 "$HERMETIC" enroll --seed 7 -- $cmd 2>/dev/null)
	want_cpus=$(grep '^cpus.affinity' <<<"$a")
	if [ "$a" = "$b" ] && [ "$c" != "$d" ] && grep -q '^cpus.affinity 2' <<<"$a" &&
		grep -Eq '^tz (22:13 \+0000|UTC 0|UTC Z)$' <<<"$a"; then
		pass "$name: --identity fixed prints the same under two different machines' settings"
	else
		fail "$name: --identity fixed prints the same under two settings" \
			"one=$(flat "$a") two=$(flat "$b") host-one=$(flat "$c") host-two=$(flat "$d") ($want_cpus) err=$(flat "$(cat "$T/a.err")")"
	fi
done

# What fixed pins, axis by axis, as the C probe (dynamic) reads it.
a=$(outside 1 "$HERMETIC" enroll --seed 7 --identity fixed -- "$T/probe_dyn" 2>&1)
for want in "cpus.affinity 2" "cpus.sysconf 2 2" "cpus.cpuinfo 2" "cpus.stat 3" "cpus.online 0-1" \
	"cpus.possible 0-1" "host.uname hermetic (none) 6.1.0" "host.gethostname hermetic" \
	"host.proc hermetic" "tz 22:13 +0000" "locale C.UTF-8" "umask 0022" "nofile 1024" \
	"memory.sysconf 4096" "memory.meminfo MemTotal:        4194304 kB"; do
	grep -qxF "$want" <<<"$a" && pass "fixed: $want" || fail "fixed: $want" "$(flat "$a")"
done
# ... and a static program, through the kernel and the supervisor (uname's
# release, sysinfo's memory).
a=$(outside 1 "$HERMETIC" enroll --seed 7 --identity fixed -- "$T/probe_static" 2>&1)
for want in "cpus.affinity 2" "cpus.cpuinfo 2" "cpus.online 0-1" "host.gethostname hermetic" \
	"host.uname hermetic (none) 6.1.0" "host.proc hermetic" "tz 22:13 +0000" "umask 0022" \
	"nofile 1024" "memory.sysconf 4096" "memory.meminfo MemTotal:        4194304 kB"; do
	grep -qxF "$want" <<<"$a" && pass "fixed, static: $want" || fail "fixed, static: $want" "$(flat "$a")"
done
# ... and Go's raw syscalls.
a=$(outside 1 "$HERMETIC" enroll --seed 7 --identity fixed -- "$T/probe_go" 2>&1)
for want in "cpus.affinity 2 2" "host.release 6.1.0" "host.gethostname hermetic" "memory.sysinfo 4096" \
	"tz 22:13 +0000"; do
	grep -qxF "$want" <<<"$a" && pass "fixed, Go: $want" || fail "fixed, Go: $want" "$(flat "$a")"
done
# More CPUs than this machine has: the shim, and for static and Go binaries
# the supervisor, say them through sched_getaffinity; the files say them too.
more=$(($(nproc --all) + 2))
for p in "${PROBES[@]}"; do
	name=${p%%:*} cmd=${p#*:}
	# shellcheck disable=SC2086
	a=$(H enroll --seed 7 --identity "cpus=$more" -- $cmd 2>/dev/null)
	if grep -Eqx "cpus.affinity $more( $more)?" <<<"$a" && grep -qx "cpus.online 0-$((more - 1))" <<<"$a"; then
		pass "$name: --identity cpus=$more, more than the machine's $(nproc --all), is what it sees"
	else
		fail "$name: --identity cpus=$more" "$(flat "$a")"
	fi
done
# status says where a run started here gets the axes from.
if H status | grep -q "^--identity of a run started here: a UTS and mount namespace"; then
	pass "hermetic status says a root run here gets a UTS and mount namespace for --identity"
else
	fail "hermetic status names --identity's route" "$(H status 2>&1 | tail -n 3 | tr '\n' '|')"
fi
# The machine's hostname is untouched.
[ "$(hostname)" = "$(cat /proc/sys/kernel/hostname)" ] && ! grep -qx hermetic /proc/sys/kernel/hostname &&
	pass "the machine's hostname is not the run's" || fail "the machine's hostname is not the run's" "$(hostname)"

# --- host: what the probe prints bare -------------------------------------------
for p in "${PROBES[@]}"; do
	name=${p%%:*} cmd=${p#*:}
	# shellcheck disable=SC2086
	bare=$(outside 2 $cmd 2>&1)
	# shellcheck disable=SC2086
	run=$(outside 2 "$HERMETIC" enroll --seed 7 --identity host -- $cmd 2>"$T/run.err")
	# (the JVM reads the hostname's address: the same either way)
	[ "$bare" = "$run" ] && pass "$name: --identity host prints what the probe prints bare" ||
		fail "$name: --identity host prints what it prints bare" "bare=$(flat "$bare") run=$(flat "$run")"
done

# --- a FILE, and what cannot be had ------------------------------------------------
printf '# a CI runner\ncpus = 1\ntz = Pacific/Kiritimati\nhostname = ci-runner\nmemory = 7168\n' >"$T/ci.identity"
a=$(H enroll --seed 7 --identity "$T/ci.identity" --report "$T/r.json" -- "$T/probe_dyn" 2>&1)
if grep -qx "cpus.affinity 1" <<<"$a" && grep -qx "cpus.cpuinfo 1" <<<"$a" && grep -qx "tz 12:13 +1400" <<<"$a" &&
	grep -qx "host.proc ci-runner" <<<"$a" && grep -qx "memory.sysconf 7168" <<<"$a" &&
	grep -qx "nofile $(ulimit -n)" <<<"$a"; then
	pass "an identity FILE pins the axes it names and only those"
else
	fail "an identity FILE pins its axes" "$(flat "$a")"
fi
if python3 -c 'import json,sys; d=json.loads(open(sys.argv[1]).read().splitlines()[-1])["identity"]; assert d["axes"]=="cpus=1,hostname=ci-runner,tz=Pacific/Kiritimati,memory=7168", d' "$T/r.json" 2>"$T/py.err"; then
	pass "--report names the identity's axes"
else
	fail "--report names the identity's axes" "$(tail -n 2 "$T/py.err")"
fi
H enroll --identity 'cpus=0' -- true 2>"$T/e1"
rc1=$?
H enroll --identity 'tz=Nowhere/Atlantis' -- true 2>"$T/e2"
rc2=$?
H enroll --identity "$T/missing" -- true 2>"$T/e3"
rc3=$?
if [ $rc1 = 2 ] && grep -q "cpus=0" "$T/e1" && [ $rc2 = 2 ] && grep -q "no /usr/share/zoneinfo/Nowhere/Atlantis" "$T/e2" &&
	[ $rc3 = 2 ] && grep -q "missing" "$T/e3"; then
	pass "a bad identity is a usage error that names it"
else
	fail "a bad identity is a usage error" "$rc1 $rc2 $rc3 $(cat "$T/e1" "$T/e2" "$T/e3" | tr '\n' '|')"
fi

# --- directory order: the same on ext4 and tmpfs under one seed ------------------------
SHM=$(mktemp -d /dev/shm/hmid.XXXXXX)
at_exit "rm -rf $SHM"
mkdir -p "$T/ext4"
names=$(seq 1 40 | sed 's/^/f/')
for n in $names; do : >"$T/ext4/$n"; done
for n in $(tac <<<"$names"); do : >"$SHM/$n"; done
[ "$(stat -f -c %T "$T/ext4")" = ext2/ext3 ] && [ "$(stat -f -c %T "$SHM")" = tmpfs ] ||
	fail "the directories are on ext4 and tmpfs" "$(stat -f -c %T "$T/ext4" "$SHM" | tr '\n' ' ')"
LISTERS=("c:$T/probe_dyn" "python:python3 $P/probe.py" "node:node $P/probe.js" "java:java $P/Probe.java"
	"ls -U:ls -U" "go:$T/probe_go")
for l in "${LISTERS[@]}"; do
	name=${l%%:*} cmd=${l#*:}
	listed() { sed -n -e '/^dir /{s/^dir //p;d}' -e '/^f[0-9]/p' | tr '\n' ' '; }
	list() {
		# shellcheck disable=SC2086
		H enroll --seed "$1" --dir-order "$2" -- $cmd "$3" 2>/dev/null | listed
	}
	e1=$(list 11 seeded "$T/ext4") t1=$(list 11 seeded "$SHM") e2=$(list 12 seeded "$T/ext4")
	# shellcheck disable=SC2086
	bare_e=$($cmd "$T/ext4" 2>/dev/null | listed)
	# shellcheck disable=SC2086
	bare_t=$($cmd "$SHM" 2>/dev/null | listed)
	if [ -n "$e1" ] && [ "$e1" = "$t1" ] && [ "$e1" != "$e2" ] && [ "$(wc -w <<<"$e1")" = 40 ] &&
		[ "$(tr ' ' '\n' <<<"$e1" | sort | tr '\n' ' ')" = "$(tr ' ' '\n' <<<"$e2" | sort | tr '\n' ' ')" ]; then
		pass "$name: --dir-order seeded lists in one order on ext4 and tmpfs under one seed, another under another"
	else
		fail "$name: --dir-order seeded" "ext4=$e1 tmpfs=$t1 seed12=$e2 (bare: ext4=$bare_e tmpfs=$bare_t)"
	fi
	s=$(list 11 sorted "$SHM")
	if [ "$s" = "$(LC_ALL=C sort <<<"$names" | tr '\n' ' ')" ]; then
		pass "$name: --dir-order sorted lists by name"
	else
		fail "$name: --dir-order sorted" "$s"
	fi
done

# One order for every language: a Go binary (the supervisor's getdents64)
# lists as a C program (the shim's readdir) under one seed.
g=$(H enroll --seed 11 --dir-order seeded -- "$T/probe_go" "$T/ext4" 2>/dev/null | sed -n 's/^dir //p')
c=$(H enroll --seed 11 --dir-order seeded -- "$T/probe_dyn" "$SHM" 2>/dev/null | sed -n 's/^dir //p')
[ -n "$g" ] && [ "$g" = "$c" ] && pass "Go on ext4 and C on tmpfs list one directory's names in one order under one seed" ||
	fail "Go and C list alike under one seed" "go=$g c=$c"

# --- the journal keeps the identity; replay restores it ---------------------------
# (every axis pinned: the outside differs in all of them)
{ cat "$T/ci.identity"; printf 'umask=027\nnofile=512\nlocale=C.UTF-8\nrelease=5.15.0\n'; } >"$T/full.identity"
mkdir -p "$T/spool"
a=$(outside 1 env TMPDIR="$T/spool" "$HERMETIC" enroll --seed 5 --identity "$T/full.identity" --dir-order seeded --record="$T/j" -- \
	sh -c "$T/probe_dyn $T/ext4; exit 1" 2>/dev/null)
J=$(ls "$T"/j/*.hjournal 2>/dev/null | head -n 1)
b=$(outside 2 "$HERMETIC" replay "$J" 2>"$T/rep.err")
if [ -n "$J" ] && [ "$a" = "$b" ] && grep -qx "tz 12:13 +1400" <<<"$b" && grep -qx "cpus.affinity 1" <<<"$b"; then
	pass "a journal recorded under one identity replays under it, from other settings outside"
else
	fail "replay restores the identity" "journal=$J rec=$(flat "$a") rep=$(flat "$b") err=$(flat "$(cat "$T/rep.err")")"
fi

# --- hunt --vary identity: a failure only with one CPU, only far east of UTC -------
hunt_cause() {
	local name=$1 want=$2 repro
	shift 2
	timeout 600 "$HERMETIC" hunt --keep "$T/keep-$name" "$@" >"$T/$name.out" 2>"$T/$name.err"
	rc=$?
	repro=$(sed -n 's/^  reproduce: //p' "$T/$name.out" | head -n 1)
	if [ $rc = 1 ] && grep -q "^  cause: .*$want" "$T/$name.out" && [[ $repro == *"--identity "* ]]; then
		pass "hunt --vary identity finds $name's failure and names the axis: $want"
	else
		fail "hunt --vary identity: $name, $want" "exit $rc: $(grep -E '^  (cause|reproduce)' "$T/$name.out" | tr '\n' '|') $(tail -n 3 "$T/$name.err" | tr '\n' '|')"
	fi
	# the reproduction fails again
	if [ -n "$repro" ] && ! (cd "$T" && eval "timeout 120 $repro" >/dev/null 2>&1); then
		pass "$name: the reproduction hunt prints fails again"
	else
		fail "$name: the reproduction fails again" "$repro"
	fi
}
mkdir -p "$T/go1" && cp "$TOP/tests/hunt/one_cpu.go" "$T/go1/main.go"
if go_static "$T/go1" "$T/one_cpu"; then
	hunt_cause one_cpu "identity (cpus)" --runs 8 --vary identity -- "$T/one_cpu"
else
	fail "build tests/hunt/one_cpu.go" "$(tail -n 3 "$T/go.log")"
fi
hunt_cause east_tz "identity (time zone)" --runs 12 --vary identity --now 2026-06-01T12:00:00Z -- \
	python3 "$TOP/tests/hunt/east_tz.py"

# --- an unprivileged run: no namespace, the shim says the identity ------------------
if [ -n "$U" ]; then
	mkdir -m 777 "$T/u" && cp "$T/probe_dyn" "$T/u/" && chmod 755 "$T/u/probe_dyn"
	a=$(cd "$T/u" && as_user "$U" "$HERMETIC" enroll --seed 7 --identity fixed --report "$T/u/r.json" -- "$T/u/probe_dyn" 2>/dev/null)
	if grep -qx "cpus.affinity 2" <<<"$a" && grep -qx "cpus.sysconf 2 2" <<<"$a" &&
		grep -qx "host.uname hermetic (none) 6.1.0" <<<"$a" && grep -qx "host.gethostname hermetic" <<<"$a" &&
		grep -qx "tz 22:13 +0000" <<<"$a" && grep -qx "umask 0022" <<<"$a" && grep -qx "memory.sysconf 4096" <<<"$a"; then
		pass "an unprivileged run: the shim says the fixed identity (uname, sysconf, affinity, TZ, umask)"
	else
		fail "an unprivileged run gets the fixed identity from the shim" "$(flat "$a")"
	fi
	if grep -q '"not_applied": *"no mount and UTS namespace here' "$T/u/r.json" 2>/dev/null; then
		pass "an unprivileged run's report says what it could not be given"
	else
		fail "an unprivileged run's report says what it could not be given" "$(tail -c 400 "$T/u/r.json" 2>&1)"
	fi
else
	fail "make a test user" "useradd failed"
fi
