#!/usr/bin/env bash
# hermeticd stays up and answering under malformed, truncated and oversized
# messages, vanishing clients, descriptor floods and many connections; it
# answers malformed requests with HM_REP_ERROR; on SIGTERM it exits 0 and
# removes its subtree cgroup and socket.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/nethost.sh"

need_root "daemon robustness" || exit 0
need_build "daemon robustness" || exit 1
WIRE=$(cd "$(dirname "$0")" && pwd)/wire.py
CG2=$(sed -n 's/^[0-9]* [0-9]* [^ ]* [^ ]* \([^ ]*\) .* - cgroup2 .*/\1/p' /proc/self/mountinfo | head -n1)

start_daemon || { fail "daemon starts" "$(tail -n 5 "$T/daemon.log" | tr '\n' '|')"; exit 1; }
lo_server LP || { fail "loopback server" "could not start"; exit 1; }

# The daemon's subtree directory, from status --json.
subtree_dir() {
	"$HERMETIC" status --json 2>/dev/null | "$PY" -c '
import json, os, sys
j = json.load(sys.stdin)
s, r = j["subtree"], j["cgroup_root"]
print(s if s.startswith("/") else os.path.join(r, s))'
}
nfds() { ls "/proc/$HMD_PID/fd" 2>/dev/null | wc -l; }
alive() {
	kill -0 "$HMD_PID" 2>/dev/null || return 1
	ALIVE_OUT=$(timeout 5 "$HERMETIC" status 2>&1) && return 0
	ALIVE_OUT="rc=$? $(printf %s "$ALIVE_OUT" | tail -n 2 | tr '\n' '|')"
	return 1
}
why_dead() {
	if ! kill -0 "$HMD_PID" 2>/dev/null; then
		echo "daemon died: $(tail -n 3 "$T/daemon.log" | tr '\n' '|')"
	else
		local out rc t0=$(now_ms)
		out=$(timeout 5 "$HERMETIC" status 2>&1)
		rc=$?
		echo "daemon up; 'hermetic status' now: rc=$rc after $(($(now_ms) - t0)) ms: $(printf %s "$out" | tail -n 2 | tr '\n' '|')"
	fi
}

# --- status ---------------------------------------------------------------------
out=$(timeout 5 "$HERMETIC" status 2>&1)
if [ $? = 0 ] && [[ $out == *"$(cat "$TOP/VERSION")"* ]]; then pass "status: answers and shows the version"; else fail "status: answers and shows the version" "$out"; fi
out=$(timeout 5 "$HERMETIC" status --json 2>&1)
check "status --json: version, subtree, cgroup_root, attach[], runs[]; connect4/6 and sendmsg4/6 attached" \
	"$PY" -c '
import json, sys
j = json.loads(sys.argv[1])
for k in ("version", "subtree", "cgroup_root", "attach", "runs"):
    assert k in j, "missing key " + k
att = {a["name"]: a for a in j["attach"]}
for n in ("connect4", "connect6", "sendmsg4", "sendmsg6"):
    m = [a for name, a in att.items() if name.endswith(n)]
    assert m and m[0]["attached"] is True, "%s not attached: %r" % (n, m)
for a in j["attach"]:
    assert isinstance(a["attached"], bool)
    assert a["attached"] or a.get("error"), "refused attach type without an error: %r" % a
