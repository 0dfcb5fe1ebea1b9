#!/usr/bin/env bash
# One seed, one run (issue 29) over every suite kind of the compatibility
# matrix (docs/compatibility.md): each CPython module of python.modules (a
# pair A+B is two modules already listed, not run again), tape's suite, each
# binary of glib.tests, each Go suite of go.packages, each run by the
# matrix's own runner (tests/compat/run-*.sh, MODE checkdet: the very command
# the enrolled side runs, in a network namespace with only loopback, under
# `hermetic check-determinism -n 2 --seed 7` instead of `hermetic enroll`,
# its outputs compared too). Prints per suite "identical" or the first value
# that differed, then per kind how many were identical (bench_summary): once
# with the kernel's schedule and once under --sched serial. One suite at a
# time.
#
#   BENCH_DET_SUITES   the suites to run (default all): python, tape, glib, go
#                      (a whole kind), a module, a GLib binary or a Go suite
#   BENCH_DET_OPTS     one pass with these enroll options instead of the two
#                      (e.g. "" for the kernel's schedule only)
#   BENCH_DET_LIMIT    each suite's real-time limit, both runs (default 600 s)
#   BENCH_DET_OUT      keep the logs and the journals of differing runs here
#                      (PASS/SUITE.checkdet.log, PASS/SUITE.checkdet.kept/,
#                      PASS kernel, serial or pass; default a temporary
#                      directory, removed)
# Printed, never asserted. Needs root (a private hermeticd),
# libpython3.11-testsuite, libglib2.0-tests, golang-1.19-src and node/npm
# (tape is installed by npm ci as for the matrix) (make deps); a kind whose
# prerequisites are missing is reported and skipped. The whole matrix takes
# about 10 minutes a pass on this 2-core machine.
source "$(dirname "$0")/../lib.sh"
C=$TOP/tests/compat
if [ "$(id -u)" != 0 ]; then
	echo "determinism-bench: needs root (a private hermeticd)" >&2
	exit 1
fi
G=${COMPAT_GLIB_DIR:-/usr/libexec/installed-tests/glib}
PY=${COMPAT_PYTHON:-/usr/bin/python3.11}
out=${BENCH_DET_OUT:-$T/det}
mkdir -p "$out"
out=$(cd "$out" && pwd)
start_daemon || exit 1
export HERMETIC HERMETIC_SOCKET
export COMPAT_LIMIT=${BENCH_DET_LIMIT:-600} COMPAT_DET_RUNS=2

mods=$(grep -v '^#' "$C/python.modules" | cut -f1 | grep -v '^$' | grep -vF +)
glibs=$(grep -v '^#' "$C/glib.tests" | cut -f1 | grep -v '^$')
gos=$(grep -v '^#' "$C/go.packages" | cut -f1 | grep -v '^$' | uniq)
want=${BENCH_DET_SUITES:-python tape glib go}
# kind:suite pairs, in the order asked
todo=()
for s in $want; do
	case $s in
	python) for m in $mods; do todo+=("python:$m"); done ;;
	glib) for b in $glibs; do todo+=("glib:$b"); done ;;
	go) for g in $gos; do todo+=("go:$g"); done ;;
	tape) todo+=("tape:tape") ;;
	*)
		if grep -qxF -- "$s" <<<"$mods"; then todo+=("python:$s")
		elif grep -qxF -- "$s" <<<"$glibs"; then todo+=("glib:$s")
		elif grep -qxF -- "$s" <<<"$gos"; then todo+=("go:$s")
		else echo "determinism-bench: no such suite: $s" >&2
		fi ;;
	esac
done

