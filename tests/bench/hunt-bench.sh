#!/usr/bin/env bash
# hermetic hunt against blind reruns, printed, never asserted: a passing,
# sleep-heavy command (1 s of sleeps per run) hunted with N runs against N
# bare sequential runs (goal: hunt at most 0.1x of their wall time), and
# runs per minute of each; the same for a Go test, beside 'go test -count N',
# and for a pytest test beside blind reruns in one pytest process (pytest
# --count N of pytest-repeat: what pytest-flakefinder's --flake-runs does;
# flakefinder itself is not packaged by Debian) and pytest --hermetic-hunt N.
source "$(dirname "$0")/../lib.sh"

if [ "$(id -u)" != 0 ]; then
	echo "hunt-bench: needs root (a private hermeticd)" >&2
	exit 1
fi
start_daemon || exit 1
PY=/usr/bin/python3
N=${BENCH_HUNT_RUNS:-20}
cd "$T"

bare_n() { for ((i = 0; i < N; i++)); do "$@" || return 1; done; }
row() { # NAME BARE_MS HUNT_MS
	local ratio bare_rpm hunt_rpm
	ratio=$(awk -v b="$2" -v h="$3" 'BEGIN { printf "%.3f", b ? h / b : 0 }')
	bare_rpm=$(awk -v n="$N" -v b="$2" 'BEGIN { printf "%.0f", b ? n * 60000 / b : 0 }')
	hunt_rpm=$(awk -v n="$N" -v h="$3" 'BEGIN { printf "%.0f", h ? n * 60000 / h : 0 }')
	printf '%-44s bare %6d ms (%s runs/min)  hunt %6d ms (%s runs/min)  ratio %sx (goal <= 0.1x)\n' \
		"$1" "$2" "$bare_rpm" "$3" "$hunt_rpm" "$ratio"
	bench_summary "hunt: $1, $N runs vs bare" "${ratio}x, $hunt_rpm runs/min" \
		"bare sequential: $bare_rpm runs/min" "<= 0.1x"
}

cat >sleepy.py <<'PY'
import time
for _ in range(10):
    time.sleep(0.1)
PY
bare=$(wall_ms bare_n "$PY" sleepy.py)
hunt=$(wall_ms "$HERMETIC" hunt --runs "$N" -- "$PY" sleepy.py)
row "python, 10 x sleep(0.1) per run" "$bare" "$hunt"

# pytest: blind reruns in one process against hunting, both ways.
if "$PY" -c 'import pytest, pytest_repeat' 2>/dev/null; then
	cat >test_sleepy.py <<'PY'
import time
def test_sleepy():
    for _ in range(10):
        time.sleep(0.1)
PY
	pyt() { "$PY" -m pytest -p no:cacheprovider -q "$@" test_sleepy.py; }
	bare=$(wall_ms pyt --count "$N")
	hunt=$(wall_ms "$HERMETIC" hunt --runs "$N" -- "$PY" -m pytest -p no:cacheprovider -q test_sleepy.py)
	row "pytest, 10 x sleep(0.1) (bare: pytest --count N)" "$bare" "$hunt"
	hunt=$(PYTHONPATH=$TOP/python HERMETIC_BIN=$HERMETIC wall_ms "$HERMETIC" enroll -- \
		"$PY" -m pytest -p hermetic.pytest_plugin -p no:cacheprovider -q --hermetic-hunt "$N" test_sleepy.py)
	row "pytest --hermetic-hunt N (one process)" "$bare" "$hunt"
else
	echo "hunt-bench: pytest-repeat not installed (make deps): no pytest row"
fi

if command -v go >/dev/null; then
	mkdir -p gosleep && cd gosleep
	printf 'module sleepy\n\ngo 1.19\n' >go.mod
	cat >sleepy_test.go <<'GO'
package sleepy

import (
	"testing"
	"time"
)

func TestSleepy(t *testing.T) {
	for i := 0; i < 5; i++ {
		time.Sleep(200 * time.Millisecond)
	}
}
GO
	export GOCACHE=$T/gocache GOPATH=$T/gopath GOFLAGS=
	if go test -c -o ../sleepy.test >"$T/go.log" 2>&1; then
		bare=$(wall_ms go test -count "$N" ./...)
		cd "$T"
		hunt=$(wall_ms "$HERMETIC" hunt --runs "$N" -- ./sleepy.test -test.count 1)
		row "go test, 5 x Sleep(200ms) (bare: go test -count N)" "$bare" "$hunt"
	else
		echo "hunt-bench: go test -c failed: $(tail -2 "$T/go.log")"
		cd "$T"
	fi
fi
