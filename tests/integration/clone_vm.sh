#!/usr/bin/env bash
# timeout: 600
# enroll's child shares enroll's memory until its exec (CLONE_VM on a stack
# of its own: engine/clone_vm.c, launch.c). What that must not break:
#  - the child allocates nothing and uses no stdio between the clone and its
#    ready mark: HERMETIC_TEST_HEAP_RO=1 makes enroll's heap read-only over
#    that stretch, so a malloc (or fopen) there kills the child (SIGSEGV)
#    and the run fails; a root run (namespaces, capabilities, Landlock,
#    seccomp, the supervisor's filter) and a user's (the daemon's adoption,
#    no_new_privs) must still succeed;
#  - 50 enrolls at once each run their own command and exit with its status;
#  - the child's stack (a guard page, then 512 KiB and more) is mapped while
#    the child sets up, and unmapped once it is past its exec, and after a
#    set-up cancelled at any phase from the clone to the exec (200 of them):
#    read from /proc/PID/maps of enroll stopped there
#    (HERMETIC_TEST_PAUSE_AT=PHASE,launch).
# A sanitized build forks its child (no CLONE_VM under ASan/TSan): there the
# stack is never mapped, the heap check does not apply, and the cases say so.
source "$(dirname "$0")/../lib.sh"

need_root "clone_vm" || exit 0
need_build "clone_vm" || exit 1
test_user U || { fail "clone_vm: a test user" "useradd failed"; exit 1; }
start_daemon || { fail "daemon starts" "$(tail -n 5 "$T/daemon.log" | tr '\n' '|')"; exit 1; }
cd "$T" || exit 1
VM=1
[ -n "${HERMETIC_SANITIZE:-}" ] && VM=0

# stacks PID: how many child stacks enroll PID has mapped: an anonymous
# one-page ---p mapping right below an anonymous rw-p one of 512 KiB to
# 1 MiB (named hermetic-child-stack where the kernel names mappings).
stacks() {
	local range perm name s e gs=-1 n=0 anon
	[ -r "/proc/$1/maps" ] || return
	while read -r range perm _ _ _ name; do
		s=$((16#${range%-*})) e=$((16#${range#*-})) anon=0
		[ -z "$name" ] || [ "$name" = "[anon:hermetic-child-stack]" ] && anon=1
		((anon && gs == s && e - s >= 524288 && e - s <= 1048576)) && [ "$perm" = rw-p ] && n=$((n + 1))
		gs=-1
		((anon && e - s == 4096)) && [ "$perm" = ---p ] && gs=$e
	done <"/proc/$1/maps"
	echo $n
}
state() {
	local _ st=""
	read -r _ _ st _ 2>/dev/null <"/proc/$1/stat"
	echo "$st"
}
# stopped PID: wait (at most 5 s) until PID is stopped; 1 when it ended.
stopped() {
	local i
	for i in $(seq 500); do
		[ "$(state "$1")" = T ] && return 0
		[ -e "/proc/$1" ] && [ "$(state "$1")" != Z ] || return 1
		sleep 0.01
	done
	return 1
}

# -- no allocation between the clone and the ready mark --
heap_case() { # heap_case NAME [PREFIX...]: enroll ${OPTS[@]} run after PREFIX (setpriv ...)
	local name=$1 out rc
	shift
	out=$("$@" env HERMETIC_TEST_HEAP_RO=1 "$HERMETIC" enroll "${OPTS[@]}" -- sh -c 'echo child-ran; exit 7' 2>&1)
	rc=$?
	if [ "$VM" = 0 ]; then
		case "$out" in *"test: the heap is read-only"*) fail "$name" "a sanitized build made the heap read-only" ;;
		*) pass "$name: not applicable, this build forks its child (SANITIZE=$HERMETIC_SANITIZE)" ;; esac
	elif [ "$rc" = 7 ] && [[ $out == *child-ran* ]] && [[ $out == *"test: the heap is read-only from the clone to the child's ready mark"* ]]; then
		pass "$name"
	else
		fail "$name" "exit $rc: $(printf '%s' "$out" | tr '\n' '|' | tail -c 600)"
	fi
}
OPTS=()
heap_case "root's run sets up without touching enroll's heap (namespaces, caps, Landlock, seccomp, supervisor)"
heap_case "a user's run sets up without touching enroll's heap (the daemon's adoption, no_new_privs)" \
	setpriv --reuid="$U" --regid="$HM_GROUP" --init-groups env HOME=/nonexistent USER="$U"
