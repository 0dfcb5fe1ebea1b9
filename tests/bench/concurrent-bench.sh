#!/usr/bin/env bash
# 200 runs at once through one private hermeticd (numbers are printed, never
# asserted). Each batch starts BENCH_RUNS `hermetic enroll -- CMD` at once and
# times, from the spawn of `hermetic enroll`:
#   start: until CMD's first instruction (tests/bench/ready.c writes a byte
#          to a pipe the launcher polls; CMD runs under the shim, the
#          launcher outside any run, on the real monotonic clock);
#   total: until `hermetic enroll` exited.
# Batches:
#   0. root, one run at a time (20 of them), for comparison;
#   anchor: N bare CMDs (no hermetic) launched at once the same way: what
#      the machine alone takes to start that many processes;
#   1. root, launched at once: half `true`, half python3 `time.sleep(0.2)`
#      (a sleep under the shim's virtual clock returns at once);
#   2. root, held: every run waits until all have started, so all are alive
#      in the daemon together (hermetic status counts them);
#   3. an unprivileged user, held, default per-user limits (64 connections,
#      64 runs): how many the daemon refuses, and what the user reads;
#   4. the same user with --max-conns-per-user 512 --max-runs-per-user 256
#      (a non-root enroll holds one connection for its run and opens a
#      second, briefly, to have its child adopted; past its limit a uid gets
#      as many again that may only ask RUN_ADOPT).
# Before the batches: 50 enrolls at once against 50 bare commands at once,
# p99 to the exit (issue 30).
# Needs root and a built tree. Knobs: BENCH_RUNS (default 200).
source "$(dirname "$0")/../lib.sh"
if [ -x /usr/bin/python3 ]; then PY=/usr/bin/python3; else PY=python3; fi
N=${BENCH_RUNS:-200}

if [ "$(id -u)" != 0 ]; then
	echo "concurrent-bench: needs root (it starts a private hermeticd)" >&2
	exit 1
fi
if [ ! -x "$HERMETICD" ] || [ ! -x "$HERMETIC" ]; then
	echo "concurrent-bench: build/hermeticd or build/hermetic missing (run make)" >&2
	exit 1
fi
CC=${CC:-cc}
command -v "$CC" >/dev/null || CC=gcc
"$CC" -O2 -o "$T/concbench" "$TOP/tests/bench/concbench.c" &&
	"$CC" -O2 -o "$T/ready" "$TOP/tests/bench/ready.c" || {
	echo "concurrent-bench: cannot compile concbench.c or ready.c" >&2
	exit 1
}
# A test user (and group) for batches 3 and 4; the daemon's socket is
# 0660 root:that group.
test_user U || {
	echo "concurrent-bench: cannot create a test user" >&2
	exit 1
}

echo "kernel $(uname -r), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), hermetic $(cat "$TOP/VERSION" 2>/dev/null)"

# batch LABEL HOLD [as_user NAME]: runs N enrolls through concbench; prints
# the figures and, on failures, the first failure's message.
batch() {
	local label=$1 hold=$2 errs out peak_status=""
	shift 2
	errs=$(mktemp -d "$T/errs.XXXX")
	chmod 777 "$errs"
	local cmd=("$HERMETIC" enroll -- "$T/ready")
	[ "$hold" = 1 ] && cmd+=(--hold)
	if [ "$hold" = 1 ]; then
		# Once all have started, before they are let go: the runs the
		# daemon counts.
		# (A user at its connection limit is refused the status too: "-".)
		out=$(CONCBENCH_AT_PEAK="'$HERMETIC' status --json 2>/dev/null | '$PY' -c 'import json,sys; print(len(json.load(sys.stdin)[\"runs\"]))' 2>/dev/null || echo -" \
			"$@" "$T/concbench" "$N" 1 60 "$errs" -- "${cmd[@]}")
		peak_status=$(sed -n 's/^at_peak //p' <<<"$out")
	else
		out=$("$@" "$T/concbench" "$N" 0 60 "$errs" -- "${cmd[@]}" :: \
			"$HERMETIC" enroll -- "$T/ready" "$PY" -c 'import time; time.sleep(0.2)')
	fi
	echo "$label"
	"$PY" - "$N" "$peak_status" "$label" <<EOF
import os, sys
n, status, label = int(sys.argv[1]), sys.argv[2], sys.argv[3]
f = {}
for line in """$out""".splitlines():
    k, *v = line.split()
    f[k] = v
for k, what in (("start", "exec of hermetic enroll to CMD's start"),
                ("total", "exec of hermetic enroll to its exit")):
    c, p50, p99, mx = f[k]
    print("  %-40s p50 %7s ms  p99 %7s ms  max %7s ms  (%s runs)" % (what, p50, p99, mx, c))
    if k == "start" and label.startswith("1.") and os.environ.get("BENCH_SUMMARY"):
        with open(os.environ["BENCH_SUMMARY"], "a") as out:
            out.write("%d concurrent enrolls, time to the command's start\tp50 %s ms, p99 %s ms\t-\tp99 <= 50 ms\n"
                      % (n, p50, p99))
print("  failures %s of %d; at most %s runs alive at once%s; %s ms for the batch"
      % (f["failures"][0], n, f["peak"][0],
         " (hermetic status counted %s)" % status if status else "", f["wall"][0]))
EOF
	if grep -q '^first_failure' <<<"$out"; then
		local ff
		ff=$(sed -n 's/^first_failure \([^ ]*\).*/\1/p' <<<"$out")
		# its last words: the error that ended it, after any warnings
		echo "  first failure says: $(grep -v '^hermetic: seed' "$ff" | tail -n 2 | tr '\n' ' ')"
	fi
}

