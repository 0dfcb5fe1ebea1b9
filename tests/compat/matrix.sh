#!/usr/bin/env bash
# The compatibility matrix (docs/compatibility.md): real test suites that
# nobody here wrote, each run bare and under `hermetic enroll` with default
# options, compared per test case.
#
#   tests/compat/matrix.sh [-o OUT] [SUITE...]
#
# SUITE is a module of python.modules (CPython's own test suite), or a pair
# A+B of them (the two modules at once, each in a run of its own), `tape`
# (tape's own test suite, from the npm registry), `glib` (GLib's installed
# tests of glib.tests: a C event loop, from Debian's libglib2.0-tests) or a Go suite of
# go.packages (Go's standard library tests from Debian's golang-1.19-src,
# golang.org/x/sync's and four timer modules' from Debian's gocode); `go` names every Go suite;
# default all. Both sides run
# in a network namespace of their own with only loopback and without
# CAP_SYS_TIME (netns.sh). The enrolled side uses a private hermeticd (its
# own socket, cgroup subtree and runtime directory, tests/lib.sh). Per suite
# it prints PASS when every case that passes bare passes enrolled, or FAIL
# naming the cases that regress, with their output; cases that fail or are
# skipped bare are reported, not counted. OUT (default a temporary
# directory) keeps every log, matrix.tsv (the figures) and SUITE.report.
#
# The two sides of a suite run at the same time, each in its own namespace,
# so that they see the same machine load; suites run one after another.
# COMPAT_LIMIT (default 900) is each side's real-time limit in seconds.
source "$(dirname "$0")/../lib.sh"
C=$TOP/tests/compat
PY=${COMPAT_PYTHON:-/usr/bin/python3.11}
out=
while getopts o: opt; do
	case $opt in
	o) out=$OPTARG ;;
	*) echo "usage: matrix.sh [-o OUT] [SUITE...]" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
out=${out:-$T/out}
mkdir -p "$out"
out=$(cd "$out" && pwd)

mods=$(grep -v '^#' "$C/python.modules" | cut -f1 | grep -v '^$')
gos=$(grep -v '^#' "$C/go.packages" | cut -f1 | grep -v '^$' | uniq)
suites=()
for s in "$@"; do
	if [ "$s" = go ]; then suites+=($gos); else suites+=("$s"); fi
done
[ "$#" = 0 ] && suites=($mods tape glib $gos)

need_root compat || exit 0
if [ ! -x "$PY" ] || [ ! -d "${PY%/bin/*}/lib/python3.11/test/libregrtest" ]; then
	fail compat "CPython's test suite for $PY is missing: apt-get install libpython3.11-testsuite"
	exit 0
fi
start_daemon || { fail compat "daemon did not start: $(tail -3 "$T/daemon.log" | tr '\n' '|')"; exit 0; }
export HERMETIC HERMETIC_SOCKET

: >"$out/matrix.tsv"

# The markers of a CPython module's own time limits going off: regrtest's
# and faulthandler's "Timeout (h:mm:ss)!", test_concurrent_futures' 300 s
# guard and deadlock guard, a timed wait that raised.
OWN_TIMEOUTS='^Timeout \(|test lasted too long|Executor deadlock|TimeoutError:|timed out|within timeout'

