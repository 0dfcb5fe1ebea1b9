# --sched serial (daemon/chaos.c, preload/sched.c, engine/launch.c;
# docs/scheduling.md): the run's tasks one at a time on one CPU in an order
# drawn from the seed, so a race between blocking points (tests/sched/
# serial_*: C threads, Python threads, two processes over a pipe) fails
# under some seeds and passes under others, each seed the same way on
# every rerun and in the replay of its journal; output whose order only
# scheduling decides is the same for one seed; an unprivileged user's run
# behaves as root's. Under chaos and serial the
# run's programs see the CPUs they had before the pinning.
# timeout: 900
source "$(dirname "$0")/../lib.sh"
need_root sched_serial || exit 0
# (an unprivileged user too: tasks only lower their own priorities)
test_user U || { fail "sched_serial: test user" "useradd"; exit 0; }
start_daemon || { fail "sched_serial: daemon" "did not start"; exit 0; }
S=$TOP/tests/sched
for p in serial_c_sleep serial_proc_pipe serial_order c_order_init; do
	gcc -O2 -pthread -o "$T/$p" "$S/$p.c" || { fail "sched_serial: build $p" "gcc"; exit 0; }
done

# --- refusals -------------------------------------------------------------------
"$HERMETIC" enroll --sched serial:1x -- true >"$T/bad.out" 2>&1
rc=$?
if [ $rc = 2 ] && grep -q "SEED must be a number" "$T/bad.out"; then
	pass "refused: serial with a seed that is no number"
else
	fail "refused: serial:1x" "exit $rc: $(tr '\n' '|' <"$T/bad.out")"
fi
"$HERMETIC" enroll --sched serial --no-daemon -- true >"$T/bad.out" 2>&1
rc=$?
if [ $rc = 2 ] && grep -q "needs the daemon" "$T/bad.out"; then
	pass "refused: serial without the daemon"
else
	fail "refused: serial --no-daemon" "exit $rc: $(tr '\n' '|' <"$T/bad.out")"
fi

# --- what the run's tasks get: SCHED_FIFO on one CPU from the first instruction --
all_cpus=$(taskset -cp $$ | sed 's/.*: //')
cat >"$T/self.sh" <<'EOS'
printf '%s %s\n' "$(chrt -p $$ | sed -n 's/.*policy: //p')" "$(taskset -cp $$ | sed 's/.*: //')"
printf 'mode %s\n' "${HERMETIC_SCHED_MODE:-none}"
EOS
"$HERMETIC" enroll --seed 3 --sched serial:8 -- sh "$T/self.sh" >"$T/self.out" 2>"$T/self.err"
read -r pol cpus <"$T/self.out"
if [ "$pol" = SCHED_FIFO ] && [[ $cpus =~ ^[0-9]+$ ]] && grep -q "^mode serial$" "$T/self.out" &&
	grep -q "sched serial:8: the run's threads one at a time" "$T/self.err"; then
	pass "serial:8: the run's first task is SCHED_FIFO on one CPU ($cpus) when it starts"
else
	fail "serial: SCHED_FIFO on one CPU" "$(tr '\n' '|' <"$T/self.out") $(tr '\n' '|' <"$T/self.err")"
fi
"$HERMETIC" enroll --seed 3 -- sh "$T/self.sh" >"$T/off.out" 2>&1
if [ "$(head -1 "$T/off.out")" = "SCHED_OTHER $all_cpus" ] && grep -q "^mode none$" "$T/off.out"; then
	pass "off: the kernel's policy on every CPU, no mode variable"
else
	fail "off changes nothing" "$(tr '\n' '|' <"$T/off.out")"
fi

# --- races between blocking points: a failing and a passing seed, each 5 times ---
# run SEED CMD...: the command's exit status under --sched serial:SEED
run() {
	local s=$1
	shift
	"$HERMETIC" enroll --seed 1 --sched "serial:$s" -- "$@" >"$T/run.out" 2>"$T/run.err"
}
race() {
	local name=$1 bad= good= s k rc ok=1 codes=
	shift
	for s in $(seq 1 16); do
		run "$s" "$@"
		rc=$?
		[ $rc = 1 ] && [ -z "$bad" ] && bad=$s
		[ $rc = 0 ] && [ -z "$good" ] && good=$s
		[ -n "$bad" ] && [ -n "$good" ] && break
	done
	if [ -z "$bad" ] || [ -z "$good" ]; then
		fail "$name: fails under some serial seed, passes under another" "fail seed '$bad' pass seed '$good'"
		return
	fi
	for k in 1 2 3 4 5; do
		run "$bad" "$@"
		rc=$?
		codes="$codes $rc"
		[ $rc = 1 ] || ok=
		run "$good" "$@"
		rc=$?
		codes="$codes/$rc"
		[ $rc = 0 ] || ok=
	done
	if [ -n "$ok" ]; then
		pass "$name: serial:$bad fails on each of 5 reruns, serial:$good passes on each of 5"
	else
		fail "$name: each seed the same way 5 times" "fail/pass seeds $bad/$good:$codes"
	fi
	eval "${name//[^a-z]/_}_bad=$bad"
}
race "C threads, lost update over a sleep" "$T/serial_c_sleep"
race "Python threads, lost update over a sleep" python3 "$S/serial_py_sleep.py"
race "two processes over a pipe, order violation" "$T/serial_proc_pipe"

