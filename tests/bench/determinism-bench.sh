#!/usr/bin/env bash
# One seed, one run (issue 29), measured on code nobody here wrote: each
# binary of GLib's installed tests that the compatibility matrix runs
# (tests/compat/glib.tests: a C event loop, threads, timed waits, spawn)
# under `hermetic check-determinism -n 2 --seed 7` in a network namespace
# with only loopback (tests/compat/netns.sh), printing per binary
# "identical" or the first value that differed, then how many were
# identical. Extra enroll options: BENCH_DET_OPTS (e.g. "--sched serial"),
# printed beside the figure. Printed, never asserted. Needs root (a private
# hermeticd) and libglib2.0-tests (make deps).
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
OPTS=${BENCH_DET_OPTS:-}
same=0 total=0
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
		printf '  %-22s %s\n' "$b" "$(grep -A1 'first value that differed\|^hermetic' <<<"$out" |
			grep -v '^hermetic check-determinism:' | head -2 | tr -s ' \n' ' ')"
	fi
	rm -rf /tmp/hermetic-checkdet-* 2>/dev/null
done < <(grep -v '^#' "$TOP/tests/compat/glib.tests" | grep -v '^$')
printf '  identical under one seed: %d of %d binaries\n' "$same" "$total"
bench_summary "GLib's tests identical under one seed${OPTS:+ ($OPTS)}" "$same of $total" "-" "all"
