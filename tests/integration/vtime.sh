#!/usr/bin/env bash
# Virtual time that concurrent programs can live in (docs/virtual-time.md):
# one clock per run, moving only when the whole run is idle, timers on it.
# Real Python, Java and Node programs through the real daemon, each run twice
# with one seed: both runs print the expected lines, identically.
source "$(dirname "$0")/../lib.sh"
need_root vtime || exit 0
P=$(cd "$(dirname "$0")/vtime" && pwd)
# The interpreter itself, not a launcher (pyenv's python3 is a shell script
# that execs a dozen programs): where a case counts the run's moves of the
# clock or its exact times, every process start would cost its 2 ms
# (docs/virtual-time.md, "A process start takes time").
PYX=$(python3 -c 'import sys; print(sys.executable)')
start_daemon || { fail vtime "daemon did not start"; exit 0; }

# twice NAME EXPECTED CMD...: run CMD enrolled (seed 7) twice; PASS when each
# output is EXPECTED (a multi-line string) and the two are identical.
twice() {
	local name=$1 want=$2 a b
	shift 2
	# (the timeout outside the run: inside, it would run on virtual time;
	# hermetic's "lag bound:" lines say where a loaded machine made a
	# runtime's housekeeping wait, such as the JVM's 50 ms WatcherThread,
	# end by the lag bound: its own clock, not the values compared here)
	a=$(timeout 120 "$HERMETIC" enroll --seed 7 -- "$@" 2>&1 | grep -v '^hermetic: lag bound: ')
	b=$(timeout 120 "$HERMETIC" enroll --seed 7 -- "$@" 2>&1 | grep -v '^hermetic: lag bound: ')
	if [ "$a" != "$want" ]; then
		fail "$name" "got: $(tr '\n' '|' <<<"$a") want: $(tr '\n' '|' <<<"$want")"
	elif [ "$a" != "$b" ]; then
		fail "$name" "second run differs: $(tr '\n' '|' <<<"$b")"
	else
		pass "$name"
	fi
}

twice "event set by a computing thread: wait(60) is True" "True" python3 "$P/event.py"
twice "future/queue/recv on computing threads get their values" \
	"$(printf 'future True\nqueue True\nrecv %s' "b'x'")" python3 "$P/pool.py"
twice "subprocess.run(timeout=3) on a child sleeping 3600 s times out at 3 s" \
	"TimeoutExpired after 3.0" python3 "$P/sub.py"
twice "subprocess.run(timeout=0.001) on a starting child times out" \
	"$(printf 'TimeoutExpired\ntimeout 10: ran')" python3 "$P/sub1.py"
twice "alarm(1) interrupts select(30): handler at 1 s, select returns at 30 s" \
	"$(printf 'handler at 1.0\nselect returned at 30.0')" python3 "$P/alarm.py"
twice "setitimer(1, 1) during sleep(5.5): 5 ticks" "ticks 5" python3 "$P/itimer.py"
twice "faulthandler.dump_traceback_later(120) does not fire during compute" "done" \
	python3 "$P/fh.py"
twice "an hour of sleeps moves both clocks by an hour (and 1 us of timer slack each)" "slept 3600.0036 3600.0036" \
	python3 "$P/sleeps.py"

if command -v javac >/dev/null; then
	if javac -d "$T/java" "$P/Sched.java" "$P/Orto.java" >"$T/javac.log" 2>&1; then
		twice "Java ScheduledExecutorService: tasks at 500/1500/3000 ms, main at 3000 ms" \
			"$(printf 'task at 500 ms\ntask at 1500 ms\ntask at 3000 ms\nmain done true at 3000 ms')" \
			java -cp "$T/java" Sched
		twice "Java supplyAsync(sleep 5 s).orTimeout(1 s) times out" \
			"java.util.concurrent.TimeoutException" java -cp "$T/java" Orto
	else
		fail "java programs compile" "$(tail -3 "$T/javac.log" | tr '\n' '|')"
	fi
else
	skip "java" "javac not installed"
fi

if command -v node >/dev/null; then
	twice "Node spawnSync(sleep 3600, timeout 3000) kills the child with SIGTERM" \
		"status null signal SIGTERM ETIMEDOUT" node "$P/spawn.js"
	# A process start costs 2 ms of the run's time: a 1 ms timeout on a
	# starting child fires, as it always does bare (it never did: the
	# child's start was free and it finished first).
	twice "Node spawnSync(node, timeout 1) on a starting child: ETIMEDOUT" \
		"$(printf 'timeout 1: ETIMEDOUT signal SIGTERM\ntimeout 10000: none status 0')" \
		node "$P/spawn1.js"