# Every journaled value and the exit statuses agreed, and each stdout line
# that differed is one check-determinism already read as the runs' own pids
# or differs only in regrtest's "load avg: X" prefix: the host's load
# average (os.getloadavg, /proc/loadavg), data from outside the run that
# hermetic leaves alone (/proc is the machine's). Not hidden: counted apart.
loadavg_only() {
	local log=$1 kept=${1%.log}.kept f
	grep -q '^differed:' "$log" && ! grep -qE '^  (first value that differed|exit status):' "$log" &&
		! grep -q '^    and [0-9]* more$' "$log" && [ -d "$kept" ] || return 1
	for f in "$kept"/run-[2-9].stdout; do
		awk 'NR == FNR { a[FNR] = $0; n = FNR; next }
			{ b[FNR] = $0; m = FNR }
			END { for (i = 1; i <= (n > m ? n : m); i++) {
				x = a[i]; y = b[i]
				sub(/load avg: [0-9.]+ /, "", x); sub(/load avg: [0-9.]+ /, "", y)
				if (x != y) print i } }' "$kept/run-1.stdout" "$f"
	done | sort -u | while read -r l; do
		grep -qx "    line $l: .*" "$log" || echo "$l"
	done | grep -q . && return 1
	return 0
}
# The verdict of SUITE's check (its runner's log): "identical: ..." or the
# first thing that differed (three lines folded), or why there is none.
verdict() {
	local log=$1 rc=$2
	if grep -q '^identical:' "$log"; then
		grep '^identical:' "$log"
	elif loadavg_only "$log"; then
		echo "identical but the host's load average (regrtest's \"load avg:\" prefix)"
	elif grep -q '^differed:' "$log"; then
		sed -n '/^differed:/,$p' "$log" | sed -n '2,4p' | tr -s ' \n' ' '
	else
		echo "no verdict (runner exit $rc): $(tail -2 "$log" | tr '\n' ' ' | cut -c1-200)"
	fi
}
# One pass with enroll options OPTS over every suite of todo, its logs in
# OUT/DIR.
pass_() {
	local OPTS=$1 po=$out/$2 k s ks log rc v
	local -A same=() total=() load=()
	export COMPAT_DET_OPTS="--seed 7 $OPTS"
	mkdir -p "$po"
	echo "check-determinism -n 2 --seed 7 ${OPTS:+$OPTS }over the compatibility matrix (limit ${COMPAT_LIMIT} s per suite):"
	for ks in "${todo[@]}"; do
		k=${ks%%:*} s=${ks#*:}
		case $k in
		python)
			if [ ! -d "${PY%/bin/*}/lib/python3.11/test/libregrtest" ]; then
				echo "  $s: skipped: libpython3.11-testsuite is missing"; continue
			fi
			"$C/run-python.sh" checkdet "$po" "$s"
			log=$po/$s.checkdet.log ;;
		glib)
			if [ ! -x "$G/$s" ]; then
				echo "  $s: skipped: GLib's installed tests are missing (libglib2.0-tests)"; continue
			fi
			COMPAT_GLIB_ONLY=$s "$C/run-glib.sh" checkdet "$po"
			mv "$po/glib.checkdet.log" "$po/glib-$s.checkdet.log"
			[ -d "$po/glib.checkdet.kept" ] && mv "$po/glib.checkdet.kept" "$po/glib-$s.checkdet.kept"
			cp "$po/glib.checkdet.rc" "$po/glib-$s.checkdet.rc"
			cp "$po/glib.checkdet.sec" "$po/glib-$s.checkdet.sec"
			log=$po/glib-$s.checkdet.log s=glib:$s ;;
		go)
			if ! "$C/go-build.sh" "$s" "$B/compat-go/$s"; then
				echo "  $s: skipped: its test binaries did not build ($B/compat-go/$s/build.log)"; continue
			fi
			"$C/run-go.sh" checkdet "$po" "$s" "$B/compat-go/$s"
			log=$po/$s.checkdet.log ;;
		tape)
			if ! command -v node >/dev/null || ! "$C/node-setup.sh" "$B/compat-node" >"$po/npm.log" 2>&1; then
				echo "  tape: skipped: could not install tape's suite with npm ci ($(tail -1 "$po/npm.log"))"; continue
			fi
			"$C/run-node.sh" checkdet "$po" "$B/compat-node"
			log=$po/tape.checkdet.log ;;
		esac
		rc=$(cat "${log%.log}.rc" 2>/dev/null)
		total[$k]=$((${total[$k]:-0} + 1))
		v=$(verdict "$log" "$rc")
		[[ $v == identical:* ]] && same[$k]=$((${same[$k]:-0} + 1))
		[[ $v == "identical but the host's load average"* ]] && load[$k]=$((${load[$k]:-0} + 1))
		printf '  %-40s %s (%s s)\n' "$s" "$v" "$(cat "${log%.log}.sec" 2>/dev/null)"
	done
	for k in python tape glib go; do
		[ -n "${total[$k]:-}" ] || continue
		printf '  %-8s identical under one seed: %d of %d (and %d but the host'"'"'s load average)\n' \
			"$k" "${same[$k]:-0}" "${total[$k]}" "${load[$k]:-0}"
		bench_summary "$k suites identical under one seed${OPTS:+ ($OPTS)}" \
			"${same[$k]:-0} of ${total[$k]}" "-" "all"
	done
}
if [ -n "${BENCH_DET_OPTS+x}" ]; then
	pass_ "$BENCH_DET_OPTS" pass
else
	pass_ "" kernel
	pass_ "--sched serial" serial
fi
