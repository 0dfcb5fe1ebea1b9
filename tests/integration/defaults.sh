# What enroll costs and starts from when the user passes nothing: the CPU
# time enroll itself uses while its command runs, and the default --now.
source "$(dirname "$0")/../lib.sh"
need_root defaults || exit 0
start_daemon || { fail "defaults: daemon" "did not start"; exit 0; }

# cpu_ms CMD...: user+system CPU time, in ms, of CMD and everything it
# reaped (enroll reaps its whole run), from getrusage(RUSAGE_CHILDREN).
cpu_ms() {
	local t
	t=$({ TIMEFORMAT='%3U %3S'; time "$@" >/dev/null 2>&1; } 2>&1)
	awk -v t="$t" 'BEGIN { split(t, a, " "); printf "%d\n", (a[1] + a[2]) * 1000 }'
}

# Enroll waits for its command on the cgroup's events and signals; it must
# not spin. The bound is ten times the 20 ms target, so load cannot flake it.
ms=$(cpu_ms "$HERMETIC" enroll --clock off -- sleep 2)
if [ "$ms" -lt 200 ]; then
	pass "enroll waits without burning CPU (${ms} ms for a 2 s command)"
else
	fail "enroll waits without burning CPU" "${ms} ms of CPU for 'sleep 2'"
fi
# The same once the command has exited, while a straggler runs out its grace.
ms=$(cpu_ms "$HERMETIC" enroll --clock off --grace 2s -- sh -c 'sleep 1.5 & exit 0')
if [ "$ms" -lt 200 ]; then
	pass "enroll waits out a straggler without burning CPU (${ms} ms)"
else
	fail "enroll waits out a straggler without burning CPU" "${ms} ms of CPU"
fi
