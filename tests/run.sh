#!/usr/bin/env bash
# Runs every test: unit binaries ($B/tests/*) and integration scripts
# (tests/integration/*.sh except the sourced *_lib.sh), then prints "N passed, N failed[, N skipped]".
# A SKIP on CI (CI=true) is counted as a failure: CI machines have
# everything these tests need. Usage: tests/run.sh [PATTERN...] (a test runs
# when its name contains one of the patterns; none: every test).
# HERMETIC_BUILD names the build under test (default build/); with
# HERMETIC_SANITIZE set (make check SANITIZE=...), every sanitizer report
# a test's processes leave is a failure of that test.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP"
BUILD=${HERMETIC_BUILD:-$TOP/build}
pats=("$@")
passed=0 failed=0 skipped=0
log=$(mktemp)
san=
if [ -n "${HERMETIC_SANITIZE:-}" ]; then
	san=$(mktemp -d)
	# Reports go to files, one per process; a test fails on any. The shim
	# is not sanitized and may be preloaded into a sanitized hermetic (a
	# nested enroll): the link order check would refuse that.
	export ASAN_OPTIONS="log_path=$san/asan:detect_leaks=1:abort_on_error=1:verify_asan_link_order=0:detect_odr_violation=0:quarantine_size_mb=16"
	export UBSAN_OPTIONS="log_path=$san/ubsan:print_stacktrace=1:halt_on_error=1"
	export LSAN_OPTIONS="log_path=$san/lsan"
fi
trap 'rm -rf "$log" $san' EXIT

wanted() {
	local p
	[ ${#pats[@]} = 0 ] && return 0
	for p in "${pats[@]}"; do
		case "$1" in *"$p"*) return 0 ;; esac
	done
	return 1
}

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
	if [ -n "$san" ]; then
		local r
		for r in "$san"/*; do
			[ -f "$r" ] || continue
			echo "FAIL $what: sanitizer report $(basename "$r"): $(grep -m 3 -E 'ERROR|runtime error|SUMMARY' "$r" | tr '\n' '|')"
			sed -n '1,40p' "$r"
			f=$((f + 1))
			rm -f "$r"
		done
	fi
	if [ "${CI:-}" = true ] && [ "$s" != 0 ]; then
		echo "($what: $s skipped on CI, counted as failed)"
		f=$((f + s))
		s=0
	fi
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
	echo "-- $what: $p passed, $f failed, $s skipped ($(($(date +%s) - start))s)"
}

for t in "$BUILD"/tests/*; do
	[ -x "$t" ] && [ -f "$t" ] || continue
	wanted "unit/$(basename "$t")" || continue
	run_one "unit/$(basename "$t")" "$t"
done
for t in tests/integration/*.sh; do
	[ -f "$t" ] || continue
	case "$t" in *_lib.sh) continue ;; esac # sourced helpers, not tests
	wanted "$t" || continue
	run_one "integration/$(basename "$t" .sh)" bash "$t"
done

if [ "$skipped" != 0 ]; then
	echo "$passed passed, $failed failed, $skipped skipped"
else
	echo "$passed passed, $failed failed"
fi
[ "$failed" = 0 ]