else
	skip "node" "node not installed"
fi

# The real world keeps real deadlines: a loopback server outside the run.
/usr/bin/python3 -c '
import socket, time, sys
l = socket.socket(); l.bind(("127.0.0.1", 0)); l.listen(8)
print(l.getsockname()[1], flush=True)
while True:
    c, _ = l.accept(); time.sleep(0.3); c.sendall(b"hello"); c.close()
' >"$T/port" &
srv=$!
at_exit "kill $srv"
for _ in $(seq 50); do [ -s "$T/port" ] && break; sleep 0.1; done
twice "a timed recv from a server outside the run keeps its real deadline" "hello after True" \
	python3 "$P/slowpeer.py" "$(cat "$T/port")"
out=$(HERMETIC_DEBUG=waits "$HERMETIC" enroll --seed 7 -- python3 "$P/slowpeer.py" "$(cat "$T/port")" 2>&1)
grep -q "poll for 5000000 us, external (real time): event" <<<"$out" &&
	pass "HERMETIC_DEBUG=waits names a wait on the real world" ||
	fail "HERMETIC_DEBUG=waits names a wait on the real world" "$(tr '\n' '|' <<<"$out")"

# Without a daemon the waiters keep the clock themselves (approximate, but
# a program that only sleeps and waits alone is exact).
nd() {
	local name=$1 want=$2 out
	shift 2
	out=$(timeout 120 "$HERMETIC" enroll --no-daemon --seed 7 -- "$@" 2>&1 |
		grep -v -e '^hermetic: --no-daemon' -e '^  network traffic')
	[ "$out" = "$want" ] && pass "$name" || fail "$name" "got: $(tr '\n' '|' <<<"$out")"
}
nd "--no-daemon: an hour of sleeps" "slept 3600.0036 3600.0036" python3 "$P/sleeps.py"
# (not signals: a waiter keeping the clock cannot tell that a signal is on
# its way to another thread, so --no-daemon may move the clock past it)
nd "--no-daemon: subprocess timeout on a sleeping child" "TimeoutExpired after 3.0" \
	python3 "$P/sub.py"

# HERMETIC_DEBUG=waits names the rule each wait followed.
out=$(HERMETIC_DEBUG=waits "$HERMETIC" enroll --seed 7 -- python3 -c 'import time; time.sleep(2)' 2>&1)
grep -q "^hermetic: wait: process 1 thread 0 sleep for 2000000 us, virtual: timed out" <<<"$out" &&
	pass "HERMETIC_DEBUG=waits: a virtual sleep" || fail "HERMETIC_DEBUG=waits: a virtual sleep" "$(tr '\n' '|' <<<"$out")"

# status names the keeper, and a run's clock while it runs.
out=$("$HERMETIC" status 2>&1)
grep -q "^virtual clock keeper: active" <<<"$out" && pass "status: the clock keeper is active" ||
	fail "status: the clock keeper is active" "$(tr '\n' '|' <<<"$out")"
