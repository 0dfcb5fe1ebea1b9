#!/usr/bin/env bash
# `go test` of Go's standard library (issue 17; printed, never asserted):
# the Go suites of the compatibility matrix (tests/compat/go.packages: time,
# context, sync, net/http, os/exec from Debian's golang-1.19-src, and
# golang.org/x/sync), their test binaries compiled once beforehand
# (tests/compat/go-build.sh), each run by tests/compat/run-go.sh bare and
# under `hermetic enroll` with default options (virtual timed waits: the
# goal is at most 1.0x of bare, sleeps collapse), one after another, in a
# network namespace with only loopback and without CAP_SYS_TIME. Wall
# seconds of RUNS rounds (median), alternating so that drift hits both
# alike, and each side's exit statuses (a figure of a run whose tests
# failed says little: tests/compat/matrix.sh go says which). The enrolled
# side has a real-time limit of BENCH_GOTEST_LIMIT seconds (default 300),
# and its exit column then says "limit".
# Knobs: BENCH_GOTEST_RUNS (default 1), BENCH_GOTEST_LIMIT.
source "$(dirname "$0")/../lib.sh"
C=$TOP/tests/compat
RUNS=${BENCH_GOTEST_RUNS:-1}
WLIMIT=${BENCH_GOTEST_LIMIT:-300}

if [ "$(id -u)" != 0 ]; then
	echo "gotest-bench: needs root (a private hermeticd, network namespaces)" >&2
	exit 1
fi
start_daemon || exit 1
export HERMETIC HERMETIC_SOCKET
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0) printf "%.2fx", b / a; else print "-" }'; }
# rcs DIR: the packages' exit statuses of one side, e.g. "0" or "0 1"
rcs() {
	if [ "$(cat "$1.rc" 2>/dev/null)" = 124 ]; then echo limit; return; fi
	cat "$1"/*.rc 2>/dev/null | sort -u | tr '\n' ' ' | sed 's/ $//'
}

printf '%-12s %8s %9s %7s  %s\n' "s (median)" bare enrolled ratio "exit bare/enrolled"
tb=0 te=0
for s in $(grep -v '^#' "$C/go.packages" | cut -f1 | grep -v '^$' | uniq); do
	if ! "$C/go-build.sh" "$s" "$T/$s"; then
		echo "gotest-bench: $s: cannot build: $(grep go-build.sh: "$T/$s/build.log" | tail -3)" >&2
		exit 1
	fi
	: >"$T/b" && : >"$T/e"
	for ((i = 0; i < RUNS; i++)); do
		"$C/run-go.sh" bare "$T/b.$i" "$s" "$T/$s"
		cat "$T/b.$i/$s.bare.sec" >>"$T/b"
		COMPAT_LIMIT=$WLIMIT "$C/run-go.sh" enrolled "$T/e.$i" "$s" "$T/$s"
		cat "$T/e.$i/$s.enrolled.sec" >>"$T/e"
	done
	b=$(median <"$T/b") e=$(median <"$T/e")
	tb=$(awk -v a="$tb" -v b="$b" 'BEGIN { print a + b }')
	te=$(awk -v a="$te" -v b="$e" 'BEGIN { print a + b }')
	printf '%-12s %8s %9s %7s  %s / %s\n' "$s" "$b" "$e" "$(ratio "$b" "$e")" \
		"$(rcs "$T/b.0/$s.bare")" "$(rcs "$T/e.0/$s.enrolled")"
done
printf '%-12s %8s %9s %7s\n' "all" "$tb" "$te" "$(ratio "$tb" "$te")"
