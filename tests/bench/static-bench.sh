#!/usr/bin/env bash
# The supervisor's cost (docs/static.md), printed, never asserted:
#  1. a static Go program: ns per time.Now(), per 16-byte crypto/rand read
#     per time.Sleep(1ms), per wait on a context.WithTimeout(1ms) and per
#     runtime.GC() (GOMAXPROCS 4: stopping the world while the run is busy), the
#     real time of a 100 ms sleep while another goroutine computes, and
#     the real time of one time.Sleep(2s), bare vs enrolled, timed from
#     outside (target:
#     time.Now within 2x of bare: the synthetic vDSO reads the clock page
#     without a syscall; crypto/rand within 1.5x of bare: drawn in the
#     process by the vDSO, no round trip to the supervisor; a
#     virtual sleep costs a round trip and a move of the run's clock);
#  2. enroll's wall and CPU time (its own and its children's) for `true`, for python3 -c pass and for a shell
#     that execs /bin/true 100 times, with and without the supervisor
#     (--supervise on|off; target: no measurable difference for the shim's
#     programs: forks never stop, each exec costs one seccomp round trip).
# Medians of RUNS runs, alternating.
source "$(dirname "$0")/../lib.sh"

if [ "$(id -u)" != 0 ]; then
	echo "static-bench: needs root (a private hermeticd)" >&2
	exit 1
fi
start_daemon || exit 1
RUNS=${BENCH_STATIC_RUNS:-11}
N=${N:-2000000}

# (tenths of a ms here, not lib.sh's whole ms)
wall_ms() {
	local t
	t=$({ TIMEFORMAT='%3R'; time "$@" >/dev/null 2>&1; } 2>&1)
	awk -v t="$t" 'BEGIN { printf "%.1f\n", t * 1000 }'
}
# CPU time (user + system) of CMD and what it reaped, in ms
cpu_ms() {
	local t
	t=$({ TIMEFORMAT='%3U %3S'; time "$@" >/dev/null 2>&1; } 2>&1)
	awk -v t="$t" 'BEGIN { split(t, a, " "); printf "%.1f\n", (a[1] + a[2]) * 1000 }'
}

mkdir -p "$T/go"
cp "$TOP/tests/bench/static_bench.go" "$T/go/main.go"
if ! go_static "$T/go" "$T/gobench"; then
	echo "static-bench: cannot build the Go program: $(tail -n 3 "$T/go.log")" >&2
	exit 1
fi
# ns_of PREFIX... MODE N: median wall ns of RUNS runs of the program
ns_of() {
	local i s
	for i in $(seq "$RUNS"); do
		s=$(date +%s%N)
		"$@" >/dev/null 2>&1
		echo $(($(date +%s%N) - s))
	done | median
}
E=("$HERMETIC" enroll --seed 1 --)
printf '%-28s %10s %10s\n' "static Go, ns per call" bare enrolled
# (enrolled, the sleeps and waits are virtual: real ns per call)
for m in "now $N" "rand $((N / 100))" "sleep 1000" "ctx 1000" "gc 100"; do
	set -- $m
	b0=$(ns_of "$T/gobench" "$1" 0) b1=$(ns_of "$T/gobench" "$1" "$2")
	e0=$(ns_of "${E[@]}" "$T/gobench" "$1" 0) e1=$(ns_of "${E[@]}" "$T/gobench" "$1" "$2")
	printf '%-28s %10s %10s\n' "$1 (x$2)" "$(((b1 - b0) / $2))" "$(((e1 - e0) / $2))"
done
# one 2 s sleep, real ms (bare: 2000; goal enrolled: under 100)
RUNS=$(((RUNS + 1) / 2))
b0=$(ns_of "$T/gobench" sleep2s 0) b1=$(ns_of "$T/gobench" sleep2s 1)
e0=$(ns_of "${E[@]}" "$T/gobench" sleep2s 0) e1=$(ns_of "${E[@]}" "$T/gobench" sleep2s 1)
d=$(((e1 - e0) / 1000000))
[ "$d" -ge 0 ] || d=0 # below the noise of enroll's own start
printf '%-28s %10s %10s\n' "time.Sleep(2s), real ms" "$(((b1 - b0) / 1000000))" "$d"
printf '%-28s %10s %10s\n' "... the whole run, real ms" "$((b1 / 1000000))" "$((e1 / 1000000))"
# one 100 ms sleep while a goroutine computes, real ms (bare: 100; enrolled:
# the lag bound, K = 10 after its 1 s floor, ends it)
b0=$(ns_of "$T/gobench" busy 0) b1=$(ns_of "$T/gobench" busy 1)
e0=$(ns_of "${E[@]}" "$T/gobench" busy 0) e1=$(ns_of "${E[@]}" "$T/gobench" busy 1)
printf '%-28s %10s %10s\n' "Sleep(100ms), busy, real ms" "$(((b1 - b0) / 1000000))" "$(((e1 - e0) / 1000000))"

printf '%-28s %16s %16s\n' "enroll, ms (median)" "off: wall/cpu" "on: wall/cpu"
for what in true "python3 -c pass" "100 execs of /bin/true"; do
	case $what in
	true) cmd=(true) ;;
	python3*) cmd=(python3 -c pass) ;;
	*) cmd=(sh -c 'i=0; while [ $i -lt 100 ]; do /bin/true; i=$((i+1)); done') ;;
	esac
	: >"$T/off" && : >"$T/on" && : >"$T/offc" && : >"$T/onc"
	for _ in $(seq "$RUNS"); do
		wall_ms "$HERMETIC" enroll --seed 1 --supervise off -- "${cmd[@]}" >>"$T/off"
		wall_ms "$HERMETIC" enroll --seed 1 -- "${cmd[@]}" >>"$T/on"
		cpu_ms "$HERMETIC" enroll --seed 1 --supervise off -- "${cmd[@]}" >>"$T/offc"
		cpu_ms "$HERMETIC" enroll --seed 1 -- "${cmd[@]}" >>"$T/onc"
	done
	printf '%-28s %16s %16s\n' "$what" "$(median <"$T/off") / $(median <"$T/offc")" \
		"$(median <"$T/on") / $(median <"$T/onc")"
done
