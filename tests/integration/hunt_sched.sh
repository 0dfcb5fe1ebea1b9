# hermetic hunt --vary sched (cli/hunt_axes.c; docs/hunting.md,
# docs/scheduling.md): the axis draws --sched chaos for most tries and
# --sched serial for some, sched=chaos and sched=serial draw one mode only,
# the report says each try's mode, and a hunt under serial schedules of a
# corpus program whose race lies between blocking points (tests/sched/
# serial_c_sleep.c) names scheduling as the cause, with a reproduction that
# fails on every rerun (serial repeats a seed's schedule).
# timeout: 600
source "$(dirname "$0")/../lib.sh"
need_root hunt_sched || exit 0
start_daemon || { fail "hunt_sched: daemon" "did not start"; exit 0; }
S=$TOP/tests/sched
gcc -O2 -pthread -o "$T/serial_c_sleep" "$S/serial_c_sleep.c" ||
	{ fail "hunt_sched: build serial_c_sleep" "gcc"; exit 0; }

# modes P REPORT: the sched_mode of every try line of REPORT, counted
modes() {
	python3 -c '
import json, sys
c = {}
for line in open(sys.argv[1]):
    o = json.loads(line)
    if o.get("hunt") == "run":
        c[o.get("sched_mode")] = c.get(o.get("sched_mode"), 0) + 1
print(" ".join("%s=%d" % (k, c[k]) for k in sorted(c, key=str)))' "$1"
}

# --- a bad mode is refused -------------------------------------------------------
if ! "$HERMETIC" hunt --runs 1 --vary sched=fast -- true >"$T/bad.out" 2>&1 &&
	grep -q "unknown axis 'sched=fast'.*sched=serial" "$T/bad.out"; then
	pass "hunt --vary sched=fast: refused, the modes named"
else
	fail "hunt --vary sched=fast refused" "$(tr '\n' '|' <"$T/bad.out")"
fi

# --- sched draws both modes; sched=chaos only chaos ----------------------------
"$HERMETIC" hunt --runs 16 --vary sched --report "$T/both.jsonl" -- true >"$T/both.out" 2>&1
"$HERMETIC" hunt --runs 8 --vary sched=chaos --report "$T/chaos.jsonl" -- true >"$T/chaos.out" 2>&1
both=$(modes "$T/both.jsonl") chaos=$(modes "$T/chaos.jsonl")
# 16 tries, serial for 1 in 4 by the hunt seed's draw: a fixed mix (hunt seed 0)
if [[ $both =~ ^chaos=([0-9]+)\ serial=([0-9]+)$ ]] && [ "${BASH_REMATCH[1]}" -gt 0 ] &&
	[ "${BASH_REMATCH[2]}" -gt 0 ] && [ "$chaos" = "chaos=8" ] &&
	grep -Eq "axes: sched[;)]" "$T/both.out" && grep -Eq "axes: sched=chaos[;)]" "$T/chaos.out"; then
	pass "hunt --vary sched: both modes drawn ($both), sched=chaos only chaos"
else
	fail "hunt --vary sched modes" "sched: '$both' sched=chaos: '$chaos' $(head -3 "$T/both.out" | tr '\n' '|')"
fi

# --- sched=serial on a race between blocking points: scheduling, verified ------
"$HERMETIC" hunt --runs 12 --vary sched=serial --report "$T/serial.jsonl" -- \
	"$T/serial_c_sleep" >"$T/serial.out" 2>&1
if grep -q "scheduling: [1-9][0-9]* of [0-9]* other schedules (--sched serial seeds) pass" \
	"$T/serial.out" && grep -q "reproduce: .*--sched serial:[0-9]" "$T/serial.out" &&
	grep -Eq "verified: ([0-9]+) of \1 reruns fail the same way$" "$T/serial.out" &&
	[ "$(modes "$T/serial.jsonl")" = "serial=12" ]; then
	pass "hunt --vary sched=serial: serial_c_sleep's cause is scheduling, every rerun fails"
else
	fail "hunt --vary sched=serial names scheduling" "$(tail -12 "$T/serial.out" | tr '\n' '|')"
fi

# --- hunt merge reads the mode back -------------------------------------------
"$HERMETIC" hunt merge "$T/serial.jsonl" >"$T/merge.out" 2>&1
if grep -Eq "axes: sched=serial[;)]" "$T/merge.out" &&
	grep -q "reproduce: .*--sched serial:[0-9]" "$T/merge.out"; then
	pass "hunt merge: the report's serial schedules"
else
	fail "hunt merge of a serial hunt" "$(tail -8 "$T/merge.out" | tr '\n' '|')"
fi
