#!/usr/bin/env bash
# make bench: runs every tests/bench/*-bench.sh in one go and prints their
# figures. Numbers are printed, never asserted: compare them in one run.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
cd "$TOP"
rc=0
# Every script adds the rows of issue 18's table it measures (bench_summary in
# tests/lib.sh: figure, ours, anchor, goal, tab-separated); printed at the end.
BENCH_SUMMARY=$(mktemp)
export BENCH_SUMMARY
trap 'rm -f "$BENCH_SUMMARY"' EXIT
for b in tests/bench/*-bench.sh; do
	[ -f "$b" ] || continue
	echo "== $(basename "$b" -bench.sh)"
	bash "$b" || rc=1
done
echo "== summary: what hermetic costs (issue 18), this run; load $(cut -d' ' -f1-3 /proc/loadavg)"
awk -F'\t' '{ printf "%-50s %-22s %-58s %s\n", $1, $2, $3, $4 }' \
	<(printf 'figure\tours\tanchor\tgoal\n') "$BENCH_SUMMARY"
exit $rc
