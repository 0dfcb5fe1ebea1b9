#!/usr/bin/env bash
# make bench: runs every tests/bench/*-bench.sh in one go and prints their
# figures. Numbers are printed, never asserted: compare them in one run.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
cd "$TOP"
rc=0
for b in tests/bench/*-bench.sh; do
	[ -f "$b" ] || continue
	echo "== $(basename "$b" -bench.sh)"
	bash "$b" || rc=1
done
exit $rc
