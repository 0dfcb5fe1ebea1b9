#!/usr/bin/env bash
# timeout: 36000
# --sched chaos against the kernel's own schedule, on the racy corpus of
# tests/sched/ (issue 27): per program, the share of BENCH_CHAOS_N runs
# (default 100) whose bug showed (exit 1) under `enroll --sched chaos:SEED`
# (seeds 1..N) and under plain `enroll` (bare), then how many programs'
# bugs each found at least once. BENCH_CHAOS_ONLY=REGEX limits the
# programs. Figures are printed, never asserted. Needs root (a private
# hermeticd). Each run is bounded by BENCH_CHAOS_RUN_TIMEOUT seconds
# (default 120; a run that hits it counts as an error, never as a find).
source "$(dirname "$0")/../lib.sh"
N=${BENCH_CHAOS_N:-100}
ONLY=${BENCH_CHAOS_ONLY:-.}
RUN_TIMEOUT=${BENCH_CHAOS_RUN_TIMEOUT:-120}
if [ "$(id -u)" != 0 ]; then
	echo "sched-chaos-bench: needs root (a private hermeticd)" >&2
	exit 1
fi
start_daemon || exit 1
bash "$TOP/tests/sched/build.sh" "$T/corpus" >"$T/list" || exit 1
# rate NAME MODE CMD...: failures of N runs (exit 1; any other non-zero
# exit is counted apart as an error).
rate() {
	local mode=$1 fails=0 errs=0 rc s
	shift
	for s in $(seq "$N"); do
		if [ "$mode" = chaos ]; then
			timeout -k 10 "$RUN_TIMEOUT" "$HERMETIC" enroll --seed "$s" --sched "chaos:$s" -- "$@" \
				>/dev/null 2>"$T/err"
		else
			timeout -k 10 "$RUN_TIMEOUT" "$HERMETIC" enroll --seed "$s" -- "$@" >/dev/null 2>"$T/err"
		fi
		rc=$?
		case $rc in 0) ;; 1) fails=$((fails + 1)) ;; *) errs=$((errs + 1)); cp "$T/err" "$T/lasterr" ;; esac
	done
	echo "$fails $errs"
}
printf '%-22s %12s %12s\n' program "chaos fails" "bare fails"
found_c=0 found_b=0 total=0
while IFS=$'\t' read -r name cmd; do
	[[ $name =~ $ONLY ]] || continue
	total=$((total + 1))
	# shellcheck disable=SC2086 # cmd is words
	read -r cf ce < <(rate chaos $cmd)
	# shellcheck disable=SC2086
	read -r bf be < <(rate bare $cmd)
	note=
	[ "$ce" -gt 0 ] || [ "$be" -gt 0 ] && note="  (errors: chaos $ce, bare $be)"
	printf '%-22s %8d/%-3d %8d/%-3d%s\n' "$name" "$cf" "$N" "$bf" "$N" "$note"
	[ "$cf" -gt 0 ] && found_c=$((found_c + 1))
	[ "$bf" -gt 0 ] && found_b=$((found_b + 1))
done <"$T/list"
printf '%-22s %8d/%-3d %8d/%-3d  programs whose bug showed at least once in %d runs\n' \
	"found" "$found_c" "$total" "$found_b" "$total" "$N"
[ -f "$T/lasterr" ] && { echo "last error:"; head -5 "$T/lasterr"; }
bench_summary "racy corpus bugs found in $N runs (issue 27)" "chaos $found_c/$total" \
	"bare $found_b/$total" ">=60% and >=2x bare"
exit 0
