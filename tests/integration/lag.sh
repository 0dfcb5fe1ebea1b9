#!/usr/bin/env bash
# Time always ends (docs/virtual-time.md, "The lag bound"): a pending
# deadline fires once the run has been busy for K times its remaining virtual
# time of real time, the run says so (stderr, --report, the journal) and
# replay repeats it; waits that return at once count like polls, timers fire
# on a thread's ticked readings, and elapsed time agrees across threads.
# Real Python programs through the real private daemon.
source "$(dirname "$0")/../lib.sh"
need_root lag || exit 0
P=$(cd "$(dirname "$0")/lag" && pwd)
start_daemon || { fail lag "daemon did not start"; exit 0; }
cd "$T" || exit 1

# (every timeout is outside the run: inside, it would be on virtual time)
run() { timeout 90 "$HERMETIC" enroll --seed 7 "$@"; }

# twice NAME EXPECTED ARGS...: enrolled twice, each prints EXPECTED.
twice() {
	local name=$1 want=$2 a b
	shift 2
	a=$(run "$@" 2>&1)
	b=$(run "$@" 2>&1)
	if [ "$a" != "$want" ]; then
		fail "$name" "got: $(tr '\n' '|' <<<"$a") want: $(tr '\n' '|' <<<"$want")"
	elif [ "$a" != "$b" ]; then
		fail "$name" "second run differs: $(tr '\n' '|' <<<"$b")"
	else
		pass "$name"
	fi
}

# 1. The default bound (K = 10): a parent's subprocess.run(timeout=1) on a
# child that computes ends after K s of real time: its growing sleeps are
# one series, ended once the run computed K times all they waited (quiesce.c
# lag_at). The figure is printed; the limit here is 3 K only so that a
# loaded machine cannot fail it (the time counts enroll and two
# interpreters' start too).
name="subprocess.run(timeout=1) on a computing child raises TimeoutExpired after about K = 10 s"
s=$(now_ms)
out=$(run --report "$T/rep.json" -- python3 "$P/subbusy.py" 2>"$T/sub.err")
ms=$(($(now_ms) - s))
echo "# subprocess.run(timeout=1) on a busy child: TimeoutExpired after $ms ms of real time (K = 10)"
if [ "$out" = "TimeoutExpired after 1.0" ] && [ "$ms" -lt 30000 ]; then
	pass "$name"
else
	fail "$name" "out=$out after ${ms} ms; $(head -3 "$T/sub.err" | tr '\n' '|')"
fi
name="the run says which waits the lag bound ended (stderr and --report)"
if grep -q "^hermetic: lag bound: [0-9]* timed waits ended while the run was busy (--lag-bound 10;" "$T/sub.err" &&
	grep -q "^hermetic: lag bound: process 1 thread 0: sleep of .* s timed out after .* s of real time" "$T/sub.err" &&
	python3 -c '
import json, sys
r = json.loads(open(sys.argv[1]).read().splitlines()[-1])["lag_bound"]
assert r["k"] == 10 and r["fired"] >= 10, r
w = r["waits"][0]
assert w["process"] == "1" and w["thread"] == 0 and w["wait"] == "sleep", w
assert 0 < w["virtual_s"] <= 0.05 and w["real_s"] >= 9 * w["virtual_s"], w' "$T/rep.json" 2>"$T/py.err"; then
	pass "$name"
else
	fail "$name" "$(head -3 "$T/sub.err" | tr '\n' '|') $(tail -2 "$T/py.err" | tr '\n' '|')"
fi

# 2. Hang guards fire while the main thread computes (K = 2 to keep it
# short: the alarm after 2 s, the watchdog after 4).
name="alarm(1) and faulthandler.dump_traceback_later(2) fire while the main thread spins"
out=$(run --lag-bound 2 -- python3 "$P/guards.py" 2>&1)
rc=$?
if [ "$rc" = 1 ] && grep -q "^alarm fired$" <<<"$out" && grep -q "^Timeout (0:00:02)!$" <<<"$out" &&
	grep -q "guards.py\", line 1[45] in <module>" <<<"$out"; then
	pass "$name"
else
	fail "$name" "rc=$rc $(tr '\n' '|' <<<"$out")"
fi

name="pytest-timeout (--timeout=1) ends a test that spins, and the next test passes"
if /usr/bin/python3 -c 'import pytest_timeout' 2>/dev/null; then
	out=$(run --lag-bound 2 -- /usr/bin/python3 -m pytest -q -p no:cacheprovider --timeout=1 \
		"$P/test_spin.py" 2>&1)
	rc=$?
	if [ "$rc" = 1 ] && grep -q "Timeout" <<<"$out" && grep -q "1 failed, 1 passed" <<<"$out"; then
		pass "$name"
	else
		fail "$name" "rc=$rc $(tail -5 <<<"$out" | tr '\n' '|')"
	fi
