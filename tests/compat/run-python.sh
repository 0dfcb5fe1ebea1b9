#!/usr/bin/env bash
# run-python.sh MODE OUT MODULE: one module of CPython's own test suite
# (Debian's libpython3.11-testsuite, for /usr/bin/python3.11) through
# regrtest, in a network namespace with only loopback and without
# CAP_SYS_TIME (netns.sh); MODE is bare or enrolled (hermetic enroll with
# default options, HERMETIC environment from the caller). Writes
# OUT/MODULE.MODE.xml (regrtest's JUnit XML: one record per test case),
# .log (its output), .sec (wall seconds) and .rc (its exit status).
# The real-time limit (COMPAT_LIMIT, default 900 s) is outside the run: inside
# an enrolled run every timeout is virtual (docs/virtual-time.md).
# MODE checkdet (tests/bench/determinism-bench.sh) runs the enrolled
# side's command under `hermetic check-determinism -n COMPAT_DET_RUNS
# COMPAT_DET_OPTS` (default -n 2 --seed 7) instead: its verdict is .log, the
# runs' journals and outputs when they differ OUT/MODULE.checkdet.kept/; inside,
# COMPAT_CHECKDET=1 (the other runners then also print each output to stdout,
# where the check compares it).
set -u
here=$(cd "$(dirname "$0")" && pwd)
mode=$1 out=$2 mod=$3
py=${COMPAT_PYTHON:-/usr/bin/python3.11}
limit=${COMPAT_LIMIT:-900}
pre=()
case "$mode" in
bare) ;;
enrolled) pre=("${HERMETIC:?HERMETIC names the hermetic binary}" enroll ${COMPAT_ENROLL_OPTS:-} --) ;;
checkdet) pre=("${HERMETIC:?HERMETIC names the hermetic binary}" check-determinism -n "${COMPAT_DET_RUNS:-2}" \
	${COMPAT_DET_OPTS:---seed 7} ${COMPAT_ENROLL_OPTS:-} -- env COMPAT_CHECKDET=1) ;;
*) echo "run-python.sh: MODE is bare, enrolled or checkdet, not '$mode'" >&2; exit 2 ;;
esac
base=$out/$mod.$mode
tmp=$(mktemp -d "$out/tmp.$mod.$mode.XXXXXX")
grep -v '^#' "$here/python.exclude" | cut -f1 | grep -v '^$' >"$tmp/ignore"
start=$(date +%s.%N)
# (cd to the scratch dir: regrtest writes its own files under the cwd)
(cd "$tmp" && timeout -k 10 "$limit" "$here/netns.sh" "${pre[@]}" "$py" -m test \
	-v --tempdir "$tmp" --ignorefile "$tmp/ignore" --junit-xml "$base.xml" "$mod") >"$base.log" 2>&1
echo $? >"$base.rc"
awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f\n", e - s }' >"$base.sec"
# checkdet: the runs' journals and outputs, kept by check-determinism when
# they differ (in TMPDIR), moved out of the side's scratch directory
kept=$(sed -n 's/^ *journals and outputs kept in //p' "$base.log")
if [ "$mode" = checkdet ] && [ -n "$kept" ] && [ -d "$kept" ]; then mv "$kept" "$base.kept"; fi
rm -rf "$tmp"
