#!/usr/bin/env bash
# Issue 15, attacks 4 and 5: another run of the same user (unprivileged, and
# root) finds this run's processes and looks for its seed in
# /proc/PID/environ and for its clock page in /proc/PID/maps, /proc/PID/fd
# and hermeticd's clock directory, then opens what it finds and moves the
# clock 10 years ahead (tests/integration/attack/page_attack.py). Nothing it
# finds opens: the page is root's, 0600, in a 0700 directory (hidden under
# an empty tmpfs in root's runs) and reaches the run only as a descriptor;
# the seed is in the page, not in the environment. Then the descriptor's
# way down a run's process tree: children after close_range, Python's
# subprocess(close_fds=True), bash's redirections, make, a uid change, and
# a raw close (the child asks hermeticd again) read the run's one clock.
source "$(dirname "$0")/../lib.sh"

need_root trust_page || exit 0
need_build trust_page || exit 1
test_user U || { fail "create a test user" "useradd failed"; exit 1; }
build_attack pagefd || { fail "build pagefd" "$(tail -n 3 "$T/pagefd.log" | tr '\n' '|')"; exit 1; }
start_daemon || { fail "daemon starts" "$(tail -n 5 "$T/daemon.log" | tr '\n' '|')"; exit 1; }
cp "$TOP/tests/integration/attack/page_attack.py" "$T/"
SEED=8271600193
RUNDIR=$T/run

# Run A: its start time, its pid for B, then it waits on a FIFO (a wait on
# the real world: its virtual clock stays put) and reads the clock again.
cat >"$T/a.py" <<'PY'
import os, sys, time
d = sys.argv[1]
t1 = time.time()
open(d + "/a.pid.tmp", "w").write(str(os.getpid()))
os.rename(d + "/a.pid.tmp", d + "/a.pid")
with open(d + "/go") as f:
    f.read()
print("A %.6f %.6f" % (t1, time.time()))
PY

