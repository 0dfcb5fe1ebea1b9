#!/usr/bin/env bash
# Issue 10, "no client can crash, hang or starve the daemon", and "the
# socket is 0660 root:hermetic": each attack of the issue reproduced, as an
# unprivileged user the test creates where the attack is unprivileged, and
# shown to fail.
#   - crash: two connections, one run each, the older closes (the daemon
#     freed a run while walking the run list); a client dies while its run
#     is empty and a newer one exists
#   - descriptor leak: 5,000 zero-length packets carrying SCM_RIGHTS
#   - hang: a FUSE file that never answers, stacked under overlayfs in a
#     user namespace, handed over as a journal; SIGTERM while busy
#   - starvation: one user holding all the connections it can; runs per user
#   - the socket's mode and group, and the error a user outside it gets
source "$(dirname "$0")/../lib.sh"

need_root "daemon trust" || exit 0
need_build "daemon trust" || exit 1
if [ -x /usr/bin/python3 ]; then PY=/usr/bin/python3; else PY=python3; fi
WIRE=$TOP/tests/integration/wire.py
CG2=$(sed -n 's/^[0-9]* [0-9]* [^ ]* [^ ]* \([^ ]*\) .* - cgroup2 .*/\1/p' /proc/self/mountinfo | head -n1)

test_user ATT || { fail "create test users" "useradd failed"; exit 1; }
test_user OTHER || { fail "create test users" "useradd failed"; exit 1; }
start_daemon --max-conns-per-user 16 --max-runs-per-user 5 ||
	{ fail "daemon starts" "$(tail -n 5 "$T/daemon.log" | tr '\n' '|')"; exit 1; }

nfds() { ls "/proc/$HMD_PID/fd" 2>/dev/null | wc -l; }
alive() { kill -0 "$HMD_PID" 2>/dev/null && timeout 5 "$HERMETIC" status >/dev/null 2>&1; }
why() { echo "daemon $(kill -0 "$HMD_PID" 2>/dev/null && echo up || echo DEAD); log: $(tail -n 3 "$T/daemon.log" | tr '\n' '|')"; }
# wire [as USER] CASE ARGS: the raw protocol client; output in $WOUT.
wire() {
	if [ "$1" = as ]; then
		local u=$2
		shift 2
		WOUT=$(as_user "$u" timeout 120 "$PY" "$WIRE" "$HERMETIC_SOCKET" "$@" 2>&1)
	else
		WOUT=$(timeout 120 "$PY" "$WIRE" "$HERMETIC_SOCKET" "$@" 2>&1)
	fi
}

# --- crash: the run list walk --------------------------------------------------------
"$HERMETIC" enroll -- true >/dev/null 2>&1
sleep 0.3
wait_pool # (its parts' descriptors count in the baseline)
BASE_FDS=$(nfds)
wire as "$ATT" uaf-close-older
if [[ $WOUT == ok* ]] && alive; then pass "two connections, one run each, the older closes: daemon up, only the newer run left"; else fail "two connections, one run each, the older closes" "$WOUT; $(why)"; fi
wire uaf-empty-newer "$CG2"
if [[ $WOUT == ok* ]] && alive; then pass "a client dies while its run is empty and a newer run exists: daemon up"; else fail "a client dies while its run is empty and a newer run exists" "$WOUT; $(why)"; fi
for i in $(seq 20); do wire as "$ATT" uaf-close-older; [[ $WOUT == ok* ]] || break; done
if [[ $WOUT == ok* ]] && alive; then pass "the same, 20 times over: daemon up"; else fail "the same, 20 times over" "$WOUT; $(why)"; fi

# --- descriptor leak -------------------------------------------------------------------
wire as "$ATT" zero-len-fds 5000
sleep 0.3
now=$(nfds)
if [[ $WOUT == ok* ]] && ((now <= BASE_FDS + 1)) && alive; then
	pass "5,000 zero-length packets with SCM_RIGHTS: each answered, no descriptor kept ($now fds, baseline $BASE_FDS)"
