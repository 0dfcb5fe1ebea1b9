#!/usr/bin/env bash
# Issue 25: containment, round two. Each attack of the issue's table, from
# inside a run (as a user, as root, as root in a Docker-like container where
# it applies), shown refused, with a control that shows it works bare or with
# --confine off; each asserts that nothing reached the counting test host
# (a network namespace the test made: its UDP log, and every frame its veth
# saw), and at the end that `hermetic status` and a run's --report are true.
#   1, 10, 11  TIOCSTI into the terminal enroll runs on (user, root,
#              container root): the filter refuses TIOCSTI and TIOCLINUX
#   2          clone3(CLONE_INTO_CGROUP) into the container's own cgroup:
#              the filter answers clone3 ENOSYS (libc falls back to clone)
#   3, 10, 11  raw ICMP echo to 0.0.0.0 / ::1 with the test host as source
#              (root, container root): CAP_NET_RAW leaves the bounding set,
#              and with --raw-sockets the egress hook refuses a loopback or
#              unspecified destination unless both ends are loopback
#   4, 5       multicast joins on the test host's interface (user): the
#              cgroup/setsockopt hook refuses them; loopback joins work
#   6          a UDP socket inherited from enroll's parent: enroll closes
#              inet sockets it was not told to pass (--pass-fd)
#   7          perf_event_open(pid -1) (root): CAP_PERFMON leaves, the
#              filter refuses it
#   8, 9       RUN_KILL of another run, RUN_END keep of its own, through
#              hermeticd's socket from inside a run: refused
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/nethost.sh"

need_root "containment, round two" || exit 0
need_build "containment, round two" || exit 1
nethost_up || { fail "test host in a network namespace" "nethost_up failed"; exit 1; }
build_attack round2 -static || { fail "build round2" "$(tail -n 3 "$T/round2.log" | tr '\n' '|')"; exit 1; }
test_user U || { fail "create a test user" "useradd failed"; exit 1; }
start_daemon || { fail "daemon starts" "$(tail -n 5 "$T/daemon.log" | tr '\n' '|')"; exit 1; }
chmod 755 "$T" "$T/round2"
UD=$T/u
mkdir "$UD" && chown "$U" "$UD"
R2=$T/round2
H=$NH_HOST H6=$NH_HOST6 P=$NH_UDP
VH=hmh$$ VN=hmn$$
IFX=$(cat "/sys/class/net/$VH/ifindex")
CG2=$(sed -n 's/^[0-9]* [0-9]* [^ ]* [^ ]* \([^ ]*\) .* - cgroup2 .*/\1/p' /proc/self/mountinfo | head -n1)
DOCKER_CAPS=-all,+chown,+dac_override,+fowner,+fsetid,+kill,+setgid,+setuid,+setpcap,+net_bind_service,+net_raw,+sys_chroot,+mknod,+audit_write,+setfcap
ctx() { printf '%s' "$1" | tr '\n' '|' | tail -c 700; }

# The counting test host: every frame its veth sees, one hex line each.
cat >"$T/frames.py" <<'EOF'
import socket, sys
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
s.bind((sys.argv[1], 0))
open(sys.argv[2] + ".ready", "w").close()
while True:
    data = s.recv(4096)
    with open(sys.argv[2], "a") as f:
        f.write(data.hex() + "\n")
EOF
ip netns exec "$NH_NS" "$PY" "$T/frames.py" "$VN" "$T/frames" >"$T/frames.log" 2>&1 &
at_exit "kill $!"
for _ in $(seq 100); do [ -e "$T/frames.ready" ] && break; sleep 0.05; done
hexof() { printf '%s' "$1" | od -An -tx1 | tr -d ' \n'; }
# reached MARK: the test host saw MARK (UDP log or any frame), within 1.5 s.
reached() {
	local h i
	h=$(hexof "$1")
	for i in $(seq 30); do
		grep -q "^$1 from" "$NH_UDPLOG" 2>/dev/null && return 0
		grep -q "$h" "$T/frames" 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}
