# Sourced by every integration test. Each test prints one line per case:
#   PASS name | FAIL name: why | SKIP name: why
# tests/run.sh counts them; on CI (CI=true) a SKIP counts as a failure,
# because CI machines support everything these tests need.
set -u
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# The build under test: build/, or build/san for make check SANITIZE=...
B=${HERMETIC_BUILD:-$TOP/build}
# What a test program linked with $B/libhermetic.a must be built with.
LIBHERMETIC_CFLAGS=
[ -n "${HERMETIC_SANITIZE:-}" ] && LIBHERMETIC_CFLAGS="-fsanitize=$HERMETIC_SANITIZE"
HERMETIC=$B/hermetic
HERMETICD=$B/hermeticd
export PATH="$B:$PATH"

T=$(mktemp -d /tmp/hmtest.XXXXXX)
chmod 755 "$T"
# The ledger of the journals "you" recorded (hermetic replay asks before a
# journal not in it) is the test's own, not the invoking user's.
export XDG_STATE_HOME=$T/state
_cleanups=()
at_exit() { _cleanups+=("$*"); }
_run_cleanups() {
	local i
	for ((i = ${#_cleanups[@]} - 1; i >= 0; i--)); do eval "${_cleanups[i]}" >/dev/null 2>&1; done
	rm -rf "$T"
}
trap _run_cleanups EXIT

pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: ${2:-}"; }
skip() { echo "SKIP $1: $2"; }

# check NAME CMD...: PASS when CMD exits 0; on failure show its output.
check() {
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then
		pass "$name"
	else
		fail "$name" "$(printf '%s' "$out" | tail -n 5 | tr '\n' '|')"
	fi
}

need_root() {
	if [ "$(id -u)" != 0 ]; then
		skip "$1" "needs root (BPF, cgroups, network namespaces)"
		return 1
	fi
}

# need_build NAME: the daemon and the CLI are built (else FAIL NAME, status 1).
need_build() {
	if [ ! -x "$HERMETICD" ] || [ ! -x "$HERMETIC" ]; then
		fail "$1" "build/hermeticd or build/hermetic missing (run make)"
		return 1
	fi
}

# _retry CMD...: run CMD until it succeeds, up to 5 s (useradd and groupadd
# fail while another test holds the lock on /etc/passwd or /etc/group).
_retry() {
	local i
	for i in $(seq 50); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done
	"$@"
}

# test_group: a group of this test, hmg<pid>, removed at exit; the test
# daemon's socket is given to it (start_daemon). Sets HM_GROUP.
test_group() {
	[ -n "${HM_GROUP:-}" ] && return 0
	_retry groupadd "hmg$$" || return 1
	HM_GROUP=hmg$$
	at_exit "_retry groupdel $HM_GROUP"
}

# test_user VAR: a new unprivileged user in HM_GROUP (made when needed),
# removed at exit (after the processes the test started later). Its name
# goes to VAR. Run things as it with: as_user NAME CMD...
_nusers=0
test_user() {
	local n=hmu$$x$_nusers
	test_group || return 1
	_nusers=$((_nusers + 1))
	_retry useradd -M -N -g "$HM_GROUP" -d /nonexistent -s /usr/sbin/nologin "$n" || return 1
	at_exit "pkill_user_procs $n; _retry userdel $n"
	printf -v "$1" '%s' "$n"
}
# Kill what is left of a test user's processes, by uid (the user is the
# test's own: nothing else runs as it).
pkill_user_procs() {
	local u
	u=$(id -u "$1" 2>/dev/null) || return 0
	for p in /proc/[0-9]*; do
		[ "$(stat -c %u "$p" 2>/dev/null)" = "$u" ] && kill -KILL "${p#/proc/}" 2>/dev/null
	done
	return 0
}
# as_user NAME CMD...: CMD as that user, with the test group.
as_user() {
	local u=$1
	shift
	setpriv --reuid="$u" --regid="$HM_GROUP" --init-groups env HOME=/nonexistent USER="$u" LOGNAME="$u" "$@"
}

# bench_summary FIGURE OURS ANCHOR GOAL: one row of the table make bench
# prints at its end (tests/bench/bench.sh); nothing when run alone.
bench_summary() {
	[ -n "${BENCH_SUMMARY:-}" ] || return 0
	printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" >>"$BENCH_SUMMARY"
}

# Start a private daemon: its own socket and cgroup subtree, so a test never
# touches a production daemon. Sets HERMETIC_SOCKET. When the test made
# users (test_group), the socket is 0660 root:HM_GROUP; otherwise root's.
start_daemon() {
	local name=hmtest-$$-$RANDOM store=()
	export HERMETIC_SOCKET=$T/d.sock
	# Its own journal store too, unless the test names one.
	case " $* " in *" --store "*) ;; *) store=(--store "$T/store") ;; esac
	# ... and its own runtime directory (pins, run records, clock pages).
	case " $* " in *" --runtime-dir "*) ;; *) store+=(--runtime-dir "$T/run") ;; esac
	case " $* " in *" --socket-group "*) ;; *) [ -n "${HM_GROUP:-}" ] && store+=(--socket-group "$HM_GROUP") ;; esac
	HMD_NAME=$name
	HMD_CMD=("$HERMETICD" --socket "$HERMETIC_SOCKET" --subtree "$name" "${store[@]}" "$@")
	# After the daemon is stopped (cleanups run in reverse): what a daemon
	# stopped with runs left behind (its pins, its run cgroups).
	at_exit "_daemon_leftovers $name"
	"${HMD_CMD[@]}" >"$T/daemon.log" 2>&1 &
	HMD_PID=$!
	at_exit "kill $HMD_PID; wait $HMD_PID"
	_wait_daemon
}

