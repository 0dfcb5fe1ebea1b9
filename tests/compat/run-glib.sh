#!/usr/bin/env bash
# run-glib.sh MODE OUT: GLib's own installed tests (glib.tests, or those of them
# named in COMPAT_GLIB_ONLY; Debian's
# libglib2.0-tests), one binary after another inside ONE run (bare, or one
# `hermetic enroll` with default options), in a network namespace with only
# loopback and without CAP_SYS_TIME (netns.sh): a C event loop (GMainLoop)
# with its timers, child watches, signal sources, threads and timed waits.
# Each binary prints TAP (--tap), its timing-heavy cases included (-m slow,
# what GLib skips by default and what the clock changes most):
# OUT/glib.MODE/NAME.tap and NAME.rc;
# OUT/glib.MODE.log, .sec and .rc as run-python.sh. Each binary runs in its
# own directory (G_TEST_SRCDIR, G_TEST_BUILDDIR: where its data files are,
# as gnome-desktop-testing-runner sets them) with HOME and TMPDIR private to
# the side. The real-time limit (COMPAT_LIMIT, default 900 s) is outside the
# run.
# MODE checkdet: as run-python.sh says.
set -u
here=$(cd "$(dirname "$0")" && pwd)
mode=$1 out=$2
limit=${COMPAT_LIMIT:-900}
dir=${COMPAT_GLIB_DIR:-/usr/libexec/installed-tests/glib}
pre=()
case "$mode" in
bare) ;;
enrolled) pre=("${HERMETIC:?HERMETIC names the hermetic binary}" enroll ${COMPAT_ENROLL_OPTS:-} --) ;;
checkdet) pre=("${HERMETIC:?HERMETIC names the hermetic binary}" check-determinism -n "${COMPAT_DET_RUNS:-2}" \
	${COMPAT_DET_OPTS:---seed 7} ${COMPAT_ENROLL_OPTS:-} -- env COMPAT_CHECKDET=1) ;;
*) echo "run-glib.sh: MODE is bare, enrolled or checkdet, not '$mode'" >&2; exit 2 ;;
esac
base=$out/glib.$mode
rm -rf "$base" && mkdir -p "$base"
tmp=$(mktemp -d "$out/tmp.glib.$mode.XXXXXX")
bins=()
while IFS=$'\t' read -r b _; do
	[ -n "${COMPAT_GLIB_ONLY:-}" ] && [[ " $COMPAT_GLIB_ONLY " != *" $b "* ]] && continue
	bins+=("$b")
done < <(grep -v '^#' "$here/glib.tests" | grep -v '^$')
start=$(date +%s.%N)
(export G_TEST_SRCDIR=$dir G_TEST_BUILDDIR=$dir HOME=$tmp TMPDIR=$tmp XDG_RUNTIME_DIR=$tmp \
	GIO_USE_VFS=local GSETTINGS_BACKEND=memory
	unset DBUS_SESSION_BUS_ADDRESS DISPLAY WAYLAND_DISPLAY
	cd "$dir" && timeout -k 10 "$limit" "$here/netns.sh" "${pre[@]}" \
	bash -c 'out=$1; shift; for b; do ./"$b" --tap -m slow >"$out/$b.tap" 2>&1; echo $? >"$out/$b.rc"
		[ -z "${COMPAT_CHECKDET:-}" ] || cat "$out/$b.tap"; done' \
	run-glib "$base" "${bins[@]}") >"$base.log" 2>&1
echo $? >"$base.rc"
awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f\n", e - s }' >"$base.sec"
# checkdet: the runs' journals and outputs, kept by check-determinism when
# they differ (in TMPDIR), moved out of the side's scratch directory
kept=$(sed -n 's/^ *journals and outputs kept in //p' "$base.log")
if [ "$mode" = checkdet ] && [ -n "$kept" ] && [ -d "$kept" ]; then mv "$kept" "$base.kept"; fi
rm -rf "$tmp"
