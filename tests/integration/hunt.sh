# hermetic hunt on the corpus of tests/hunt/ (flaky programs of known cause
# in C, Node, Go, Python and shell): with its defaults (fewer runs where
# enough) it finds each failure, names its cause, and the reproduction it
# prints fails on every rerun. Then: two shards plus 'hunt merge' print the
# report of one hunt; a command that never fails says so; --timeout and
# --fail-if are failures of their own kind; bad input gets its error.
source "$(dirname "$0")/../lib.sh"
need_root hunt || exit 0
start_daemon || { fail "daemon starts" "see above"; exit 1; }
C=$TOP/tests/hunt
PY=/usr/bin/python3
mkdir -p "$T/w" "$T/bin"
cd "$T/w"

# hunt NAME ARGS...: hermetic hunt, summary in $T/NAME.out, stderr in $T/NAME.err
hunt() {
	local name=$1
	shift
	timeout 600 "$HERMETIC" hunt --keep "$T/keep-$name" "$@" >"$T/$name.out" 2>"$T/$name.err"
}

# corpus NAME CAUSE ARGS...: the hunt finds a failure, names CAUSE, and its
# reproduction fails on each of three reruns.
corpus() {
	local name=$1 cause=$2 rc repro fails=0
	shift 2
	hunt "$name" "$@"
	rc=$?
	if [ $rc != 1 ]; then
		fail "hunt finds $name's failure" "exit $rc: $(tail -3 "$T/$name.err" "$T/$name.out" | tr '\n' '|')"
		return
	fi
	pass "hunt finds $name's failure"
	if grep -q "^  cause: $cause" "$T/$name.out"; then
		pass "hunt names $name's cause: $cause"
	else
		fail "hunt names $name's cause: $cause" "$(grep -E '^  (cause|verified)' "$T/$name.out" | tr '\n' '|')"
	fi
	repro=$(sed -n 's/^  reproduce: //p' "$T/$name.out" | head -n 1)
	for _ in 1 2 3; do
		sh -c "$repro" >/dev/null 2>&1 || fails=$((fails + 1))
	done
	check "$name's printed reproduction fails on every rerun ($fails of 3)" test $fails = 3
}

cc -O1 -o "$T/bin/random_byte" "$C/random_byte.c" || fail "build random_byte.c" "cc failed"
corpus random_byte "randomness (entropy)" --runs 100 -- "$T/bin/random_byte"
if command -v node >/dev/null; then
	corpus month_end "date/time" --runs 30 -- node "$C/month_end.js"
	grep -q "the last day of a month\|Feb 29" "$T/month_end.out" &&
		pass "month_end: the failing start is named a month end" ||
		fail "month_end: the failing start is named a month end" "$(grep cause "$T/month_end.out")"
else
	skip "hunt on month_end.js" "node not installed"
fi
mkdir -p "$T/go" && cp "$C/leap_day.go" "$T/go/main.go"
if command -v go >/dev/null && go_static "$T/go" "$T/bin/leap_day"; then
	corpus leap_day "date/time" --runs 40 -- "$T/bin/leap_day"
	check "leap_day: the failing start is Feb 29" grep -q "Feb 29" "$T/leap_day.out"
else
	skip "hunt on leap_day.go" "go build failed: $(tail -2 "$T/go.log" 2>/dev/null | tr '\n' '|')"
fi
corpus dst_hour "date/time" --runs 100 -- "$PY" "$C/dst_hour.py"
check "dst_hour: the failing start is near a DST change" grep -q "DST change in America/New_York" "$T/dst_hour.out"
corpus set_order "randomness (entropy)" --runs 20 -- "$PY" "$C/set_order.py"
corpus slow_helper "randomness (entropy)" --runs 20 -- "$PY" "$C/slow_helper.py"
mkdir -p "$T/left" && cd "$T/left"
corpus leftover "state left between runs" --runs 10 -- sh "$C/leftover.sh"
check "leftover: the entry the runs left is named" grep -q "new in the working directory: hunt-leftover.marker" "$T/leftover.out"
cd "$T/w"

# --vary clock: every try has the same seed, only the start moves; --vary
# tick draws the tick and prints it in the reproduction.
if [ -x "$T/bin/leap_day" ]; then
	hunt varyclock --runs 40 --vary clock -- "$T/bin/leap_day"
	seeds=$(sed -n 's/^  seeds: //p' "$T/varyclock.out" | tr -d ' .' | tr ',' '\n' | sort -u | grep -c .)
	if grep -q "^  cause: date/time" "$T/varyclock.out" && [ "$seeds" = 1 ]; then
		pass "--vary clock: one seed, the start varied, the cause the date"
	else
		fail "--vary clock" "$seeds seeds: $(grep -E 'seeds|cause' "$T/varyclock.out" | tr '\n' '|')"
	fi
