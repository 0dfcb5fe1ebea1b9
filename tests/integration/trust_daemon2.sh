#!/usr/bin/env bash
# Issue 15, the daemon's side of "containment that holds for every caller":
# each attack reproduced against a private daemon, as an unprivileged user
# the test creates, with a counting server on a test host in a network
# namespace the test creates; each shown to fail, and `hermetic status`
# still true after each.
#   attack 6: a run's process in a cgroup-v1 directory named "x0::y" (a
#             hybrid host) taken for an outside process by peer.c
#   attack 7: one user holding upload buffers without bound
#   attack 9: a second hermeticd on the same subtree with another
#             --runtime-dir, which removed the subtree when it stopped
#   item 9:   the pre-6.5 peer check under the unit's
#             RestrictAddressFamilies= (sock_diag) and without
#             CAP_SYS_PTRACE: fails closed, never "outside a run"
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/nethost.sh"

need_root "daemon trust 2" || exit 0
need_build "daemon trust 2" || exit 1
WIRE=$TOP/tests/integration/wire.py
CG2=$(sed -n 's/^[0-9]* [0-9]* [^ ]* [^ ]* \([^ ]*\) .* - cgroup2 .*/\1/p' /proc/self/mountinfo | head -n1)
nethost_up || { fail "test host in a network namespace" "nethost_up failed"; exit 1; }
test_user U || { fail "create a test user" "useradd failed"; exit 1; }
for a in restrict_af noshim; do
	build_attack $a -static || { fail "build $a" "$(tail -n 3 "$T/$a.log" | tr '\n' '|')"; exit 1; }
	chmod 755 "$T/$a"
done
start_daemon --max-upload-bytes-per-user 8M ||
	{ fail "daemon starts" "$(tail -n 5 "$T/daemon.log" | tr '\n' '|')"; exit 1; }

# The counting server: on the test host, one line in $CLOG per accepted
# connection. Whatever a refused attack starts must add none.
CPORT=9191 CLOG=$T/count.log
cat >"$T/count.py" <<'EOF'
import os, socket, sys
port, log, ready = int(sys.argv[1]), sys.argv[2], sys.argv[3]
s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
s.bind(("::", port))
s.listen(64)
open(log, "a").close()
open(ready, "w").write("up")
while True:
    c, peer = s.accept()
    with open(log, "a") as f:
        f.write("conn from %s\n" % peer[0])
    try:
        c.sendall(b"counted\n")
    except OSError:
        pass
    c.close()
EOF
ip netns exec "$NH_NS" "$PY" "$T/count.py" $CPORT "$CLOG" "$T/count.ready" >"$T/count.err" 2>&1 &
at_exit "kill $!"
_nh_wait_file "$T/count.ready" || { fail "counting server starts" "$(cat "$T/count.err")"; exit 1; }
counted() { grep -c '^conn' "$CLOG" 2>/dev/null || true; }
for _ in $(seq 60); do [[ $(probe tcp "$NH_HOST" $CPORT) == OK* ]] && break; sleep 0.1; done
if [ "$(counted)" -ge 1 ]; then pass "control: a process outside any run reaches the counting server, and it counts"; else fail "control: the counting server counts" "$(counted) connections"; fi

alive() { kill -0 "$HMD_PID" 2>/dev/null && timeout 10 "$HERMETIC" status >/dev/null 2>&1; }
status_true() {
	if alive; then pass "$1: hermetic status true afterwards"; else fail "$1: hermetic status true afterwards" "$(tail -n 3 "$T/daemon.log" | tr '\n' '|')"; fi
}
mkdir -p "$T/ud" && chown "$U" "$T/ud"
chmod 644 "$T/probe.py"

