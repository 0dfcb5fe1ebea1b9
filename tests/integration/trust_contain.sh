#!/usr/bin/env bash
# Issue 15: a run is a closed world for processes. Each attack of the
# issue's table that runs through a process outside the run, reproduced
# against a private daemon and shown to fail, with a control that shows the
# same attack works where nothing confines it:
#   1  ptrace from inside a run into a process of the same user outside it
#      (a sleep started earlier), made to send a datagram to a test host in
#      a network namespace the test creates; and the other routes into it:
#      /proc/PID/{mem,root,cwd,fd,exe}, process_vm_writev, pidfd_getfd,
#      signals (where Landlock scopes them)
#   1' the same between two runs of one user
#   2  root in a run: /proc/<outside pid>/root into the host's mount
#      namespace and the daemon's pins; BPF_OBJ_GET of a pinned map
#   3  root in a run: the route to BPF_LINK_DETACH (BPF_OBJ_GET of the pins
#      is refused before any detach could be tried: the test never detaches)
# After them another run is still refused the test host and `hermetic
# status` says the hooks are active. The container and chroot cases are in
# trust_container.sh.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/nethost.sh"

need_root "containment" || exit 0
need_build "containment" || exit 1
nethost_up || { fail "test host in a network namespace" "nethost_up failed"; exit 1; }
build_attack inject || { fail "build inject" "$(tail -n 3 "$T/inject.log" | tr '\n' '|')"; exit 1; }
chmod 755 "$T" && chmod 755 "$T/inject"
test_user U || { fail "create a test user" "useradd failed"; exit 1; }
start_daemon || { fail "daemon starts" "$(tail -n 5 "$T/daemon.log" | tr '\n' '|')"; exit 1; }
chmod 755 "$T"
UD=$T/u
mkdir "$UD" && chown "$U" "$UD"
ABI=$("$HERMETIC" status --json | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["containment"]["landlock"]["abi"])')
H=$NH_HOST P=$NH_UDP
INJ=$T/inject

# sent MARK: the test host got a datagram MARK (wait up to 2 s).
sent() {
	local i
	for i in $(seq 40); do
		grep -q "^$1 from" "$NH_UDPLOG" 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}
# A sleep of the test user, outside every run: what attack 1 acts through.
setpriv --reuid="$U" --regid="$HM_GROUP" --init-groups sleep 600 &
VICTIM=$!
at_exit "kill $VICTIM 2>/dev/null"
for _ in $(seq 100); do [ "$(stat -c %u /proc/$VICTIM 2>/dev/null)" = "$(id -u "$U")" ] && grep -q 'State:.*S' /proc/$VICTIM/status && break; sleep 0.05; done
ctx() { printf '%s' "$1" | tr '\n' '|' | tail -c 600; }

# --- attack 1: ptrace into a process outside the run ----------------------------------------
out=$(as_user "$U" "$INJ" inject "$VICTIM" "$H" "$P" "bare-$$" 2>&1)
if [[ $out == *SENT* ]] && sent "bare-$$"; then
	pass "control: outside a run, the user's process ptraces its sleep into sending to the test host"
else
	fail "control: ptrace injection outside a run" "$(ctx "$out")"
fi
out=$(as_user "$U" timeout 60 "$HERMETIC" enroll --confine off -- "$INJ" inject "$VICTIM" "$H" "$P" "off-$$" 2>&1)
if [[ $out == *SENT* ]] && sent "off-$$"; then
	pass "control: with --confine off a run's process still acts through the sleep outside it"
else
	fail "control: ptrace injection with --confine off" "$(ctx "$out")"
fi
out=$(as_user "$U" timeout 60 "$HERMETIC" enroll -- "$INJ" inject "$VICTIM" "$H" "$P" "in-$$" 2>&1)
if [[ $out == *"ptrace EPERM"* ]] && [[ $out != *SENT* ]] && ! sent "in-$$"; then
	pass "attack 1: a run's process cannot ptrace the user's process outside the run; nothing reaches the test host"
else
	fail "attack 1: ptrace out of a run" "$(ctx "$out")"
fi
kill -0 "$VICTIM" 2>/dev/null
check "attack 1: the process outside is unharmed" kill -0 "$VICTIM"

# The other routes into a process outside the run.
want_out=$'open-mem ok\nopen-root ok\nopen-cwd ok\nopen-fd/0 ok\nopen-exe ok\nprocess_vm_writev ok\npidfd_getfd ok\nkill ok'
out=$(as_user "$U" "$INJ" probe "$VICTIM" 2>&1)
if [ "$out" = "$want_out" ]; then pass "control: outside a run every route into the sleep is open"; else fail "control: routes outside a run" "$(ctx "$out")"; fi
want_in=$'open-mem EACCES\nopen-root EACCES\nopen-cwd EACCES\nopen-fd/0 EACCES\nopen-exe EACCES\nprocess_vm_writev EPERM\npidfd_getfd EPERM'
out=$(as_user "$U" timeout 60 "$HERMETIC" enroll -- "$INJ" probe "$VICTIM" 2>&1)
if [[ $out == *"$want_in"* ]]; then
	pass "attack 1: from a run, /proc/PID/{mem,root,cwd,fd,exe}, process_vm_writev and pidfd_getfd of the process outside are refused"
