#!/usr/bin/env bash
# tests/run.sh, the runner itself: a script that runs past its time bound is
# ended (what it started too, in process groups of their own included) and
# counted failed, with its name and its last output; the scripts after it
# still run. The bound comes from a script's "# timeout: N" line, or from
# HERMETIC_TEST_TIMEOUT. Runs tests/run.sh on a temporary tests directory
# (HERMETIC_TESTS_DIR) and no unit tests (an empty HERMETIC_BUILD).
# timeout: 300
# (its own bound, read before the scripts' it writes below; 28 s measured)
source "$(dirname "$0")/../lib.sh"

D=$T/tests
mkdir -p "$D" "$T/nobuild/tests"
# hang: a case, its last words, a sleeper in a process group of its own (a
# test's own timeout makes one), then it hangs.
cat >"$D/hang.sh" <<EOF
#!/usr/bin/env bash
# timeout: 2
trap 'echo cleaned >"$T/cleaned"' EXIT
echo "PASS hang: a case before the hang"
echo "the last words before the hang"
timeout 600 sleep 600 &
echo \$! >"$T/nested.pid"
sleep 600
EOF
# deaf: ignores SIGTERM (so does its sleep): the SIGKILL after the grace.
cat >"$D/deaf.sh" <<'EOF'
#!/usr/bin/env bash
# timeout: 1
trap '' TERM
echo "deaf and hanging"
sleep 600
EOF
cat >"$D/slow.sh" <<'EOF'
#!/usr/bin/env bash
echo "slow: no bound of its own"
sleep 600
EOF
# long: within its bound, until the runner is stopped (a CI job cancelled).
cat >"$D/long.sh" <<EOF
#!/usr/bin/env bash
# timeout: 600
sleep 600 &
echo \$! >"$T/long.pid"
wait
EOF
cat >"$D/fine.sh" <<'EOF'
#!/usr/bin/env bash
# timeout: 30
sleep 0.2
echo "PASS fine: a case after the hang"
EOF

runner() { # runner PATTERN...: the runner on $D, output in $T/out
	local t0
	t0=$(now_ms)
	env -u CI -u HERMETIC_SANITIZE -u HERMETIC_TEST_TIMEOUT HERMETIC_TESTS_DIR="$D" HERMETIC_BUILD="$T/nobuild" \
		"${ENVS[@]}" timeout 120 bash "$TOP/tests/run.sh" "$@" >"$T/out" 2>&1
	RC=$?
	MS=$(($(now_ms) - t0))
}
ctx() { printf 'rc=%s %s ms: %s' "$RC" "$MS" "$(tr '\n' '|' <"$T/out" | tail -c 800)"; }

ENVS=()
runner hang fine
np=$(cat "$T/nested.pid" 2>/dev/null)
# gone: no such process, or a zombie its new parent has yet to reap
gone() { [ -z "$(ps -o stat= -p "$1" 2>/dev/null | grep -v '^Z')" ]; }
if [ "$RC" = 1 ] && grep -q '^FAIL integration/hang: timed out: ended after [0-9]*s (its bound: 2s); its last output: .*the last words before the hang|$' "$T/out" &&
	grep -q '^-- integration/hang: 1 passed, 1 failed' "$T/out" && grep -q '^PASS fine: a case after the hang$' "$T/out" &&
	tail -n 1 "$T/out" | grep -qx '2 passed, 1 failed' && ((MS < 10000)); then
	pass "a script past its bound (# timeout: 2) is ended and counted failed, its name and last output printed; the next script runs (${MS} ms)"
else
	fail "a script past its bound is ended and counted failed" "$(ctx)"
fi
if [ -n "$np" ] && gone "$np" && [ "$(cat "$T/cleaned" 2>/dev/null)" = cleaned ]; then
	pass "the hung script's cleanup ran (SIGTERM first), and what it started in a process group of its own is ended with it"
else
	fail "what the hung script started is ended with it" "cleaned [$(cat "$T/cleaned" 2>/dev/null)] nested pid [$np] $(ps -o pid,stat,pgid,sid,args -p "${np:-1}" | tail -n 1)"
	[ -n "$np" ] && kill -KILL "$np" 2>/dev/null
fi

runner deaf
if [ "$RC" = 1 ] && grep -q '^FAIL integration/deaf: timed out: ended after [0-9]*s (its bound: 1s); its last output: deaf and hanging|$' "$T/out" &&
	tail -n 1 "$T/out" | grep -qx '0 passed, 1 failed' && ((MS >= 10000 && MS < 20000)); then
	pass "a script that ignores SIGTERM is killed 10 s past its bound and counted failed (${MS} ms)"
else
	fail "a script that ignores SIGTERM is killed" "$(ctx)"
fi

ENVS=(HERMETIC_TEST_TIMEOUT=1)
runner slow
if [ "$RC" = 1 ] && grep -q '^FAIL integration/slow: timed out: ended after [0-9]*s (its bound: 1s); its last output: slow: no bound of its own|$' "$T/out" &&
	((MS < 10000)); then
	pass "HERMETIC_TEST_TIMEOUT bounds a script without a bound of its own (${MS} ms)"
else
	fail "HERMETIC_TEST_TIMEOUT bounds a script" "$(ctx)"
fi

# The runner stopped (SIGTERM: a CI job cancelled) while a script runs:
# the script's session goes with it.
env -u CI -u HERMETIC_SANITIZE -u HERMETIC_TEST_TIMEOUT HERMETIC_TESTS_DIR="$D" HERMETIC_BUILD="$T/nobuild" \
	bash "$TOP/tests/run.sh" long >"$T/out" 2>&1 &
rp=$!
for _ in $(seq 100); do [ -s "$T/long.pid" ] && break; sleep 0.05; done
lp=$(cat "$T/long.pid" 2>/dev/null)
kill -TERM $rp
t0=$(now_ms)
wait $rp
RC=$? MS=$(($(now_ms) - t0))
sleep 0.2
if [ -n "$lp" ] && [ "$RC" = 143 ] && gone "$lp" && ((MS < 5000)); then
	pass "the runner stopped by SIGTERM ends the running script's session and exits 143 (${MS} ms)"
else
	fail "the runner stopped by SIGTERM ends the running script" "long pid [$lp] $(ps -o pid,stat,args -p "${lp:-1}" | tail -n 1); $(ctx)"
	[ -n "$lp" ] && kill -KILL "$lp" 2>/dev/null
fi

# Every integration script's bound is one the runner reads: a number of
# seconds, none above 2 hours.
bad=
for f in "$TOP"/tests/integration/*.sh; do
	n=$(head -n 20 "$f" | sed -n 's/^# *timeout: *//p' | head -n 1)
	[ -z "$n" ] && continue
	[[ $n =~ ^[0-9]+$ ]] && ((n > 0 && n <= 7200)) || bad="$bad $(basename "$f"):[$n]"
done
if [ -z "$bad" ]; then pass "every script's own bound (# timeout: N) is a number of seconds the runner reads"; else fail "scripts' bounds" "$bad"; fi
