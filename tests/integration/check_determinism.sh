# hermetic check-determinism: a deterministic multi-process program (a
# Python parent whose two children draw random numbers and sleep) is
# reported identical; a program whose child reads something the run does
# not control (a counter file the runs share, choosing how many random
# values it draws) is reported as differing, naming that child, the call
# and what each run saw; bad input gets clear errors and its exit status.
# A line that differs only in the runs' own process ids (a Python parent
# and child, a shell and its child shell) is no difference, with a note; a
# number that names no process of the run, beside one that does, still
# differs. A Python thread that reads the clock past the ticking threshold
# while another computes (GIL waits between them) is identical, and its
# replay prints what its recording printed.
source "$(dirname "$0")/../lib.sh"
need_root check_determinism || exit 0
start_daemon || { fail "daemon starts" "see above"; exit 1; }
PY=/usr/bin/python3
# kept directories of differing runs go to the test's own temp dir
export TMPDIR=$T
mkdir -p "$T/w"
cd "$T/w"

# Children run at once; the parent prints their output in order, so the
# output is the program's, not the scheduler's.
cat >"$T/det.py" <<'PY'
import random, subprocess, sys, time
if sys.argv[1] == "child":  # child KIND COUNTER
    if sys.argv[2] == "count":  # read the counter, bump it, draw that many
        n = int(open(sys.argv[3]).read())
        open(sys.argv[3], "w").write(str(n + 1))
        for _ in range(n):
            random.SystemRandom().random()
        print("drew", n, flush=True)
    for i in range(3):
        print(sys.argv[2], random.random(), time.monotonic(), flush=True)
        time.sleep(0.05)
    sys.exit(0)
# parent MODE COUNTER: two children at once, "a" and "b" (or "count")
kinds = ("a", "count" if sys.argv[1] == "count" else "b")
ps = [subprocess.Popen([sys.executable, __file__, "child", k, sys.argv[2]], stdout=subprocess.PIPE)
      for k in kinds]
for p in ps:
    sys.stdout.write(p.communicate()[0].decode())
print("parent", random.random(), time.time())
PY

cd_run() { # NAME ARGS...: $T/NAME.out, $T/NAME.err, $T/NAME.rc
	local name=$1
	shift
	timeout 300 "$HERMETIC" check-determinism "$@" >"$T/$name.out" 2>"$T/$name.err"
	echo $? >"$T/$name.rc"
}
why() { tail -n 8 "$T/$1.out" "$T/$1.err" | tr '\n' '|'; }

cd_run det -- $PY "$T/det.py" plain x
if [ "$(cat "$T/det.rc")" = 0 ] &&
	grep -Eq '^identical: 3 runs, [1-9][0-9]* values, virtual duration [0-9.]+(ms|s)$' "$T/det.out"; then
	pass "a deterministic multi-process program is identical"
else
	fail "a deterministic multi-process program is identical" "rc $(cat "$T/det.rc"): $(why det)"
fi
if grep -Eq 'seed [0-9]+ \(drawn\), start ' "$T/det.err"; then
	pass "a drawn seed and the start are printed"
else
	fail "a drawn seed and the start are printed" "$(why det)"
fi
if ! ls -d "$T"/hermetic-checkdet-* >/dev/null 2>&1; then
	pass "identical runs leave no directory behind"
else
	fail "identical runs leave no directory behind" "$(ls -d "$T"/hermetic-checkdet-*)"
fi

cd_run json -n 2 --json --seed 7 -- $PY "$T/det.py" plain x
if [ "$(cat "$T/json.rc")" = 0 ] && $PY -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["identical"] is True and d["runs"] == 2 and d["seed"] == 7, d
assert d["values"] > 0 and d["virtual_ns"] > 0 and d["differed"] is None, d
assert d["pid_lines"] == [] and d["pid_lines_total"] == 0, d
' "$T/json.out"; then
	pass "--json, -n 2 and --seed"
else
	fail "--json, -n 2 and --seed" "rc $(cat "$T/json.rc"): $(why json)"