else
	fail "attack 1: routes into a process outside the run" "$(ctx "$out")"
fi
if [ "$ABI" -ge 6 ]; then
	if [[ $out == *"kill EPERM"* ]]; then pass "attack 1: a run cannot signal the user's process outside it (Landlock ABI $ABI)"; else fail "attack 1: signals out of a run" "$(ctx "$out")"; fi
else
	# Older kernels: not scoped, and status says so.
	st=$(as_user "$U" "$HERMETIC" status 2>&1)
	if [[ $st == *"missing"*"signals"* ]]; then pass "attack 1: Landlock ABI $ABI scopes no signals, and status says so"; else fail "attack 1: status names unscoped signals" "$(ctx "$st")"; fi
fi

# --- attack 1': between two runs of one user --------------------------------------------------
setpriv --reuid="$U" --regid="$HM_GROUP" --init-groups timeout 120 "$HERMETIC" enroll --clock off -- \
	sh -c "echo \$\$ > '$UD/a.pid.tmp' && mv '$UD/a.pid.tmp' '$UD/a.pid' && exec sleep 60" >"$T/a.out" 2>&1 &
APID=$!
at_exit "kill $APID 2>/dev/null"
for _ in $(seq 200); do [ -s "$UD/a.pid" ] && break; sleep 0.05; done
A=$(cat "$UD/a.pid" 2>/dev/null)
out=$(as_user "$U" timeout 60 "$HERMETIC" enroll -- sh -c "'$INJ' probe $A; '$INJ' inject $A $H $P cross-$$" 2>&1)
if [ -n "$A" ] && [[ $out == *"$want_in"* ]] && [[ $out == *"ptrace EPERM"* ]] && ! sent "cross-$$"; then
	pass "attack 1': a run cannot ptrace, open /proc/PID/{mem,root,fd}, write the memory of or take descriptors from another run of the same user"
else
	fail "attack 1': between two runs" "A=$A $(ctx "$out")"
fi
kill "$A" 2>/dev/null
wait "$APID" 2>/dev/null

# --- attacks 2 and 3: root, /proc/PID/root and the daemon's pins ------------------------------
PINS=$("$HERMETIC" status --json | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["pins"] or "")')
PIN=$(find "$PINS" -maxdepth 1 ! -type d 2>/dev/null | head -n 1)
out=$("$INJ" bpf "$PIN" 2>&1)
if [ -n "$PIN" ] && [ "$out" = "bpf_obj_get ok" ]; then pass "control: outside a run root gets the daemon's pin $PIN"; else fail "control: BPF_OBJ_GET outside a run" "pin=$PIN $(ctx "$out")"; fi
sleep 600 &
RSLEEP=$!
at_exit "kill $RSLEEP 2>/dev/null"
out=$(timeout 60 "$HERMETIC" enroll --confine off -- sh -c "ls /proc/$RSLEEP/root$PINS >/dev/null && echo LISTED; '$INJ' bpf /proc/$RSLEEP/root$PIN" 2>&1)
if [[ $out == *LISTED* ]] && [[ $out == *"bpf_obj_get ok"* ]]; then
	pass "control: with --confine off root in a run reaches the pins through /proc/PID/root"
else
	fail "control: /proc/PID/root with --confine off" "$(ctx "$out")"
fi
out=$(timeout 60 "$HERMETIC" enroll -- sh -c "ls /proc/$RSLEEP/root/ >/dev/null 2>&1 && echo LISTED; ls /proc/1/root/ >/dev/null 2>&1 && echo LISTED1; '$INJ' bpf /proc/$RSLEEP/root$PIN; '$INJ' bpf $PIN" 2>&1)
if [[ $out != *LISTED* ]] && [ "$(grep -c 'bpf_obj_get EPERM' <<<"$out")" = 2 ]; then
	pass "attacks 2, 3: root in a run cannot enter /proc/PID/root of processes outside it, and bpf() is refused: no pin, map or link of the daemon can be had"
else
	fail "attacks 2, 3: root in a run and the daemon's pins" "$(ctx "$out")"
fi

# --- afterwards: still enforced, status still true -------------------------------------------
out=$(as_user "$U" timeout 60 "$HERMETIC" enroll --clock off -- "$PY" "$T/probe.py" udp "$H" "$P" "after-$$" 2>&1)
if ! sent "after-$$"; then pass "after the attacks a run is still refused the test host"; else fail "after the attacks: refusal" "$(ctx "$out")"; fi
st=$("$HERMETIC" status 2>&1)
if [[ $st == *"cgroup/connect4 "*active* ]] && [[ $st == *"cgroup/sendmsg4 "*active* ]] && [[ $st == *"active runs: 0"* ]]; then
	pass "after the attacks hermetic status shows the hooks active and no run left"
else
	fail "after the attacks: status" "$(ctx "$st")"
fi