fi
# (the same seeds as the default hunt's: try 33 fails)
hunt varytick --runs 40 --vary entropy,tick -- "$T/bin/random_byte"
if grep -q "axes: entropy,tick" "$T/varytick.out" &&
	grep -q "^  reproduce: .* --tick [0-9]*ns -- " "$T/varytick.out"; then
	pass "--vary entropy,tick: the axes are named, the reproduction carries its tick"
else
	fail "--vary entropy,tick" "$(head -12 "$T/varytick.out" | tr '\n' '|')"
fi

# A hunt repeats: the same hunt seed, the same tries and report.
hunt again --runs 100 -- "$T/bin/random_byte"
mask() { sed -E 's/in [0-9.]+ s, [0-9]+ runs\/min/in T s/; s/in [0-9.]+ s;/in T s;/; s#/tmp/[^ ]*#PATH#g' "$1"; }
if diff <(mask "$T/random_byte.out") <(mask "$T/again.out") >"$T/diff"; then
	pass "the same hunt seed gives the same hunt"
else
	fail "the same hunt seed gives the same hunt" "$(head -5 "$T/diff" | tr '\n' '|')"
fi

# Two shards and merge print what one hunt over the same tries prints.
hunt whole --runs 64 --report "$T/whole.jsonl" -- "$T/bin/random_byte"
hunt shard1 --runs 64 --shard 1/2 --report "$T/s1.jsonl" -- "$T/bin/random_byte"
hunt shard2 --runs 64 --shard 2/2 --report "$T/s2.jsonl" -- "$T/bin/random_byte"
"$HERMETIC" hunt merge "$T/s1.jsonl" "$T/s2.jsonl" >"$T/merged.out" 2>"$T/merged.err"
rc=$?
check "hunt merge of failing shards exits 1" test $rc = 1
if diff <(mask "$T/whole.out") <(mask "$T/merged.out") >"$T/diff"; then
	pass "two shards plus hunt merge print the report of one hunt"
else
	fail "two shards plus hunt merge print the report of one hunt" "$(head -8 "$T/diff" | tr '\n' '|')"
fi
"$HERMETIC" hunt merge --json "$T/s1.jsonl" "$T/s2.jsonl" >"$T/merged.json" 2>/dev/null
check "hunt merge --json: one document of 64 runs" $PY -c 'import json,sys; assert json.load(open(sys.argv[1]))["runs"] == 64' "$T/merged.json"
check "the shards split the runs (32 each)" grep -q "^  32 runs" "$T/shard1.out"
# report --markdown: the hunt's summary for a CI job's page, from either.
"$HERMETIC" report --markdown "$T/whole.jsonl" >"$T/whole.md" 2>&1
rc=$?
"$HERMETIC" report --markdown "$T/s1.jsonl" "$T/s2.jsonl" >"$T/merged.md" 2>&1
mdmask() { sed -E 's/in [0-9.]+ s$/in T s/; s#/tmp/[^ ]*#PATH#g' "$1"; }
if [ $rc = 0 ] && grep -q "^### hermetic hunt: 1 distinct failure in [0-9]* of 64 runs" "$T/whole.md" &&
	grep -q "^| \` exit 1: assertion failed: random byte # < # \` | .* | randomness (entropy)" "$T/whole.md" &&
	diff <(mdmask "$T/whole.md") <(mdmask "$T/merged.md") >/dev/null; then
	pass "report --markdown renders a hunt (one or its shards alike)"
else
	fail "report --markdown renders a hunt" "exit $rc: $(head -8 "$T/whole.md" | tr '\n' '|')"
fi
"$HERMETIC" hunt --runs 4 --report "$T/other.jsonl" -- true >/dev/null 2>&1
"$HERMETIC" hunt merge "$T/s1.jsonl" "$T/other.jsonl" >"$T/out" 2>&1
rc=$?
if [ $rc = 65 ] && grep -q "different commands" "$T/out"; then
	pass "merge refuses reports of different commands (65)"
else
	fail "merge refuses reports of different commands (65)" "exit $rc: $(tr '\n' '|' <"$T/out")"
fi
"$HERMETIC" hunt merge "$T/nonexistent.jsonl" >"$T/out" 2>&1
check "merge of a missing report exits 66" test $? = 66

# A command that never fails, sleeping 20 s of virtual time per run.
start=$(now_ms)
hunt sleepy --runs 20 -- sh -c 'sleep 10; sleep 10'
rc=$?
ms=$(($(now_ms) - start))
if [ $rc = 0 ] && grep -q "^no failure in 20 runs (axes: entropy,clock) in" "$T/sleepy.out"; then
	pass "a never-failing command: no failure in 20 runs (exit 0, ${ms} ms for 400 s of sleeps)"