# --- attack 6: "0::" inside a cgroup-v1 path -------------------------------------------------
# A v1 hierarchy: this host's (hybrid: name=systemd or a controller), or a
# named one of our own mounted in a private mount namespace.
# mount point and super options of each v1 hierarchy
v1_mounts() { awk '{ for (i = 7; i <= NF; i++) if ($i == "-") break; if ($(i + 1) == "cgroup") print $5, $(i + 3) }' /proc/self/mountinfo; }
# A named one (no controllers) first; never the memory controller's.
V1MNT=$(v1_mounts | awk '$2 ~ /(^|,)name=/ { print $1; exit }')
[ -n "$V1MNT" ] || V1MNT=$(v1_mounts | awk '$2 !~ /memory/ { print $1; exit }')
V1OWN=
# HM_TEST_OWN_V1=1: the way taken on hosts without v1, tried here.
[ "${HM_TEST_OWN_V1:-}" = 1 ] && V1MNT=
if [ -z "$V1MNT" ]; then
	# No v1 hierarchy here: a named one (no controllers), mounted where only
	# this test sees it; the hierarchy outlives the mount while it has a
	# cgroup, and goes when the cleanup removes that.
	V1MNT=$T/v1 V1OWN=1
	mkdir -p "$V1MNT"
fi
V1DIR=$V1MNT/x0::y-$$
v1() { # v1 CMD: CMD where $V1MNT is the v1 hierarchy's mount
	if [ -n "$V1OWN" ]; then
		unshare -m --propagation private sh -c "mount -t cgroup -o none,name=hmtest$$ cgroup '$V1MNT' && $1"
	else
		sh -c "$1"
	fi
}
v1_cleanup() {
	v1 "for p in \$(cat '$V1DIR/cgroup.procs' 2>/dev/null); do echo \$p >'$V1MNT/cgroup.procs'; done; rmdir '$V1DIR'"
}
at_exit v1_cleanup
cat >"$T/a6.sh" <<EOF
echo \$\$ >$T/ud/a6.pid
for i in \$(seq 1200); do [ -e $T/ud/a6.moved ] && break; sleep 0.1; done
grep -F 'x0::y' /proc/self/cgroup | sed 's/^/v1 line: /'
# Past the client's own check (HERMETIC_RUN, which the shim keeps in
# every exec: noshim is static): only the daemon's is tested.
NOSHIM_SOCKET=$HERMETIC_SOCKET $T/noshim "$HERMETIC" enroll --network off --clock off --rng off -- "$PY" $T/probe.py tcp $NH_HOST $CPORT
echo "inner enroll rc=\$?"
"$PY" "$WIRE" "$HERMETIC_SOCKET" create-open
EOF
chmod 644 "$T/a6.sh"
before=$(counted)
as_user "$U" timeout 180 "$HERMETIC" enroll --clock off --rng off -- bash "$T/a6.sh" >"$T/a6.out" 2>&1 &
apid=$!
for _ in $(seq 600); do [ -s "$T/ud/a6.pid" ] && break; sleep 0.1; done
vpid=$(cat "$T/ud/a6.pid" 2>/dev/null)
if [ -n "$vpid" ] && v1 "mkdir -p '$V1DIR' && echo $vpid >'$V1DIR/cgroup.procs'" 2>"$T/v1.err" &&
	grep -qF ":/x0::y-$$" "/proc/$vpid/cgroup" && grep -q "^0::/.*$HMD_NAME/run-" "/proc/$vpid/cgroup"; then
	touch "$T/ud/a6.moved"
	wait $apid
	OUT=$(cat "$T/a6.out")
	if [[ $OUT == *"v1 line: "*":/x0::y-$$"* ]] && [[ $OUT == *"hermetic: cannot enroll: the caller is already inside a hermetic run"* ]] &&
		[[ $OUT == *"inner enroll rc=77"* ]] && [[ $OUT == *"ok RUN_CREATE with the network off -> ERROR(EPERM"*"already inside a hermetic run"* ]] &&
		[ "$(counted)" = "$before" ]; then
		pass "attack 6: a run's process in cgroup-v1 directory x0::y-$$ ($V1MNT) asks for an unenforced run: refused as inside a run (enroll rc 77, RUN_CREATE EPERM); 0 connections reach the counting server"
	else
		fail "attack 6: a run's process in a cgroup-v1 directory named x0::y" "$(($(counted) - before)) connections counted; $(printf '%s' "$OUT" | tr '\n' '|' | tail -c 700)"
	fi
