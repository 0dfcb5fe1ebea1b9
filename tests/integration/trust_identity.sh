#!/usr/bin/env bash
# Issue 10, "identity that cannot be borrowed": the two ways out of a run
# an unprivileged process had, reproduced as an unprivileged user the test
# creates, against a test host in a network namespace the test creates.
#   (a) pid reuse: a run's process connects, forks and exits, and its child
#       asks for a run with the network off; and forking until a process
#       gets a dead connector's pid, to pass the old "PPid == peer pid"
#       check of RUN_ADOPT.
#   (b) pidfd_getfd of enroll's own daemon connection (and ptrace of enroll).
# Each is shown to fail; controls show the attacks are real (a pid really is
# reused; pidfd_getfd works on a dumpable process).
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/nethost.sh"

need_root "identity" || exit 0
need_build "identity" || exit 1
nethost_up || { fail "test host in a network namespace" "nethost_up failed"; exit 1; }
test_user U || { fail "create a test user" "useradd failed"; exit 1; }
for a in steal_conn pid_reuse; do
	build_attack $a || { fail "build $a" "$(tail -n 3 "$T/$a.log" | tr '\n' '|')"; exit 1; }
done
start_daemon || { fail "daemon starts" "$(tail -n 5 "$T/daemon.log" | tr '\n' '|')"; exit 1; }
H=$NH_HOST P=$NH_TCP

# en_u ARGS...: hermetic enroll as U; output in $OUT (stdout+stderr).
en_u() { OUT=$(as_user "$U" timeout 120 "$HERMETIC" enroll --clock off --rng off "$@" 2>&1); }
ctx() { printf '%s' "$OUT" | tr '\n' '|' | tail -c 600; }

# --- control: the attacks themselves are real ------------------------------------------
as_user "$U" sleep 30 &
sp=$!
for _ in $(seq 100); do vp=$(pgrep -u "$U" -x sleep | head -n1); [ -n "$vp" ] && break; sleep 0.05; done
OUT=$(as_user "$U" "$T/steal_conn" "$H" "$P" "$vp" 2>&1)
kill -KILL "$vp" 2>/dev/null
wait $sp 2>/dev/null
if [[ $OUT == *"getfd: got "* ]]; then pass "control: pidfd_getfd takes descriptors of a dumpable process of the same user"; else fail "control: pidfd_getfd of a dumpable process" "$(ctx)"; fi

# --- (b) enroll's own connection ------------------------------------------------------------
en_u -- "$T/steal_conn" "$H" "$P"
if [[ $OUT == *"getfd: EPERM"* ]] && [[ $OUT == *"ptrace: EPERM"* ]] && [[ $OUT != *"got "* ]] &&
	[[ $OUT == *"connect: REFUSED"* ]] && [[ $OUT != *CONNECTED* ]]; then
	pass "a run's process cannot take enroll's descriptors (pidfd_getfd: EPERM) nor ptrace it: enroll is not dumpable"
else
	fail "a run's process takes enroll's daemon connection" "$(ctx)"
fi

# --- (a) the connector exits, its child asks -------------------------------------------------
en_u -- "$T/pid_reuse" inside "$H" "$P"
if [[ $OUT == *"create: ERR 1 cannot tell whether the caller is inside a hermetic run: the process that connected"*"is gone"* ]] &&
	[[ $OUT == *"create-live: ERR 1 the caller is already inside a hermetic run"* ]] &&
	[[ $OUT == *"connect: REFUSED"* ]] && [[ $OUT != *CONNECTED* ]] && [[ $OUT != *"OK run"* ]]; then
	pass "the child of a connector that exited asks for an open run: refused (the daemon cannot see the connector, so it fails closed)"
else
	fail "the child of a connector that exited asks for an open run" "$(ctx)"
fi

# --- (a) pid reuse against RUN_ADOPT's parent check ---------------------------------------------
mkdir "$T/ud" && chown "$U" "$T/ud"
as_user "$U" env HERMETIC_SOCKET="$HERMETIC_SOCKET" "$T/pid_reuse" helper "$T/ud/helper" >"$T/helper.out" 2>&1
if ! [ -s "$T/ud/helper" ]; then
	fail "an outside helper creates a run and exits" "$(tr '\n' '|' <"$T/helper.out")"
else
	read -r rid hpid <"$T/ud/helper"
	# (up to pid_max forks inside a run: 103 s on a loaded machine, past
	# en_u's 120 s under ASan and five-fold load: this one gets 600)
	OUT=$(as_user "$U" timeout 600 "$HERMETIC" enroll --clock off --rng off -- "$T/pid_reuse" reuse "$T/ud/helper" "$H" "$P" 2>&1)
	if [[ $OUT == *"reuse: got pid $hpid after "* ]]; then
		pass "pid reuse reproduced: a process of the run got the dead creator's pid ($hpid, $(sed -n 's/.*after \([0-9]*\) forks.*/\1/p' <<<"$OUT" | head -n1) forks)"
		if [[ $OUT == *"adopt: ERR 3 the process that created run $rid is gone"* ]] && [[ $OUT == *"connect: REFUSED"* ]] &&
			[[ $OUT != *CONNECTED* ]] && [[ $OUT != *"adopt: OK"* ]]; then
			pass "its child asks to be adopted into the open run: refused (the creator is known by its pidfd, not by its pid number)"
		else
			fail "its child asks to be adopted into the open run" "$(ctx)"
		fi
	else
		fail "pid reuse reproduced" "$(ctx)"
	fi
fi
pkill_user_procs "$U" # the helper's child, which held the run

# --- the same with the pre-6.5 identification (pidfd_open, checked against the connection) -----
start_daemon --no-peerpidfd || { fail "daemon starts with --no-peerpidfd" "$(tail -n 3 "$T/daemon.log" | tr '\n' '|')"; exit 1; }
en_u -- sh -c 'exit 7'
rc=$?
OUT2=$OUT
en_u -- "$T/pid_reuse" inside "$H" "$P"
if [[ $OUT2 != *"hermetic:"*"refused"* ]] && [[ $OUT == *"create: ERR 1 cannot tell"* ]] &&
	[[ $OUT == *"create-live: ERR 1 the caller is already inside"* ]] && [[ $OUT != *CONNECTED* ]]; then
	pass "--no-peerpidfd: an unprivileged enroll still works, and the same attack is refused"
else
	fail "--no-peerpidfd" "enroll: $(printf '%s' "$OUT2" | tr '\n' '|'); attack: $(ctx)"
fi
en_u -- "$T/steal_conn" "$H" "$P"
if [[ $OUT == *"getfd: EPERM"* ]] && [[ $OUT != *CONNECTED* ]]; then pass "--no-peerpidfd: enroll's connection cannot be taken"; else fail "--no-peerpidfd: enroll's connection" "$(ctx)"; fi
