#!/usr/bin/env bash
# Scheduler entries that outlive what they counted (bpf/sched.bpf.c, "An
# entry can outlive..."): neither makes a run look idle, nor busy, when it
# is not.
#  - A thread that execs takes its leader's tid: its old tid's entry is
#    moved, not left RUNNING (that held the run's clock for good: a sleep
#    after such an exec never ended).
#  - An entry of an earlier run in the same domain slot (a dying task's
#    last switch after its run ended, or a tid reused by any task of the
#    machine) counts nothing in the slot's new run. Planted with bpftool in
#    the private daemon's own pinned map, on a process of ours outside
#    every run: of an earlier incarnation, the run's busy process still
#    holds its clock; of this one (the control: the planting works), its
#    removal makes the run look idle and the sleep ends at once.
source "$(dirname "$0")/../lib.sh"

need_root "scheduler entries" || exit 0
if ! command -v bpftool >/dev/null; then
	fail "scheduler entries" "bpftool missing (make deps)"
	exit 0
fi
start_daemon || { fail "daemon starts" "$(tail -n 5 "$T/daemon.log" | tr '\n' '|')"; exit 1; }
PINS=$T/run/bpf/hermetic/$HMD_NAME

# --- a thread that execs -----------------------------------------------------
t0=$(now_ms)
timeout 60 "$HERMETIC" enroll -- /usr/bin/python3 -c '
import threading, os
t = threading.Thread(target=lambda: os.execv("/bin/sh", ["sh", "-c", "sleep 3600; echo slept"]))
t.start(); t.join()' >"$T/exec.out" 2>"$T/exec.err"
rc=$? t1=$(now_ms)
if [ $rc = 0 ] && grep -qx slept "$T/exec.out" && ! grep -q "lag bound" "$T/exec.err"; then
	pass "a thread that execs leaves no count behind: the run's hour-long sleep after it ends at once ($((t1 - t0)) ms)"
else
	fail "a thread that execs leaves no count behind" "rc $rc after $((t1 - t0)) ms; out: $(cat "$T/exec.out"); err: $(tr '\n' ' ' <"$T/exec.err" | tail -c 300)"
fi

# --- an entry of another incarnation of the slot -------------------------------
# le64 HEX: the 8 bytes of a number, as bpftool's "hex" arguments.
le64() { printf '%016x' "$1" | sed 's/../& /g' | awk '{ for (i = 8; i >= 1; i--) printf "%s ", $i }'; }
# gen_of SLOT: struct hm_sched_dom.gen (bytes 48..51) of a domain slot.
gen_of() {
	bpftool -j map lookup pinned "$PINS/hm_sched_doms" key hex $(le64 "$1" | cut -d' ' -f1-4) |
		python3 -c 'import json, sys; v = json.load(sys.stdin)["value"]; print(int("".join(x[2:] for x in v[48:52][::-1]), 16))'
}
# plant TID GEN: an entry of slot 0 (the run's: the daemon's only one),
# incarnation GEN, RUNNING, for a cgroup no task is in.
plant() {
	local v=$(((0xdeadbeef << 32) | ($2 << 21) | (1 << 20) | (1 << 16) | 1))
	bpftool map update pinned "$PINS/hm_sched_task" key hex $(le64 "$1" | cut -d' ' -f1-4) value hex $(le64 "$v")
}
# case NAME GEN_EXPR WANT: a run whose busy process holds its clock while
# its other process sleeps an hour; an entry of incarnation GEN_EXPR (of
# the run's gen g) planted on a sleeping process of ours, uncounted when it
# wakes. WANT: held (the sleep goes on) or ends.
stale_case() {
	local name=$1 expr=$2 want=$3 busy run g gen s got
	busy_run
	busy=$BUSY run=$RUN
	if [ -z "$busy" ]; then
		fail "$name" "the run's busy process never started: $(tr '\n' ' ' <"$T/err")"
		kill "$run" 2>/dev/null
		return
	fi
	g=$(gen_of 0)
	gen=$(($expr))
	sleep 1 &
	s=$!
	if ! [ "${g:-0}" -gt 0 ] || ! plant "$s" "$gen" 2>"$T/plant.err"; then
		fail "$name" "cannot plant the entry (gen '${g:-}'): $(tr '\n' ' ' <"$T/plant.err")"
		kill -9 "$busy" "$s" 2>/dev/null
		wait "$run"
		return
	fi
	wait "$s"
	sleep 2
	if grep -q slept "$T/out"; then got=ends; else got=held; fi
	kill -9 "$busy" 2>/dev/null
	timeout 60 tail --pid="$run" -f /dev/null
	wait "$run"
	if [ "$got" = "$want" ]; then
		pass "$name"
	else
		fail "$name" "the hour-long sleep $got (want $want; run's gen $g, planted $gen); err: $(tr '\n' ' ' <"$T/err" | tail -c 300)"
	fi
}
stale_case "an entry of an earlier run in the slot counts nothing: the run's busy process still holds its clock" \
	'g > 1 ? g - 1 : 2047' held
stale_case "control: an entry of the run's own incarnation counts (its removal lets the sleep end at once)" \
	'g' ends
if grep -q "below zero" "$T/daemon.log"; then
	pass "the daemon names a domain whose count fell below zero"
else
	fail "the daemon names a domain whose count fell below zero" "$(tail -n 5 "$T/daemon.log" | tr '\n' '|')"
fi
