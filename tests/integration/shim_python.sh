#!/usr/bin/env bash
# Python 3 under the shim: frozen and advancing clocks, instant sleeps and
# timed waits, seeded entropy everywhere Python draws it, and a process tree.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/shim_lib.sh"
shim_built python || exit 0
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3) || { skip python "python3 not installed"; exit 0; }

cat >"$T/basic.py" <<'PYEOF'
import ctypes, os, sys, time
h = ctypes.CDLL(sys.argv[1])
h.hermetic_now_ns.restype = ctypes.c_int64
h.hermetic_seed.restype = ctypes.c_uint64

class TS(ctypes.Structure):
    _fields_ = [("s", ctypes.c_long), ("ns", ctypes.c_long)]

def real():
    ts = TS()
    h.hermetic_real_clock_gettime(1, ctypes.byref(ts))
    return ts.s + ts.ns / 1e9

print("active", h.hermetic_active(), h.hermetic_seed())
print("start", repr(time.time()))
m = [time.monotonic_ns() for _ in range(4)]
print("mono_steps", sorted(set(b - a for a, b in zip(m, m[1:]))))
t0, r0 = time.time(), real()
time.sleep(5)
print("sleep_advance", round(time.time() - t0, 6))
print("sleep_fast", (real() - r0) < 1)
import asyncio
t0, r0 = time.time(), real()
asyncio.run(asyncio.sleep(30))
print("asyncio_advance", round(time.time() - t0, 3), "fast", (real() - r0) < 1)
import threading
t0, r0 = time.time(), real()
print("event_wait", threading.Event().wait(30), round(time.time() - t0, 3), "fast", (real() - r0) < 1)
h.hermetic_advance_ns(ctypes.c_int64(10**9))
print("advance", round(time.time() - t0, 3))
PYEOF

cat >"$T/rand.py" <<'PYEOF'
import os, random, secrets, tempfile, uuid
print("uuid4", uuid.uuid4())
print("token_hex", secrets.token_hex(16))
print("random", random.random())
print("urandom", os.urandom(8).hex())
d = tempfile.mkdtemp()
print("mkdtemp", d)
os.rmdir(d)
print("set_order", list({"alpha", "beta", "gamma", "delta", "epsilon", "zeta"}))
print("hash", hash("hermetic"))
with open("/dev/urandom", "rb") as f:
    print("dev_urandom", f.read(8).hex())
PYEOF

cat >"$T/tree.py" <<'PYEOF'
import os, subprocess, sys, time, uuid
depth = int(sys.argv[1])
time.sleep(depth)
print(depth, os.environ.get("HERMETIC_LINEAGE"), time.time(), uuid.uuid4(), flush=True)
if depth < 3:
    subprocess.run([sys.executable, sys.argv[0], str(depth + 1)], check=True)
    print(depth, "after", time.time(), flush=True)
PYEOF

# Clock semantics (seed-independent).
out=$(shim_run 42 timeout 60 "$PY" "$T/basic.py" "$B/libhermetic.so" 2>&1)
grep -qx "active 1 42" <<<"$out" && pass "python handle via ctypes" || fail "python handle via ctypes" "$out"
grep -qx "start 1577836800.0" <<<"$out" && pass "python time.time() at start" || fail "python time.time() at start" "$out"
grep -qx "mono_steps \[0\]" <<<"$out" && pass "python monotonic still between waits" || fail "python monotonic still between waits" "$out"
grep -qx "sleep_advance 5.000001" <<<"$out" && pass "python sleep(5) advances 5 s (and 1 us of timer slack)" || fail "python sleep(5) advances 5 s (and 1 us of timer slack)" "$out"
grep -qx "sleep_fast True" <<<"$out" && pass "python sleep(5) far under 5 s of wall time" || fail "python sleep(5) far under 5 s of wall time" "$out"
grep -qx "asyncio_advance 30.0 fast True" <<<"$out" && pass "python asyncio.sleep(30)" || fail "python asyncio.sleep(30)" "$out"
grep -qx "event_wait False 30.0 fast True" <<<"$out" && pass "python Event().wait(30)" || fail "python Event().wait(30)" "$out"
grep -qx "advance 31.0" <<<"$out" && pass "python hermetic_advance_ns" || fail "python hermetic_advance_ns" "$out"

# Entropy: one line per source, each must repeat with the seed and change with another.
a=$(shim_run 42 timeout 60 "$PY" "$T/rand.py" 2>&1)
b=$(shim_run 42 timeout 60 "$PY" "$T/rand.py" 2>&1)
c=$(shim_run 43 timeout 60 "$PY" "$T/rand.py" 2>&1)
for k in uuid4 token_hex random urandom mkdtemp set_order hash dev_urandom; do
	va=$(grep "^$k " <<<"$a") vb=$(grep "^$k " <<<"$b") vc=$(grep "^$k " <<<"$c")
	if [ -z "$va" ]; then
		fail "python $k" "no output: $(tail -n 3 <<<"$a" | tr '\n' '|')"
	elif [ "$va" != "$vb" ]; then
		fail "python $k" "not reproducible: $va vs $vb"
	elif [ "$va" = "$vc" ]; then
		fail "python $k" "same with another seed: $va"
	else
		pass "python $k"
	fi
done
grep -q "PYTHONHASHSEED" <(shim_run 42 env) && fail "python PYTHONHASHSEED not set" "it is" || pass "python PYTHONHASHSEED not set"

# Waiting for a child with a timeout: one clock for the run, so a child that
# computes holds the clock (no spurious timeout), one that sleeps lets it
# move (the timeout fires at its virtual time).
cat >"$T/timeout.py" <<'PYEOF'
import subprocess, sys, time
try:
    subprocess.run([sys.executable, "-c", "sum(range(2 * 10**7))"], timeout=1)
    print("busy child finished")
except subprocess.TimeoutExpired:
    print("spurious timeout")
try:
    t = time.monotonic()
    subprocess.run(["sh", "-c", "sleep 100"], timeout=1)
    print("no timeout")
except subprocess.TimeoutExpired:
    print("hung child timed out after", round(time.monotonic() - t, 3))
PYEOF
out=$(shim_run 42 timeout 60 "$PY" "$T/timeout.py" 2>&1)
grep -qx "busy child finished" <<<"$out" && pass "python subprocess timeout not spurious" ||
	fail "python subprocess timeout not spurious" "$(tr '\n' '|' <<<"$out")"
grep -qx "hung child timed out after 1.0" <<<"$out" && pass "python subprocess timeout fires" ||
	fail "python subprocess timeout fires" "$(tr '\n' '|' <<<"$out")"

# Three subprocess layers: same output every run, different with another seed;
# a parent resumes at its child's exit time.
det "python subprocess tree" "$PY" "$T/tree.py" 0
# (6 s of sleeps, 1 us of timer slack each: 6.000003; and three process
# starts, 2 ms and its 1 us of slack each: docs/virtual-time.md, "A process
# start takes time")
if grep -q "^0 1 1577836800.0 " <<<"$DET_OUT" && grep -q "^3 1.1.1.1 1577836806.00600[56]" <<<"$DET_OUT" &&
	grep -q "^0 after 1577836806.00600[56]" <<<"$DET_OUT"; then
	pass "python subprocess tree clocks"
else
	fail "python subprocess tree clocks" "$(tr '\n' '|' <<<"$DET_OUT")"
fi
