#!/usr/bin/env bash
# A CI runner cancels a job with SIGTERM, SIGINT or SIGHUP whenever it
# likes. Each of them is sent to `hermetic enroll` at every phase of its
# set-up (the phases HERMETIC_DEBUG=phases names, engine/phases.c), before the
# daemon answered, while the command runs, and after it ended while a
# straggler has its grace; all of it once on a quiet machine and once
# beside two CPU hogs. Every case asks: enroll exits within 1 s of the
# signal, with status 128+N, and leaves nothing behind: the daemon holds no
# run, no run-* cgroup is left under its subtree, no clock page in its
# runtime directory, no process of the run. And a signal ignored by
# whoever started enroll (nohup) stays ignored; and the set-up's plan is
# made while the daemon makes the run (its 'plan' step ends unanswered).
#
# To reach a phase exactly, enroll is started with HERMETIC_TEST_PAUSE_AT=
# PHASE (it stops itself, SIGSTOP, as PHASE first ends); the test sends the
# signal and then SIGCONT, and times from there. "Before the daemon
# answered" stops the test's own daemon instead, until enroll waits for its
# answer; so does "before the daemon adopted the command", a user's run
# (no CLONE_INTO_CGROUP: the child asks the daemon to adopt it before its
# exec), where the set-up cannot finish until the daemon answers.
source "$(dirname "$0")/../lib.sh"