fi

echo 0 >"$T/count"
cd_run nd --seed 5 -- $PY "$T/det.py" count "$T/count"
# The second child (lineage 1.2) draws one more value in run 2: its first
# getrandom there is where run 1 read the clock.
if [ "$(cat "$T/nd.rc")" = 1 ] && grep -q '^differed: run 1 and run 2$' "$T/nd.out" &&
	grep -Eq '^  first value that differed: process 1\.2 \(python3[0-9.]*\), thread 0, call #[0-9]+, ' "$T/nd.out" &&
	grep -Eq '^    run 2: (getrandom|read of /dev/urandom|[a-z_]+), [0-9]+ bytes: [0-9a-f]+' "$T/nd.out" &&
	grep -q '^  stdout line 4:' "$T/nd.out"; then
	pass "a child reading an uncontrolled file: process, call and what each run saw"
else
	fail "a child reading an uncontrolled file: process, call and what each run saw" \
		"rc $(cat "$T/nd.rc"): $(why nd)"
fi
kept=$(sed -n 's/^  journals and outputs kept in //p' "$T/nd.out")
if [ -n "$kept" ] && [ -f "$kept/run-1.stdout" ] && ls "$kept"/run-2/*.hjournal >/dev/null 2>&1 &&
	"$HERMETIC" journals show "$(ls "$kept"/run-2/*.hjournal | head -1)" >/dev/null; then
	pass "differing runs keep their journals and outputs"
else
	fail "differing runs keep their journals and outputs" "kept '$kept': $(ls -R "$kept" 2>&1 | head -5 | tr '\n' '|')"
fi

# exit statuses that differ are named
echo 0 >"$T/count"
cd_run st --seed 5 -n 2 -- sh -c 'n=$(cat "$1"); echo $((n + 1)) >"$1"; exit $n' sh "$T/count"
if [ "$(cat "$T/st.rc")" = 1 ] && grep -q '^  exit status: run 1 0, run 2 1$' "$T/st.out"; then
	pass "differing exit statuses are named"
else
	fail "differing exit statuses are named" "rc $(cat "$T/st.rc"): $(why st)"
fi

# output that differs while every value agrees: a file the runs share
echo 0 >"$T/count"
cd_run out --seed 5 -n 2 -- sh -c 'n=$(cat "$1"); echo $((n + 1)) >"$1"; echo "read $n"' sh "$T/count"
if [ "$(cat "$T/out.rc")" = 1 ] && grep -q '^  stdout line 1:$' "$T/out.out" &&
	grep -q 'every journaled value was identical' "$T/out.out" &&
	! grep -q 'first value that differed' "$T/out.out"; then
	pass "output that differs with identical values is named as such"
else
	fail "output that differs with identical values is named as such" "rc $(cat "$T/out.rc"): $(why out)"
fi

# The runs' own process ids. A run has no pid namespace: each number is
# read as the process its run's journal names by it. A Python parent and
# its child (each with a stream: 1 and 1.1) printing their pids:
cat >"$T/pids.py" <<'PY'
import os, subprocess, sys
if sys.argv[1] == "child":
    print("child", os.getpid(), "of", os.getppid(), flush=True)
    sys.exit(0)
out = subprocess.run([sys.executable, __file__, "child"], stdout=subprocess.PIPE).stdout.decode()
sys.stdout.write(out)
print("parent", os.getpid(), flush=True)
if sys.argv[1] == "count":  # then a pid beside a number the runs share
    n = int(open(sys.argv[2]).read())
    open(sys.argv[2], "w").write(str(n + 1))
    print("parent", os.getpid(), "read", n, flush=True)
PY
cd_run pids -n 2 -- $PY "$T/pids.py" plain
if [ "$(cat "$T/pids.rc")" = 0 ] && grep -q '^identical: 2 runs, ' "$T/pids.out" &&
	grep -q "^  note: 2 stdout lines differed only in the runs' own process ids" "$T/pids.out" &&
	grep -q '^    line 1: 1\.1, 1$' "$T/pids.out" && grep -q '^    line 2: 1$' "$T/pids.out"; then
	pass "a Python parent and child printing their pids are identical, with a note"
else
	fail "a Python parent and child printing their pids are identical, with a note" \
		"rc $(cat "$T/pids.rc"): $(why pids)"
fi

# A number that names no process of the run still differs, beside one
# that does; the lines before it are noted.
echo 5 >"$T/count"
cd_run pidn -n 2 -- $PY "$T/pids.py" count "$T/count"
if [ "$(cat "$T/pidn.rc")" = 1 ] && grep -q '^  stdout line 3:$' "$T/pidn.out" &&
	grep -Eq '^    run 1: parent [0-9]+ read 5$' "$T/pidn.out" &&
	grep -Eq '^    run 2: parent [0-9]+ read 6$' "$T/pidn.out" &&
	grep -q '^    line 2: 1$' "$T/pidn.out"; then
	pass "a number of no process of the run differs beside a pid that is one"
else
	fail "a number of no process of the run differs beside a pid that is one" \
		"rc $(cat "$T/pidn.rc"): $(why pidn)"
fi

# Shells draw nothing (no stream): the first shell and its child are named
# by their place among the kernel stream's forks, [~1] and [~1.1]. (The
# first shell's $PPID is no process of the run: it is not printed.)
cd_run sh -n 2 -- sh -c 'echo "$$"; sh -c "echo \$\$ \$PPID; :"; :'
if [ "$(cat "$T/sh.rc")" = 0 ] && grep -q '^identical: 2 runs, ' "$T/sh.out" &&
	grep -q '^    line 1: \[~1\]$' "$T/sh.out" && grep -q '^    line 2: \[~1\.1\], \[~1\]$' "$T/sh.out"; then
	pass "a shell and its child shell printing \$\$ \$PPID are identical, with a note"
else
	fail "a shell and its child shell printing \$\$ \$PPID are identical, with a note" \
		"rc $(cat "$T/sh.rc"): $(why sh)"
fi
cd_run shp -n 2 -- sh -c 'echo "$$ $PPID"'
if [ "$(cat "$T/shp.rc")" = 1 ] && grep -q '^  stdout line 1:$' "$T/shp.out"; then
	pass "the first process's parent is no process of the run: a difference"
else
	fail "the first process's parent is no process of the run: a difference" "rc $(cat "$T/shp.rc"): $(why shp)"
fi

cd_run pidj -n 2 --json -- sh -c 'echo "$$"; sh -c "echo \$\$ \$PPID; :"; :'
if [ "$(cat "$T/pidj.rc")" = 0 ] && $PY -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["identical"] is True and d["differed"] is None, d
assert d["pid_lines"] == [{"line": 1, "run": 2, "processes": ["[~1]"]},
                          {"line": 2, "run": 2, "processes": ["[~1.1]", "[~1]"]}], d
assert d["pid_lines_total"] == 2, d
' "$T/pidj.out"; then
	pass "--json: pid_lines"
else
	fail "--json: pid_lines" "rc $(cat "$T/pidj.rc"): $(why pidj)"
fi

# CPython computes the GIL's 5 ms deadline from a CLOCK_MONOTONIC reading
# before each timed wait on it, and how often a thread waits for the GIL is
# decided in real time. That reading is the interpreter's: neither in the
# journal nor in the thread's count of readings (past 100,000 without a wait
# each one ticks, and the main thread's last reading here came out one tick
# later per GIL wait: two runs, two values).
cat >"$T/gil.py" <<'PY'
import threading, time
stop = False
def spin():
    x = 0
    while not stop:
        x += 1
t = threading.Thread(target=spin)
t.start()
for i in range(130000):
    v = time.monotonic()
stop = True
t.join()
print("%.9f" % v)
PY
cd_run gil --seed 3 -- $PY "$T/gil.py"
if [ "$(cat "$T/gil.rc")" = 0 ] && grep -q '^identical: 3 runs' "$T/gil.out"; then
	pass "a thread reading the clock while another computes: the GIL's readings count for nothing"
else
	fail "a thread reading the clock while another computes: the GIL's readings count for nothing" \
		"rc $(cat "$T/gil.rc"): $(why gil)"
fi
# ... and in a replay, where the GIL's readings (absent from the recording)
# must not take the program's recorded ones: the same value is printed.
mkdir -p "$T/gilrec"
rec=$(timeout 300 "$HERMETIC" enroll --seed 3 --record "$T/gilrec" --keep-passing -- $PY "$T/gil.py" 2>/dev/null)
rep=$(timeout 300 "$HERMETIC" replay "$(ls "$T"/gilrec/*.hjournal)" 2>"$T/gilrep.err")
if [ -n "$rec" ] && [ "$rec" = "$rep" ]; then
	pass "the GIL's readings in a replay leave the program's recorded readings to it"
else
	fail "the GIL's readings in a replay leave the program's recorded readings to it" \
		"recorded '$rec', replayed '$rep': $(tail -3 "$T/gilrep.err" | tr '\n' '|')"
fi

# A thread's stream ends "thread exit" when the thread returned before the
# process exited and "exit" when the process's exit closed it first: which
# came first is real time (a Python join returns before its thread's end:
# GLib's cond test, tape's node), not a value the program saw. Here a
# counter file the runs share decides: the thread returns in odd runs and
# stays blocked in even ones, having drawn the same values: no difference.
cat >"$T/tend.c" <<'C'
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
static int n, p[2];
static void *f(void *a)
{
	struct timespec ts;
	char c;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	if (n % 2 == 0)
		(void)!read(p[0], &c, 1); /* blocked when the process exits */
	return a;
}
int main(int argc, char **argv)
{
	FILE *fp = fopen(argv[1], "r");
	pthread_t t;

	if (argc < 2 || !fp || fscanf(fp, "%d", &n) != 1 || fclose(fp) || !(fp = fopen(argv[1], "w")))
		return 2;
	fprintf(fp, "%d\n", n + 1);
	if (fclose(fp) || pipe(p) || pthread_create(&t, NULL, f, NULL))
		return 2;
	if (n % 2)
		pthread_join(t, NULL);
	usleep(50000);
	puts("done");
	return 0;
}
C
cc -O1 -pthread -o "$T/tend" "$T/tend.c" || fail "tend.c builds"
echo 1 >"$T/tend.count"
cd_run tend -n 2 -- "$T/tend" "$T/tend.count"
if [ "$(cat "$T/tend.rc")" = 0 ] && grep -q '^identical: 2 runs' "$T/tend.out"; then
	pass "a thread that returned and one the process's exit ended drew the same: no difference"
else
	fail "a thread that returned and one the process's exit ended drew the same: no difference" \
		"rc $(cat "$T/tend.rc"): $(why tend)"
fi

# bad input
bad() { # NAME RC PATTERN ARGS...
	local name=$1 rc=$2 pat=$3
	shift 3
	cd_run bad "$@"
	if [ "$(cat "$T/bad.rc")" = "$rc" ] && grep -q -- "$pat" "$T/bad.err"; then
		pass "$name"
	else
		fail "$name" "rc $(cat "$T/bad.rc"), want $rc and '$pat': $(why bad)"
	fi
}
bad "-n 0 is refused" 2 "-n 0: expected a number of runs from 2" -n 0 -- true
bad "-n 1 is refused" 2 "-n 1: expected a number of runs from 2" -n1 -- true
bad "-n without a number" 2 "option needs a value" -n
bad "no command" 2 "no command given" -n 3
bad "nothing after --" 2 "no command given after" --
bad "--record is this command's own" 2 "command's own" --record "$T/r" -- true
bad "a bad enroll option" 2 "unknown option" --no-such-option -- true
bad "command not found" 127 "nonexistent-cmd.*No such file" -- "$T/nonexistent-cmd"