else
	fail "5,000 zero-length packets with SCM_RIGHTS" "$WOUT; $now fds, baseline $BASE_FDS; $(why)"
fi
if as_user "$OTHER" timeout 10 "$HERMETIC" enroll -- true >/dev/null 2>"$T/e.err"; then
	pass "after the flood another user creates a run"
else
	fail "after the flood another user creates a run" "$(tr '\n' '|' <"$T/e.err")"
fi
wire as "$ATT" fd-flood 50
sleep 0.3
now=$(nfds)
if [[ $WOUT == ok* ]] && ((now <= BASE_FDS + 1)); then pass "50 messages x 253 descriptors: none installed in the daemon ($now fds)"; else fail "50 messages x 253 descriptors" "$WOUT; $now fds, baseline $BASE_FDS"; fi

# --- hang: FUSE under overlayfs in a user namespace ------------------------------------------
if ! build_attack fuse_hang; then
	fail "build the FUSE attack" "$(tail -n 3 "$T/fuse_hang.log" | tr '\n' '|')"
else
	mkdir "$T/fz" && chown "$ATT" "$T/fz"
	as_user "$ATT" "$T/fuse_hang" "$HERMETIC_SOCKET" "$T/fz" >"$T/fuse.out" 2>&1 &
	fpid=$!
	at_exit "kill -KILL $fpid"
	for _ in $(seq 200); do grep -q "^conn " "$T/fuse.out" && break; sleep 0.05; done
	conn=$(sed -n 's/^conn //p' "$T/fuse.out")
	[ -n "$conn" ] && at_exit "fuse_abort $conn"
	for _ in $(seq 300); do grep -q "^STORE overlay" "$T/fuse.out" && break; sleep 0.05; done
	t0=$(now_ms)
	st=$(timeout 5 "$HERMETIC" status >/dev/null 2>&1 && echo answered || echo "NOT answered")
	ms=$(($(now_ms) - t0))
	if grep -q "^STORE fuse -> ERR 9 .*JOURNAL_UPLOAD" "$T/fuse.out" &&
		grep -q "^STORE overlay -> ERR 9 .*JOURNAL_UPLOAD" "$T/fuse.out" && [ "$st" = answered ]; then
		pass "a FUSE file that never answers (and overlayfs on it) sent as a journal: refused at once, never touched; status answered in ${ms} ms"
	else
		fail "a FUSE file that never answers sent as a journal" "status $st; attacker: $(tr '\n' '|' <"$T/fuse.out"); $(why)"
	fi
	if ! ls -l "/proc/$HMD_PID/fd" 2>/dev/null | grep -q "$T/fz"; then
		pass "the daemon holds no descriptor of the attacker's files"
	else
		fail "the daemon holds no descriptor of the attacker's files" "$(ls -l "/proc/$HMD_PID/fd" | grep "$T/fz")"
	fi
	for _ in $(seq 200); do kill -0 $fpid 2>/dev/null || break; sleep 0.05; done
	[ -n "$conn" ] && kill -0 $fpid 2>/dev/null && fuse_abort "$conn"
	wait $fpid 2>/dev/null
fi

# --- starvation: connections and runs per user ---------------------------------------------
as_user "$ATT" "$PY" "$WIRE" "$HERMETIC_SOCKET" hold-conns 200 4 >"$T/hold.out" 2>&1 &
hpid=$!
at_exit "kill $hpid"
for _ in $(seq 200); do [ -s "$T/hold.out" ] && break; sleep 0.05; done
rst=$(timeout 5 "$HERMETIC" status 2>&1 >/dev/null && echo answered || echo "NOT answered")
as_user "$OTHER" timeout 10 "$HERMETIC" enroll -- true >/dev/null 2>"$T/o.err"
orc=$?
as_user "$ATT" timeout 10 "$HERMETIC" enroll -- true >/dev/null 2>"$T/a.err"
arc=$?
if [[ $(cat "$T/hold.out") == "ok 16 kept, 184 refused: EUSERS: uid $(id -u "$ATT") is at its limit of 16 connections to hermeticd ("*"open; hermeticd --max-conns-per-user)"* ]] &&
	[ "$rst" = answered ] && [ $orc = 0 ]; then
	pass "one user holding all the connections it can gets 16 (its limit) and a clear error; root's status and another user's enroll still work"