else
	touch "$T/ud/a6.moved"
	wait $apid
	fail "attack 6: set-up: move the run's process into $V1DIR" "pid '$vpid'; $(tr '\n' '|' <"$T/v1.err"); $(tr '\n' '|' <"/proc/$vpid/cgroup" 2>/dev/null)"
fi
v1_cleanup
status_true "attack 6"

# --- attack 7: upload buffers per uid ----------------------------------------------------------
OUT=$(as_user "$U" timeout 180 "$PY" "$WIRE" "$HERMETIC_SOCKET" upload-cap 2 2>&1)
if [[ $OUT == "held 4; then ERROR(EDQUOT"*"holds 8.0 MiB of upload buffers; 2.0 MiB more passes the limit, 8.0 MiB (hermeticd --max-upload-bytes-per-user)"*"; after closing them: type=111; replaced 10/10; stored 10/10 "* ]]; then
	pass "attack 7: one user holding 2 MiB uploads gets 4 (the 8M cap), then EDQUOT naming the cap; after closing them uploads again; a replaced or stored buffer counts no more"
else
	fail "attack 7: upload buffers per uid" "$OUT"
fi
rm -f "$T/ud/stop"
as_user "$U" "$PY" "$WIRE" "$HERMETIC_SOCKET" hold-uploads 2 "$T/ud/stop" >"$T/hold.out" 2>&1 &
hpid=$!
at_exit "touch $T/ud/stop; kill $hpid"
for _ in $(seq 300); do [ -s "$T/hold.out" ] && break; sleep 0.1; done
as_user "$U" timeout 120 "$HERMETIC" enroll --record --clock off --rng off -- sh -c 'exit 3' >"$T/e7.out" 2>&1
rc=$?
if [[ $(cat "$T/hold.out") == "held 4; then ERROR(EDQUOT"* ]] && [ $rc = 3 ] &&
	grep -q "hermeticd did not keep the journal: uid $(id -u "$U") holds 8.0 MiB of upload buffers.*--max-upload-bytes-per-user" "$T/e7.out"; then
	pass "attack 7: that user's recording enroll says hermeticd did not keep the journal, naming the cap, and keeps the command's exit status (3)"
else
	fail "attack 7: the user's enroll past the cap" "holder: $(cat "$T/hold.out"); rc=$rc; $(tr '\n' '|' <"$T/e7.out")"
fi
touch "$T/ud/stop"
wait $hpid
ok=
for _ in $(seq 20); do
	as_user "$U" timeout 120 "$HERMETIC" enroll --record --clock off --rng off -- sh -c 'exit 3' >"$T/e7b.out" 2>&1
	rc=$?
	[ $rc = 3 ] && ! grep -q "did not keep" "$T/e7b.out" && { ok=1; break; }
	sleep 0.5 # the holder's connections close in the daemon's own time
done
if [ -n "$ok" ]; then pass "attack 7: once the held uploads are closed the same user's journal is stored"; else fail "attack 7: after the held uploads are closed" "rc=$rc $(tr '\n' '|' <"$T/e7b.out")"; fi
status_true "attack 7"