# wait_pool: until the test's daemon has made its whole run pool ahead
# (daemon/pool.c: a cgroup and a clock page per entry, made while idle),
# at most 10 s; before counting the daemon's descriptors, which the pool's
# parts hold. Returns 1 when it did not fill (or has none).
wait_pool() {
	for _ in $(seq 200); do
		timeout 10 "$HERMETIC" status --json 2>/dev/null | python3 -c '
import json, sys
p = json.load(sys.stdin).get("pool")
sys.exit(0 if p and p["cgroups"] == p["size"] and p["clock_pages"] == p["size"] else 1)' && return 0
		sleep 0.05
	done
	return 1
}

# run_cgroups DIR: the cgroups under the test daemon's subtree DIR, at any
# depth, but for the run cgroups its pool holds (made ahead, never a run's:
# status --json pool.cgroup_ids), one per line. The directory is listed
# before the daemon is asked, so a cgroup listed is either in the pool then
# or left by a run (a cgroup the pool makes meanwhile is not listed).
run_cgroups() {
	local dir=$1 found pool d
	found=$(find "$dir" -mindepth 1 -type d 2>/dev/null)
	pool=$(timeout 10 "$HERMETIC" status --json 2>/dev/null | python3 -c '
import json, sys
print(" ".join("run-%d" % i for i in json.load(sys.stdin).get("pool", {}).get("cgroup_ids", [])))' 2>/dev/null)
	for d in $found; do
		case " $pool " in *" ${d#"$dir"/} "*) ;; *) echo "$d" ;; esac
	done
}

# restart_daemon [-9]: stop the test's daemon (SIGTERM, or SIGKILL with -9)
# and start it again on the same socket, subtree and runtime directory:
# what an upgrade (or systemd after a crash) does. Its log goes on in
# $T/daemon.log.
restart_daemon() {
	stop_daemon "$@"
	start_daemon_again
}
stop_daemon() {
	kill "${1:--TERM}" "$HMD_PID" 2>/dev/null
	wait "$HMD_PID" 2>/dev/null
	return 0
}
start_daemon_again() {
	"${HMD_CMD[@]}" >>"$T/daemon.log" 2>&1 &
	HMD_PID=$!
	at_exit "kill $HMD_PID; wait $HMD_PID"
	_wait_daemon
}
_wait_daemon() {
	for _ in $(seq 200); do
		[ -S "$HERMETIC_SOCKET" ] && "$HERMETIC" status >/dev/null 2>&1 && return 0
		kill -0 $HMD_PID 2>/dev/null || break
		sleep 0.05
	done
	echo "daemon did not start:" >&2
	cat "$T/daemon.log" >&2
	return 1
}

