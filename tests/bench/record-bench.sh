#!/usr/bin/env bash
# What recording costs (issue 4), through the real shim, daemon and CLI:
#  1. journal bytes for one million clock readings (virtual clock and the
#     real one) and for one million 16-byte getrandom draws: a small C
#     program under 'hermetic enroll --record=DIR --keep-passing';
#  2. recording overhead on a real test suite: a Python unittest module of
#     50 tests, wall time under 'enroll' and 'enroll --record --keep-passing',
#     5 runs each, interleaved.
# Figures are printed, never asserted.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
B=$TOP/build
HERMETIC=$B/hermetic
HERMETICD=$B/hermeticd
RUNS=${BENCH_RUNS:-5}
N=${BENCH_DRAWS:-1000000}

if [ "$(id -u)" != 0 ]; then
	echo "record-bench: needs root (it starts a private hermeticd)" >&2
	exit 1
fi
if [ ! -x "$HERMETICD" ] || [ ! -x "$HERMETIC" ]; then
	echo "record-bench: build/hermeticd or build/hermetic missing (run make)" >&2
	exit 1
fi
T=$(mktemp -d /tmp/hmbench.XXXXXX)
export HERMETIC_SOCKET=$T/d.sock
"$HERMETICD" --socket "$HERMETIC_SOCKET" --subtree "hmbench-$$" --store "$T/store" \
	>"$T/daemon.log" 2>&1 &
HMD=$!
trap 'kill $HMD 2>/dev/null; wait $HMD 2>/dev/null; rm -rf "$T"' EXIT
for _ in $(seq 200); do
	"$HERMETIC" status >/dev/null 2>&1 && break
	sleep 0.05
done

CC=${CC:-$(command -v cc || command -v gcc)}
cat >"$T/draws.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
/* draws clock|random N: N clock_gettime(CLOCK_MONOTONIC) readings or N
 * 16-byte getrandom draws, through libc (so through the shim). */
int main(int argc, char **argv)
{
	long n = atol(argv[2]);
	unsigned char b[16], acc = 0;
	struct timespec ts;

	for (long i = 0; i < n; i++) {
		if (!strcmp(argv[1], "clock")) {
			clock_gettime(CLOCK_MONOTONIC, &ts);
			acc ^= (unsigned char)ts.tv_nsec;
		} else if (getrandom(b, sizeof(b), 0) == sizeof(b)) {
			acc ^= b[0];
		}
	}
	printf("%u\n", acc);
	return 0;
}
EOF
"$CC" -O2 -o "$T/draws" "$T/draws.c" || exit 1