# --- attack 9: a second daemon on the same subtree ---------------------------------------------
cat >"$T/a9.sh" <<EOF
echo started >$T/ud/a9.started
for i in \$(seq 1200); do [ -e $T/ud/a9.go ] && break; sleep 0.1; done
"$PY" $T/probe.py tcp $NH_HOST $CPORT
EOF
chmod 644 "$T/a9.sh"
rm -f "$T/ud/a9.go" "$T/ud/a9.started"
as_user "$U" timeout 180 "$HERMETIC" enroll --clock off --rng off -- bash "$T/a9.sh" >"$T/a9run.out" 2>&1 &
rpid=$!
for _ in $(seq 600); do [ -s "$T/ud/a9.started" ] && break; sleep 0.1; done
before=$(counted)
timeout 120 "$HERMETICD" --socket "$T/d2.sock" --subtree "$HMD_NAME" --runtime-dir "$T/run2" --store "$T/store2" >"$T/d2.log" 2>&1
rc2=$?
touch "$T/ud/a9.go"
wait $rpid
rrc=$?
as_user "$U" timeout 60 "$HERMETIC" enroll --clock off --rng off -- true >"$T/e9.out" 2>&1
erc=$?
if [ $rc2 != 0 ] && grep -q "another hermeticd holds cgroup subtree '$CG2/$HMD_NAME' (pid $HMD_PID, socket $HERMETIC_SOCKET; lock /run/hermetic-subtrees/$HMD_NAME\." "$T/d2.log" &&
	[ ! -e "$T/d2.sock" ] && [ -d "$CG2/$HMD_NAME" ]; then
	pass "attack 9: a second hermeticd on the same subtree with another --runtime-dir refuses to start (rc $rc2), naming the first's pid and socket; the subtree stays"
else
	fail "attack 9: a second hermeticd on the same subtree" "rc=$rc2; $(tr '\n' '|' <"$T/d2.log"); subtree $([ -d "$CG2/$HMD_NAME" ] && echo there || echo GONE)"
fi
if [ $erc = 0 ] && [ $rrc = 0 ] && grep -q "^ERR " "$T/a9run.out" && [ "$(counted)" = "$before" ]; then
	pass "attack 9: the first daemon goes on: a run begun before the attempt is still enforced after it (0 connections counted), and a new enroll succeeds"
else
	fail "attack 9: the first daemon goes on" "enroll rc=$erc $(tr '\n' '|' <"$T/e9.out"); run rc=$rrc $(tr '\n' '|' <"$T/a9run.out"); $(($(counted) - before)) counted"
fi
status_true "attack 9"

