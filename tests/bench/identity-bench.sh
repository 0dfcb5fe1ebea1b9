#!/usr/bin/env bash
# What --identity costs (docs/identity.md), printed, never asserted:
# `python3 -c pass` enrolled under the default (host), under
# `--identity fixed` and with `--dir-order seeded`, runs alternating,
# medians of 11 (goal: host costs nothing next to a plain enroll; fixed
# within 5% of host). The anchor is the plain enroll.
source "$(dirname "$0")/../lib.sh"

if [ "$(id -u)" != 0 ]; then
	echo "identity-bench: needs root (a private hermeticd)" >&2
	exit 1
fi
start_daemon || exit 1
PY=/usr/bin/python3
RUNS=${BENCH_IDENTITY_RUNS:-11}

: >"$T/plain" && : >"$T/host" && : >"$T/fixed" && : >"$T/dir"
for ((i = 0; i < RUNS; i++)); do
	wall_ms "$HERMETIC" enroll --seed 1 -- "$PY" -c pass >>"$T/plain"
	wall_ms "$HERMETIC" enroll --seed 1 --identity host -- "$PY" -c pass >>"$T/host"
	wall_ms "$HERMETIC" enroll --seed 1 --identity fixed -- "$PY" -c pass >>"$T/fixed"
	wall_ms "$HERMETIC" enroll --seed 1 --dir-order seeded -- "$PY" -c pass >>"$T/dir"
done
plain=$(median <"$T/plain") host=$(median <"$T/host") fixed=$(median <"$T/fixed") dir=$(median <"$T/dir")
pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%+.1f%%", b ? (a - b) * 100 / b : 0 }'; }
printf 'python3 -c pass enrolled: plain %d ms, --identity host %d ms (%s), --identity fixed %d ms (%s of host), --dir-order seeded %d ms (%s of host); medians of %d\n' \
	"$plain" "$host" "$(pct "$host" "$plain")" "$fixed" "$(pct "$fixed" "$host")" "$dir" "$(pct "$dir" "$host")" "$RUNS"
bench_summary "python3 -c pass, --identity host" "$host ms" "plain enroll $plain ms" "no cost"
bench_summary "python3 -c pass, --identity fixed" "$fixed ms ($(pct "$fixed" "$host"))" "--identity host $host ms" "<= 5%"