# A group address as the hex its reports carry.
hex4() { printf '%02x' ${1//./ }; }
hex6() { "$PY" -c 'import socket, sys; print(socket.inet_pton(socket.AF_INET6, sys.argv[1]).hex())' "$1"; }

# ctr CMD...: CMD as root of a Docker-like container (trust_container.sh).
ctr() {
	timeout 120 unshare --mount --pid --fork --cgroup --propagation private sh -c '
		mount -t proc proc /proc &&
		mount --bind /proc/sys /proc/sys && mount -o remount,bind,ro /proc/sys &&
		exec setpriv --bounding-set "$0" --inh-caps -all "$@"' "$DOCKER_CAPS" "$@"
}
# pty CMD...: CMD on a terminal of its own (its controlling one), as an
# interactive shell has; prints what the terminal showed.
cat >"$T/ptyrun.py" <<'EOF'
import os, pty, sys
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
out = b""
while True:
    try:
        d = os.read(fd, 4096)
    except OSError:
        break
    if not d:
        break
    out += d
os.waitpid(pid, 0)
sys.stdout.write(out.decode(errors="replace"))
EOF

# --- 1, 10, 11: TIOCSTI ---------------------------------------------------------------------
# The shell that ran enroll reads what the run typed into the terminal and
# runs it outside the run: a datagram to the test host.
tiocsti_job() { # tiocsti_job MARK ENROLL-OPTIONS...
	local mark=$1
	shift
	printf '%s' "$* -- '$R2' tiocsti 'echo $mark >/dev/udp/$H/$P
'; read -t 2 -r line && eval \"\$line\"; echo shell-done"
}
out=$("$PY" "$T/ptyrun.py" bash --norc --noprofile -c "$(tiocsti_job "sti-off-$$" "'$HERMETIC' enroll --confine off --clock off")" 2>&1)
if [[ $out == *"tiocsti ok"* ]] && reached "sti-off-$$"; then
	pass "control: with --confine off a root run types a command into its terminal, which the shell runs outside the run"
else
	fail "control: TIOCSTI with --confine off" "$(ctx "$out")"
fi
for who in root user container; do
	mark=sti-$who-$$
	case $who in
	root) out=$("$PY" "$T/ptyrun.py" bash --norc --noprofile -c "$(tiocsti_job "$mark" "'$HERMETIC' enroll --clock off")" 2>&1) ;;
	user) out=$(as_user "$U" "$PY" "$T/ptyrun.py" bash --norc --noprofile -c "$(tiocsti_job "$mark" "'$HERMETIC' enroll --clock off")" 2>&1) ;;
	container) out=$(ctr "$PY" "$T/ptyrun.py" bash --norc --noprofile -c "$(tiocsti_job "$mark" "'$HERMETIC' enroll --clock off")" 2>&1) ;;
	esac
	if [[ $out == *"tiocsti EPERM"* ]] && [[ $out == *"tioclinux EPERM"* ]] && [[ $out == *shell-done* ]] && ! reached "$mark"; then
		pass "attack 1 ($who): TIOCSTI and TIOCLINUX refused in a run (EPERM); nothing typed, nothing reached the test host"
	else
		fail "attack 1 ($who): TIOCSTI" "$(ctx "$out")"
	fi
done

# --- 2: clone3(CLONE_INTO_CGROUP) into the container's own cgroup -----------------------------
job2() { printf '%s' "grep ^0:: /proc/self/cgroup; '$R2' clone3 $CG2 $H $P $1"; }
out=$(ctr "$HERMETIC" enroll --confine off --clock off -- sh -c "$(job2 "c3-off-$$")" 2>&1)
if [[ $out == *"clone3 ok"* ]] && [[ $out == *"child cgroup /"$'\n'* ]] && reached "c3-off-$$"; then
	pass "control: with --confine off the container's root clones a child into its own cgroup, out of the run, and it reaches the test host"
else
	fail "control: clone3 into the container's cgroup" "$(ctx "$out")"
fi
out=$(ctr "$HERMETIC" enroll --clock off -- sh -c "$(job2 "c3-in-$$"); sh -c 'echo forked'" 2>&1)
if [[ $out == *"clone3 ENOSYS"* ]] && [[ $out == *forked* ]] && ! reached "c3-in-$$"; then
	pass "attack 2 (container root): clone3 answers ENOSYS in a run (fork and clone still work); nothing reached the test host"
