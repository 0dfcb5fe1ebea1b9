#!/usr/bin/env bash
# The run's one clock (docs/virtual-time.md), printed, never asserted:
#  1. an hour of sleeps (3600 x time.sleep(1) in Python) under enroll: real
#     time for an hour of virtual time (target: well under a second);
#  2. the keeper's cost per move of the clock: 10,000 asyncio.sleep(0.001)
#     (each one makes the run idle and is woken by hermeticd);
#  3. a CPU-bound Python program with 4 threads, bare vs enrolled (target:
#     enrolled within 10% of bare). Runs alternate; medians of 5;
#  4. what the scheduler programs (attached while a run has a clock) cost
#     processes that are not enrolled: a pipe ping-pong between two of them,
#     context switches per round trip 2, with and without a run alive.
source "$(dirname "$0")/../lib.sh"

if [ "$(id -u)" != 0 ]; then
	echo "vtime-bench: needs root (a private hermeticd)" >&2
	exit 1
fi
start_daemon || exit 1
PY=/usr/bin/python3
RUNS=${BENCH_VTIME_RUNS:-5}

wall_ms() {
	local t
	t=$({ TIMEFORMAT='%3R'; time "$@" >/dev/null 2>&1; } 2>&1)
	awk -v t="$t" 'BEGIN { printf "%d\n", t * 1000 }'
}
# CPU time (user + system) of CMD and what it reaped, in ms
cpu_ms() {
	local t
	t=$({ TIMEFORMAT='%3U %3S'; time "$@" >/dev/null 2>&1; } 2>&1)
	awk -v t="$t" 'BEGIN { split(t, a, " "); printf "%d\n", (a[1] + a[2]) * 1000 }'
}
median() { sort -n | awk '{ v[NR] = $1 } END { print NR ? v[int((NR + 1) / 2)] : 0 }'; }

cat >"$T/hour.py" <<'PY'
import time
for i in range(3600):
    time.sleep(1)
PY
cat >"$T/tiny.py" <<'PY'
import asyncio
async def main():
    for i in range(10000):
        await asyncio.sleep(0.001)
asyncio.run(main())
PY
cat >"$T/cpu4.py" <<'PY'
import threading
def work():
    n = 0
    for i in range(3 * 10**6):
        n += i * i
ts = [threading.Thread(target=work) for _ in range(4)]
for t in ts: t.start()
for t in ts: t.join()
PY

: >"$T/h" && : >"$T/a" && : >"$T/p0" && : >"$T/pb" && : >"$T/pe" && : >"$T/cb" && : >"$T/ce"
for ((i = 0; i < RUNS; i++)); do
	wall_ms "$HERMETIC" enroll --seed 1 -- "$PY" "$T/hour.py" >>"$T/h"
	wall_ms "$HERMETIC" enroll --seed 1 -- "$PY" "$T/tiny.py" >>"$T/a"
	wall_ms "$HERMETIC" enroll --seed 1 -- "$PY" -c pass >>"$T/p0"
	wall_ms "$PY" "$T/cpu4.py" >>"$T/pb"
	wall_ms "$HERMETIC" enroll --seed 1 -- "$PY" "$T/cpu4.py" >>"$T/pe"
	cpu_ms "$PY" "$T/cpu4.py" >>"$T/cb"
	cpu_ms "$HERMETIC" enroll --seed 1 -- "$PY" "$T/cpu4.py" >>"$T/ce"
done
cb=$(median <"$T/cb") ce=$(median <"$T/ce")
h=$(median <"$T/h") a=$(median <"$T/a") p0=$(median <"$T/p0") pb=$(median <"$T/pb") pe=$(median <"$T/pe")
printf '%-52s %8s ms\n' "an hour of sleeps (3600 x sleep(1)), enrolled" "$h"
printf '%-52s %8s us\n' "one move of the clock (10,000 asyncio sleeps)" \
	"$(awk -v a="$a" -v b="$p0" 'BEGIN { printf "%.1f", (a - b) * 1000 / 10000 }')"
printf '%-52s %8s ms %8s ms %6s\n' "4 CPU-bound Python threads, wall: bare, enrolled" "$pb" "$pe" \
	"$(awk -v a="$pb" -v b="$pe" 'BEGIN { printf "%.2fx", b / a }')"
printf '%-52s %8s ms %8s ms %6s\n' "4 CPU-bound Python threads, cpu: bare, enrolled" "$cb" "$ce" \
	"$(awk -v a="$cb" -v b="$ce" 'BEGIN { printf "%.2fx", b / a }')"

# 4. context switches of processes outside any run, with and without a run
cat >"$T/pingpong.c" <<'CEOF'
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	int n = atoi(argv[1]), a[2], b[2];
	char c = 0;
	struct timespec t0, t1;

	if (pipe(a) || pipe(b))
		return 1;
	if (fork() == 0) {
		for (int i = 0; i < n; i++)
			if (read(a[0], &c, 1) != 1 || write(b[1], &c, 1) != 1)
				_exit(1);
		_exit(0);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < n; i++)
		if (write(a[1], &c, 1) != 1 || read(b[0], &c, 1) != 1)
			return 1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("%.0f\n", ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / n);
	return 0;
}
CEOF
if cc -O2 -o "$T/pingpong" "$T/pingpong.c"; then
	: >"$T/ppoff" && : >"$T/ppon"
	mkfifo "$T/hold"
	for ((i = 0; i < RUNS; i++)); do
		"$T/pingpong" 100000 >>"$T/ppoff"
		"$HERMETIC" enroll --seed 1 -- sh -c "cat '$T/hold' >/dev/null" >/dev/null 2>&1 &
		run=$!
		sleep 0.3
		"$T/pingpong" 100000 >>"$T/ppon"
		echo >"$T/hold"
		wait "$run"
	done
	off=$(median <"$T/ppoff") on=$(median <"$T/ppon")
	printf '%-52s %8s ns %8s ns %6s\n' "pipe round trip outside any run: no run, a run alive" \
		"$off" "$on" "$(awk -v a="$off" -v b="$on" 'BEGIN { printf "%+.1f%%", (b / a - 1) * 100 }')"
	bench_summary "pipe round trip outside any run, a run alive" \
		"$(awk -v a="$off" -v b="$on" 'BEGIN { printf "%+.1f%% (%d ns)", (b / a - 1) * 100, b }')" \
		"0 (no run: $off ns)" "<= 1%"
fi
