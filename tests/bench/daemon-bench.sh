#!/usr/bin/env bash
# What hermetic costs, measured in one go (numbers are printed, never asserted):
#  1. wall time of `true` bare vs under `hermetic enroll -- true`, beside
#     the kernel's own sandbox starts, `unshare -rn true` and bubblewrap
#     (`bwrap --ro-bind / / --unshare-net true`, and --unshare-all), all in
#     one interleaved run: what each adds over `true` (issue 30's goal:
#     enroll adds no more than `unshare -rn`, never more than bubblewrap);
#     then each one's CPU time and page faults (perf stat, when perf works
#     here), where enroll's time goes (HERMETIC_DEBUG=phases) and its
#     process hand-offs (context switches);
#  2. what a loaded hermeticd costs processes that are NOT enrolled: a
#     syscall-heavy loop timed with the daemon running vs stopped, in
#     alternating repetitions (target: under 2 %).
# Needs root and a built tree (make bench builds it). Knobs: BENCH_SPAWNS
# (runs of each command, default 50), BENCH_ITERS (loop iterations, default
# 600000, about 2M syscalls), BENCH_REPS (repetitions per daemon state, default 6).
source "$(dirname "$0")/../lib.sh"
if [ -x /usr/bin/python3 ]; then PY=/usr/bin/python3; else PY=python3; fi

SPAWNS=${BENCH_SPAWNS:-50}
ITERS=${BENCH_ITERS:-600000}
REPS=${BENCH_REPS:-6}

if [ "$(id -u)" != 0 ]; then
	echo "daemon-bench: needs root (it starts a private hermeticd)" >&2
	exit 1
fi
if [ ! -x "$HERMETICD" ] || [ ! -x "$HERMETIC" ]; then
	echo "daemon-bench: build/hermeticd or build/hermetic missing (run make)" >&2
	exit 1
fi

# spawnbench N CMD... [:: CMD...]...: runs each command N times, round-robin
# (so drift hits all alike), fork+exec+wait timed with CLOCK_MONOTONIC; prints
# per command: mean, median, p90, min in ms, and failures.
cat >"$T/spawnbench.c" <<'EOF'
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
extern char **environ;
static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}
static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}
int main(int argc, char **argv)
{
	int n = atoi(argv[1]), ncmd = 0;
	char **cmds[16];
	cmds[ncmd++] = argv + 2;
	for (int i = 2; i < argc; i++)
		if (!strcmp(argv[i], "::") && ncmd < 16) {
			argv[i] = NULL;
			cmds[ncmd++] = argv + i + 1;
		}
	double *t = calloc((size_t)n * ncmd, sizeof(double));
	int fails[16] = { 0 };
	for (int w = 0; w < 3; w++) /* warm-up */
		for (int c = 0; c < ncmd; c++) {
			pid_t pid;
			int st;
			if (posix_spawnp(&pid, cmds[c][0], NULL, NULL, cmds[c], environ) == 0)
				waitpid(pid, &st, 0);
		}
	for (int i = 0; i < n; i++)
		for (int c = 0; c < ncmd; c++) {
			pid_t pid;
			int st = 0;
			double t0 = now();
			if (posix_spawnp(&pid, cmds[c][0], NULL, NULL, cmds[c], environ) != 0) {
				fails[c]++;
				continue;
			}
			waitpid(pid, &st, 0);
			t[c * n + i] = now() - t0;
			if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
				fails[c]++;
		}
	for (int c = 0; c < ncmd; c++) {
		double *v = t + c * n, sum = 0;
		for (int i = 0; i < n; i++)
			sum += v[i];
		qsort(v, n, sizeof(double), cmp);
		printf("%.3f %.3f %.3f %.3f %d\n", sum / n, v[n / 2], v[n * 9 / 10], v[0], fails[c]);
	}
	return 0;
}
EOF

# sysloop N: a syscall-heavy loop, as a test suite does it: per iteration
# getppid, a real clock_gettime syscall (not the vDSO), getrandom; every 64th
# iteration a UDP socket connected to loopback, one send, close. Prints ns.
cat >"$T/sysloop.c" <<'EOF'
#include <arpa/inet.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
static double ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}
/* sysloop micro N: ns per call of each syscall alone (getppid is traced by
 * nobody: the control). */