# attack WHO [OPTS]: WHO (user or root) runs A and then B, both with enroll
# OPTS; the cases below. With --confine off, no Landlock domain keeps B from
# reading A's /proc files: the page's own protection is all there is.
attack() {
	local who=$1 opts=("${@:2}") d=$T/$1${2:-} run=() apid out json pages ok
	[ "$who" = user ] && run=(as_user "$U")
	[ ${#opts[@]} -gt 0 ] && who="$who (${opts[*]})"
	mkdir -p "$d" && chmod 777 "$d" && mkfifo -m 666 "$d/go"
	"${run[@]}" timeout 300 "$HERMETIC" enroll "${opts[@]}" --seed $SEED --now 2020-01-01T00:00:00Z -- \
		python3 "$T/a.py" "$d" >"$d/a.out" 2>&1 &
	apid=$!
	for _ in $(seq 600); do [ -s "$d/a.pid" ] && break; sleep 0.1; done
	# (the daemon's own view: A's page is there to be found)
	pages=$(find "$RUNDIR/clock" -maxdepth 1 -name 'run-*' | wc -l)
	json=$("${run[@]}" timeout 120 "$HERMETIC" enroll "${opts[@]}" --seed 1 -- \
		python3 "$T/page_attack.py" "$(cat "$d/a.pid")" $SEED "$RUNDIR" 2>"$d/b.err")
	timeout 60 sh -c "echo go >'$d/go'"
	wait $apid
	out=$(grep "^A " "$d/a.out") # (not hermetic's own lines)
	printf '%s\n' "$json" >"$d/b.json"
	ctx="B: $json | $(tr '\n' '|' <"$d/b.err" | tail -c 300) | A: $(tr '\n' '|' <<<"$out")"
	# What an open of a path found must end in: a user cannot open root's
	# 0700 directory (EACCES); root's runs see an empty tmpfs there (ENOENT).
	ok=EACCES
	[ "${who%% *}" = root ] && ok='EACCES|ENOENT'
	local py='import json, re, sys
r = json.load(open(sys.argv[1])); ok = re.compile("^(%s)$" % sys.argv[2]); pages = int(sys.argv[3])
def opens(m): return m and all(ok.match(v) for v in m.values())
'
	pyc() { python3 -c "$py$1" "$d/b.json" "$ok" "$pages" "$who" 2>/dev/null; }
	if pyc 'assert r["environ"] != "read" or (r["environ_run"] and not r["secrets"] and not r["env_paths"])
assert r["environ"] in ("read", "EACCES", "EPERM")'; then
		pass "$who: /proc/A/environ of another run holds no seed and no page path"
	else
		fail "$who: /proc/A/environ of another run holds no seed and no page path" "$ctx"
	fi
	# (without Landlock B reads them all: the page's path is there to try)
	if pyc 'assert r["maps"] in ("EACCES", "EPERM") or (r["maps"] == "read" and opens(r["map_paths"]))
assert "confine off" not in sys.argv[4] or (r["maps"] == "read" and r["environ"] == "read" and
       any(re.match("^(EACCES|EPERM)$", v) for v in r["fd_opens"].values()))'; then
		pass "$who: the page path in /proc/A/maps of another run does not open ($ok)"
	else
		fail "$who: the page path in /proc/A/maps of another run does not open ($ok)" "$ctx"
	fi
	if pyc 'assert r["fd"] in ("EACCES", "EPERM") or all(re.match("^(EACCES|EPERM|readlink E(ACCES|PERM))$", v) for v in r["fd_opens"].values())'; then
		pass "$who: /proc/A/fd of another run does not open the page"
	else
		fail "$who: /proc/A/fd of another run does not open the page" "$ctx"
	fi
	# The directory held A's page all along (pages), yet B lists nothing.
	if pyc 'assert pages >= 1 and (r["dir"] == "EACCES" or (r["dir"] == [] and sys.argv[2] != "EACCES"))'; then
		pass "$who: another run cannot list the clock directory ($pages page(s) in it)"
	else
		fail "$who: another run cannot list the clock directory ($pages page(s) in it)" "$ctx"
	fi
	# (A reads --now plus 2 ms per process start before its interpreter
	# ran: pyenv's python3 is a launcher that execs a dozen programs;
	# docs/virtual-time.md, "A process start takes time")
	if [[ $out =~ ^A\ ([0-9.]+)\ ([0-9.]+)$ ]] &&
		python3 -c "import sys; a, b = map(float, sys.argv[1:]); assert 0 <= a - 1577836800.0 < 1 and 0 <= b - a < 60" \
			"${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}" && pyc 'assert r["moved"] == []'; then
		pass "$who: A's time.time() is unchanged after B's attempts"
	else
		fail "$who: A's time.time() is unchanged after B's attempts" "$ctx"
	fi
}
attack user
attack user --confine off
attack root

# --- the descriptor's way down a run's tree ------------------------------------------------
# lockstep WHO NAME ASKS CMD: in a run of WHO, CMD's processes sleep 50 s of
# the run's clock after it slept 100 s, and print the time; then the run's
# first process prints it: both 00:02:30 when they share one clock. ASKS:
# how many processes ask hermeticd for the page again ("0", or "+": some).
asks() { grep -c 'its clock page again' "$T/daemon.log"; }
lockstep() {
	local who=$1 name=$2 want=$3 cmd=$4 run=() out n0 n1
	[ "$who" = user ] && run=(as_user "$U")
	n0=$(asks)
	out=$("${run[@]}" timeout 120 "$HERMETIC" enroll --seed 3 --now 2020-01-01T00:00:00Z -- \
		sh -c "sleep 100; $cmd; date -u +%T" 2>&1)
	n1=$(asks)
	# (hermetic's own lines, the lag bound's among them, are not the clock's)
	if [ "$(grep -v '^hermetic: ' <<<"$out")" = "$(printf '00:02:30\n00:02:30')" ] &&
		{ { [ "$want" = 0 ] && [ "$n1" = "$n0" ]; } || { [ "$want" = + ] && [ "$n1" -gt "$n0" ]; }; }; then
		pass "$who: $name reads the run's one clock"
	else
		fail "$who: $name reads the run's one clock" "$(tr '\n' '|' <<<"$out") (asked again: $((n1 - n0)))"
	fi
}
child='sh -c "sleep 50; date -u +%T"'
for who in user root; do
	lockstep $who "a child after close_range(3, ~0) (it holds no page descriptor; its children ask hermeticd)" + "$T/pagefd range $child"
	lockstep $who "a child of Python's subprocess(close_fds=True) (its children ask hermeticd)" + \
		"python3 -c 'import subprocess; subprocess.run([\"sh\", \"-c\", \"sleep 50; date -u +%T\"], close_fds=True)'"
	lockstep $who "a child of bash after 'exec 100>/dev/null' (dup2 onto the page's number)" 0 \
		"bash -c 'exec 100>/dev/null 101>/dev/null; $child'"
	lockstep $who "a recipe of make" 0 "printf 'all:\n\t@sleep 50; date -u +%%T\n' | make -s -f -"
	lockstep $who "a child after a raw close of the descriptor (asks hermeticd)" + "$T/pagefd raw $child"
done
# Java's ProcessBuilder (jspawnhelper closes every descriptor above 2).
if command -v java >/dev/null; then
	cat >"$T/Spawn.java" <<'JAVA'
public class Spawn {
    public static void main(String[] a) throws Exception {
        new ProcessBuilder("sh", "-c", "sleep 50; date -u +%T").inheritIO().start().waitFor();
    }
}
JAVA
	chmod 644 "$T/Spawn.java"
	lockstep user "a child of Java's ProcessBuilder (its children ask hermeticd)" + "java $T/Spawn.java"
elif [ "${CI:-}" = true ]; then
	fail "user: a child of Java's ProcessBuilder (its children ask hermeticd) reads the run's one clock" "no java (make deps)"
fi
lockstep root "a process that became nobody (setpriv)" 0 \
	"setpriv --reuid=65534 --regid=65534 --clear-groups $child"

# Where the page cannot be had at all (a raw close by a user with no access
# to hermeticd's socket): each process after it keeps a private clock that
# starts at --now (date prints 00:00:00), with a warning; the run's first
# process keeps the run's clock (their sleeps were not the run's: 00:01:40).
out=$(timeout 120 "$HERMETIC" enroll --seed 3 --now 2020-01-01T00:00:00Z -- \
	sh -c "sleep 100; setpriv --reuid=65534 --regid=65534 --clear-groups $T/pagefd raw $child; date -u +%T" 2>&1)
if [[ $out == *"the run's clock page is unusable ("*"socket is not open to this user): this process keeps its own clock"* ]] &&
	[ "$(grep -v '^hermetic: ' <<<"$out")" = "$(printf '00:00:00\n00:01:40')" ]; then
	pass "root: without the descriptor and the socket, a private clock and a warning"
else
	fail "root: without the descriptor and the socket, a private clock and a warning" "$(tr '\n' '|' <<<"$out")"
fi

# After a restart of hermeticd (an upgrade: the runs go on and the new daemon
# adopts them, trust_restart.sh), the new daemon finds the page by its path
# and gives it to a process that lost its descriptor.
d=$T/restart
mkdir -p "$d" && mkfifo "$d/go"
timeout 300 "$HERMETIC" enroll --seed 3 --now 2020-01-01T00:00:00Z -- \
	sh -c "sleep 100; touch '$d/ready'; cat '$d/go' >/dev/null; $T/pagefd raw $child; date -u +%T" \
	>"$d/out" 2>&1 &
epid=$!
for _ in $(seq 600); do [ -e "$d/ready" ] && break; sleep 0.1; done
n0=$(asks)
restart_daemon
timeout 60 sh -c "echo go >'$d/go'"
wait $epid
out=$(grep -v '^hermetic: ' "$d/out")
if [ "$out" = "$(printf '00:02:30\n00:02:30')" ] && [ "$(asks)" -gt "$n0" ]; then
	pass "after a daemon restart, a process that lost the descriptor gets the run's page again"
else
	fail "after a daemon restart, a process that lost the descriptor gets the run's page again" \
		"$(tr '\n' '|' <"$d/out") (asked again: $(($(asks) - n0)))"
fi

# A scope's seed (hermetic.sandbox) is as secret as the run's: its children
# get it in HERMETIC_SCOPE masked with a word of the run's seed, and still
# know it.
out=$(PYTHONPATH="$TOP/python" timeout 120 "$HERMETIC" enroll --seed $SEED -- python3 -c '
import hermetic, subprocess, sys
with hermetic.sandbox("t", seed=4242424242):
    subprocess.run([sys.executable, "-c", "import os, hermetic\nprint(os.environ[\"HERMETIC_SCOPE\"])\nprint(hermetic.current().seed)"])
' 2>&1)
if [[ $out =~ ^v1:[0-9]+:.*$'\n'4242424242$ ]] && [[ $out != *4242424242:* ]]; then
	pass "a scope's seed is not in its children's environment, and they know it"
else
	fail "a scope's seed is not in its children's environment, and they know it" "$(tr '\n' '|' <<<"$out")"
fi

# RUN_CLOCK answers only for the asker's own run, as its cgroup says: a
# process outside every run, or in a run without a clock, gets ENOENT and no
# descriptor; a process of a run with a clock gets one.
cat >"$T/ask.py" <<'PY'
import os, socket, struct
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(os.environ["HERMETIC_SOCKET"])
s.sendmsg([struct.pack("<IHHII", 0x504d4548, 3, 17, 0, 5)])  # RUN_CLOCK, no payload
msg, anc, _, _ = s.recvmsg(65536, socket.CMSG_SPACE(16))
typ = struct.unpack_from("<IHHII", msg)[2]
print(typ, struct.unpack_from("<i", msg, 16)[0] if typ == 101 else 0, len(anc))
PY
outside=$(python3 "$T/ask.py" 2>&1)
noclock=$(as_user "$U" timeout 120 "$HERMETIC" enroll --seed 1 --clock off -- python3 "$T/ask.py" 2>&1)
inrun=$(as_user "$U" timeout 120 "$HERMETIC" enroll --seed 1 -- python3 "$T/ask.py" 2>&1)
if [ "$outside" = "101 2 0" ] && [ "$noclock" = "101 2 0" ] && [ "$inrun" = "113 0 1" ]; then
	pass "RUN_CLOCK: ENOENT outside every run and in a run without a clock; the asker's own page inside one"
else
	fail "RUN_CLOCK: ENOENT outside every run and in a run without a clock; the asker's own page inside one" \
		"outside=$outside noclock=$noclock inrun=$inrun"
fi

# enroll's own page (--clock off, --no-daemon: HM_VCF_OWN) has no hermeticd
# to ask for it again: its descriptor survives close_fds, and a child of
# Python's subprocess(close_fds=True) keeps the run's seed (the same bytes
# in two runs, no warning).
own() {
	timeout 120 "$HERMETIC" enroll "$@" --seed 5 -- python3 -c 'import subprocess
subprocess.run(["python3", "-c", "import os; print(os.urandom(8).hex())"], close_fds=True)' 2>&1
}
for mode in "--clock off" "--no-daemon"; do
	# shellcheck disable=SC2086
	o1=$(own $mode) o2=$(own $mode)
	if [ "$o1" = "$o2" ] && [[ $(tail -n 1 <<<"$o1") =~ ^[0-9a-f]{16}$ ]] && [[ $o1 != *unusable* ]]; then
		pass "$mode: a child of subprocess(close_fds=True) keeps the run's seed (enroll's own page is kept open)"
	else
		fail "$mode: a child of subprocess(close_fds=True) keeps the run's seed" "$(tr '\n' '|' <<<"$o1") / $(tr '\n' '|' <<<"$o2")"
	fi
done

# A child of a program that closed the page's descriptor (close_fds) holds
# none: it lists exactly the descriptors it was passed, as CPython's
# test_pass_fds_redirected checks; and its own child still reads the run's
# clock (it asks hermeticd).
out=$(timeout 120 "$HERMETIC" enroll --seed 3 --now 2020-01-01T00:00:00Z -- python3 -c 'import subprocess
subprocess.run(["sh", "-c", "ls /proc/self/fd | tr \"\\n\" \" \"; echo; sleep 50; python3 -c \"import subprocess; subprocess.run([\\\"date\\\", \\\"-u\\\", \\\"+%T\\\"], close_fds=True)\""], close_fds=True)' 2>&1)
if grep -qx '0 1 2 3 ' <<<"$out" && grep -qx '00:00:50' <<<"$out"; then
	pass "a close_fds child holds no page descriptor, and its close_fds child still reads the run's clock"
else
	fail "a close_fds child holds no page descriptor" "$(tr '\n' '|' <<<"$out")"
fi
