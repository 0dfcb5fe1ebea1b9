#!/bin/bash
# Runs inside the VM tests/vm/systemd.sh boots, as a systemd unit, with
# stdout on the serial console: one PASS/FAIL line per case, VM-DONE, then
# the VM powers off. Network traffic goes only to the test host in the
# namespace "th" created here (no network device leaves the VM).
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
pass() { echo "PASS vm-systemd: $1"; }
fail() { echo "FAIL vm-systemd: $1: $2"; }
check() {
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then pass "$name"; else fail "$name" "$(printf '%s' "$out" | tail -n 5 | tr '\n' '|')"; fi
}
finish() {
	echo VM-DONE
	systemctl poweroff --force
	exit 0
}
as_ci() { runuser -u ci -- "$@"; }
TH=10.99.0.2
echo # the console may hold a partial line of the boot

check "systemd is PID 1" test "$(cat /proc/1/comm)" = systemd
check "dpkg -i installs the package" dpkg -i /root/hermetic.deb
check "the package created group hermetic" getent group hermetic
check "systemd-analyze verify passes on the installed units" \
	systemd-analyze verify --man=no /lib/systemd/system/hermeticd.socket /lib/systemd/system/hermeticd.service
check "systemctl enable --now hermeticd.socket" systemctl enable --now hermeticd.socket
check "the socket is 0660 root:hermetic" test "$(stat -c '%a %U %G' /run/hermetic/hermeticd.sock)" = "660 root hermetic"
check "the daemon waits for its first client" test "$(systemctl is-active hermeticd.service)" = inactive

useradd -m -G hermetic ci && useradd -m outsider
# The test host: a namespace behind a veth pair, a TCP listener on 8080.
insmod /root/veth.ko
ip link set lo up
ip netns add th && ip link add vh type veth peer name vt && ip link set vt netns th &&
	ip addr add 10.99.0.1/24 dev vh && ip link set vh up &&
	ip -n th addr add $TH/24 dev vt && ip -n th link set vt up && ip -n th link set lo up ||
	{ fail "test host" "cannot set up the namespace"; finish; }
ip netns exec th busybox nc -ll -p 8080 -e /bin/true &
for _ in $(seq 100); do bash -c "echo > /dev/tcp/$TH/8080" 2>/dev/null && break; sleep 0.1; done
check "outside a run, user ci reaches the test host" as_ci bash -c "echo > /dev/tcp/$TH/8080"

probe="if echo > /dev/tcp/$TH/8080; then echo CONNECTED; else echo REFUSED; fi"
# --clock off: the virtual-clock keeper's scheduler program (bpf/sched.bpf.c)
# is refused by the verifier of Debian 12's kernel 6.1 ("back-edge"), and
# hermeticd then refuses virtual-clock runs; this test is about the service.
out=$(as_ci hermetic enroll --clock off -- bash -c "$probe" 2>&1)
case "$out" in
*REFUSED*"refused 1 connection: $TH:8080"*) pass "as ci (group hermetic), an enrolled command is refused the test host" ;;
*) fail "as ci (group hermetic), an enrolled command is refused the test host" "$(printf '%s' "$out" | tr '\n' '|')" ;;
esac
check "the first connection started the service" test "$(systemctl is-active hermeticd.service)" = active
out=$(runuser -u outsider -- hermetic status 2>&1)
rc=$?
case "$rc $out" in
"69 "*"ermission denied"*) pass "a user outside group hermetic is refused by the socket's mode, exit 69" ;;
*) fail "a user outside group hermetic is refused by the socket" "$rc $(printf '%s' "$out" | tr '\n' '|')" ;;
esac
st=$(systemctl show -p StatusText --value hermeticd.service)
case "$st" in "Serving on /run/hermetic/hermeticd.sock"*) pass "systemctl shows the daemon's STATUS= ($st)" ;;
*) fail "systemctl shows the daemon's STATUS=" "'$st'" ;; esac
pid=$(systemctl show -p MainPID --value hermeticd.service)
check "Delegate=yes: the daemon lives in the leaf .../hermeticd.service/daemon" \
	grep -qx '0::/system.slice/hermeticd.service/daemon' /proc/$pid/cgroup
check "the journal has the daemon's lines at their priorities" sh -c \
	"journalctl -u hermeticd.service -p info..info -o cat | grep -q '^ready: socket /run/hermetic/hermeticd.sock (from systemd)'"
check "status: tracing and the socket hooks work under the unit's hardening" sh -c \
	"runuser -u ci -- hermetic status | grep -q 'cgroup/connect4 *active'"

# A run that keeps trying, across a restart of the service.
as_ci hermetic enroll --clock off -- bash -c \
	"for i in \$(seq 40); do $probe; sleep 0.25; done; echo DONE" >/tmp/run.out 2>/tmp/run.err &
RUN=$!
for _ in $(seq 600); do [ "$(grep -c . /tmp/run.out 2>/dev/null)" -ge 4 ] && break; sleep 0.1; done
runcg=$(ls -d /sys/fs/cgroup/system.slice/hermeticd.service/hermetic/run-* 2>/dev/null | head -n 1)
check "the run's cgroup is in the unit's delegated subtree" test -n "$runcg"
check "systemctl restart hermeticd during the run" systemctl restart hermeticd.service
check "the service is active again" test "$(systemctl is-active hermeticd.service)" = active
for _ in $(seq 1200); do kill -0 $RUN 2>/dev/null || break; sleep 0.1; done
wait $RUN
rc=$?
if grep -q DONE /tmp/run.out; then pass "the run goes on across the restart"; else
	fail "the run goes on across the restart" "$(tr '\n' '|' </tmp/run.out) $(tr '\n' '|' </tmp/run.err)"; fi