else
	fail "attack 2 (container root): clone3" "$(ctx "$out")"
fi
out=$(timeout 60 "$HERMETIC" enroll --clock off -- "$R2" clone3 "$CG2" "$H" "$P" "c3-root-$$" 2>&1)
if [[ $out == *"clone3 ENOSYS"* || $out == *"clone3 open"* ]] && [[ $out != *"clone3 ok"* ]] && ! reached "c3-root-$$"; then
	pass "attack 2 (root): no clone3 into another cgroup from a run"
else
	fail "attack 2 (root): clone3" "$(ctx "$out")"
fi

# --- 3, 10, 11: raw ICMP echo to 0.0.0.0 / ::1 from the test host's address -------------------
out=$("$R2" raw4 0.0.0.0 "$H" "r4-bare-$$" 2>&1; "$R2" raw6 ::1 "$H6" "r6-bare-$$" 2>&1)
if reached "r4-bare-$$" && reached "r6-bare-$$"; then
	pass "control: bare root's echo requests to 0.0.0.0 and ::1 with the test host as source make the kernel answer the test host"
else
	fail "control: spoofed echo to 0.0.0.0 / ::1" "$(ctx "$out")"
fi
for who in root container; do
	pre=(timeout 60)
	[ $who = container ] && pre=(ctr)
	out=$("${pre[@]}" "$HERMETIC" enroll --clock off -- sh -c "grep ^CapBnd /proc/self/status; '$R2' raw4 0.0.0.0 $H r4-$who-$$" 2>&1)
	bnd=$(sed -n 's/^CapBnd:\s*//p' <<<"$out")
	if [[ $out == *"raw4 socket EPERM"* ]] && [ -n "$bnd" ] && ! (((0x$bnd >> 13) & 1)) && ! reached "r4-$who-$$"; then
		pass "attack 3 ($who): no CAP_NET_RAW in a run by default (no raw socket); nothing reached the test host"
	else
		fail "attack 3 ($who): CAP_NET_RAW" "$(ctx "$out")"
	fi
	out=$("${pre[@]}" "$HERMETIC" enroll --clock off --raw-sockets -- sh -c "'$R2' raw4 0.0.0.0 $H r4k-$who-$$; '$R2' raw4 127.0.0.1 $H r4l-$who-$$; '$R2' raw6 ::1 $H6 r6k-$who-$$; '$R2' raw4 127.0.0.1 127.0.0.1 r4ok-$who-$$" 2>&1)
	if [ "$(grep -c 'send EPERM' <<<"$out")" = 3 ] && [[ $out == *"raw4 send ok"* ]] && ! reached "r4k-$who-$$" && ! reached "r4l-$who-$$" && ! reached "r6k-$who-$$"; then
		pass "attack 3 ($who, --raw-sockets): the egress hook refuses 0.0.0.0, and 127.0.0.1 / ::1 from a source not loopback (EPERM); loopback to loopback passes; nothing reached the test host"
	else
		fail "attack 3 ($who, --raw-sockets): egress" "$(ctx "$out")"
	fi
done

# --- 4, 5: multicast joins on the test host's interface --------------------------------------
# The kernel sends the membership reports (IGMP, MLD) itself, with the group
# and source addresses the run chose: counted by their bytes in the frames
# the test host saw.
g=$(($$ % 250 + 1))
G4=239.213.$g.4 G4S=239.213.$g.5 G4G=239.213.$g.6 G4Z=239.213.$g.7 G6=ff0e::213:$g:6
seen() { # seen HEX: a frame at the test host carried HEX (within 1.5 s)
	local i
	for i in $(seq 30); do grep -q "$1" "$T/frames" 2>/dev/null && return 0; sleep 0.05; done
	return 1
}
B4=239.214.$g.4 B6=ff0e::214:$g:6
out=$(as_user "$U" sh -c "'$R2' mcast4 $IFX $B4; '$R2' mcast6 $IFX $B6" 2>&1)
if [[ $out == *"mcast4 join ok"* ]] && seen "$(hex4 "$B4")" && seen "$(hex6 "$B6")"; then
	pass "control: outside a run the user's joins on the test host's interface make the kernel report the groups there (IGMP, MLD)"