OPTS=(--network off --aslr on --confine off)
heap_case "a run with --network off --aslr on --confine off sets up without touching enroll's heap"

# -- 50 at once --
N=50 pids=()
for i in $(seq $N); do
	("$HERMETIC" enroll -- sh -c "echo run-$i; exit $((i % 7))" >"$T/c$i.out" 2>"$T/c$i.err"; echo $? >"$T/c$i.rc") &
	pids+=($!)
done
wait "${pids[@]}" # (not the daemon)
bad=""
for i in $(seq $N); do
	[ "$(cat "$T/c$i.rc" 2>/dev/null)" = $((i % 7)) ] && [ "$(cat "$T/c$i.out")" = "run-$i" ] ||
		bad+="$i(rc=$(cat "$T/c$i.rc" 2>/dev/null) out=$(head -c 40 "$T/c$i.out") err=$(tail -c 200 "$T/c$i.err" | tr '\n' '|')) "
done
if [ -z "$bad" ]; then pass "$N enrolls at once: each ran its own command and exited with its status"
else fail "$N enrolls at once" "$bad"; fi

# -- the stack: mapped while the child sets up, gone past its exec --
"$HERMETIC" enroll -- true 2>/dev/null # (warm)
env HERMETIC_TEST_PAUSE_AT=fork,launch "$HERMETIC" enroll -- sh -c 'exit 3' >/dev/null 2>"$T/err" &
EPID=$!
at_fork="" at_launch=""
if stopped $EPID; then
	at_fork=$(stacks $EPID)
	kill -CONT $EPID
	if stopped $EPID; then
		at_launch=$(stacks $EPID)
		kill -CONT $EPID
	fi
fi
wait $EPID
rc=$?
if [ "$rc" = 3 ] && [ "$at_fork" = "$VM" ] && [ "$at_launch" = 0 ]; then
	pass "the child's stack is mapped at the clone ($at_fork) and unmapped once the command runs (exit 3)"
else
	fail "the child's stack, mapped at the clone and unmapped past the exec" \
		"exit $rc, stacks at fork [$at_fork] (want $VM), at launch [$at_launch] (want 0); err=$(tail -c 300 "$T/err" | tr '\n' '|')"
fi

# -- 200 set-ups cancelled between the clone and the exec --
PH=(fork child-confined to-exec exec-answered)
SIGS=(TERM:15 INT:2 HUP:1)
bad="" seen=0 n=200
for i in $(seq $n); do
	ph=${PH[i % ${#PH[@]}]} sg=${SIGS[i % ${#SIGS[@]}]}
	env --default-signal=INT,QUIT HERMETIC_TEST_PAUSE_AT="$ph,launch" "$HERMETIC" enroll -- true \
		>/dev/null 2>"$T/err" &
	EPID=$!
	a="" b=""
	if stopped $EPID; then
		a=$(stacks $EPID)
		kill -"${sg%:*}" $EPID
		kill -CONT $EPID
		if stopped $EPID; then
			b=$(stacks $EPID)
			kill -CONT $EPID
		fi
	fi
	wait $EPID
	rc=$?
	[ "$a" = "$VM" ] && seen=$((seen + 1))
	# (at exec-answered the command may be past its exec already: its
	# stack is gone before the signal, and the signal is the command's
	# to die of, or not: exit 0 or 128+N)
	if [ "$b" != 0 ] || { [ "$rc" != $((128 + ${sg#*:})) ] && ! [ "$ph" = exec-answered ]; }; then
		bad+="#$i $ph SIG${sg%:*}: exit $rc, stacks [$a] then [$b]; "
		[ ${#bad} -gt 1500 ] && break
	fi
done
runs=$("$HERMETIC" status --json | jq -r '.runs | length')
if [ -z "$bad" ] && [ "$seen" -ge $((n / 2)) ] && [ "$runs" = 0 ]; then
	pass "$n set-ups cancelled from the clone to the exec: no child stack left mapped after any ($seen seen mapped before the signal), no run left"
else
	fail "$n cancelled set-ups leave no child stack" "$bad seen=$seen runs=$runs; err=$(tail -c 300 "$T/err" | tr '\n' '|')"
fi