mkfifo "$T/hold"
timeout 60 "$HERMETIC" enroll --seed 7 -- "$PYX" -c "
import time
for i in range(3): time.sleep(1)
open('$T/hold').read()" >/dev/null 2>&1 &
run=$!
at_exit "kill $run"
moves=
for _ in $(seq 100); do
	moves=$("$HERMETIC" status --json 2>/dev/null | python3 -c '
import json, sys
for r in json.load(sys.stdin)["runs"]:
    if "clock" in r and r["clock"]["moves"] >= 3: print(r["clock"]["moves"])' 2>/dev/null)
	[ -n "$moves" ] && break
	sleep 0.1
done
echo done >"$T/hold"
wait "$run"
[ "$moves" = 3 ] && pass "status --json: a run's clock moved 3 times for 3 sleeps" ||
	fail "status --json: a run's clock moved 3 times for 3 sleeps" "moves=$moves"

# Record and replay with threads on the virtual clock: the replay prints the
# recorded wall-clock values and entropy exactly.
rec=$(timeout 120 "$HERMETIC" enroll --seed 9 --now @1577836800 --record="$T/jt" -- "$PYX" "$P/rthreads.py" 2>/dev/null)
j=$(ls "$T"/jt/*.hjournal 2>/dev/null | head -n 1)
rep=$(timeout 120 "$HERMETIC" replay "$j" 2>"$T/rep.err")
if [ -n "$j" ] && [ "$(wc -l <<<"$rec")" = 5 ] && [ "$rec" = "$rep" ] &&
	grep -q "^main 1577836802.000001$" <<<"$rec"; then
	pass "threads on the virtual clock replay with identical output"
else
	fail "threads on the virtual clock replay with identical output" \
		"rec=$(tr '\n' '|' <<<"$rec") rep=$(tr '\n' '|' <<<"$rep") err=$(tr '\n' '|' <"$T/rep.err")"
fi

# A run that truncates its own clock page under the daemon's mapping hurts
# only itself: the daemon lives on, and the next run has its clock.
"$HERMETIC" enroll --seed 7 -- python3 -c 'import os, time
os.ftruncate(int(os.environ["HERMETIC_CLOCK_FD"].split(":")[0]), 0); time.sleep(1)' >/dev/null 2>&1
sleep 0.2
out=$("$HERMETIC" enroll --seed 7 -- python3 "$P/sleeps.py" 2>&1)
kill -0 "$HMD_PID" 2>/dev/null && [ "$out" = "slept 3600.0036 3600.0036" ] &&
	pass "a run truncating its clock page does not harm the daemon or the next run" ||
	fail "a run truncating its clock page does not harm the daemon or the next run" "$out"

# clock_settime moves the run's clock, never the host's. (noset refuses the
# raw syscalls, so this machine's clock is safe even if the shim were wrong.)
if cc -o "$T/noset" "$P/noset.c" 2>"$T/cc.err"; then
	r0=$(date +%s)
	out=$("$HERMETIC" enroll --seed 7 -- "$T/noset" python3 "$P/settime.py" 2>&1)
	r1=$(date +%s)
	# (the child's start: 2 ms of the run's time, docs/virtual-time.md)
	want=$(printf 'wall moved 1000.0\nmonotonic moved 0.0\nchild sees 1000.002\nmonotonic refused 22')
	[ "$out" = "$want" ] && [ $((r1 - r0)) -lt 100 ] &&
		pass "clock_settime moves the run's clock (children too), not the host's" ||
		fail "clock_settime moves the run's clock, not the host's" "$(tr '\n' '|' <<<"$out")"
	out=$("$HERMETIC" enroll --seed 7 -- "$T/noset" setpriv --inh-caps -sys_time \
		--bounding-set -sys_time python3 -c '
import time
try:
    time.clock_settime(time.CLOCK_REALTIME, 0)
except PermissionError:
    print("EPERM")' 2>&1)
	[ "$out" = EPERM ] && pass "without CAP_SYS_TIME setting the run's clock is refused" ||
		fail "without CAP_SYS_TIME setting the run's clock is refused" "$out"
else
	fail "noset compiles" "$(tr '\n' '|' <"$T/cc.err")"
fi

# Back-off sleeps (under 100 us, as the JVM's VM thread makes while it waits
# for a safepoint) do not move the clock: the JVM's source launcher, which
# compiles on JIT-busy threads, seeds Random the same way every run...
if command -v java >/dev/null; then
	a=$(timeout 120 "$HERMETIC" enroll --seed 7 -- java "$P/R.java" 2>&1 | grep -v '^hermetic: lag bound: ')
	b=$(timeout 120 "$HERMETIC" enroll --seed 7 -- java "$P/R.java" 2>&1 | grep -v '^hermetic: lag bound: ')
	c=$(timeout 120 "$HERMETIC" enroll --seed 7 -- java "$P/R.java" 2>&1 | grep -v '^hermetic: lag bound: ')
	d=$(timeout 120 "$HERMETIC" enroll --seed 8 -- java "$P/R.java" 2>&1 | grep -v '^hermetic: lag bound: ')
	[ -n "$a" ] && [ "$a" = "$b" ] && [ "$a" = "$c" ] && [ "$a" != "$d" ] &&
		pass "java R.java: time-seeded generators repeat under a seed, change with it" ||
		fail "java R.java: time-seeded generators repeat under a seed, change with it" "$a / $b / $c / $d"
fi
# ... and a loop that polls with tiny sleeps still sees time pass.
twice "a loop of 10 us sleeps until 10 ms have passed ends" "done" python3 -c '
import time
t = time.monotonic()
while time.monotonic() < t + 0.01:
    time.sleep(1e-5)
print("done")'

# CPython's GIL switch interval is the interpreter's scheduling, not the
# program's time: computing threads take turns, and a busy-polling thread
# sees what another sets.
twice "CPython threads take turns at the GIL (a busy-poll sees another thread's flag)" "True" \
	python3 "$P/gil.py"

# A zero-timeout poll that finds nothing takes time, as a real one does: a
# loop of them until the clock shows the zero timeout passed ends after one
# round, also while another thread holds the GIL (test_concurrent_futures'
# test_hang_global_shutdown_lock took minutes instead of seconds).
twice "a zero-timeout wait() loop ends while another thread computes" "empty 20 ready 1" \
	python3 "$P/zeropoll.py"

# A virtual timer ends 1 us after its deadline, as a kernel's ends late: a
# program measuring a wait of d in floating point sees at least d, for every
# seed (CPython's test_eintr: t1 - t0 >= 0.2).
short=
for s in 1 2 3 4 5 6 7 8; do
	out=$("$HERMETIC" enroll --seed "$s" -- python3 "$P/elapsed.py" 2>&1)
	[ "$out" = "short waits: 0" ] || short="$short seed $s: $out;"
done
[ -z "$short" ] && pass "measured waits are never shorter than asked (8 seeds)" ||
	fail "measured waits are never shorter than asked (8 seeds)" "$short"

# No jump while data is on its way into the run: a byte a child writes to
# a PTY reaches the master through a kernel worker outside the run, and
# for that moment no task of the run is runnable (bpf/sched.bpf.c counts
# the work in flight). Before, 1 wait in a few hundred took the select's
# 120 s (3 runs of 4 had one); 4 seeds of 500 waits each, and a pipe's
# (woken directly) beside it.
for kind in pty pipe; do
	bad=
	for s in 1 2 3 4; do
		out=$(timeout 120 "$HERMETIC" enroll --seed "$s" -- python3 "$P/ptywait.py" "$kind" 2>&1 |
			grep -v '^hermetic: lag bound: ')
		[ "$out" = "waits 500 timed out 0 over 1s 0" ] || bad="$bad seed $s: $out;"
	done
	[ -z "$bad" ] && pass "500 waits on a $kind never take the 120 s deadline (4 seeds)" ||
		fail "500 waits on a $kind never take the 120 s deadline (4 seeds)" "$bad"
done

# Five threads polling for a second of monotonic() (issue 29): the tick
# grows with a thread's run of readings, so each thread's second takes
# about 82,000 ids (2.75 million in all with a constant tick, 7 times
# bare's wall time). The count, not the wall time, which is the machine's.
ids=$(timeout 120 "$HERMETIC" enroll --seed 7 -- python3 "$P/msgid.py" 2>/dev/null)
[ -n "$ids" ] && [ "$ids" -gt 300000 ] && [ "$ids" -lt 500000 ] &&
	pass "five threads polling 1 s of monotonic() make 300,000-500,000 ids" ||
	fail "five threads polling 1 s of monotonic() make 300,000-500,000 ids" "ids=$ids"

# One seed, one run, for a parent and its children: three children's
# sleeps end at one virtual instant while the parent's interval timer runs.
# The keeper wakes such waits one per idle moment, in key order; the lag
# bound's tick took them all at once before, and the kernel's order showed
# (5 different lines in 14 runs). 6 runs of one seed print one line.
lines=$(for i in 1 2 3 4 5 6; do
	timeout 120 "$HERMETIC" enroll --seed 42 -- node "$P/childrace.js" 2>&1 |
		grep -v '^hermetic: lag bound: '
done | sort | uniq -c)
# (each child's 10 ms sleep comes after two process starts, sh's and
# sleep's, 2 ms each: docs/virtual-time.md, "A process start takes time")
if [ "$(wc -l <<<"$lines")" = 1 ] && grep -q ' 6 t0@3 .*close.@14$' <<<"$lines"; then
	pass "node: children whose sleeps end at one instant, 6 runs of one seed print one line"
else
	fail "node: children whose sleeps end at one instant, 6 runs of one seed print one line" \
		"$(tr '\n' '|' <<<"$lines")"
fi

# TCP between threads of the run has no Nagle delay (a kernel timer the
# scheduler does not show); the program still sees TCP_NODELAY as it set it.
twice "small TCP writes between threads of the run arrive before a virtual timeout" \
	"received 6000 nodelay as set 0" python3 "$P/nagle.py"