else
	fail "a never-failing command: no failure in 20 runs" "exit $rc: $(tr '\n' '|' <"$T/sleepy.out")"
fi
check "a passing hunt leaves no kept output" test -z "$(ls "$T/keep-sleepy")"

# --until-fail stops starting tries at the first failure; --budget after a time.
hunt until --runs 400 --until-fail --verify 1 -- "$T/bin/random_byte"
rc=$?
runs=$(sed -n 's/^  \([0-9]*\) runs (.*stopped by --until-fail.*/\1/p' "$T/until.out")
if [ $rc = 1 ] && [ -n "$runs" ] && [ "$runs" -lt 400 ]; then
	pass "--until-fail stops after the first failure ($runs of 400 runs)"
else
	fail "--until-fail stops after the first failure" "exit $rc: $(head -3 "$T/until.out" | tr '\n' '|')"
fi
hunt budget --runs 100000 --budget 2s -- sh -c 'sleep 1'
rc=$?
if [ $rc = 0 ] && grep -q "stopped by --budget" "$T/budget.out" && grep -q "^no failure in" "$T/budget.out"; then
	pass "--budget stops starting tries after its time: $(grep -o '^no failure in [0-9]* runs' "$T/budget.out")"
else
	fail "--budget stops starting tries" "exit $rc: $(head -3 "$T/budget.out" | tr '\n' '|')"
fi

# --json: one document with the failures.
hunt json --runs 40 --json -- "$T/bin/random_byte"
if $PY -c 'import json,sys; d=json.load(open(sys.argv[1])); f=d["distinct_failures"][0]
assert d["runs"]==40 and f["cause"].startswith("randomness") and f["reproduce"].startswith("hermetic enroll --seed ")
assert 0 <= f["rate_low"] <= f["rate"] <= f["rate_high"] <= 1' "$T/json.out"; then
	pass "--json prints the summary as one JSON document"
else
	fail "--json prints the summary as one JSON document" "$(head -c 300 "$T/json.out")"
fi

# --timeout: a run busy for real (some seeds) is ended and is a timeout.
cat >"$T/spin.sh" <<'EOF'
b=$(od -An -N1 -tu1 /dev/urandom)
if [ "$b" -lt 64 ]; then while :; do :; done; fi
echo ok
EOF
hunt spin --runs 8 --verify 1 --timeout 1s -- sh "$T/spin.sh"
rc=$?
if [ $rc = 1 ] && grep -q "^failure 1: timeout" "$T/spin.out" && grep -q "^  cause: randomness" "$T/spin.out"; then
	pass "--timeout: a run busy past it is a timeout, caused by its seed"
else
	fail "--timeout: a run busy past it is a timeout" "exit $rc: $(grep -E 'failure|cause' "$T/spin.out" | tr '\n' '|')"
fi
# --fail-if: exit 0 with a matching line is a failure of its own kind.
hunt failif --runs 3 --fail-if 'WARNING' -- sh -c 'echo "WARNING: leaked 3 objects at 0x7f00aa"; echo done'
if [ $? = 1 ] && grep -q "^failure 1: output: WARNING: leaked # objects at 0x#" "$T/failif.out"; then
	pass "--fail-if: a matching line is a failure, its numbers masked"
else
	fail "--fail-if: a matching line is a failure" "$(tr '\n' '|' <"$T/failif.out")"
fi

# Bad input: each a clear error and its exit status.
bad() {
	local name=$1 want=$2 words=$3 rc
	shift 3
	"$HERMETIC" hunt "$@" >"$T/bad.out" 2>&1
	rc=$?
	if [ $rc = "$want" ] && grep -q -- "$words" "$T/bad.out"; then
		pass "$name: exit $want, '$words'"
	else
		fail "$name" "exit $rc (want $want): $(tr '\n' '|' <"$T/bad.out")"
	fi
}
bad "a command that does not exist" 127 "No such file" --runs 3 -- ./no-such-command
bad "a command that cannot be executed" 126 "Permission denied" --runs 3 -- /etc/passwd
bad "--runs 0" 2 "at least 1" --runs 0 -- true
bad "a shard out of range" 2 "out of range" --shard 3/2 -- true
bad "shard 0" 2 "out of range" --shard 0/2 -- true
bad "--vary of an unknown axis" 2 "unknown axis" --vary moon -- true
bad "no command" 2 "no command" --runs 3
HERMETIC_SOCKET=$T/no-daemon.sock "$HERMETIC" hunt --runs 3 -- true >"$T/bad.out" 2>&1
rc=$?
if [ $rc = 69 ] && grep -q "cannot reach hermeticd" "$T/bad.out"; then
	pass "no daemon: the hunt stops with enroll's 69 and its message"
else
	fail "no daemon: the hunt stops with 69" "exit $rc: $(tr '\n' '|' <"$T/bad.out")"
fi