# --- a new thread first: the creator's seeded yield (c_order_init of the corpus:
# the worker reads the table before main has filled it) -------------------------
found=
for s in $(seq 1 40); do
	run "$s" "$T/c_order_init"
	[ $? = 1 ] && { found=$s; break; }
done
codes=
for k in 1 2 3; do
	[ -n "$found" ] && run "$found" "$T/c_order_init"
	codes="$codes $?"
done
if [ -n "$found" ] && [ "$codes" = " 1 1 1" ]; then
	pass "c_order_init: a new thread runs before its creator goes on under serial:$found, 3 reruns alike"
else
	fail "c_order_init under serial" "seed '$found', reruns$codes"
fi

# --- the same without privilege: a user's run, its tasks lowering themselves ----
bad=${C_threads__lost_update_over_a_sleep_bad:-1}
good=
for s in $(seq 1 16); do
	run "$s" "$T/serial_c_sleep"
	[ $? = 0 ] && { good=$s; break; }
done
codes=
for s in "$bad" "$good"; do
	as_user "$U" "$HERMETIC" enroll --seed 1 --sched "serial:$s" -- "$T/serial_c_sleep" \
		>"$T/user.out" 2>"$T/user.err"
	codes="$codes $?"
done
if [ "$codes" = " 1 0" ]; then
	pass "as an unprivileged user: serial:$bad fails and serial:$good passes, as for root"
else
	fail "serial as an unprivileged user" "exit codes$codes: $(tail -3 "$T/user.err" | tr '\n' '|')"
fi

# --- the failing run's journal replays its failure --------------------------------
bad=${C_threads__lost_update_over_a_sleep_bad:-1}
"$HERMETIC" enroll --seed 1 --sched "serial:$bad" --record="$T/j" -- "$T/serial_c_sleep" \
	>"$T/rec.out" 2>"$T/rec.err"
rc=$?
jf=$(find "$T/j" -type f ! -name index.json 2>/dev/null | head -1)
"$HERMETIC" replay --yes "$jf" >"$T/rep.out" 2>"$T/rep.err"
rrc=$?
# (the schedule replay gives, seen from inside: the journal's)
"$HERMETIC" replay --yes "$jf" -- sh -c 'echo "$HERMETIC_SCHED_MODE:$HERMETIC_SCHED_SEED"' \
	>"$T/rep.env" 2>/dev/null
if [ $rc = 1 ] && [ $rrc = 1 ] && [ -n "$jf" ] && cmp -s "$T/rec.out" "$T/rep.out" &&
	grep -q "^serial:$bad$" "$T/rep.env" && grep -q -- "--sched serial:$bad" "$T/rec.err"; then
	pass "replay of serial:$bad's journal fails the same way ($(cat "$T/rep.out")), under the journal's --sched"
else
	fail "replay of the failing run" "enroll $rc replay $rrc: $(tr '\n' '|' <"$T/rep.out") $(tail -3 "$T/rep.err" | tr '\n' '|')"
fi

# --- output whose order scheduling decides: one seed, one output ------------------
same=1 outs=
for s in 1 2 3; do
	"$HERMETIC" enroll --seed 1 --sched "serial:$s" -- "$T/serial_order" >"$T/o$s.a" 2>/dev/null
	"$HERMETIC" enroll --seed 1 --sched "serial:$s" -- "$T/serial_order" >"$T/o$s.b" 2>/dev/null
	cmp -s "$T/o$s.a" "$T/o$s.b" && [ "$(wc -l <"$T/o$s.a")" = 15 ] || same=
	outs="$outs $(md5sum <"$T/o$s.a" | cut -c1-8)"
done
distinct=$(echo $outs | tr ' ' '\n' | sort -u | wc -l)
if [ -n "$same" ] && [ "$distinct" -ge 2 ]; then
	pass "five threads' output order: two runs of each serial seed identical, $distinct orders over 3 seeds"
