#!/usr/bin/env bash
# The run's one clock (docs/virtual-time.md), printed, never asserted:
#  1. an hour of sleeps (3600 x time.sleep(1) in Python) under enroll: real
#     time for an hour of virtual time (target: well under a second);
#  2. the keeper's cost per move of the clock: 10,000 asyncio.sleep(0.001)
#     (each one makes the run idle and is woken by hermeticd);
#  3. a CPU-bound Python program with 4 threads, bare vs enrolled (target:
#     enrolled within 10% of bare). Runs alternate; medians of 5;
source "$(dirname "$0")/../lib.sh"

if [ "$(id -u)" != 0 ]; then
	echo "vtime-bench: needs root (a private hermeticd)" >&2
	exit 1
fi
start_daemon || exit 1
PY=/usr/bin/python3
RUNS=${BENCH_VTIME_RUNS:-5}

# CPU time (user + system) of CMD and what it reaped, in ms
cpu_ms() {
	local t
	t=$({ TIMEFORMAT='%3U %3S'; time "$@" >/dev/null 2>&1; } 2>&1)
	awk -v t="$t" 'BEGIN { split(t, a, " "); printf "%d\n", (a[1] + a[2]) * 1000 }'
}

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

# (what the scheduler programs cost processes outside any run: sched-bench.sh)

# The reductions of issue 29 (tests/integration/vtime), bare beside enrolled:
#  5. five threads making message ids until 1 s of monotonic() has passed
#     (CPython's test_make_msgid_collisions, shortened): wall and ids;
#  6. 500 select(..., 120) waits on a PTY master for a child's byte: wall,
#     and the waits over 1 s (bare: none);
#  7. Node's spawnSync with a 1 ms timeout on a starting child: whether it
#     fired (bare: always).
cat >"$T/msgid.py" <<'PY'
import threading, time, email.utils
ids = []
def run():
    end = time.monotonic() + 1.0
    n = 0
    while time.monotonic() < end:
        email.utils.make_msgid(domain="foo.bar"); n += 1
    ids.append(n)
ts = [threading.Thread(target=run) for _ in range(5)]
for t in ts: t.start()
for t in ts: t.join()
print(sum(ids))
PY
V=$TOP/tests/integration/vtime
: >"$T/mb" && : >"$T/me" && : >"$T/yb" && : >"$T/ye"
for ((i = 0; i < 3; i++)); do
	wall_ms "$PY" "$T/msgid.py" >>"$T/mb"
	wall_ms timeout 300 "$HERMETIC" enroll --seed 1 -- "$PY" "$T/msgid.py" >>"$T/me"
	wall_ms "$PY" "$V/ptywait.py" pty >>"$T/yb"
	wall_ms timeout 300 "$HERMETIC" enroll --seed 1 -- "$PY" "$V/ptywait.py" pty >>"$T/ye"
done
mb=$(median <"$T/mb") me=$(median <"$T/me") yb=$(median <"$T/yb") ye=$(median <"$T/ye")
ib=$("$PY" "$T/msgid.py") ie=$(timeout 300 "$HERMETIC" enroll --seed 1 -- "$PY" "$T/msgid.py" 2>/dev/null)
printf '%-52s %8s ms %8s ms %6s\n' "5 threads, ids for 1 s of monotonic(): bare, enrolled" "$mb" "$me" \
	"$(awk -v a="$mb" -v b="$me" 'BEGIN { printf "%.2fx", b / a }')"
printf '%-52s %8s    %8s\n' "  ids made: bare, enrolled" "$ib" "$ie"
bench_summary "5 threads until 1 s of monotonic(), enrolled / bare (wall, median)" \
	"$(awk -v a="$mb" -v b="$me" 'BEGIN { printf "%.2fx", b / a }')" "bare $mb ms" "<= 1.0x"
slow=$(timeout 300 "$HERMETIC" enroll --seed 1 -- "$PY" "$V/ptywait.py" pty 2>/dev/null | sed -n 's/.*over 1s \([0-9]*\)$/\1/p')
printf '%-52s %8s ms %8s ms %6s\n' "500 waits on a PTY master: bare, enrolled" "$yb" "$ye" \
	"$(awk -v a="$yb" -v b="$ye" 'BEGIN { printf "%.2fx", b / a }')"
printf '%-52s %8s\n' "  waits over 1 s enrolled (bare: 0)" "${slow:-?}"
spawn='const r = require("child_process").spawnSync(process.execPath, ["-e", "0"], { timeout: 1 });
console.log(r.error && r.error.code === "ETIMEDOUT" ? "fired" : "not fired")'
sb=$(node -e "$spawn" 2>/dev/null) se=$(timeout 60 "$HERMETIC" enroll --seed 1 -- node -e "$spawn" 2>/dev/null)
printf '%-52s %8s    %8s\n' "spawnSync timeout 1 ms on a starting child" "$sb" "$se"