else
	fail "control: multicast joins bare" "$(ctx "$out")"
fi
SOCKOPT=$("$HERMETIC" status 2>&1 | grep "cgroup/setsockopt ")
if [[ $SOCKOPT != *active* ]]; then
	skip "attacks 4, 5: multicast joins" "the cgroup/setsockopt hook is not attached here: $SOCKOPT"
else
out=$(as_user "$U" timeout 60 "$HERMETIC" enroll --clock off -- sh -c "'$R2' mcast4 $IFX $G4; '$R2' mcast4src $NH_LOCAL $G4S $H; '$R2' mcastgrp $IFX $G4G; '$R2' mcast4 0 $G4Z" 2>&1)
if [ "$(grep -c 'join EPERM' <<<"$out")" = 4 ] && ! seen "$(hex4 "$G4")" && ! seen "$(hex4 "$G4S")" && ! seen "$(hex4 "$G4G")" && ! seen "$(hex4 "$G4Z")"; then
	pass "attack 4 (user): IP_ADD_MEMBERSHIP, IP_ADD_SOURCE_MEMBERSHIP, MCAST_JOIN_GROUP off loopback (and on no named interface) refused (EPERM); no report reached the test host"
else
	fail "attack 4 (user): IPv4 joins" "$(ctx "$out")"
fi
out=$(as_user "$U" timeout 60 "$HERMETIC" enroll --clock off -- "$R2" mcast6 "$IFX" "$G6" 2>&1)
if [[ $out == *"mcast6 join EPERM"* ]] && ! seen "$(hex6 "$G6")"; then
	pass "attack 5 (user): IPV6_ADD_MEMBERSHIP off loopback refused (EPERM); no MLD report reached the test host"
else
	fail "attack 5 (user): IPv6 join" "$(ctx "$out")"
fi
out=$(as_user "$U" timeout 60 "$HERMETIC" enroll --clock off -- sh -c "'$R2' mcast4 1 239.215.$g.1; '$R2' mcast4src 127.0.0.1 239.215.$g.2 127.0.0.1; '$R2' mcastgrp 1 239.215.$g.3; '$R2' mcast6 1 ff0e::215:$g:1" 2>&1)
if [ "$(grep -c 'join ok' <<<"$out")" = 4 ]; then
	pass "attacks 4, 5: joins on loopback (ifindex 1 or 127.0.0.1) still work in a run"
else
	fail "attacks 4, 5: loopback joins" "$(ctx "$out")"
fi
fi

# --- 6: a socket inherited from enroll's parent ---------------------------------------------------
# The user's shell opens a UDP socket on descriptor 5 (bash's /dev/udp, not
# close-on-exec) and runs enroll; the run sends on it.
inh() { # inh MARK ENROLL-OPTIONS...
	local mark=$1
	shift
	as_user "$U" bash -c "exec 5<>/dev/udp/$H/$P; timeout 60 '$HERMETIC' enroll --clock off $* -- '$R2' sendfd 5 $H $P $mark" 2>&1
}
out=$(inh "inh-pass-$$" --pass-fd 5)
if [[ $out == *"sendfd ok"* ]] && reached "inh-pass-$$"; then
	pass "control: a UDP socket of enroll's parent, passed with --pass-fd, sends from the run to the test host (its cgroup is the outside's)"
else
	fail "control: an inherited socket with --pass-fd" "$(ctx "$out")"
fi
out=$(inh "inh-in-$$" --report "$UD/inh.jsonl")
closed=$("$PY" -c 'import json, sys; print(json.loads(open(sys.argv[1]).readlines()[-1])["inherited_sockets_closed"])' "$UD/inh.jsonl" 2>&1)
if [[ $out == *"descriptor 5, an inet socket made outside the run"* ]] && [[ $out != *"sendfd ok"* ]] && [ "$closed" = "[5]" ] && ! reached "inh-in-$$"; then
	pass "attack 6 (user): the inherited UDP socket is /dev/null in the run, named on stderr and in --report; nothing reached the test host"
