#!/usr/bin/env bash
# run-go.sh MODE OUT SUITE DIR: one Go suite of go.packages, its test
# binaries compiled beforehand by go-build.sh into DIR, run as `go test
# -short` would run them (in the package's source directory, -test.v,
# -test.short: what Go's own release checks run), one package after another
# inside ONE run (bare, or one `hermetic enroll` with default options), in a
# network namespace with only loopback and without CAP_SYS_TIME (netns.sh).
# Each package's output, converted to `go test -json` events by go tool
# test2json outside the run, goes to OUT/SUITE.MODE/PKG.json, its exit status
# to PKG.rc; OUT/SUITE.MODE.log, .sec and .rc as run-python.sh. GOCACHE,
# GOPATH and TMPDIR are private to the side. Each binary's own -test.timeout
# (COMPAT_GO_TIMEOUT, default 300s) makes a hang a failure with every
# goroutine's stack; the real-time limit (COMPAT_LIMIT, default 900 s) is
# outside the run.
# MODE checkdet: as run-python.sh says.
set -u
here=$(cd "$(dirname "$0")" && pwd)
mode=$1 out=$2 suite=$3 dir=$4
limit=${COMPAT_LIMIT:-900}
gotimeout=${COMPAT_GO_TIMEOUT:-300s}
GOROOT=${COMPAT_GOROOT:-/usr/lib/go-1.19}
pre=()
case "$mode" in
bare) ;;
enrolled) pre=("${HERMETIC:?HERMETIC names the hermetic binary}" enroll ${COMPAT_ENROLL_OPTS:-} --) ;;
checkdet) pre=("${HERMETIC:?HERMETIC names the hermetic binary}" check-determinism -n "${COMPAT_DET_RUNS:-2}" \
	${COMPAT_DET_OPTS:---seed 7} ${COMPAT_ENROLL_OPTS:-} -- env COMPAT_CHECKDET=1) ;;
*) echo "run-go.sh: MODE is bare, enrolled or checkdet, not '$mode'" >&2; exit 2 ;;
esac
base=$out/$suite.$mode
rm -rf "$base" && mkdir -p "$base"
tmp=$(mktemp -d "$out/tmp.$suite.$mode.XXXXXX")
mkdir -p "$tmp/cache" "$tmp/gopath"
bins=()
while IFS=$'\t' read -r s pkg _; do
	[ "$s" = "$suite" ] && bins+=("$dir/${pkg//\//_}")
done < <(grep -v '^#' "$here/go.packages" | grep -v '^$')
start=$(date +%s.%N)
# os/exec's and net/http's tests run the go command and their own binary
# again: GOROOT and its bin/ on PATH, offline, caches private to this side.
(export GOROOT PATH=$GOROOT/bin:$PATH GOCACHE=$tmp/cache GOPATH=$tmp/gopath GOFLAGS= \
	GO111MODULE=off GOPROXY=off TMPDIR=$tmp
	timeout -k 10 "$limit" "$here/netns.sh" "${pre[@]}" bash -c '
	out=$1 t=$2; shift 2
	# under check-determinism every run starts from empty caches (what a
	# run built, the next would find) and its outputs are its stdout
	if [ -n "${COMPAT_CHECKDET:-}" ]; then
		rm -rf "$GOCACHE" "$GOPATH" && mkdir -p "$GOCACHE" "$GOPATH" || exit 125
	fi
	for b; do
		n=${b##*/}
		(cd "$(cat "$b.src")" && "$b.test" -test.v -test.short -test.timeout "$t" \
			-test.run "$(cat "$b.run")") >"$out/$n.out" 2>&1
		echo $? >"$out/$n.rc"
		[ -z "${COMPAT_CHECKDET:-}" ] || cat "$out/$n.out"
	done' run-go "$base" "$gotimeout" "${bins[@]}") >"$base.log" 2>&1
echo $? >"$base.rc"
awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f\n", e - s }' >"$base.sec"
for b in "${bins[@]}"; do
	n=${b##*/}
	[ -f "$base/$n.out" ] || continue
	"$GOROOT/bin/go" tool test2json -p "$(cat "$b.path")" <"$base/$n.out" >"$base/$n.json"
done
# checkdet: the runs' journals and outputs, kept by check-determinism when
# they differ (in TMPDIR), moved out of the side's scratch directory
kept=$(sed -n 's/^ *journals and outputs kept in //p' "$base.log")
if [ "$mode" = checkdet ] && [ -n "$kept" ] && [ -d "$kept" ]; then mv "$kept" "$base.kept"; fi
rm -rf "$tmp"