else
	fail "one user holding all the connections it can" "$(cat "$T/hold.out"); root status $rst; other user rc=$orc $(tr '\n' '|' <"$T/o.err")"
fi
if [ $arc = 69 ] || [ $arc = 70 ] && grep -q "max-conns-per-user" "$T/a.err"; then
	pass "that user's own enroll says which limit it hit (rc $arc)"
else
	fail "that user's own enroll says which limit it hit" "rc=$arc $(tr '\n' '|' <"$T/a.err")"
fi
wait $hpid 2>/dev/null # it lets go after 4 s
# A user with all its connections but one taken: its enroll's run takes the
# last, and its command's adoption (a second, brief connection) still gets
# in, on a connection that may ask nothing else.
as_user "$ATT" "$PY" "$WIRE" "$HERMETIC_SOCKET" hold-conns 15 30 >"$T/hold15.out" 2>&1 &
hpid=$!
at_exit "kill $hpid"
for _ in $(seq 200); do [ -s "$T/hold15.out" ] && break; sleep 0.05; done
out=$(as_user "$ATT" timeout 20 "$HERMETIC" enroll -- sh -c 'echo in run' 2>"$T/e15.err")
erc=$?
if [[ $(cat "$T/hold15.out") == "ok 15 kept, 0 refused"* ]] && [ $erc = 0 ] && [ "$out" = "in run" ]; then
	pass "a user one connection short of its limit still enrolls: the adoption's connection is not held against it"
else
	fail "a user one connection short of its limit still enrolls" "$(cat "$T/hold15.out"); rc=$erc $out $(tr '\n' '|' <"$T/e15.err")"
fi
kill $hpid 2>/dev/null
wait $hpid 2>/dev/null
wire as "$ATT" create-runs 20
if [[ $WOUT == "ok 5 runs made; then ERROR(EUSERS"*"is at its limit of 5 runs (hermeticd --max-runs-per-user)"* ]]; then
	pass "runs per user: 5, then a clear EUSERS"
else
	fail "runs per user: 5, then a clear EUSERS" "$WOUT"
fi

# --- SIGTERM while busy: a 200 MiB journal being copied --------------------------------------
as_user "$ATT" "$PY" "$WIRE" "$HERMETIC_SOCKET" big-store 200 >"$T/big.out" 2>&1 &
bpid=$!
at_exit "kill $bpid"
for _ in $(seq 200); do grep -q storing "$T/big.out" && break; sleep 0.05; done
t0=$(now_ms)
st=$(timeout 5 "$HERMETIC" status >/dev/null 2>&1 && echo answered || echo "NOT answered")
ms=$(($(now_ms) - t0))
kill -TERM "$HMD_PID"
for _ in $(seq 600); do kill -0 "$HMD_PID" 2>/dev/null || break; sleep 0.05; done
if kill -0 "$HMD_PID" 2>/dev/null; then
	fail "SIGTERM while a 200 MiB journal is being stored: the daemon exits" "still running 30 s later"
	kill -KILL "$HMD_PID"
else
	wait "$HMD_PID"
	rc=$?
	if [ $rc = 0 ] && [ "$st" = answered ]; then
		pass "a 200 MiB journal being stored holds up nobody (status in ${ms} ms), and SIGTERM stops the daemon (exit 0)"
	else
		fail "SIGTERM while a 200 MiB journal is being stored" "status $st, exit $rc; $(tail -n 3 "$T/daemon.log" | tr '\n' '|')"
	fi