' "$out"
SUBTREE=$(subtree_dir)
if [ -n "$SUBTREE" ] && [ -d "$SUBTREE" ] && [[ $SUBTREE == "$CG2"/* ]]; then
	pass "the daemon's subtree cgroup exists under the cgroup2 mount"
else
	fail "the daemon's subtree cgroup exists under the cgroup2 mount" "subtree=[$SUBTREE] mount=[$CG2]"
fi

# One enroll first, so lazily opened descriptors count in the baseline.
"$HERMETIC" enroll -- true >/dev/null 2>&1
sleep 0.3
wait_pool # (its parts' descriptors count in the baseline)
BASE_FDS=$(nfds)

# --- malformed, truncated, oversized -----------------------------------------------
# wcase NAME WIRE-CASE [ARGS]: PASS when wire.py is satisfied (the daemon
# answered as it should) and the daemon is still up and answering status.
wcase() {
	local name=$1 out rc
	shift
	out=$(timeout 60 "$PY" "$WIRE" "$HERMETIC_SOCKET" "$@" 2>&1)
	rc=$?
	if ! alive; then
		fail "$name" "status failed ($ALIVE_OUT); $(why_dead); wire: $(printf %s "$out" | tail -n 3 | tr '\n' '|')"
	elif [ $rc != 0 ]; then
		fail "$name" "$(printf %s "$out" | tail -n 3 | tr '\n' '|')"
	else
		pass "$name"
	fi
}
wcase "wire: a valid HELLO is answered (the test client speaks the protocol)" hello
wcase "wire: a valid STATUS is answered with JSON" status
wcase "malformed: bad magic -> HM_REP_ERROR, daemon up" bad-magic
wcase "malformed: bad version -> HM_REP_ERROR, daemon up" bad-version
wcase "malformed: unknown type -> HM_REP_ERROR echoing seq, daemon up" unknown-type
wcase "malformed: a reply type sent as request -> HM_REP_ERROR, daemon up" reply-type-as-request
wcase "malformed: hdr.len longer than the packet -> HM_REP_ERROR" len-too-long
wcase "malformed: hdr.len shorter than the packet -> HM_REP_ERROR" len-too-short
wcase "malformed: hdr.len 2^32-1 -> HM_REP_ERROR" len-huge
wcase "truncated: 7 bytes (shorter than the header) -> HM_REP_ERROR" shorter-than-header
wcase "truncated: 1 byte -> HM_REP_ERROR" one-byte
wcase "truncated: 0-byte packet, daemon up" empty-packet
wcase "truncated: RUN_CREATE shorter than its struct -> HM_REP_ERROR" create-too-short
wcase "truncated: RUN_KILL shorter than its struct -> HM_REP_ERROR" kill-short
wcase "truncated: RUN_REPORT shorter than its struct -> HM_REP_ERROR" report-short
wcase "truncated: RUN_END shorter than its struct -> HM_REP_ERROR" end-short
wcase "malformed: RUN_CREATE n_allow 2^32-1 without entries -> HM_REP_ERROR" create-nallow-huge
wcase "malformed: RUN_CREATE n_allow overflowing 32-bit size -> HM_REP_ERROR" create-nallow-overflow
wcase "malformed: RUN_CREATE n_allow not matching the entries -> HM_REP_ERROR" create-nallow-mismatch
wcase "malformed: RUN_CREATE with 65 allow entries -> HM_REP_ERROR" create-too-many-allows
wcase "malformed: RUN_CREATE unknown flags -> HM_REP_ERROR" create-bad-flags
wcase "malformed: RUN_CREATE 64-byte label without NUL: status JSON stays sane" create-label-unterminated
wcase "requests for a run that does not exist: RUN_KILL -> HM_REP_ERROR" kill-unknown
wcase "requests for a run that does not exist: RUN_REPORT -> HM_REP_ERROR" report-unknown
wcase "requests for a run that does not exist: RUN_END -> HM_REP_ERROR" end-unknown
wcase "requests for a run that does not exist: RUN_ADOPT -> HM_REP_ERROR" adopt-unknown
wcase "RUN_ADOPT from the run's creator itself (not its child) -> EPERM" adopt-no-pidfd
wcase "RUN_ADOPT with a descriptor attached: the fd is dropped, EPERM" adopt-not-a-pidfd
wcase "RUN_ADOPT with a pidfd of pid 1 attached: refused, pid 1 not moved" adopt-foreign-process
wcase "oversized: 70000-byte packet -> HM_REP_ERROR, daemon up" oversized 70000
wcase "oversized: 65537-byte packet -> HM_REP_ERROR, daemon up" oversized 65537
wcase "oversized: 1 MiB packet -> HM_REP_ERROR, daemon up" oversized 1048576
wcase "garbage: 300 random packets each answered, then HELLO works on the same connection" garbage 7

# --- vanishing clients ------------------------------------------------------------------
runs_json() { timeout 5 "$HERMETIC" status --json 2>/dev/null | "$PY" -c 'import json,sys; print(len(json.load(sys.stdin)["runs"]))' 2>/dev/null; }
# (the daemon's run pool, made ahead, is no run's: daemon/pool.c)
leftover_runs() { run_cgroups "$SUBTREE" | wc -l; }
wcase "disconnect right after RUN_CREATE: daemon up" disconnect-after-create
ok=no
for _ in $(seq 40); do
	[ "$(runs_json)" = 0 ] && [ "$(leftover_runs)" = 0 ] && { ok=yes; break; }
	sleep 0.05
done
[ $ok = yes ] && pass "disconnect right after RUN_CREATE: the run and its cgroup are removed" ||
	fail "disconnect right after RUN_CREATE: the run and its cgroup are removed" "runs=$(runs_json) cgroups=$(leftover_runs)"
wcase "client vanishes with a process in its run: the process is killed" disconnect-with-process "$CG2"
ok=no
for _ in $(seq 40); do
	[ "$(runs_json)" = 0 ] && [ "$(leftover_runs)" = 0 ] && { ok=yes; break; }
	sleep 0.05
done
[ $ok = yes ] && pass "client vanishes with a process in its run: run and cgroup removed" ||
	fail "client vanishes with a process in its run: run and cgroup removed" "runs=$(runs_json) cgroups=$(leftover_runs)"

# A hermetic CLI killed with SIGKILL mid-run: the daemon ends its run.
mkfifo "$T/block1"
# cat blocks opening a FIFO nobody writes: a real wait (the shim makes sleeps
# return at once).
"$HERMETIC" enroll -- cat "$T/block1" >/dev/null 2>&1 &
hpid=$!
kid=""
for _ in $(seq 100); do
	kid=$(cat /proc/$hpid/task/*/children 2>/dev/null | tr -s ' ' '\n' | head -n1)
	[ -n "$kid" ] && [ "$(cat /proc/$kid/comm 2>/dev/null)" = cat ] && break
	kid=""
	sleep 0.05
done
kill -KILL $hpid
wait $hpid 2>/dev/null
ok=no
for _ in $(seq 100); do
	[ -n "$kid" ] && [ ! -e /proc/$kid ] && [ "$(runs_json)" = 0 ] && { ok=yes; break; }
	sleep 0.05
done
if [ $ok = yes ] && alive; then
	pass "hermetic CLI killed by SIGKILL mid-run: its command is killed, the run removed"
else
	fail "hermetic CLI killed by SIGKILL mid-run: its command is killed, the run removed" \
		"cmd pid=[$kid] alive=$([ -n "$kid" ] && [ -e /proc/$kid ] && echo yes || echo no) runs=$(runs_json)"
	[ -n "$kid" ] && kill -KILL "$kid" 2>/dev/null
fi

# --- descriptor flood, many connections, idle and non-reading clients ---------------------
wcase "fd flood: 100 messages x 253 fds via SCM_RIGHTS, each answered" fd-flood 100
sleep 0.3
now_fds=$(nfds)
if ((now_fds <= BASE_FDS + 1)); then pass "fd flood: the daemon keeps none of the descriptors ($now_fds fds, baseline $BASE_FDS)"; else fail "fd flood: the daemon keeps none of the descriptors" "$now_fds fds open, baseline $BASE_FDS"; fi

# The idle and non-reading clients stay far longer than the other clients'
# deadlines, so a daemon blocked on them fails them however loaded the machine.
"$PY" "$WIRE" "$HERMETIC_SOCKET" idle 60 >"$T/idle.out" 2>&1 &
idle_pid=$!
at_exit "kill $idle_pid"
sleep 0.5
t0=$(now_ms)
if timeout 20 "$HERMETIC" status >/dev/null 2>&1 && timeout 30 "$HERMETIC" enroll -- true >/dev/null 2>&1; then
	pass "an idle client does not block others (status and enroll answered in $(($(now_ms) - t0)) ms)"
else
	fail "an idle client does not block others" "$(why_dead)"
fi
kill $idle_pid 2>/dev/null

"$PY" "$WIRE" "$HERMETIC_SOCKET" no-read 60 >"$T/noread.out" 2>&1 &
nr_pid=$!
at_exit "kill $nr_pid"
sleep 1.5
if timeout 20 "$HERMETIC" status >/dev/null 2>&1 && timeout 30 "$HERMETIC" enroll -- true >/dev/null 2>&1; then
	pass "a client that never reads its replies does not block others ($(cat "$T/noread.out"))"
else
	fail "a client that never reads its replies does not block others" "$(why_dead); $(cat "$T/noread.out")"
fi
kill $nr_pid 2>/dev/null
wait $nr_pid 2>/dev/null

"$PY" "$WIRE" "$HERMETIC_SOCKET" many-conns 200 60 >"$T/many.out" 2>&1 &
many_pid=$!
at_exit "kill $many_pid"
for _ in $(seq 100); do [ -s "$T/many.out" ] && break; sleep 0.05; done
if [[ $(cat "$T/many.out") == "ok 200 connections open, 100 of 100 HELLOs answered"* ]] &&
	timeout 20 "$HERMETIC" status >/dev/null 2>&1 && timeout 30 "$HERMETIC" enroll -- true >/dev/null 2>&1; then
	pass "200 open connections: all answered, status and enroll still answer"
else
	fail "200 open connections: all answered, status and enroll still answer" "$(cat "$T/many.out"); $(why_dead)"
fi
kill $many_pid 2>/dev/null
wait $many_pid 2>/dev/null

"$PY" "$WIRE" "$HERMETIC_SOCKET" many-conns 400 1 >"$T/many.out" 2>&1 &
many_pid=$!
at_exit "kill $many_pid"
for _ in $(seq 100); do [ -s "$T/many.out" ] && break; sleep 0.05; done
during=$(timeout 3 "$HERMETIC" status >/dev/null 2>&1 && echo answered || echo "not answered")
wait $many_pid 2>/dev/null
sleep 0.5
if alive && timeout 30 "$HERMETIC" enroll -- true >/dev/null 2>&1; then
	pass "400 connections at once (over the limit): daemon survives, answers afterwards ($(cat "$T/many.out"); status during: $during)"
else
	fail "400 connections at once (over the limit): daemon survives, answers afterwards" "$(why_dead); $(cat "$T/many.out")"
fi
sleep 0.3
now_fds=$(nfds)
if ((now_fds <= BASE_FDS + 1)); then pass "after all connections closed, the daemon's fd count is back to baseline ($now_fds, baseline $BASE_FDS)"; else fail "after all connections closed, the daemon's fd count is back to baseline" "$now_fds fds open, baseline $BASE_FDS"; fi

# 50 enrolls in parallel while garbage flows on another connection.
"$PY" "$WIRE" "$HERMETIC_SOCKET" garbage 11 >/dev/null 2>&1 &
g_pid=$!
at_exit "kill $g_pid"
pids=()
for i in $(seq 50); do
	timeout 30 "$HERMETIC" enroll -- sh -c "exit $((i % 7))" >/dev/null 2>&1 &
	pids+=($!)
done
bad=0
for i in $(seq 50); do
	wait "${pids[i - 1]}"
	[ $? = $((i % 7)) ] || bad=$((bad + 1))
done
wait $g_pid 2>/dev/null
if [ $bad = 0 ] && alive; then pass "50 parallel enrolls amid garbage: each gets its own exit status"; else fail "50 parallel enrolls amid garbage: each gets its own exit status" "$bad wrong; $(why_dead)"; fi

# --- after all of it, the daemon still enforces policy ------------------------------------
out=$(timeout 10 "$HERMETIC" enroll -- "$PY" "$T/probe.py" tcp 127.0.0.1 "$LP" 2>/dev/null)
out2=$(timeout 10 "$HERMETIC" enroll --no-loopback -- "$PY" "$T/probe.py" tcp 127.0.0.1 "$LP" 2>/dev/null)
if [[ $out == "OK hermetic-lo-ok "* ]] && [[ $out2 == "ERR ENETUNREACH "* ]]; then
	pass "after the abuse, enroll still works and still enforces its policy"
else
	fail "after the abuse, enroll still works and still enforces its policy" "default:[$out] --no-loopback:[$out2]"
fi
sleep 0.3
if [ "$(runs_json)" = 0 ] && [ "$(leftover_runs)" = 0 ]; then pass "no run and no run cgroup left behind"; else fail "no run and no run cgroup left behind" "runs=$(runs_json) cgroups: $(run_cgroups "$SUBTREE" | tr '\n' ' ')"; fi

# --- a second daemon on the same socket refuses; the first keeps working -----------------
timeout 10 "$HERMETICD" --socket "$HERMETIC_SOCKET" --subtree "hmtest-$$-second" --runtime-dir "$T/second-run" >"$T/second.log" 2>&1
rc=$?
if [ $rc != 0 ] && [ $rc != 124 ] && alive && [ -d "$SUBTREE" ] && [ ! -d "$CG2/hmtest-$$-second" ]; then
	pass "a second daemon on the same socket refuses to start (exit $rc) and the first keeps working"
else
	fail "a second daemon on the same socket refuses to start and the first keeps working" "rc=$rc $(tail -n 2 "$T/second.log" | tr '\n' '|'); $(why_dead)"
	rmdir "$CG2/hmtest-$$-second" 2>/dev/null
fi

# --- SIGTERM: exit 0, subtree and socket removed -----------------------------------------
stop_daemon() { # stop_daemon SIG: sends SIG, waits up to 5 s; sets STOP_RC
	local i
	kill -"$1" "$HMD_PID"
	for i in $(seq 100); do kill -0 "$HMD_PID" 2>/dev/null || break; sleep 0.05; done
	if kill -0 "$HMD_PID" 2>/dev/null; then
		STOP_RC=timeout
		kill -KILL "$HMD_PID"
		wait "$HMD_PID" 2>/dev/null
	else
		wait "$HMD_PID"
		STOP_RC=$?
	fi
}
stop_daemon TERM
if [ "$STOP_RC" = 0 ] && [ ! -e "$SUBTREE" ] && [ ! -e "$HERMETIC_SOCKET" ]; then
	pass "SIGTERM: daemon exits 0, removes its subtree cgroup and its socket"
else
	fail "SIGTERM: daemon exits 0, removes its subtree cgroup and its socket" \
		"rc=$STOP_RC subtree $([ -e "$SUBTREE" ] && echo left || echo removed) socket $([ -e "$HERMETIC_SOCKET" ] && echo left || echo removed); $(tail -n 2 "$T/daemon.log" | tr '\n' '|')"
fi

# enroll against a stopped daemon refuses with 69.
timeout 5 "$HERMETIC" enroll -- true >/dev/null 2>"$T/err69"
rc=$?
[ $rc = 69 ] && pass "enroll after the daemon stopped: exit 69" || fail "enroll after the daemon stopped: exit 69" "rc=$rc $(tr '\n' '|' <"$T/err69")"

# --- SIGTERM with a run active: the run goes on (enforced, pinned) for the next daemon ----------
start_daemon || { fail "daemon restarts" "$(tail -n 5 "$T/daemon.log" | tr '\n' '|')"; exit 1; }
SUBTREE=$(subtree_dir)
mkfifo "$T/block2"
"$HERMETIC" enroll -- cat "$T/block2" >"$T/active.out" 2>"$T/active.err" &
hpid=$!
at_exit "kill $hpid"
kid=""
for _ in $(seq 100); do
	kid=$(cat /proc/$hpid/task/*/children 2>/dev/null | tr -s ' ' '\n' | head -n1)
	[ -n "$kid" ] && [ "$(cat /proc/$kid/comm 2>/dev/null)" = cat ] && break
	kid=""
	sleep 0.05
done
stop_daemon TERM
sleep 0.5
cli_state=$(kill -0 $hpid 2>/dev/null && echo running || { wait $hpid; echo "exited $?"; })
if [ "$STOP_RC" = 0 ] && [ -n "$kid" ] && [ -e "/proc/$kid" ] && [ -e "$SUBTREE" ] && [ ! -e "$HERMETIC_SOCKET" ] &&
	[ "$cli_state" = running ]; then
	pass "SIGTERM with a run active: exits 0, removes its socket, leaves the run running (its cgroup stays, enroll waits)"
else
	fail "SIGTERM with a run active: exits 0, leaves the run running" \
		"rc=$STOP_RC cmd=[$kid] $([ -n "$kid" ] && [ -e "/proc/$kid" ] && echo alive || echo gone) subtree $([ -e "$SUBTREE" ] && echo left || echo removed) socket $([ -e "$HERMETIC_SOCKET" ] && echo left || echo removed); CLI $cli_state: $(tr '\n' '|' <"$T/active.err")"
fi
# The next daemon of the subtree adopts it; the command ends normally.
start_daemon_again || fail "the daemon starts again on the same subtree" "$(tail -n 5 "$T/daemon.log" | tr '\n' '|')"
echo done >"$T/block2" &
for _ in $(seq 200); do kill -0 $hpid 2>/dev/null || break; sleep 0.05; done
cli_state=$(kill -0 $hpid 2>/dev/null && echo running || { wait $hpid; echo "exited $?"; })
if [ "$cli_state" = "exited 0" ] && grep -q "reconnected to hermeticd" "$T/active.err" && [ "$(cat "$T/active.out")" = done ]; then
	pass "the next daemon adopts the run; enroll reconnects and the command ends normally (exit 0)"
else
	fail "the next daemon adopts the run and the command ends normally" "CLI $cli_state: $(tr '\n' '|' <"$T/active.err")"
	[ -n "$kid" ] && kill -KILL "$kid" 2>/dev/null
fi
stop_daemon TERM

# --- a daemon killed with SIGKILL: a new one starts on the same socket and subtree ----------
name=hmtest-$$-crash
# Whatever happens, nothing of this daemon's subtree survives the test.
kill_subtree() {
	local d
	for d in $(find "$1" -mindepth 1 -depth -type d 2>/dev/null) "$1"; do
		[ -e "$d/cgroup.kill" ] && echo 1 >"$d/cgroup.kill"
	done
	sleep 0.2
	find "$1" -mindepth 1 -depth -type d -exec rmdir {} \; 2>/dev/null
	rmdir "$1"
}
at_exit "kill_subtree $CG2/$name"
at_exit "mountpoint -q '$T/crashrun/bpf' && umount -l '$T/crashrun/bpf'"
"$HERMETICD" --socket "$T/crash.sock" --subtree "$name" --runtime-dir "$T/crashrun" --store "$T/crashstore" >"$T/crash1.log" 2>&1 &
c1=$!
at_exit "kill $c1"
for _ in $(seq 200); do HERMETIC_SOCKET=$T/crash.sock timeout 2 "$HERMETIC" status >/dev/null 2>&1 && break; sleep 0.05; done
# The run's command keeps trying a loopback port its policy refuses.
cat >"$T/orphan.py" <<'EOF2'
import errno, signal, socket, sys
signal.signal(signal.SIGALRM, lambda *a: None)
signal.setitimer(signal.ITIMER_REAL, 0.1, 0.1)  # real time, unlike sleep()
while True:
    try:
        socket.create_connection(("127.0.0.1", int(sys.argv[1]))).close()
        r = "OK"
    except OSError as e:
        r = errno.errorcode.get(e.errno, str(e.errno))
    with open(sys.argv[2], "a") as f:
        f.write(r + "\n")
    signal.pause()
EOF2
HERMETIC_SOCKET=$T/crash.sock "$HERMETIC" enroll --no-loopback -- "$PY" "$T/orphan.py" "$LP" "$T/orphan.log" >/dev/null 2>&1 &
cpid=$!
for _ in $(seq 100); do [ -s "$T/orphan.log" ] && break; sleep 0.05; done
{
	kill -KILL $c1
	wait $c1
	kill -KILL $cpid
	wait $cpid
} 2>/dev/null
"$HERMETICD" --socket "$T/crash.sock" --subtree "$name" --runtime-dir "$T/crashrun" --store "$T/crashstore" >"$T/crash2.log" 2>&1 &
HMD_PID=$!
at_exit "kill $HMD_PID"
up=no
for _ in $(seq 200); do
	HERMETIC_SOCKET=$T/crash.sock timeout 2 "$HERMETIC" status >/dev/null 2>&1 && { up=yes; break; }
	kill -0 $HMD_PID 2>/dev/null || break
	sleep 0.05
done
out=$(HERMETIC_SOCKET=$T/crash.sock timeout 10 "$HERMETIC" enroll --no-loopback -- "$PY" "$T/probe.py" tcp 127.0.0.1 "$LP" 2>/dev/null)
if [ $up = yes ] && [[ $out == "ERR ENETUNREACH "* ]]; then
	pass "after a SIGKILLed daemon, a new one starts on the same socket and subtree and enforces policy"
else
	fail "after a SIGKILLed daemon, a new one starts on the same socket and subtree and enforces policy" \
		"up=$up probe=[$out] log: $(tail -n 3 "$T/crash2.log" | tr '\n' '|')"
fi
sleep 1
tail -n 1 "$T/orphan.log" >"$T/orphan.last"
orphan_pids=$(cat "$CG2/$name"/run-*/cgroup.procs 2>/dev/null | tr '\n' ' ')
if [ -z "$orphan_pids" ] || [ "$(cat "$T/orphan.last")" = ENETUNREACH ]; then
	pass "a crashed daemon's orphaned run is killed or refused again once a new daemon runs ($([ -z "$orphan_pids" ] && echo killed || echo refused))"
else
	fail "a crashed daemon's orphaned run is killed or refused again once a new daemon runs" \
		"orphan pids [$orphan_pids] still alive; their latest connect: $(cat "$T/orphan.last") (results: $(sort "$T/orphan.log" | uniq -c | tr '\n' ' '))"
fi
HERMETIC_SOCKET=$T/crash.sock
SUBTREE=$(subtree_dir)
[ -n "$SUBTREE" ] || SUBTREE=$CG2/$name
stop_daemon TERM
# A crashed daemon's leftover run cgroups (with a dead process) must not
# survive the next daemon's shutdown either.
if [ "$STOP_RC" = 0 ] && [ ! -e "$SUBTREE" ] && [ ! -e "$T/crash.sock" ]; then
	pass "the restarted daemon's SIGTERM removes the subtree, leftovers of the crash included"
else
	fail "the restarted daemon's SIGTERM removes the subtree, leftovers of the crash included" \
		"rc=$STOP_RC subtree: $(find "$SUBTREE" -maxdepth 1 -type d 2>/dev/null | tr '\n' ' ')"
fi