need_root "cancellation" || exit 0
need_build "cancellation" || exit 1
test_user U || { fail "cancellation: a test user" "useradd failed"; exit 1; }
start_daemon || { fail "daemon starts" "$(tail -n 5 "$T/daemon.log" | tr '\n' '|')"; exit 1; }
# A daemon this test stopped is never left stopped.
at_exit "kill -CONT $HMD_PID"
SUBTREE=$("$HERMETIC" status --json | jq -r .subtree)
CLOCKS=$T/run/clock
if [ ! -d "$SUBTREE" ] || [[ $SUBTREE != /sys/fs/cgroup/* ]]; then
	fail "cancellation" "the test daemon's subtree is not a cgroup: [$SUBTREE]"
	exit 1
fi
# cat blocks opening a FIFO nobody writes: a real wait, whatever the clock.
mkfifo "$T/fifo"

# The phases of set-up, as enroll names them, up to the command's launch.
HERMETIC_DEBUG=phases "$HERMETIC" enroll -- true 2>"$T/phases.err"
PHASES=($(sed -n 's/^hermetic: phases (ms): //p' "$T/phases.err" | tr ',' '\n' |
	awk '!seen[$1]++ { print $1 } $1 == "launch" { exit }'))
if [ "${#PHASES[@]}" -lt 5 ] || [ "${PHASES[-1]}" != launch ]; then
	fail "cancellation: HERMETIC_DEBUG=phases names the phases of set-up" \
		"phases [${PHASES[*]}]; err=$(tr '\n' '|' <"$T/phases.err")"
	exit 1
fi

# state PID: the process's state letter (T: stopped), empty when gone (no
# fork: the test's own latency is counted in each case's time).
state() {
	local _ st=""
	read -r _ _ st _ 2>/dev/null <"/proc/$1/stat"
	echo "$st"
}
# kids PID: the process's children.
kids() { cat /proc/"$1"/task/*/children 2>/dev/null; }

# left: what a run left behind, empty when nothing; waits up to 2 s for the
# daemon (it ends the run of a connection that closed unanswered).
left() {
	local i runs cg pages procs
	for i in $(seq 40); do
		# (the daemon's run pool, made ahead, is no run's: daemon/pool.c)
		cg=$(run_cgroups "$SUBTREE" | sed 's|.*/||' | tr '\n' ' ')
		pages=$(find "$CLOCKS" -mindepth 1 -maxdepth 1 ! -name "pool.$HMD_NAME" -printf '%f ' 2>/dev/null)
		runs=$("$HERMETIC" status --json 2>/dev/null | jq -r '.runs | length')
		procs=""
		for p in $RUN_PIDS; do [ -e "/proc/$p" ] && procs+="$p($(cat /proc/$p/comm 2>/dev/null)) "; done
		[ "$runs" = 0 ] && [ -z "$cg$pages$procs" ] && return 0
		sleep 0.05
	done
	echo "runs=[$runs] cgroups=[$cg] clock pages=[$pages] processes=[$procs]"
}

# await PID T0: wait up to 1 s for enroll PID (signalled at T0, ms) to end;
# sets MS (since T0) and GONE (1: it ended).
await() {
	local pid=$1 t0=$2 i
	GONE=0
	for i in $(seq 100); do
		if [ ! -e "/proc/$pid" ] || [ "$(state "$pid")" = Z ]; then
			GONE=1
			break
		fi
		sleep 0.01
	done
	MS=$(($(now_ms) - t0))
}

# verdict NAME PID WANT: after await, enroll PID must have ended within 1 s,
# with status WANT, and left nothing.
verdict() {
	local name=$1 pid=$2 want=$3 rc what
	if [ "$GONE" != 1 ]; then
		kill -KILL "$pid" $RUN_PIDS 2>/dev/null
		wait "$pid"
		fail "$name" "enroll still running ${MS} ms after the signal; err=$(tail -c 400 "$T/err" | tr '\n' '|')"
		return
	fi
	wait "$pid"
	rc=$?
	what=$(left)
	if [ "$rc" != "$want" ]; then
		fail "$name" "exit $rc, want $want; err=$(tail -c 400 "$T/err" | tr '\n' '|')"
	elif ((MS > 1000)); then
		fail "$name" "enroll ended ${MS} ms after the signal (more than 1 s); err=$(tail -c 400 "$T/err" | tr '\n' '|')"
	elif [ -n "$what" ]; then
		fail "$name" "left behind: $what"
	else
		pass "$name"
	fi
}

finish() {
	await "$2" "$4"
	verdict "$1" "$2" "$3"
}

# enroll_bg [ENV=VALUE...]: enroll -- cat FIFO in the background, its SIGINT
# not ignored (bash ignores it in a background job), its phases on stderr
# (where a slow case's time went); sets EPID.
export HERMETIC_DEBUG=phases
enroll_bg() {
	env --default-signal=INT,QUIT "$@" "$HERMETIC" enroll -- cat "$T/fifo" >"$T/out" 2>"$T/err" &
	EPID=$!
}
# The same as the test user (setpriv execs env, which execs hermetic).
enroll_bg_user() {
	setpriv --reuid="$U" --regid="$HM_GROUP" --init-groups env --default-signal=INT,QUIT \
		HOME=/nonexistent USER="$U" HERMETIC_DEBUG=phases "$@" "$HERMETIC" enroll -- cat "$T/fifo" >"$T/out" 2>"$T/err" &
	EPID=$!
}

# at_phase SIG NUM PHASE SUFFIX: SIG as PHASE ends.
at_phase() {
	local sig=$1 num=$2 phase=$3 name="SIG$1 as '$3' ends: exit $((128 + $2)) within 1 s, nothing left$4" i
	enroll_bg HERMETIC_TEST_PAUSE_AT="$phase"
	for i in $(seq 500); do [ "$(state $EPID)" = T ] && break; [ -e /proc/$EPID ] || break; sleep 0.01; done
	if [ "$(state $EPID)" != T ]; then
		kill -KILL $EPID $(kids $EPID) 2>/dev/null
		wait $EPID
		fail "$name" "enroll never stopped at '$phase'; err=$(tail -c 400 "$T/err" | tr '\n' '|')"
		return
	fi
	RUN_PIDS=$(kids $EPID)
	kill -"$sig" $EPID
	kill -CONT $EPID
	finish "$name" $EPID $((128 + num)) "$(now_ms)"
}

# unanswered SIG NUM SUFFIX: SIG while enroll waits for the daemon's answer
# to RUN_CREATE (the daemon stopped: SIGSTOP).
unanswered() {
	local sig=$1 num=$2 name="SIG$1 before the daemon answered: exit $((128 + $2)) within 1 s, nothing left$3"
	local i t0 sc=""
	kill -STOP "$HMD_PID"
	enroll_bg
	# blocked for the answer: in poll, ppoll, recvfrom or recvmsg (x86-64)
	for i in $(seq 300); do
		sc=$(cut -d' ' -f1 /proc/$EPID/syscall 2>/dev/null)
		[[ " 7 271 45 47 " == *" $sc "* ]] && [ "$(state $EPID)" = S ] && break
		sc=""
		sleep 0.01
	done
	RUN_PIDS=""
	t0=$(now_ms)
	kill -"$sig" $EPID
	await $EPID "$t0"
	kill -CONT "$HMD_PID"
	if [ -z "$sc" ]; then
		kill -KILL $EPID 2>/dev/null
		wait $EPID
		fail "$name" "enroll never waited for the daemon's answer"
		return
	fi
	verdict "$name" $EPID $((128 + num))
}

# unadopted SIG NUM SUFFIX: SIG while a user's command waits for the daemon
# to adopt it into the run (the daemon stopped once the run exists): the
# command cannot reach its exec until the daemon answers.
unadopted() {
	local sig=$1 num=$2 i t0 kid="" sc=""
	local name="SIG$1 before the daemon adopted a user's command: exit $((128 + $2)) within 1 s, nothing left$3"
	enroll_bg_user HERMETIC_TEST_PAUSE_AT=supervise-prep
	for i in $(seq 500); do [ "$(state $EPID)" = T ] && break; [ -e /proc/$EPID ] || break; sleep 0.01; done
	if [ "$(state $EPID)" != T ]; then
		kill -KILL $EPID 2>/dev/null
		wait $EPID
		fail "$name" "enroll never stopped at 'supervise-prep'; err=$(tail -c 400 "$T/err" | tr '\n' '|')"
		return
	fi
	kill -STOP "$HMD_PID"
	kill -CONT $EPID
	# the child blocked in recvmsg(2) (x86-64: 47) for the daemon's answer
	for i in $(seq 300); do
		kid=$(kids $EPID | tr -s ' ' '\n' | head -n1)
		sc=$([ -n "$kid" ] && cut -d' ' -f1 /proc/$kid/syscall 2>/dev/null)
		[ "$sc" = 47 ] && break
		sleep 0.01
	done
	RUN_PIDS=$kid
	t0=$(now_ms)
	kill -"$sig" $EPID
	await $EPID "$t0"
	kill -CONT "$HMD_PID"
	if [ "$sc" != 47 ]; then
		kill -KILL $EPID $kid 2>/dev/null
		wait $EPID
		fail "$name" "the command never waited for its adoption (child [$kid], syscall [$sc])"
		return
	fi
	verdict "$name" $EPID $((128 + num))
}

# running SIG NUM SUFFIX: SIG while the command runs (forwarded to it).
running() {
	local sig=$1 num=$2 name="SIG$1 while the command runs: exit $((128 + $2)) within 1 s, nothing left$3"
	local i kid=""
	enroll_bg
	for i in $(seq 500); do
		kid=$(kids $EPID | tr -s ' ' '\n' | head -n1)
		[ -n "$kid" ] && [ "$(cat /proc/$kid/comm 2>/dev/null)" = cat ] && break
		kid=""
		sleep 0.01
	done
	if [ -z "$kid" ]; then
		kill -KILL $EPID $(kids $EPID) 2>/dev/null
		wait $EPID
		fail "$name" "the command never started; err=$(tail -c 400 "$T/err" | tr '\n' '|')"
		return
	fi
	RUN_PIDS=$kid
	kill -"$sig" $EPID
	finish "$name" $EPID $((128 + num)) "$(now_ms)"
}

# stragglers SIG NUM SUFFIX: SIG after the command ended, while its
# straggler (cat FIFO, started in the background) has its --grace (30 s).
stragglers() {
	local sig=$1 num=$2 i k cmds
	local name="SIG$1 while a straggler has its grace: exit $((128 + $2)) within 1 s, nothing left$3"
	env --default-signal=INT,QUIT "$HERMETIC" enroll --grace 30s -- \
		sh -c 'cat "$1" & exit 0' sh "$T/fifo" >"$T/out" 2>"$T/err" &
	EPID=$!
	# the command (sh) gone, its cat reparented to enroll (a subreaper)
	for i in $(seq 500); do
		cmds=""
		for k in $(kids $EPID); do cmds+="$(cat /proc/$k/comm 2>/dev/null) "; done
		[ "$cmds" = "cat " ] && break
		sleep 0.01
	done
	if [ "$cmds" != "cat " ]; then
		kill -KILL $EPID $(kids $EPID) 2>/dev/null
		wait $EPID
		fail "$name" "no straggler alone after the command (children: [$cmds]); err=$(tail -c 400 "$T/err" | tr '\n' '|')"
		return
	fi
	RUN_PIDS=$(kids $EPID)
	kill -"$sig" $EPID
	finish "$name" $EPID $((128 + num)) "$(now_ms)"
}

cases() {
	local s n p
	for s in TERM:15 INT:2 HUP:1; do
		n=${s#*:} s=${s%:*}
		unanswered "$s" "$n" "$1"
		unadopted "$s" "$n" "$1"
		for p in "${PHASES[@]}"; do
			at_phase "$s" "$n" "$p" "$1"
		done
		running "$s" "$n" "$1"
		stragglers "$s" "$n" "$1"
	done
}

# ignored: SIGHUP that whoever started enroll ignored (nohup) during set-up
# neither cancels the run nor reaches the command.
ignored() {
	local name="SIGHUP ignored by enroll's parent (nohup) stays ignored: the run goes on" i kid=""
	env --default-signal=INT,QUIT --ignore-signal=HUP HERMETIC_TEST_PAUSE_AT=setup \
		"$HERMETIC" enroll -- cat "$T/fifo" >"$T/out" 2>"$T/err" &
	EPID=$!
	for i in $(seq 500); do [ "$(state $EPID)" = T ] && break; [ -e /proc/$EPID ] || break; sleep 0.01; done
	kill -HUP $EPID
	kill -CONT $EPID
	for i in $(seq 500); do
		kid=$(kids $EPID | tr -s ' ' '\n' | head -n1)
		[ -n "$kid" ] && [ "$(cat /proc/$kid/comm 2>/dev/null)" = cat ] && break
		kid=""
		sleep 0.01
	done
	kill -HUP $EPID
	sleep 0.3
	if [ -z "$kid" ] || [ ! -e /proc/$kid ]; then
		fail "$name" "the command did not start or did not outlive SIGHUP; err=$(tail -c 400 "$T/err" | tr '\n' '|')"
		kill -KILL $EPID 2>/dev/null
		wait $EPID
		return
	fi
	RUN_PIDS=$kid
	kill -TERM $EPID
	finish "$name" $EPID 143 "$(now_ms)"
}

# planned: what needs no run (HEAD's time, the launch's plan) is done while
# hermeticd makes the run: with the daemon stopped, enroll still ends its
# 'plan' step, before 'create'; the run goes on once the daemon does.
planned() {
	local name="set-up's plan is made while the daemon makes the run ('plan' ends unanswered, before 'create')"
	local i st rc
	kill -STOP "$HMD_PID"
	enroll_bg HERMETIC_TEST_PAUSE_AT=plan
	for i in $(seq 300); do [ "$(state $EPID)" = T ] && break; [ -e /proc/$EPID ] || break; sleep 0.01; done
	st=$(state $EPID)
	kill -CONT "$HMD_PID"
	kill -CONT $EPID
	timeout 10 sh -c 'echo x >"$1"' sh "$T/fifo"
	timeout 10 tail --pid=$EPID -f /dev/null
	kill -KILL $EPID 2>/dev/null
	wait $EPID
	rc=$?
	if [ "$st" != T ]; then
		fail "$name" "enroll never stopped at 'plan' while the daemon was stopped (state '$st'); err=$(tail -c 400 "$T/err" | tr '\n' '|')"
	elif [ "$rc" != 0 ] || ! grep -q '^hermetic: phases (ms): parse [0-9.]*, plan [0-9.]*, create ' "$T/err"; then
		fail "$name" "exit $rc; err=$(tail -c 400 "$T/err" | tr '\n' '|')"
	else
		pass "$name"
	fi
}

cases ""
ignored
planned
HOGS=""
for _ in 1 2; do
	sh -c 'while :; do :; done' &
	HOGS+=" $!"
done
at_exit "kill $HOGS"
cases " (2 CPU hogs)"
kill $HOGS
wait $HOGS 2>/dev/null # (never empty: a bare wait would wait for the daemon)

kill -0 "$HMD_PID" 2>/dev/null && pass "daemon still running after the cancellations" ||
	fail "daemon still running after the cancellations" "$(tail -n 5 "$T/daemon.log" | tr '\n' '|')"