else
	fail "attack 6 (user): an inherited socket" "closed=$closed $(ctx "$out")"
fi

# --- 7: system-wide perf_event_open -------------------------------------------------------------
out=$("$R2" perf 2>&1)
if [ "$out" = "perf system-wide ok" ]; then pass "control: bare root opens a system-wide perf event"; else fail "control: perf bare" "$(ctx "$out")"; fi
out=$(timeout 60 "$HERMETIC" enroll --clock off -- sh -c "grep ^CapBnd /proc/self/status; '$R2' perf; '$R2' perfself" 2>&1)
bnd=$(sed -n 's/^CapBnd:\s*//p' <<<"$out")
bad=""
for cap in 13 34 38 40; do [ -n "$bnd" ] && (((0x$bnd >> cap) & 1)) && bad="$bad $cap"; done
if [[ $out == *"perf system-wide EPERM"* ]] && [[ $out == *"perf self ok"* ]] && [ -n "$bnd" ] && [ -z "$bad" ]; then
	pass "attack 7 (root): system-wide perf_event_open refused (EPERM), its own process still measurable; CAP_PERFMON, CAP_SYSLOG, CAP_CHECKPOINT_RESTORE, CAP_NET_RAW out of the bounding set"
else
	fail "attack 7 (root): perf_event_open" "caps left:[$bad] $(ctx "$out")"
fi
out=$(timeout 60 "$HERMETIC" enroll --confine off --clock off -- "$R2" perf 2>&1)
if [[ $out == *"perf system-wide ok"* ]]; then pass "control: with --confine off root in a run opens a system-wide perf event"; else fail "control: perf --confine off" "$(ctx "$out")"; fi

# --- 8, 9: daemon verbs as deputies ------------------------------------------------------------
run_ids() { as_user "$U" "$HERMETIC" status --json | "$PY" -c 'import json, sys; print(" ".join(str(r["id"]) for r in json.load(sys.stdin)["runs"]))'; }
chmod 755 "$TOP/tests/integration/wire.py" 2>/dev/null
as_user "$U" timeout 60 "$HERMETIC" enroll --clock off -- sleep 4 >"$T/victim.out" 2>&1 &
VPID=$!
at_exit "kill $VPID 2>/dev/null"
for _ in $(seq 100); do VID=$(run_ids); [ -n "$VID" ] && break; sleep 0.05; done
out=$(as_user "$U" timeout 60 "$HERMETIC" enroll --clock off -- "$PY" "$TOP/tests/integration/wire.py" "$HERMETIC_SOCKET" deputy-kill "$VID" 2>&1)
sleep 0.3
if [ -n "$VID" ] && [[ $out == *"REPLY ERROR(EPERM"* ]] && kill -0 "$VPID" 2>/dev/null; then
	pass "attack 8 (user): RUN_KILL of another run of the user from inside a run is refused (EPERM); the victim lives"
else
	fail "attack 8 (user): RUN_KILL as a deputy" "victim=$VID $(ctx "$out")"
fi
out=$(as_user "$U" "$PY" "$TOP/tests/integration/wire.py" "$HERMETIC_SOCKET" deputy-kill "$VID" 2>&1)
if [[ $out == *"REPLY ERROR(EPERM"*"another connection"* ]] && kill -0 "$VPID" 2>/dev/null; then
	pass "attack 8: outside every run, a connection that did not create the run cannot kill it either"
else
	fail "attack 8: RUN_KILL from another connection" "$(ctx "$out")"