# journal_size KEY LABEL ENROLL-OPTS...: record one run, print the journal's size.
journal_size() {
	local key=$1 name=$2 dir=$T/j-$1 f
	shift 2
	mkdir -p "$dir"
	timeout 600 "$HERMETIC" enroll --spin-limit 0 --record="$dir" --keep-passing "$@" \
		>/dev/null 2>"$T/$key.err"
	f=$(ls "$dir"/*.hjournal 2>/dev/null | head -n 1)
	if [ -z "$f" ]; then
		printf '  %-44s no journal: %s\n' "$name" "$(tail -n 2 "$T/$key.err" | tr '\n' ' ')"
		return
	fi
	printf '  %-44s %10d bytes  (%s)\n' "$name" "$(stat -c %s "$f")" \
		"$("$HERMETIC" journals show --json "$f" | python3 -c '
import json, sys
d = json.load(sys.stdin)
c = sum(p["clock"] for p in d["processes"])
e = sum(p["entropy"] for p in d["processes"])
b = sum(p["entropy_bytes"] for p in d["processes"])
k = d["kernel"]
print("%d clock readings, %d draws of %d bytes; kernel: %s records, %s dropped" % (c, e, b, k["records"], k["dropped"]))')"
}

echo "journal size, $N values (zstd level 3, through the shim):"
journal_size cv "clock_gettime, virtual clock (1us tick)" -- "$T/draws" clock "$N"
journal_size cr "clock_gettime, real clock (--clock off)" --clock off -- "$T/draws" clock "$N"
journal_size rs "getrandom 16 B, seeded" -- "$T/draws" random "$N"
journal_size rr "getrandom 16 B, real (--rng off)" --rng off -- "$T/draws" random "$N"

# A real suite: 50 unittest tests doing what tests do (uuids, times, json,
# hashing, temp files, sorting, a subprocess now and then).
mkdir -p "$T/suite"
python3 - "$T/suite/test_suite.py" <<'PY'
import sys
out = ["import hashlib, json, os, random, subprocess, sys, tempfile, time, unittest, uuid", "",
       "class Suite(unittest.TestCase):"]
for i in range(50):
    kind = i % 5
    out.append(f"    def test_{i:02d}(self):")
    if kind == 0:
        out.append(f"        ids = {{str(uuid.uuid4()) for _ in range(2000)}}")
        out.append(f"        self.assertEqual(len(ids), 2000)")
    elif kind == 1:
        out.append(f"        t0 = time.monotonic()")
        out.append(f"        d = {{str(k): [time.time(), k * {i}] for k in range(3000)}}")
        out.append(f"        self.assertEqual(json.loads(json.dumps(d))['7'][1], 7 * {i})")
        out.append(f"        self.assertGreaterEqual(time.monotonic(), t0)")
    elif kind == 2:
        out.append(f"        h = hashlib.sha256(os.urandom(1 << 16)).hexdigest()")
        out.append(f"        self.assertEqual(len(h), 64)")
    elif kind == 3:
        out.append(f"        with tempfile.TemporaryDirectory() as d:")
        out.append(f"            for k in range(50):")
        out.append(f"                with open(os.path.join(d, str(k)), 'w') as f: f.write('x' * k)")
        out.append(f"            self.assertEqual(len(os.listdir(d)), 50)")
    else:
        out.append(f"        xs = [random.random() for _ in range(20000)]")
        out.append(f"        self.assertEqual(sorted(xs)[0], min(xs))")
        if i % 10 == 4:
            out.append(f"        r = subprocess.run([sys.executable, '-c', 'import uuid; print(uuid.uuid4())'], capture_output=True)")
            out.append(f"        self.assertEqual(r.returncode, 0)")
open(sys.argv[1], "w").write("\n".join(out) + "\n")
PY

# timed LABEL ENROLL-OPTS...: one run's wall time in ms.
timed() {
	local t0 t1
	t0=$(date +%s%N)
	(cd "$T/suite" && timeout 600 "$HERMETIC" enroll "$@" -- python3 -m unittest -q test_suite \
		>/dev/null 2>>"$T/suite.err")
	t1=$(date +%s%N)
	echo $(((t1 - t0) / 1000000))
}
plain=() rec=()
mkdir -p "$T/jsuite"
timed --seed 1 >/dev/null # warm-up (page cache, pycache)
for ((i = 0; i < RUNS; i++)); do
	plain+=("$(timed --seed 1)")
	rec+=("$(timed --seed 1 --record="$T/jsuite" --keep-passing)")
done
stats() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1; s+=$1} END {printf "median %d ms, mean %d ms, min %d ms", a[int((NR+1)/2)], s/NR, a[1]}'; }
echo "recording overhead, 50-test Python unittest suite, $RUNS runs each:"
printf '  %-30s %s  [%s]\n' "enroll" "$(stats "${plain[@]}")" "${plain[*]}"
printf '  %-30s %s  [%s]\n' "enroll --record --keep-passing" "$(stats "${rec[@]}")" "${rec[*]}"
f=$(ls "$T"/jsuite/*.hjournal 2>/dev/null | head -n 1)
[ -n "$f" ] && printf '  %-30s %d bytes per run\n' "journal" "$(stat -c %s "$f")"
exit 0
