#!/usr/bin/env bash
# One seed, one run (issue 29), measured on code nobody here wrote: each
# binary of GLib's installed tests that the compatibility matrix runs
# (tests/compat/glib.tests: a C event loop, threads, timed waits, spawn)
# under `hermetic check-determinism -n 2 --seed 7` in a network namespace
# with only loopback (tests/compat/netns.sh), printing per binary
# "identical" or the first value that differed, then how many were
# identical: once with the kernel's schedule and once under --sched serial
# (BENCH_DET_OPTS replaces the two with one pass of those enroll options).
# Printed, never asserted. Needs root (a private hermeticd) and
# libglib2.0-tests (make deps).
source "$(dirname "$0")/../lib.sh"
if [ "$(id -u)" != 0 ]; then
	echo "determinism-bench: needs root (a private hermeticd)" >&2
	exit 1
fi
G=${COMPAT_GLIB_DIR:-/usr/libexec/installed-tests/glib}
if [ ! -x "$G/mainloop" ]; then
	echo "determinism-bench: GLib's installed tests are missing: apt-get install libglib2.0-tests (make deps)" >&2
	exit 1
fi
start_daemon || exit 1
pass() {
	local OPTS=$1 same=0 total=0 out b kept
	echo "check-determinism -n 2 --seed 7 ${OPTS:+$OPTS }on GLib's installed tests (-m slow):"
	while IFS=$'\t' read -r b _; do
		total=$((total + 1))
		# shellcheck disable=SC2086 # OPTS is words
		out=$(cd "$G" && G_TEST_SRCDIR=$G G_TEST_BUILDDIR=$G HOME=$T TMPDIR=$T timeout -k 10 600 \
			"$TOP/tests/compat/netns.sh" "$HERMETIC" check-determinism -n 2 --seed 7 $OPTS -- \
			./"$b" --tap -m slow 2>&1)
		if grep -q '^identical:' <<<"$out"; then
			same=$((same + 1))
			printf '  %-22s %s\n' "$b" "$(grep '^identical:' <<<"$out")"
		else
			# what differed first: a value, or (every value the same) a line of output
			printf '  %-22s %s\n' "$b" "$(sed -n '/^differed:/,$p' <<<"$out" | sed -n '2,4p' | tr -s ' \n' ' ')"
		fi
		# the runs' journals, kept when they differ (only this run's)
		kept=$(sed -n 's/^ *journals and outputs kept in //p' <<<"$out")
		case $kept in "$T"/hermetic-checkdet-* | /tmp/hermetic-checkdet-*) rm -rf -- "$kept" ;; esac
	done < <(grep -v '^#' "$TOP/tests/compat/glib.tests" | grep -v '^$')
	printf '  identical under one seed: %d of %d binaries\n' "$same" "$total"
	bench_summary "GLib's tests identical under one seed${OPTS:+ ($OPTS)}" "$same of $total" "-" "all"
}
if [ -n "${BENCH_DET_OPTS+x}" ]; then
	pass "$BENCH_DET_OPTS"
else
	pass ""
	pass "--sched serial"
fi