else
	fail "serial output order" "same '$same', orders:$outs"
fi

# --- the CPUs programs see: those of the run before the pinning -------------------
# (and without the shim: a static C program and Go, answered by the
# supervisor)
cat >"$T/scpu.c" <<'EOS'
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
int main(void)
{
	cpu_set_t s;

	if (sched_getaffinity(0, sizeof(s), &s))
		return 2;
	printf("static %d\n", CPU_COUNT(&s));
	return 0;
}
EOS
gcc -static -O2 -o "$T/scpu" "$T/scpu.c"
mkdir -p "$T/gocpu"
cat >"$T/gocpu/main.go" <<'EOS'
package main

import (
	"fmt"
	"runtime"
)

func main() { fmt.Println("go", runtime.NumCPU(), runtime.GOMAXPROCS(0)) }
EOS
(cd "$T/gocpu" && GOFLAGS=-mod=mod GO111MODULE=off GOCACHE=$T/gocache go build -o "$T/gocpu/gocpu" main.go) ||
	fail "sched_serial: build the Go probe" "go build"
cat >"$T/cpus.sh" <<EOS
echo "nproc \$(nproc)"
python3 -c 'import os; print("py", sorted(os.sched_getaffinity(0)))'
$T/scpu
$T/gocpu/gocpu
EOS
"$HERMETIC" enroll --seed 1 -- sh "$T/cpus.sh" >"$T/cpus.bare" 2>/dev/null
one=
for s in $(seq 1 12); do
	"$HERMETIC" enroll --seed 1 --sched "chaos:$s" -- true 2>"$T/ch.err" >/dev/null
	grep -q "the run on one CPU" "$T/ch.err" && { one=$s; break; }
done
[ -n "$one" ] || fail "sched_serial: a chaos seed on one CPU" "none in 1..12"
for sched in "chaos:${one:-1}" serial:2; do
	"$HERMETIC" enroll --seed 1 --sched "$sched" -- sh "$T/cpus.sh" >"$T/cpus.out" 2>/dev/null
	if [ -s "$T/cpus.bare" ] && cmp -s "$T/cpus.bare" "$T/cpus.out" && grep -q "^nproc $(nproc)$" "$T/cpus.out"; then
		pass "--sched $sched: nproc, os.sched_getaffinity, a static program and Go print what they print without --sched ($(tr '\n' ' ' <"$T/cpus.out"))"
	else
		fail "--sched $sched: the CPUs before the pinning" "bare $(tr '\n' '|' <"$T/cpus.bare") sched $(tr '\n' '|' <"$T/cpus.out")"
	fi
done

# --- a spinner cannot starve the rest; the audit says the run is not serial ------
# main spins on a flag only a thread it created sets: the thread starts at
# main's priority behind it, so it runs only once main is lowered.
cat >"$T/spin.c" <<'EOS'
#include <pthread.h>
static volatile int flag;
static void *setter(void *a) { flag = 1; return a; }
int main(void)
{
	pthread_t t;

	if (pthread_create(&t, 0, setter, 0))
		return 2;
	while (!flag)
		;
	pthread_join(t, 0);
	return 0;
}
EOS
gcc -O2 -pthread -o "$T/spin" "$T/spin.c"
timeout 60 "$HERMETIC" enroll --seed 1 --sched serial:3 -- "$T/spin" >/dev/null 2>"$T/spin.err"
rc=$?
if [ $rc = 0 ] && grep -q "sched serial: 1 task ran 0.2 s of CPU without blocking" "$T/spin.err" &&
	grep -q "not serial" "$T/spin.err"; then
	pass "a spinning thread is lowered below the rest (the run ends) and the audit says the run was not serial"
else
	fail "serial spinner" "exit $rc: $(tr '\n' '|' <"$T/spin.err")"
fi

# --- status says the mode ---------------------------------------------------------
"$HERMETIC" enroll --seed 5 --sched serial:4 -- sh -c "
	for i in \$(seq 40); do
		$HERMETIC status --json >$T/status.json 2>&1
		grep -q '\"tasks\":[1-9]' $T/status.json && break
	done" >/dev/null 2>&1
if python3 - "$T/status.json" <<'EOS'; then
import json, sys
d = json.load(open(sys.argv[1]))
s = [r["sched"] for r in d["runs"] if "sched" in r]
assert s and s[0]["mode"] == "serial" and s[0]["seed"] == 4 and s[0]["spinners_lowered"] == 0, s
EOS
	pass "status: the run's sched (mode serial, seed 4, no spinner lowered)"
else
	fail "status: the run's sched" "$(head -c 600 "$T/status.json")"
fi
