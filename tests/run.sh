#!/usr/bin/env bash
# Runs every test: unit binaries (build/tests/*) and integration scripts
# (tests/integration/*.sh except the sourced *_lib.sh), then prints "N passed, N failed[, N skipped]".
# A SKIP on CI (CI=true) is counted as a failure: CI machines have
# everything these tests need. Usage: tests/run.sh [PATTERN]
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP"
pat=${1:-}
passed=0 failed=0 skipped=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

run_one() {
	local what=$1
	shift
	local start=$(date +%s)
	echo "== $what"
	"$@" >"$log" 2>&1
	local rc=$?
	cat "$log"
	local p f s
	p=$(grep -c '^PASS ' "$log")
	f=$(grep -c '^FAIL ' "$log")
	s=$(grep -c '^SKIP ' "$log")
	if [ "$rc" != 0 ] && [ "$f" = 0 ]; then
		echo "FAIL $what: exited $rc without reporting a failure"
		f=1
	fi
	if [ "$p" = 0 ] && [ "$f" = 0 ] && [ "$s" = 0 ]; then
		echo "FAIL $what: reported no result"
		f=1
	fi
	if [ "${CI:-}" = true ] && [ "$s" != 0 ]; then
		echo "($what: $s skipped on CI, counted as failed)"
		f=$((f + s))
		s=0
	fi
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
	echo "-- $what: $p passed, $f failed, $s skipped ($(($(date +%s) - start))s)"
}

for t in build/tests/*; do
	[ -x "$t" ] || continue
	case "$t" in *"$pat"*) ;; *) continue ;; esac
	run_one "unit/$(basename "$t")" "$t"
done
for t in tests/integration/*.sh; do
	[ -f "$t" ] || continue
	case "$t" in *_lib.sh) continue ;; esac # sourced helpers, not tests
	case "$t" in *"$pat"*) ;; *) continue ;; esac
	run_one "integration/$(basename "$t" .sh)" bash "$t"
done

if [ "$skipped" != 0 ]; then
	echo "$passed passed, $failed failed, $skipped skipped"
else
	echo "$passed passed, $failed failed"
fi
[ "$failed" = 0 ]