start_daemon || exit 1
# One at a time: concbench with one run, 20 times over.
for _ in $(seq 20); do
	"$T/concbench" 1 0 60 "$T" -- "$HERMETIC" enroll -- "$T/ready"
done | "$PY" -c '
import statistics, sys
v = {"start": [], "total": []}
fails = 0
for line in sys.stdin:
    k, *f = line.split()
    if k in v and f[0] == "1":
        v[k].append(float(f[1]))
    if k == "failures":
        fails += int(f[0])
print("0. root, one run at a time (%d runs):" % len(v["start"]))
for k, what in (("start", "exec of hermetic enroll to CMD\x27s start"), ("total", "exec of hermetic enroll to its exit")):
    x = sorted(v[k])
    print("  %-40s p50 %7.1f ms                max %7.1f ms" % (what, statistics.median(x), x[-1]))
print("  failures %d" % fails)
'
# Issue 30's figure: 50 runs of `enroll -- true` at once, p99 from the spawn
# to the exit of enroll (the command's end is enroll's, but for the
# reaping), over the p99 of 50 bare `true` launched at once the same way
# (goal: <= 100 ms). Alternating batches, the median of three each.
for _ in 1 2 3; do
	"$T/concbench" 50 0 60 "$T" -- "$T/ready" | sed -n 's/^total [0-9]* [^ ]* \([^ ]*\).*/bare \1/p'
	"$T/concbench" 50 0 60 "$T" -- "$HERMETIC" enroll -- "$T/ready" |
		sed -n 's/^total [0-9]* [^ ]* \([^ ]*\).*/enrolled \1/p'
done >"$T/fifty"
b50=$(awk '$1 == "bare" { print $2 }' "$T/fifty" | median)
e50=$(awk '$1 == "enrolled" { print $2 }' "$T/fifty" | median)
echo "50 at once (the median of 3 batches each), p99 from the spawn to the exit:"
printf '  %-40s %7s ms\n' "true bare" "$b50" "hermetic enroll -- true" "$e50"
over50=$(awk -v b="$b50" -v e="$e50" 'BEGIN { printf "%.1f", e - b }')
printf '  %-40s %7s ms   (goal <= 100 ms)\n' "enroll's over true's" "$over50"
bench_summary "50 enrolls at once, p99 to the command's exit over true bare" "$over50 ms" \
	"true bare p99 $b50 ms, enrolled $e50 ms" "<= 100 ms"

out=$("$T/concbench" "$N" 0 60 "$T" -- "$T/ready")
echo "anchor. $N bare commands launched at once, no hermetic:"
read -r _ c p50 p99 mx < <(grep '^start' <<<"$out")
printf '  %-40s p50 %7s ms  p99 %7s ms  max %7s ms  (%s runs)\n' "spawn to CMD's start" "$p50" "$p99" "$mx" "$c"
# hermeticd's own CPU time (user + system, in clock ticks) over batches 1
# and 2: the part of a burst that is serialised in the daemon.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$HMD_PID/stat"; }
t0=$(cpu_ticks)
batch "1. root, $N runs launched at once (true / python3 sleep):" 0
batch "2. root, $N runs held until all started (all alive together):" 1
t1=$(cpu_ticks)
awk -v t="$((t1 - t0))" -v hz="$(getconf CLK_TCK)" -v n="$N" \
	'BEGIN { printf "  hermeticd CPU over batches 1 and 2: %.2f s, %.2f ms per run\n", t / hz, t / hz * 1000 / (2 * n) }'
batch "3. unprivileged user, $N runs held, default per-user limits:" 1 as_user "$U"
kill "$HMD_PID"
wait "$HMD_PID"
start_daemon --max-conns-per-user 512 --max-runs-per-user 256 || exit 1
batch "4. unprivileged user, $N runs held, --max-conns-per-user 512 --max-runs-per-user 256:" 1 as_user "$U"
exit 0