# A pair A+B of python.modules (a loaded runner): A and B each in a run of
# its own, at once, bare (both) beside enrolled (both): four regrtest runs
# side by side on the machine. Each module is compared case by case (one
# PASS/FAIL per module, OUT/A+B/), and one line more says whether an
# enrolled module raised one of its own timeouts (OWN_TIMEOUTS in its log).
python_pair() {
	local pair=$1 m pids=() po=$out/$1 hits
	mkdir -p "$po"
	grep -v '^#' "$C/python.exclude" | cut -f1 | grep -v '^$' >"$T/ignore"
	for m in ${pair//+/ }; do
		if "$PY" -m test --list-cases --ignorefile "$T/ignore" "$m" 2>&1 | grep -i vsock >"$T/vsock"; then
			fail "$pair" "AF_VSOCK cases would run in $m (add them to python.exclude): $(head -3 "$T/vsock" | tr '\n' ' ')"
			return
		fi
	done
	for m in ${pair//+/ }; do
		"$C/run-python.sh" bare "$po" "$m" &
		pids+=($!)
		"$C/run-python.sh" enrolled "$po" "$m" &
		pids+=($!)
	done
	wait "${pids[@]}"
	for m in ${pair//+/ }; do
		"$PY" "$C/compare.py" junit "$m" "$po" --tsv "$out/matrix.tsv" --report "$po/$m.report" |
			sed "1s/^\(PASS\|FAIL\) $m/\1 $pair:$m/"
	done
	# (hermetic's own lines are not the module's: "hermetic: lag bound:
	# ... timed out after 1 s of real time" says a wait of a busy run was
	# ended, which is what the bound is for)
	hits=$(for m in ${pair//+/ }; do grep -EHn "$OWN_TIMEOUTS" "$po/$m.enrolled.log" |
		grep -Ev '^[^:]*:[0-9]+:hermetic: '; done | head -5)
	if [ -n "$hits" ]; then
		fail "$pair:own-timeouts" "an enrolled module raised its own timeout: $(tr '\n' '|' <<<"$hits")"
	else
		pass "$pair:own-timeouts: neither enrolled module raised one of its own timeouts"
	fi
}
for s in "${suites[@]}"; do
	if [ "$s" = tape ]; then
		nd=$B/compat-node
		if ! command -v node >/dev/null || ! "$C/node-setup.sh" "$nd" >"$out/npm.log" 2>&1; then
			fail "tape" "could not install tape's suite with npm ci: $(tail -5 "$out/npm.log" | tr '\n' '|')"
			continue
		fi
		"$C/run-node.sh" bare "$out" "$nd" &
		bare=$!
		"$C/run-node.sh" enrolled "$out" "$nd"
		wait $bare
		"$PY" "$C/compare.py" tap tape "$out" --tsv "$out/matrix.tsv" --report "$out/tape.report"
	elif [ "$s" = glib ]; then
		if [ ! -x "${COMPAT_GLIB_DIR:-/usr/libexec/installed-tests/glib}/mainloop" ]; then
			fail glib "GLib's installed tests are missing: apt-get install libglib2.0-tests (make deps)"
			continue
		fi
		"$C/run-glib.sh" bare "$out" &
		bare=$!
		"$C/run-glib.sh" enrolled "$out"
		wait $bare
		"$PY" "$C/compare.py" tap glib "$out" --tsv "$out/matrix.tsv" --report "$out/glib.report"
	elif grep -qx "$s" <<<"$gos"; then
		# Compiled once for both sides (go-build.sh), outside their time.
		gd=$T/$s
		if ! "$C/go-build.sh" "$s" "$gd"; then
			fail "$s" "could not build its test binaries: $(grep go-build.sh: "$gd/build.log" | tail -5 | tr '\n' '|')"
			continue
		fi
		"$C/run-go.sh" bare "$out" "$s" "$gd" &
		bare=$!
		"$C/run-go.sh" enrolled "$out" "$s" "$gd"
		wait $bare
		"$PY" "$C/compare.py" gojson "$s" "$out" --tsv "$out/matrix.tsv" --report "$out/$s.report"
	elif [[ $s == *+* ]] && grep -qxF "$s" <<<"$mods"; then
		python_pair "$s"
	elif grep -qx "$s" <<<"$mods"; then
		# No AF_VSOCK case may run, bare or enrolled: they reach the
		# hypervisor, which no network namespace stops. python.exclude
		# leaves them out by name; check that none is left.
		grep -v '^#' "$C/python.exclude" | cut -f1 | grep -v '^$' >"$T/ignore"
		if "$PY" -m test --list-cases --ignorefile "$T/ignore" "$s" 2>&1 | grep -i vsock >"$T/vsock"; then
			fail "$s" "AF_VSOCK cases would run (add them to python.exclude): $(head -3 "$T/vsock" | tr '\n' ' ')"
			continue
		fi
		"$C/run-python.sh" bare "$out" "$s" &
		bare=$!
		"$C/run-python.sh" enrolled "$out" "$s"
		wait $bare
		"$PY" "$C/compare.py" junit "$s" "$out" --tsv "$out/matrix.tsv" --report "$out/$s.report"
	else
		fail "$s" "no such suite (python.modules, tape, glib, go.packages or go)"
	fi
done