# --- item 9: the pre-6.5 peer check where its mechanism is missing ----------------------------
# hermeticd as hermeticd.service runs it (RestrictAddressFamilies=, a seccomp
# filter on socket(): restrict_af), with the pre-6.5 identification
# (--no-peerpidfd); each its own socket, subtree and runtime directory.
# af_daemon NAME FAMILIES [setpriv options]: sets AF_SOCK, AF_PID.
af_daemon() {
	local n=$1 fam=$2
	shift 2
	AF_SOCK=$T/$n.sock
	local cmd=("$T/restrict_af" "$fam" -- "$HERMETICD" --no-peerpidfd --socket "$AF_SOCK" --subtree "hmtest-$$-$n"
		--runtime-dir "$T/run-$n" --store "$T/store-$n" --socket-group "$HM_GROUP")
	[ $# -gt 0 ] && cmd=(setpriv "$@" -- "${cmd[@]}")
	at_exit "_daemon_leftovers hmtest-$$-$n"
	"${cmd[@]}" >"$T/$n.log" 2>&1 &
	AF_PID=$!
	at_exit "kill $AF_PID; wait $AF_PID"
	for _ in $(seq 300); do
		[ -S "$AF_SOCK" ] && HERMETIC_SOCKET=$AF_SOCK timeout 10 "$HERMETIC" status >/dev/null 2>&1 && return 0
		kill -0 $AF_PID 2>/dev/null || break
		sleep 0.1
	done
	return 1
}
af_stop() { kill "$AF_PID" 2>/dev/null; wait "$AF_PID" 2>/dev/null; }
af_enroll() { # as U, against $AF_SOCK; output in $T/af.out, rc in $AFRC
	as_user "$U" env HERMETIC_SOCKET="$AF_SOCK" timeout 120 "$HERMETIC" enroll --clock off --rng off -- \
		"$PY" "$T/probe.py" tcp "$NH_HOST" $CPORT >"$T/af.out" 2>&1
	AFRC=$?
}
af_status() { HERMETIC_SOCKET=$AF_SOCK timeout 10 "$HERMETIC" status >/dev/null 2>&1 && kill -0 "$AF_PID" 2>/dev/null; }

before=$(counted)
if ! af_daemon afunix unix; then
	fail "item 9: hermeticd starts with RestrictAddressFamilies=AF_UNIX" "$(tail -n 3 "$T/afunix.log" | tr '\n' '|')"
else
	af_enroll
	if [ $AFRC = 70 ] && grep -q "cannot identify the caller: no SO_PEERPIDFD (Linux 6.5) and no sock_diag (Address family not supported by protocol); allow AF_NETLINK" "$T/af.out" &&
		[ "$(counted)" = "$before" ]; then
		pass "item 9: without sock_diag (RestrictAddressFamilies=AF_UNIX, pre-6.5 identification) enroll is refused with the reason (rc 70), not run as outside; 0 connections counted"
	else
		fail "item 9: without sock_diag" "rc=$AFRC $(tr '\n' '|' <"$T/af.out"); $(($(counted) - before)) counted"
	fi
	if af_status; then pass "item 9: without sock_diag: hermetic status true afterwards"; else fail "item 9: without sock_diag: hermetic status true afterwards" "$(tail -n 3 "$T/afunix.log" | tr '\n' '|')"; fi
	af_stop
fi
if ! af_daemon afnocap unix,netlink --bounding-set -sys_ptrace,-dac_read_search --inh-caps -all; then
	fail "item 9: hermeticd starts without CAP_SYS_PTRACE" "$(tail -n 3 "$T/afnocap.log" | tr '\n' '|')"
else
	af_enroll
	if [ $AFRC = 70 ] && grep -q "cannot identify the caller: no SO_PEERPIDFD (Linux 6.5) and /proc/[0-9]*/fd unreadable (Permission denied); hermeticd needs CAP_SYS_PTRACE" "$T/af.out" &&
		[ "$(counted)" = "$before" ]; then
		pass "item 9: without CAP_SYS_PTRACE (the client's /proc/PID/fd unreadable) enroll is refused with the reason (rc 70); 0 connections counted"
	else
		fail "item 9: without CAP_SYS_PTRACE" "rc=$AFRC $(tr '\n' '|' <"$T/af.out"); $(($(counted) - before)) counted"
	fi
	if af_status; then pass "item 9: without CAP_SYS_PTRACE: hermetic status true afterwards"; else fail "item 9: without CAP_SYS_PTRACE: hermetic status true afterwards" "$(tail -n 3 "$T/afnocap.log" | tr '\n' '|')"; fi
	af_stop
fi
if ! af_daemon afnl unix,netlink; then
	fail "item 9: hermeticd starts with RestrictAddressFamilies=AF_UNIX AF_NETLINK" "$(tail -n 3 "$T/afnl.log" | tr '\n' '|')"
else
	af_enroll
	if [ $AFRC = 0 ] && grep -q "^ERR " "$T/af.out" && [ "$(counted)" = "$before" ]; then
		pass "item 9: with the unit's AF_UNIX AF_NETLINK the pre-6.5 check works: enroll runs, its connect is refused; 0 connections counted"
	else
		fail "item 9: with AF_UNIX AF_NETLINK" "rc=$AFRC $(tr '\n' '|' <"$T/af.out"); $(($(counted) - before)) counted"
	fi
	af_stop
fi
UNIT=$TOP/packaging/systemd/hermeticd.service
if grep -q '^RestrictAddressFamilies=.*AF_NETLINK' "$UNIT" && grep -q '^CapabilityBoundingSet=.*CAP_SYS_PTRACE.*CAP_DAC_READ_SEARCH' "$UNIT"; then
	pass "item 9: hermeticd.service keeps AF_NETLINK and CAP_SYS_PTRACE, CAP_DAC_READ_SEARCH, which the pre-6.5 check needs"
else
	fail "item 9: hermeticd.service keeps what the pre-6.5 check needs" "$(grep -E '^(RestrictAddressFamilies|CapabilityBoundingSet)=' "$UNIT" | tr '\n' '|')"
fi
status_true "all cases"
