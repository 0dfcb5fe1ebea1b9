#!/usr/bin/env bash
# Runs every test: unit binaries ($B/tests/*) and integration scripts
# (tests/integration/*.sh except the sourced *_lib.sh), then prints "N passed, N failed[, N skipped]".
# A SKIP on CI (CI=true) is counted as a failure: CI machines have
# everything these tests need. Usage: tests/run.sh [PATTERN...] (a test runs
# when its name contains one of the patterns; none: every test).
# HERMETIC_BUILD names the build under test (default build/); with
# HERMETIC_SANITIZE set (make check SANITIZE=...), every sanitizer report
# a test's processes leave is a failure of that test. HERMETIC_TESTS_DIR
# names another directory of scripts (default tests/integration; the
# runner's own test points it at a temporary one).
#
# Every test's time is bounded: 900 s, or the N of a line "# timeout: N"
# among a script's first 20 lines, or HERMETIC_TEST_TIMEOUT (seconds) for
# every test when set. Past its bound a test is sent SIGTERM (its cleanup
# runs), SIGKILL 10 s later, and what is left of its session is killed; it
# counts as failed, with its name and its last lines of output. Each test
# runs in a session of its own (setsid), so that nothing it started
# outlives a timeout, nested process groups (a test's own timeout) included.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP"
BUILD=${HERMETIC_BUILD:-$TOP/build}
TESTS=${HERMETIC_TESTS_DIR:-tests/integration}
DEFAULT_BOUND=900
KILL_AFTER=10
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
sid=
trap 'rm -rf "$log" $san' EXIT
# Interrupted (a CI job cancelled, ^C), the running test goes too: in a
# session of its own, the terminal's signal does not reach it.
trap 'end_session; exit 130' INT
trap 'end_session; exit 143' TERM
trap 'end_session; exit 129' HUP

wanted() {
	local p
	[ ${#pats[@]} = 0 ] && return 0
	for p in "${pats[@]}"; do
		case "$1" in *"$p"*) return 0 ;; esac
	done
	return 1
}

# bound FILE: a test's time bound in seconds (see the top).
bound() {
	local n
	if [ -n "${HERMETIC_TEST_TIMEOUT:-}" ]; then
		echo "$HERMETIC_TEST_TIMEOUT"
		return
	fi
	n=$(head -n 20 "$1" 2>/dev/null | sed -n 's/^# timeout: \([0-9][0-9]*\)$/\1/p' | head -n 1)
	echo "${n:-$DEFAULT_BOUND}"
}

# end_session: KILL every process of the running test's session ($sid,
# made by setsid for that test alone: nothing else is in it). Repeated
# while one is found: a process may fork while the list is read. A zombie
# is already ended (its parent, or init, reaps it).
end_session() {
	local p st state found i
	[ -n "$sid" ] || return 0
	for i in 1 2 3 4 5; do
		found=0
		for p in /proc/[0-9]*; do
			{ read -r st <"$p/stat"; } 2>/dev/null || continue
			read -r state _ _ st _ <<<"${st##*) }" # STATE ppid pgrp SESSION
			if [ "$st" = "$sid" ] && [ "$state" != Z ]; then
				kill -KILL "${p#/proc/}" 2>/dev/null
				found=1
			fi
		done
		[ "$found" = 0 ] && break
		sleep 0.2
	done
}

run_one() {
	local what=$1 limit=$2
	shift 2
	local start=$(date +%s)
	echo "== $what"
	# A background job of a shell without job control is no process group
	# leader: setsid makes the session in place, so its id is $!. stdin is
	# the runner's, as it was before the bound.
	setsid -w timeout --kill-after=$KILL_AFTER "$limit" "$@" >"$log" 2>&1 <&0 &
	sid=$!
	wait "$sid"
	local rc=$?
	local took=$(($(date +%s) - start))
	cat "$log"
	local p f s
	p=$(grep -c '^PASS ' "$log")
	f=$(grep -c '^FAIL ' "$log")
	s=$(grep -c '^SKIP ' "$log")
	if { [ "$rc" = 124 ] || [ "$rc" = 137 ]; } && [ "$took" -ge "$limit" ]; then
		end_session
		echo "FAIL $what: timed out: ended after ${took}s (its bound: ${limit}s); its last output: $(tail -n 5 "$log" | tr '\n' '|')"
		f=$((f + 1))
		rc=0 # counted
	fi
	sid=
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
	echo "-- $what: $p passed, $f failed, $s skipped (${took}s)"
}

for t in "$BUILD"/tests/*; do
	[ -x "$t" ] && [ -f "$t" ] || continue
	wanted "unit/$(basename "$t")" || continue
	run_one "unit/$(basename "$t")" "${HERMETIC_TEST_TIMEOUT:-$DEFAULT_BOUND}" "$t"
done
for t in "$TESTS"/*.sh; do
	[ -f "$t" ] || continue
	case "$t" in *_lib.sh) continue ;; esac # sourced helpers, not tests
	wanted "$t" || continue
	run_one "integration/$(basename "$t" .sh)" "$(bound "$t")" bash "$t"
done

if [ "$skipped" != 0 ]; then
	echo "$passed passed, $failed failed, $skipped skipped"
else
	echo "$passed passed, $failed failed"
fi
[ "$failed" = 0 ]
