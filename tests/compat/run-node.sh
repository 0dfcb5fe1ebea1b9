#!/usr/bin/env bash
# run-node.sh MODE OUT DIR: tape's own test suite, as published (installed
# in DIR by node-setup.sh), one `node test/FILE.js` after another inside ONE
# run (bare, or one `hermetic enroll` with default options, as a user would
# enroll `npm test`), in a network namespace with only loopback and without
# CAP_SYS_TIME (netns.sh). Each file prints TAP: OUT/tape.MODE/FILE.tap and
# FILE.rc; OUT/tape.MODE.log, .sec and .rc as run-python.sh. Files named in
# node.exclude do not run. The real-time limit (COMPAT_LIMIT, default 900 s)
# is outside the run.
# MODE checkdet: as run-python.sh says.
set -u
here=$(cd "$(dirname "$0")" && pwd)
mode=$1 out=$2 dir=$3
limit=${COMPAT_LIMIT:-900}
pre=()
case "$mode" in
bare) ;;
enrolled) pre=("${HERMETIC:?HERMETIC names the hermetic binary}" enroll ${COMPAT_ENROLL_OPTS:-} --) ;;
checkdet) pre=("${HERMETIC:?HERMETIC names the hermetic binary}" check-determinism -n "${COMPAT_DET_RUNS:-2}" \
	${COMPAT_DET_OPTS:---seed 7} ${COMPAT_ENROLL_OPTS:-} -- env COMPAT_CHECKDET=1) ;;
*) echo "run-node.sh: MODE is bare, enrolled or checkdet, not '$mode'" >&2; exit 2 ;;
esac
base=$out/tape.$mode
rm -rf "$base" && mkdir -p "$base"
files=()
for f in "$dir"/node_modules/tape/test/*.js; do
	f=${f##*/}
	grep -qx "${f%.js}	.*" "$here/node.exclude" && continue
	files+=("$f")
done
start=$(date +%s.%N)
# (the suite's own cwd is tape's package directory, as for npm test)
(cd "$dir/node_modules/tape" && timeout -k 10 "$limit" "$here/netns.sh" "${pre[@]}" \
	bash -c 'out=$1; shift; for f; do node "test/$f" >"$out/${f%.js}.tap" 2>&1; echo $? >"$out/${f%.js}.rc"
		[ -z "${COMPAT_CHECKDET:-}" ] || cat "$out/${f%.js}.tap"; done' \
	run-node "$base" "${files[@]}") >"$base.log" 2>&1
echo $? >"$base.rc"
awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f\n", e - s }' >"$base.sec"
# checkdet: the runs' journals and outputs, kept by check-determinism when
# they differ (in TMPDIR), moved out of the side's scratch directory
kept=$(sed -n 's/^ *journals and outputs kept in //p' "$base.log")
if [ "$mode" = checkdet ] && [ -n "$kept" ] && [ -d "$kept" ]; then mv "$kept" "$base.kept"; fi