fi
wait $bpid 2>/dev/null

# --- the socket: 0660 root:<group>, a clear error for others -----------------------------------
mode=$(stat -c '%a %U %G' "$HERMETIC_SOCKET" 2>/dev/null)
start_daemon --max-conns-per-user 16 || { fail "daemon restarts" "$(why)"; exit 1; }
mode=$(stat -c '%a %U %G' "$HERMETIC_SOCKET")
if [ "$mode" = "660 root $HM_GROUP" ]; then pass "the socket is 0660 root:$HM_GROUP (--socket-group)"; else fail "the socket is 0660 root:<group>" "$mode"; fi
_retry useradd -M -N -g nogroup -d /nonexistent -s /usr/sbin/nologin "hmo$$" &&
	at_exit "pkill_user_procs hmo$$; _retry userdel hmo$$"
timeout 10 setpriv --reuid="hmo$$" --regid=nogroup --clear-groups env USER="hmo$$" \
	"$HERMETIC" enroll -- true >/dev/null 2>"$T/out.err"
rc=$?
if [ $rc = 69 ] && grep -q "permission denied" "$T/out.err" && grep -q "group '$HM_GROUP'" "$T/out.err" &&
	grep -q "usermod -aG $HM_GROUP hmo$$" "$T/out.err"; then
	pass "a user outside the group: exit 69, the message names the group and the fix"
else
	fail "a user outside the group gets a clear error" "rc=$rc $(tr '\n' '|' <"$T/out.err")"
fi
if as_user "$OTHER" timeout 10 "$HERMETIC" enroll -- true >/dev/null 2>"$T/in.err"; then
	pass "a user in the group enrolls"
else
	fail "a user in the group enrolls" "$(tr '\n' '|' <"$T/in.err")"
fi
"$HERMETICD" --socket "$T/x.sock" --subtree "hmtest-$$-x" --runtime-dir "$T/runx" --store "$T/sx" \
	--socket-group "nosuchgroup$$" >"$T/x.log" 2>&1
rc=$?
if [ $rc = 2 ] && grep -q "groupadd --system nosuchgroup$$" "$T/x.log" && [ ! -e "$T/x.sock" ]; then
	pass "--socket-group naming no group: refuses to start (exit 2) and says how to create it"
else
	fail "--socket-group naming no group" "rc=$rc $(tr '\n' '|' <"$T/x.log")"
fi
# The default group, absent here: root only, and the log says what to do.
if ! getent group hermetic >/dev/null; then
	"$HERMETICD" --socket "$T/y.sock" --subtree "hmtest-$$-y" --runtime-dir "$T/runy" --store "$T/sy" \
		>"$T/y.log" 2>&1 &
	ypid=$!
	at_exit "kill $ypid; wait $ypid"
	for _ in $(seq 200); do [ -S "$T/y.sock" ] && break; sleep 0.05; done
	ymode=$(stat -c '%a %U %G' "$T/y.sock" 2>/dev/null)
	HERMETIC_SOCKET=$T/y.sock as_user "$OTHER" timeout 10 "$HERMETIC" enroll -- true >/dev/null 2>"$T/y.err"
	rc=$?
	if [ "$ymode" = "600 root root" ] && grep -q "group 'hermetic' does not exist.*groupadd --system hermetic" "$T/y.log" &&
		[ $rc = 69 ] && grep -q "for root only" "$T/y.err"; then
		pass "no 'hermetic' group: the socket is root's alone (0600), the log and the CLI say how to open it"
	else
		fail "no 'hermetic' group" "mode [$ymode] rc=$rc log: $(tr '\n' '|' <"$T/y.log") cli: $(tr '\n' '|' <"$T/y.err")"
	fi
else
	pass "a 'hermetic' group exists on this machine: the default-group case is covered by --socket-group above"
fi