fi
wait "$VPID"
rc=$?
if [ "$rc" = 0 ]; then pass "attack 8: the victim run ran to its end (exit 0, not 137)"; else fail "attack 8: the victim run" "rc=$rc $(ctx "$(cat "$T/victim.out")")"; fi
for net in block audit; do
	out=$(as_user "$U" timeout 60 "$HERMETIC" enroll --clock off --network $net --report "$UD/r9-$net.jsonl" -- sh -c \
		"'$PY' '$T/probe.py' udp $H $P r9-$net-$$; id=\$('$HERMETIC' status --json | '$PY' -c 'import json, sys; print(json.load(sys.stdin)[\"runs\"][0][\"id\"])'); '$PY' '$TOP/tests/integration/wire.py' '$HERMETIC_SOCKET' deputy-end-keep \$id; '$PY' '$TOP/tests/integration/wire.py' '$HERMETIC_SOCKET' deputy-report \$id" 2>&1)
	cnt=$("$PY" -c 'import json, sys; print(json.loads(open(sys.argv[1]).readlines()[-1])["refusals"]["count"])' "$UD/r9-$net.jsonl" 2>&1)
	if [ "$(grep -c 'REPLY ERROR(EPERM' <<<"$out")" = 2 ] && [[ $out != *"no run"* ]] && [ "$cnt" -ge 1 ] 2>/dev/null; then
		pass "attack 9 (user, --network $net): RUN_END with keep (and RUN_REPORT) of its own run from inside it refused; enroll ends it and --report counts $cnt refusal(s)"
	else
		fail "attack 9 (user, --network $net): RUN_END as a deputy" "count=$cnt $(ctx "$out")"
	fi
done
[ "$net" = audit ] && reached "r9-audit-$$" >/dev/null # audit lets it through: not an escape

# --- also seen: /proc/PID/{environ,maps,auxv} of a process outside the run ----------------------
setpriv --reuid="$U" --regid="$HM_GROUP" --init-groups sleep 120 &
USLEEP=$!
sleep 120 &
RSLEEP=$!
at_exit "kill $USLEEP $RSLEEP 2>/dev/null"
sleep 0.2
readp() { printf '%s' "for f in environ maps auxv; do for p in $*; do head -c1 /proc/\$p/\$f >/dev/null 2>&1 && echo \"read \$p \$f\" || echo \"refused \$p \$f\"; done; done"; }
out=$(as_user "$U" timeout 60 "$HERMETIC" enroll --clock off --confine off -- sh -c "$(readp $USLEEP)" 2>&1; timeout 60 "$HERMETIC" enroll --clock off --confine off -- sh -c "$(readp $USLEEP $RSLEEP)" 2>&1)
if [ "$(grep -c '^read ' <<<"$out")" = 9 ]; then
	pass "control: with --confine off a user's run reads environ, maps and auxv of the user's process outside, root's of every process"
else
	fail "control: /proc/PID reads with --confine off" "$(ctx "$out")"
fi
out=$(as_user "$U" timeout 60 "$HERMETIC" enroll --clock off -- sh -c "$(readp $USLEEP)" 2>&1; timeout 60 "$HERMETIC" enroll --clock off -- sh -c "$(readp $USLEEP $RSLEEP)" 2>&1)
if [ "$(grep -c '^refused ' <<<"$out")" = 9 ] && ! grep -q '^read ' <<<"$out"; then
	pass "a run (user, and root) cannot read environ, maps or auxv of a process outside it"
else
	fail "/proc/PID reads from a run" "$(ctx "$out")"
fi

# --- afterwards: status and the report stay true -------------------------------------------------
out=$(as_user "$U" timeout 60 "$HERMETIC" enroll --clock off --report "$UD/after.jsonl" -- "$PY" "$T/probe.py" udp "$H" "$P" "after-$$" 2>&1)
cnt=$("$PY" -c 'import json, sys; print(json.loads(open(sys.argv[1]).readlines()[-1])["refusals"]["count"])' "$UD/after.jsonl" 2>&1)
if ! reached "after-$$" && [ "$cnt" = 1 ]; then pass "after the attacks a run is still refused the test host, and its --report says so (1 refusal)"; else fail "after the attacks: refusal and report" "count=$cnt $(ctx "$out")"; fi
st=$("$HERMETIC" status 2>&1)
if [[ $st == *"cgroup/connect4 "*active* ]] && [[ $st == *"cgroup_skb/egress "*active* ]] && [[ $st == *"active runs: 0"* ]]; then
	pass "after the attacks hermetic status shows the hooks active and no run left"
else
	fail "after the attacks: status" "$(ctx "$st")"
fi