else
	skip "$name" "python3-pytest-timeout is not installed (make deps)"
fi

name="a spinning daemon thread does not stop the main thread's select(1.0)"
out=$(run --lag-bound 2 -- python3 "$P/spinthread.py" 2>/dev/null)
[ "$out" = "select returned after 1.000" ] && pass "$name" || fail "$name" "$out"

name="HERMETIC_DEBUG=waits says which wait the lag bound ended"
out=$(HERMETIC_DEBUG=waits run --lag-bound 2 -- python3 "$P/spinthread.py" 2>&1)
grep -q "^hermetic: wait: process 1 thread 0 select for 1000000 us, virtual: timed out (lag bound)" <<<"$out" &&
	pass "$name" || fail "$name" "$(grep "wait: process 1 thread 0" <<<"$out" | tr '\n' '|')"

name="--no-daemon: the waiters bound their own lag"
out=$(run --no-daemon --lag-bound 2 -- python3 "$P/spinthread.py" 2>/dev/null)
[ "$out" = "select returned after 1.000" ] && pass "$name" || fail "$name" "$out"

# --lag-bound inf is the pure model: the select never returns while the
# other thread computes (here: not within 3 s, 1.5 times what K = 2 takes).
name="--lag-bound inf: a spinning thread holds the clock"
timeout 3 "$HERMETIC" enroll --seed 7 --lag-bound inf -- python3 "$P/spinthread.py" >"$T/inf.out" 2>/dev/null
rc=$?
[ "$rc" = 124 ] && [ ! -s "$T/inf.out" ] && pass "$name" || fail "$name" "rc=$rc $(tr '\n' '|' <"$T/inf.out")"

# 3. Record and replay: the journal keeps the bound's firing, and replay
# hands the program the recorded values (the wait returns at once there).
name="a wait the lag bound ended is journalled as such and replays with the recorded values"
rec=$(run --lag-bound 2 --record="$T/j" --keep-passing -- python3 "$P/lagrec.py" 2>/dev/null)
j=$(ls "$T"/j/*.hjournal 2>/dev/null | head -n 1)
rep=$([ -n "$j" ] && timeout 90 "$HERMETIC" replay "$j" 2>"$T/rep.err")
shown=$([ -n "$j" ] && "$HERMETIC" journals show "$j" --records 2>&1)
if [ -n "$j" ] && grep -q "^slept 0.200 at 1" <<<"$rec" && [ "$rec" = "$rep" ] &&
	grep -q "clock_nanosleep .*timed out (lag bound)" <<<"$shown" &&
	grep -q "wait ([0-9]* timed out, 1 by the lag bound)" <<<"$shown" &&
	grep -q "^options    --lag-bound 2$" <<<"$shown"; then
	pass "$name"
else
	fail "$name" "rec=$rec rep=$rep $(grep -c "lag bound" <<<"$shown") $(tail -2 "$T/rep.err" | tr '\n' '|')"
fi

name="replay serves the waits the journal has no answer for under the recording's --lag-bound"
if [ -n "$j" ]; then
	timeout 90 "$HERMETIC" replay "$j" -- python3 "$P/spinthread.py" >/dev/null 2>"$T/rep2.err"
	grep -q "^hermetic: lag bound: 1 timed wait ended while the run was busy (--lag-bound 2;" "$T/rep2.err" &&
		pass "$name" || fail "$name" "$(grep "lag bound" "$T/rep2.err" | tr '\n' '|')"
else
	fail "$name" "no journal recorded"
fi

# 4. Waits that return at once count like polls; ticked readings are time.
twice "a select loop over an always-ready fd ends at its 1 s deadline" \
	"ended at 1.000 after many rounds" -- python3 "$P/ready.py"
twice "a thread that ticked 0.1 s measures another thread's sleep(1) as 1 s" \
	"main 1.000 sleeper 1.000" -- python3 "$P/cross.py"
name="a 1 ms ITIMER_REAL fires during 100,000 zero-timeout polls as often as the readings say"
out=$(run -- python3 "$P/itimer.py" 2>&1)
if python3 -c '
import sys
w = sys.argv[1].split()
assert w[0] == "elapsed_ms" and w[2] == "signals", w
el, n = int(w[1]), int(w[3])
assert el >= 50 and abs(n - el) <= max(3, el // 5), (el, n)' "$out" 2>/dev/null; then
	pass "$name"
else
	fail "$name" "$out"
fi
