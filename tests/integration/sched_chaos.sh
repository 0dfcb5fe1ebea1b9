# --sched chaos (daemon/chaos.c, preload/sched.c, cli/enroll_sched.c;
# docs/scheduling.md): bad values are refused with a clear error; off
# changes nothing (the kernel's policy, every CPU, no shim variable); under
# chaos every task of the run is real-time, on one CPU (FIFO) or on all (RR; by seed,
# the same for a seed every time), the run's status says the schedule;
# races of the corpus
# (tests/sched/) show up; replay takes the journal's --sched; hunt --vary
# sched names scheduling as the cause of a racy failure.
# timeout: 600
source "$(dirname "$0")/../lib.sh"
need_root sched_chaos || exit 0
start_daemon || { fail "sched_chaos: daemon" "did not start"; exit 0; }
bash "$TOP/tests/sched/build.sh" "$T/corpus" >"$T/corpus.list" || {
	fail "sched_chaos: corpus" "did not build"
	exit 0
}

# --- refusals ---------------------------------------------------------------
refuse() {
	local name=$1 words=$2 rc
	shift 2
	"$HERMETIC" enroll "$@" -- true >"$T/bad.out" 2>&1
	rc=$?
	if [ $rc = 2 ] && grep -q -- "$words" "$T/bad.out"; then
		pass "refused: $name (exit 2, '$words')"
	else
		fail "refused: $name" "exit $rc: $(tr '\n' '|' <"$T/bad.out")"
	fi
}
refuse "an unknown mode" "expected chaos\[:SEED\], serial\[:SEED\] or off" --sched fast
refuse "a seed that is no number" "SEED must be a number" --sched chaos:12x
refuse "an empty seed" "SEED must be a number" --sched chaos:
refuse "a negative seed" "SEED must be a number" --sched chaos:-3
refuse "off with a seed" "expected chaos\[:SEED\], serial\[:SEED\] or off" --sched off:3
refuse "chaos without the daemon" "needs the daemon" --sched chaos --no-daemon

# --- what the run's tasks get --------------------------------------------------
# The policy, priority and CPU list of a process of the run, once hermeticd
# has seen it (it adopts tasks within a millisecond).
# (Sleeps in a run are on its virtual clock: real time passes with the
# forks of chrt.)
cat >"$T/self.sh" <<'EOF'
for i in $(seq 40); do
	chrt -p $$ | grep -q 'SCHED_FIFO\|SCHED_RR' && break
	sleep 0.01
done
printf '%s %s %s\n' "$(chrt -p $$ | sed -n 's/.*policy: //p')" \
	"$(chrt -p $$ | sed -n 's/.*priority: //p')" \
	"$(taskset -cp $$ | sed 's/.*: //')"
printf 'shim %s\n' "${HERMETIC_SCHED_SEED:-none}"
EOF
all_cpus=$(taskset -cp $$ | sed 's/.*: //')
"$HERMETIC" enroll --seed 3 -- sh "$T/self.sh" >"$T/off.out" 2>"$T/off.err"
if [ "$(head -1 "$T/off.out")" = "SCHED_OTHER 0 $all_cpus" ] &&
	grep -q "^shim none$" "$T/off.out" && ! grep -q "sched" "$T/off.err"; then
	pass "off: the kernel's policy on every CPU, no shim variable, nothing said"
else
	fail "off changes nothing" "$(tr '\n' '|' <"$T/off.out") $(tr '\n' '|' <"$T/off.err")"
fi

one=0 spread=0 bad=0
for s in 1 2 3 4 5 6 7 8; do
	"$HERMETIC" enroll --seed 5 --sched chaos:$s -- sh "$T/self.sh" >"$T/c$s.out" 2>"$T/c$s.err"
	read -r pol prio cpus <"$T/c$s.out"
	if ! [[ $pol =~ ^SCHED_(FIFO|RR)$ ]] || ! grep -q "^shim $s$" "$T/c$s.out" ||
		! grep -q "sched chaos:$s" "$T/c$s.err"; then
		bad=$((bad + 1))
		fail "chaos:$s: the run's task is real-time and the shim has the seed" \
			"$(tr '\n' '|' <"$T/c$s.out") $(tr '\n' '|' <"$T/c$s.err")"
	elif [ "$cpus" = "$all_cpus" ]; then
		spread=$((spread + 1))
		[ "$pol $prio" = "SCHED_RR 40" ] || fail "chaos:$s: spread at SCHED_RR 40" "$pol $prio"
	elif [[ $cpus =~ ^[0-9]+$ ]] && [ "$pol" = SCHED_FIFO ]; then
		one=$((one + 1))
	else
		fail "chaos:$s: one CPU or all" "$cpus"
	fi
