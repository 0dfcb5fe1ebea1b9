#!/usr/bin/env bash
# The scheduler programs' early exit (docs/performance.md) loses no task: a
# busy process of a run keeps the run's virtual clock from moving, and once
# root moves it out of the run's cgroup (to the cgroup2 root) it no longer
# counts: the run goes idle and its hour-long sleep ends at once, not by
# the lag bound. (A task leaving the subtree is uncounted by its entry,
# not by its cgroup, which the early exit looks at first.)
source "$(dirname "$0")/../lib.sh"

need_root "moved-out task uncounted" || exit 0
need_build "moved-out task uncounted" || exit 1
start_daemon || { fail "daemon starts" "$(tail -n 5 "$T/daemon.log" | tr '\n' '|')"; exit 1; }
cg2=$(sed -n 's/^[0-9]* [0-9]* [^ ]* [^ ]* \([^ ]*\) .* - cgroup2 .*/\1/p' /proc/self/mountinfo | head -n1)

busy_run
busy=$BUSY
if [ -z "$busy" ]; then
	fail "busy process holds the clock" "the run's busy process never started: $(tr '\n' ' ' <"$T/err")"
	exit 1
fi
sleep 2
if ! grep -q slept "$T/out" && kill -0 "$RUN" 2>/dev/null; then
	pass "busy process holds the clock"
else
	fail "busy process holds the clock" "the sleep ended while a process of the run was busy: $(tr '\n' ' ' <"$T/err")"
fi
# Root moves the busy process out of every run.
if ! echo "$busy" >"$cg2/cgroup.procs"; then
	fail "moved-out task uncounted" "cannot move $busy to $cg2"
	exit 1
fi
if timeout 60 tail --pid="$RUN" -f /dev/null && wait "$RUN" && grep -q slept "$T/out" &&
	! grep -q "lag bound" "$T/err"; then
	pass "moved-out task uncounted"
else
	fail "moved-out task uncounted" "out: $(cat "$T/out"); err: $(tr '\n' ' ' <"$T/err" | tail -c 300)"
fi
kill -9 "$busy" 2>/dev/null