if grep -q CONNECTED /tmp/run.out || ! grep -q DONE /tmp/run.out; then
	fail "the run stays blocked across the restart" "$(grep -c CONNECTED /tmp/run.out) connections got through, $(grep -c REFUSED /tmp/run.out) refused"
else
	pass "the run stays blocked across the restart (all $(grep -c REFUSED /tmp/run.out) attempts refused)"
fi
check "enroll ends the run cleanly after the restart (exit 0)" test "$rc" = 0

# The journal store under the unit's hardening (StateDirectory=, the
# kernel's view through the syscall tracepoints).
out=$(cd /tmp && as_ci hermetic enroll --clock off --record -- sh -c 'head -c 8 /dev/urandom >/dev/null; exit 1' 2>&1)
id=$(printf '%s\n' "$out" | sed -n "s/.*journal \([0-9]*\) in hermeticd's store.*/\1/p")
if [ -n "$id" ] && as_ci hermetic journals list | grep -q "^$id "; then
	pass "a recorded run's journal is kept in the store and listed by its owner"
else
	fail "a recorded run's journal is kept in the store" "$(printf '%s' "$out" | tr '\n' '|')"
fi

# The peer check under the unit, as it was (RestrictAddressFamilies=AF_UNIX):
# before Linux 6.5 (no SO_PEERPIDFD) it needs sock_diag, so without
# AF_NETLINK a client is refused with the reason, never run as outside a
# run; from 6.5 on SO_PEERPIDFD needs no netlink and enroll works.
D=/run/systemd/system/hermeticd.service.d
mkdir -p $D && printf '[Service]\nRestrictAddressFamilies=\nRestrictAddressFamilies=AF_UNIX\n' >$D/af.conf
systemctl daemon-reload && systemctl restart hermeticd.service
out=$(as_ci hermetic enroll --clock off -- bash -c "$probe" 2>&1)
rc=$?
kmaj=$(uname -r | cut -d. -f1) kmin=$(uname -r | cut -d. -f2)
if [ "$kmaj" -lt 6 ] || { [ "$kmaj" = 6 ] && [ "$kmin" -lt 5 ]; }; then
	case "$rc $out" in
	"70 "*"cannot identify the caller: no SO_PEERPIDFD (Linux 6.5) and no sock_diag"*"allow AF_NETLINK"*)
		[[ $out == *CONNECTED* ]] && fail "without AF_NETLINK the pre-6.5 peer check fails closed" "$out" ||
			pass "without AF_NETLINK (the unit as it was) the pre-6.5 peer check fails closed: enroll refused with the reason, exit 70" ;;
	*) fail "without AF_NETLINK the pre-6.5 peer check fails closed" "$rc $(printf '%s' "$out" | tr '\n' '|')" ;;
	esac
else
	case "$rc $out" in
	"0 "*REFUSED*) pass "without AF_NETLINK, SO_PEERPIDFD (kernel $(uname -r)) still identifies the client" ;;
	*) fail "without AF_NETLINK, SO_PEERPIDFD still identifies the client" "$rc $(printf '%s' "$out" | tr '\n' '|')" ;;
	esac
fi
rm -f $D/af.conf
systemctl daemon-reload && systemctl restart hermeticd.service
check "with the unit's AF_NETLINK again, enroll works" sh -c "runuser -u ci -- hermetic enroll --clock off -- true"

# WatchdogSec=30s: the event loop's pings reach systemd (every 15 s).
for _ in $(seq 600); do
	[ "$(systemctl show -p WatchdogTimestampMonotonic --value hermeticd.service)" -gt 0 ] 2>/dev/null && break
	sleep 0.1
done
check "systemd receives the daemon's watchdog pings" test \
	"$(systemctl show -p WatchdogTimestampMonotonic --value hermeticd.service)" -gt 0

# systemctl stop: the service stops; the socket starts it again.
check "systemctl stop hermeticd" systemctl stop hermeticd.service
check "the service is inactive" test "$(systemctl is-active hermeticd.service)" = inactive
check "the socket starts it again on the next connection" sh -c "runuser -u ci -- hermetic status >/dev/null &&
	test \"\$(systemctl is-active hermeticd.service)\" = active"
check "systemctl stop hermeticd.socket hermeticd" systemctl stop hermeticd.socket hermeticd.service
out=$(as_ci hermetic enroll -- true 2>&1)
rc=$?
case "$rc $out" in
"69 "*"systemctl enable --now hermeticd.socket"*) pass "with both stopped, enroll exits 69 and says how to start it" ;;
*) fail "with both stopped, enroll exits 69 and says how to start it" "$rc $(printf '%s' "$out" | tr '\n' '|')" ;;
esac
check "no process is left in the unit's cgroup" sh -c \
	"! cat /sys/fs/cgroup/system.slice/hermeticd.service/*/cgroup.procs 2>/dev/null | grep -q ."
finish