static int micro(long n)
{
	struct timespec ts;
	char buf[16];
	double t0 = ns();
	for (long i = 0; i < n; i++)
		getppid();
	double t1 = ns();
	for (long i = 0; i < n; i++)
		syscall(SYS_clock_gettime, CLOCK_REALTIME, &ts);
	double t2 = ns();
	for (long i = 0; i < n; i++)
		if (getrandom(buf, sizeof buf, 0) < 0)
			return 1;
	double t3 = ns();
	int z = open("/dev/zero", O_RDONLY);
	for (long i = 0; i < n; i++)
		if (read(z, buf, 1) < 0)
			return 1;
	double t4 = ns();
	for (long i = 0; i < n; i++) {
		int f = openat(AT_FDCWD, "/dev/null", O_RDONLY);
		close(f);
	}
	double t5 = ns();
	printf("%.1f %.1f %.1f %.1f %.1f\n", (t1 - t0) / n, (t2 - t1) / n, (t3 - t2) / n, (t4 - t3) / n,
	       (t5 - t4) / n);
	return 0;
}
int main(int argc, char **argv)
{
	if (argc > 2)
		return micro(atol(argv[2]));
	long n = atol(argv[1]);
	struct sockaddr_in lo = { .sin_family = AF_INET, .sin_port = htons(9) };
	struct timespec a, b, ts;
	char buf[16];
	unsigned long sink = 0;
	inet_pton(AF_INET, "127.0.0.1", &lo.sin_addr);
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++) {
		sink += getppid();
		syscall(SYS_clock_gettime, CLOCK_REALTIME, &ts);
		sink += ts.tv_nsec;
		if (getrandom(buf, sizeof buf, 0) > 0)
			sink += buf[0];
		if (i % 64 == 0) {
			int s = socket(AF_INET, SOCK_DGRAM, 0);
			if (s >= 0) {
				if (connect(s, (struct sockaddr *)&lo, sizeof lo) == 0)
					send(s, "x", 1, MSG_DONTWAIT);
				close(s);
			}
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%lld %lu\n", (long long)(b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec), sink & 1);
	return 0;
}
EOF
CC=${CC:-cc}
command -v "$CC" >/dev/null || CC=gcc
"$CC" -O2 -o "$T/spawnbench" "$T/spawnbench.c" && "$CC" -O2 -o "$T/sysloop" "$T/sysloop.c" || {
	echo "daemon-bench: cannot compile the benchmark programs" >&2
	exit 1
}

echo "kernel $(uname -r), $(nproc) CPUs, hermetic $(cat "$TOP/VERSION" 2>/dev/null)"

# --- 1. startup cost of a run ----------------------------------------------------------
start_daemon || exit 1
TRUE=$(command -v true)
"$HERMETIC" enroll -- "$TRUE" >/dev/null 2>"$T/probe.err" || {
	echo "daemon-bench: 'hermetic enroll -- true' fails: $(tr '\n' ' ' <"$T/probe.err")" >&2
	exit 1
}
# hermetic prints its seed on stderr on every run: spawnbench's stderr (and
# so its children's) goes to /dev/null.
# The anchors: what an unprivileged sandbox start costs, `unshare -rn` (a user
# and a network namespace) and bubblewrap (every namespace, / read-only).
# (bubblewrap needs a root to exec in: / read-only, the least it takes.)
BWRAP=(true) BWRAPN=(true)
if command -v bwrap >/dev/null; then
	BWRAP=(bwrap --ro-bind / / --dev /dev --proc /proc --unshare-all "$TRUE")
	BWRAPN=(bwrap --ro-bind / / --unshare-net "$TRUE")
fi
mapfile -t R < <("$T/spawnbench" "$SPAWNS" \
	"$TRUE" :: \
	"$HERMETIC" enroll -- "$TRUE" :: \
	"$HERMETIC" enroll --network off -- "$TRUE" :: \
	"$HERMETIC" enroll --clock off --rng off -- "$TRUE" :: \
	"$HERMETIC" enroll --confine off -- "$TRUE" :: \
	unshare -rn "$TRUE" :: \
	"${BWRAP[@]}" :: \
	"${BWRAPN[@]}" 2>/dev/null)
row() { # row LABEL "mean median p90 min fails"
	# shellcheck disable=SC2086
	set -- "$1" $2
	printf '  %-48s mean %7.2f ms  median %7.2f  p90 %7.2f  min %7.2f%s\n' "$1" "$2" "$3" "$4" "$5" \
		"$([ "${6:-0}" != 0 ] && echo "  ($6 FAILED)")"
}
echo "wall time of a run, $SPAWNS runs each, interleaved (fork+exec+wait):"
row "true" "${R[0]}"
row "hermetic enroll -- true" "${R[1]}"
row "hermetic enroll --network off -- true" "${R[2]}"
row "hermetic enroll --clock off --rng off -- true" "${R[3]}"
row "hermetic enroll --confine off -- true" "${R[4]}"
row "unshare -rn true" "${R[5]}"
if command -v bwrap >/dev/null; then
	row "bwrap --ro-bind / / --unshare-all ... true" "${R[6]}"
	row "bwrap --ro-bind / / --unshare-net true" "${R[7]}"
else
	echo "  (bubblewrap not installed: apt-get install bubblewrap)"
fi
read -r m0 d0 _ <<<"${R[0]}"
read -r m1 d1 _ <<<"${R[1]}"
read -r m3 d3 _ <<<"${R[3]}"
read -r m4 d4 _ <<<"${R[4]}"
read -r m5 d5 _ <<<"${R[5]}"
read -r m6 d6 _ <<<"${R[6]}"
read -r m7 d7 _ <<<"${R[7]}"
command -v bwrap >/dev/null || { m6=$m0 d6=$d0 m7=$m0 d7=$d0; }
"$PY" -c '
import sys
m0, d0, m1, d1, m3, d3, m4, d4, m5, d5, m6, d6, m7, d7 = map(float, sys.argv[1:])
print("  added over true, side by side (the goal: enroll at most unshare -rn, never more than bwrap):")
print("  added by hermetic enroll:                          mean %6.2f ms  median %6.2f ms" % (m1 - m0, d1 - d0))
print("  added by hermetic enroll --confine off:            mean %6.2f ms  median %6.2f ms" % (m4 - m0, d4 - d0))
print("  added without the shim (--clock off --rng off):    mean %6.2f ms  median %6.2f ms" % (m3 - m0, d3 - d0))
print("  containment (defaults vs --confine off):           mean %6.2f ms  median %6.2f ms   (target < 2 ms)" % (m1 - m4, d1 - d4))
print("  added by unshare -rn:                              mean %6.2f ms  median %6.2f ms" % (m5 - m0, d5 - d0))
print("  added by bwrap --unshare-all:                     mean %6.2f ms  median %6.2f ms" % (m6 - m0, d6 - d0))
print("  added by bwrap --unshare-net:                      mean %6.2f ms  median %6.2f ms" % (m7 - m0, d7 - d0))
' "$m0" "$d0" "$m1" "$d1" "$m3" "$d3" "$m4" "$d4" "$m5" "$d5" "$m6" "$d6" "$m7" "$d7"
# Where enroll's own time goes (HERMETIC_DEBUG=phases, engine/phases.c): the
# median of each step over the runs, in the order enroll takes them.
for ((i = 0; i < 30; i++)); do
	HERMETIC_DEBUG=phases "$HERMETIC" enroll -- "$TRUE" 2>&1 >/dev/null | grep '^hermetic: phases'
done | "$PY" -c '
import sys, statistics
steps = {}
notes = {}
for line in sys.stdin:
    if "(ms): " not in line:  # a note of its own ("phases: line B: ..."): counted
        note = line.split("phases: ", 1)[1].strip()
        notes[note] = notes.get(note, 0) + 1
        continue
    body = line.split("(ms): ", 1)[1].split("; total")[0]
    run = {}
    for part in body.split(", "):  # a step taken twice (two execs) counts once, summed
        name, ms = part.rsplit(" ", 1)
        run[name] = run.get(name, 0.0) + float(ms)
    for name, ms in run.items():
        steps.setdefault(name, []).append(ms)
print("  where enroll -- true spends its time, median ms over the runs (HERMETIC_DEBUG=phases):")
print("   " + ", ".join("%s %.2f" % (k, statistics.median(v)) for k, v in steps.items()))
for note, n in notes.items():
    print("   %s (%d of the runs)" % (note, n))
'
# CPU time and page faults of each (perf stat: the command and its
# children, the run's command included; a page fault costs ~15 us on a
# paravirtualised guest), and context switches: enroll's hand-offs between
# processes (its own, the daemon's are not counted), each a wait for a CPU
# on a loaded machine.
if perf stat -e task-clock -x, -o /dev/null "$TRUE" 2>/dev/null; then
	echo "  CPU time, page faults and context switches of each, perf stat -r $SPAWNS (medians of nothing: means):"
	pstat() { # pstat LABEL CMD...
		local label=$1 out
		shift
		out=$(perf stat -x, -r "$SPAWNS" -e task-clock,page-faults,context-switches "$@" 2>&1 >/dev/null |
			awk -F, '$3 == "task-clock" { t = $1 } $3 == "page-faults" { f = $1 } $3 == "context-switches" { c = $1 }
				END { printf "task-clock %6.2f ms  page faults %4d  context switches %5.1f", t, f, c }')
		printf '  %-48s %s\n' "$label" "$out"
	}
	pstat "true" "$TRUE"
	pstat "hermetic enroll -- true" "$HERMETIC" enroll -- "$TRUE"
	pstat "hermetic enroll --confine off -- true" "$HERMETIC" enroll --confine off -- "$TRUE"
	pstat "unshare -rn true" unshare -rn "$TRUE"
	command -v bwrap >/dev/null && pstat "bwrap --ro-bind / / --unshare-net true" "${BWRAPN[@]}"
else
	echo "  (perf stat does not work here: no CPU time or page fault figures)"
fi
anchor=$(awk -v a="$d0" -v u="$d5" -v b="$d7" -v bw="$(command -v bwrap)" 'BEGIN {
	s = sprintf("unshare -rn %.2f ms", u - a); if (bw != "") s = s sprintf(", bwrap --unshare-net %.2f ms", b - a); print s }')
bench_summary "hermetic enroll -- true, wall added (median)" \
	"$(awk -v a="$d0" -v b="$d1" 'BEGIN { printf "%.2f ms", b - a }')" "$anchor" "<= unshare -rn's"

# --- 2. cost of the loaded daemon to processes that are not enrolled ------------------------
stop() {
	kill -TERM "$HMD_PID" 2>/dev/null
	wait "$HMD_PID" 2>/dev/null
}
stop
pin=()
[ "$(nproc)" -gt 1 ] && command -v taskset >/dev/null && pin=(taskset -c 1)
"${pin[@]}" "$T/sysloop" 200000 >/dev/null # warm-up
declare -a on off micro_on micro_off
# ABBA order (off on on off off on ...) so slow drift cancels out.
for ((i = 0; i < REPS * 2; i++)); do
	if (((i + 1) / 2 % 2 == 1)); then
		start_daemon || exit 1
		sleep 0.2
		r=$("${pin[@]}" "$T/sysloop" "$ITERS")
		on+=("${r%% *}")
		micro_on+=("$("${pin[@]}" "$T/sysloop" micro 200000)")
		stop
	else
		sleep 0.2
		r=$("${pin[@]}" "$T/sysloop" "$ITERS")
		off+=("${r%% *}")
		micro_off+=("$("${pin[@]}" "$T/sysloop" micro 200000)")
	fi
done
echo "syscall-heavy loop, not enrolled ($ITERS iterations of getppid + clock_gettime syscall + getrandom,"
echo "  a loopback UDP socket+connect+send every 64th), $REPS repetitions per state, alternating:"
printf '%s\n' "${off[@]}" >"$T/off"
printf '%s\n' "${on[@]}" >"$T/on"
printf '%s\n' "${micro_off[@]}" >"$T/micro_off"
printf '%s\n' "${micro_on[@]}" >"$T/micro_on"
"$PY" - "$T/off" "$T/on" "$ITERS" "$T/micro_off" "$T/micro_on" <<'EOF'
import statistics, sys
off = [int(x) for x in open(sys.argv[1]).read().split()]
on = [int(x) for x in open(sys.argv[2]).read().split()]
n = int(sys.argv[3])
def show(label, v):
    print("  %-28s median %8.1f ms  mean %8.1f ms  min %8.1f ms  (%s)  %.0f ns/iteration"
          % (label, statistics.median(v) / 1e6, statistics.mean(v) / 1e6, min(v) / 1e6,
             " ".join("%.0f" % (x / 1e6) for x in v), statistics.median(v) / n))
show("daemon stopped", off)
show("daemon running", on)
d_med = (statistics.median(on) / statistics.median(off) - 1) * 100
d_min = (min(on) / min(off) - 1) * 100
print("  added by the loaded daemon:  %+.2f %% (medians), %+.2f %% (minima)   (target < 2 %%)" % (d_med, d_min))
moff = [list(map(float, l.split())) for l in open(sys.argv[4]).read().splitlines() if l.strip()]
mon = [list(map(float, l.split())) for l in open(sys.argv[5]).read().splitlines() if l.strip()]
print("  per call, not enrolled (best of %d, 200000 calls each):" % len(moff))
for i, name in enumerate(("getppid", "clock_gettime (syscall)", "getrandom(16)", "read(/dev/zero, 1)", "openat+close(/dev/null)")):
    a = min(r[i] for r in moff)
    b = min(r[i] for r in mon)
    print("    %-26s stopped %7.1f ns   running %7.1f ns   %+6.1f ns  %+6.1f %%" % (name, a, b, b - a, (b / a - 1) * 100))
EOF
exit 0