# _daemon_leftovers NAME: the pins and run cgroups a test daemon of subtree
# NAME left when it stopped with runs (after it was stopped: cleanups run in
# reverse). Only that daemon's own pin directory (.../hermetic/NAME in the
# system's bpffs; a bpffs it mounted under $T goes whole) and its own
# subtree are touched.
_daemon_leftovers() {
	local name=$1 pins=/sys/fs/bpf/hermetic/$1 cg2 d
	[[ $name == hmtest-* ]] || return 0
	# The subtree's lock file, which a daemon killed with SIGKILL leaves
	# (its lock went with it).
	rm -f /run/hermetic-subtrees/"$name".*.lock
	if [ -d "$pins" ]; then
		find "$pins" -mindepth 1 -maxdepth 1 -type f -delete
		rmdir "$pins" "$(dirname "$pins")" 2>/dev/null
	fi
	# A bpffs the daemon mounted in its runtime directory (under $T).
	mountpoint -q "$T/run/bpf" && umount -l "$T/run/bpf"
	# The tmpfs it mounted for clock pages and run records (daemon/tmpfs.c),
	# under $T only.
	awk -v t="$T/" '{ for (i = 7; $i != "-"; i++); if (index($5, t) == 1 && $(i + 1) == "tmpfs" && $(i + 2) == "hermetic") print $5 }' \
		/proc/self/mountinfo | while read -r d; do umount -l "$d"; done
	cg2=$(sed -n 's/^[0-9]* [0-9]* [^ ]* [^ ]* \([^ ]*\) .* - cgroup2 .*/\1/p' /proc/self/mountinfo | head -n1)
	if [ -n "$cg2" ] && [ -d "$cg2/$name" ]; then
		for d in "$cg2/$name"/run-*; do
			[ -d "$d" ] || continue
			echo 1 >"$d/cgroup.kill"
			for _ in $(seq 50); do grep -q 'populated 0' "$d/cgroup.events" && break; sleep 0.1; done
			find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null
		done
		rmdir "$cg2/$name" 2>/dev/null
	fi
	return 0
}

# busy_run: in the background, a run whose busy process holds its virtual
# clock while its other process sleeps an hour and then prints "slept"
# (output in $T/out, $T/err). Sets RUN (enroll's pid) and BUSY (the busy
# process's pid, empty if it never started; killed when the test ends).
# The busy process is a fork, and no program starts after it: a process
# start is a sleep of the run's (docs/virtual-time.md), which a busy run
# would end only by the lag bound.
busy_run() {
	rm -f "$T/busy" "$T/out" "$T/err"
	"$HERMETIC" enroll -- python3 -c "import os, time
pid = os.fork()
if pid == 0:
    while True:
        pass
open('$T/busy.tmp', 'w').write(str(pid))
os.rename('$T/busy.tmp', '$T/busy')
time.sleep(3600)
print('slept')" >"$T/out" 2>"$T/err" &
	RUN=$!
	for _ in $(seq 600); do [ -s "$T/busy" ] && break; sleep 0.05; done
	BUSY=$(cat "$T/busy" 2>/dev/null)
	at_exit "kill -9 ${BUSY:-0} 2>/dev/null"
}

# go_static DIR OUT: build DIR/main.go (standard library only) into a
# statically linked OUT (CGO_ENABLED=0), caches under $T; log in $T/go.log.
go_static() {
	(cd "$1" && GO111MODULE=off CGO_ENABLED=0 GOFLAGS= GOCACHE="$T/gocache" GOPATH="$T/gopath" \
		timeout 300 go build -o "$2" main.go) >"$T/go.log" 2>&1
}

# For the benchmarks (tests/bench): the wall time of CMD in whole ms, its
# output dropped; the median of numbers on stdin, one a line.
wall_ms() {
	local t
	t=$({ TIMEFORMAT='%3R'; time "$@" >/dev/null 2>&1; } 2>&1)
	awk -v t="$t" 'BEGIN { printf "%d\n", t * 1000 }'
}
median() { sort -n | awk '{ v[NR] = $1 } END { print NR ? v[int((NR + 1) / 2)] : 0 }'; }

# Millisecond wall clock, for "within a second" checks.
now_ms() { date +%s%3N; }

# build_attack NAME [-static]: compile tests/integration/attack/NAME.c into
# $T/NAME, with the project's headers and libhermetic.a; -static: a static
# binary (no shim, no libhermetic.a). Log in $T/NAME.log.
build_attack() {
	local n=$1 lib=("$B/libhermetic.a" -lpthread) fl=($LIBHERMETIC_CFLAGS)
	[ "${2:-}" = -static ] && lib=() fl=(-static)
	cc -O1 -g -std=gnu11 -D_GNU_SOURCE -Wall -I"$TOP/include" -I"$TOP/lib" "${fl[@]}" \
		-o "$T/$n" "$TOP/tests/integration/attack/$n.c" "${lib[@]}" >"$T/$n.log" 2>&1
}

# fuse_abort N: abort FUSE connection N (a test's own, from its attacker's
# output), through fusectl mounted in a private mount namespace.
fuse_abort() {
	local d
	d=$(mktemp -d) || return 0
	unshare -m sh -c "mount -t fusectl none '$d' && [ -e '$d/$1/abort' ] && echo 1 >'$d/$1/abort'" 2>/dev/null
	rmdir "$d"
}
