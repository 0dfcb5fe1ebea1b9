#!/usr/bin/env bash
# A timer armed while the timer helper is between reading its table and
# waiting is not lost (preload/timers.c read the kick counter after the
# table, so that arming slept through for good: CPython's test_signal
# StressTest lost 9974 of 10000 alarms; found by the compatibility matrix,
# docs/compatibility.md). 2000 alarms each re-armed from a signal handler
# must all arrive, in three runs.
source "$(dirname "$0")/../lib.sh"
need_root timer_rearm || exit 0
start_daemon || { fail timer_rearm "daemon did not start"; exit 0; }
P=$(cd "$(dirname "$0")/vtime" && pwd)
for i in 1 2 3; do
	out=$(timeout 300 "$HERMETIC" enroll --seed "$i" -- python3 "$P/rearm.py" 2000 1 2>&1 |
		grep -v '^hermetic: lag bound: ')
	if [ "$out" = "alarms 2000 of 2000" ]; then
		pass "run $i: 2000 alarms re-armed from handlers all arrive"
	else
		fail "run $i: 2000 alarms re-armed from handlers all arrive" "$(tr '\n' '|' <<<"$out")"
	fi
done