done
if [ $bad = 0 ] && { [ "$(nproc)" = 1 ] || { [ $one -gt 0 ] && [ $spread -gt 0 ]; }; }; then
	pass "chaos: 8 seeds, every task real-time, $one on one CPU (FIFO), $spread spread (RR), stderr names the schedule"
else
	fail "chaos: both halves among 8 seeds" "one $one spread $spread bad $bad"
fi
# A seed's half is the same every time.
"$HERMETIC" enroll --seed 9 --sched chaos:1 -- sh "$T/self.sh" >"$T/again.out" 2>/dev/null
a=$(head -1 "$T/c1.out" | awk '{print ($3 == "'"$all_cpus"'") ? "spread" : "one"}')
b=$(head -1 "$T/again.out" | awk '{print ($3 == "'"$all_cpus"'") ? "spread" : "one"}')
if [ "$a" = "$b" ]; then
	pass "chaos:1 twice: the same half ($a)"
else
	fail "chaos:1 twice: the same half" "$a then $b"
fi
# "chaos" alone takes the run's seed.
"$HERMETIC" enroll --seed 77 --sched chaos -- sh "$T/self.sh" >"$T/dflt.out" 2>"$T/dflt.err"
if grep -q "^shim 77$" "$T/dflt.out" && grep -q "sched chaos:77" "$T/dflt.err"; then
	pass "chaos without a seed takes the run's --seed"
else
	fail "chaos without a seed takes the run's --seed" "$(tr '\n' '|' <"$T/dflt.err")"
fi

# --- status, and the tasks given back -----------------------------------------
# Asked from inside the run, once hermeticd has adopted its tasks.
"$HERMETIC" enroll --seed 5 --sched chaos:4 -- sh -c "
	for i in \$(seq 40); do
		$HERMETIC status --json >$T/status.json 2>&1
		grep -q '\"tasks\":[1-9]' $T/status.json && break
	done" >/dev/null 2>&1
if python3 - "$T/status.json" <<'EOF'; then
import json, sys
d = json.load(open(sys.argv[1]))
s = [r["sched"] for r in d["runs"] if "sched" in r]
assert s and s[0]["mode"] == "chaos" and s[0]["seed"] == 4 and s[0]["tasks"] >= 1, s
EOF
	pass "status: the run's sched (mode chaos, seed 4, its tasks)"
else
	fail "status: the run's sched" "$(head -c 600 "$T/status.json")"
fi

# --- the corpus: races show up ---------------------------------------------------
# c_stack's bug showed in 9 of 10 chaos runs and c_order_init's in 9 of 10
# (make bench): that none shows in 20 seeds of each is beyond chance.
for prog in c_stack c_order_init; do
	found=
	for s in $(seq 1 20); do
		"$HERMETIC" enroll --seed "$s" --sched "chaos:$s" -- "$T/corpus/$prog" >/dev/null 2>&1
		[ $? = 1 ] && { found=$s; break; }
	done
	if [ -n "$found" ]; then
		pass "corpus $prog: its race shows under chaos (seed $found)"
	else
		fail "corpus $prog: its race shows under chaos" "not in 20 seeds"
	fi
done

# --- replay takes the journal's --sched, or the command line's ------------------
"$HERMETIC" enroll --seed 5 --sched chaos:6 --record="$T/j" --keep-passing -- sh "$T/self.sh" \
	>/dev/null 2>&1
jf=$(find "$T/j" -type f ! -name index.json 2>/dev/null | head -1)
"$HERMETIC" replay --yes "$jf" >"$T/rep.out" 2>"$T/rep.err"
"$HERMETIC" replay --yes --sched off "$jf" >"$T/rep2.out" 2>"$T/rep2.err"
if grep -q "^shim 5$\|^shim 6$" "$T/rep.out" && grep -q "^SCHED_FIFO" "$T/rep.out" &&
	grep -q "^shim none$" "$T/rep2.out" && grep -q "^SCHED_OTHER" "$T/rep2.out"; then
	pass "replay: the journal's --sched, and --sched off instead"
else
	fail "replay --sched" "$(tr '\n' '|' <"$T/rep.out") / $(tr '\n' '|' <"$T/rep2.out") $(tail -2 "$T/rep.err")"
fi

# --- hunt --vary sched names scheduling ----------------------------------------
"$HERMETIC" hunt --runs 30 --vary sched -- "$T/corpus/c_queue_index" >"$T/hunt.out" 2>&1
if grep -q "scheduling:" "$T/hunt.out"; then
	pass "hunt --vary sched: a racy failure's cause is scheduling"
else
	fail "hunt --vary sched names scheduling" "$(tail -15 "$T/hunt.out" | tr '\n' '|')"
fi
