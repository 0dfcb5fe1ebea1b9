#!/usr/bin/env bash
# The pytest plugin, with Debian's pytest and pytest-xdist and the package
# pip-installed from python/ into a venv: each test's values are the same in
# the whole file, alone (-k) and under -n 2; --hermetic-seed changes them;
# the clock starts at --now in every test; the fixture moves it; a marker's
# seed= fixes a test's values; a failing test's repro line reproduces it.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/shim_lib.sh"
shim_built pytest || exit 0
PY=/usr/bin/python3 # Debian's pytest is Debian's python's (tests/deps.sh)
if ! $PY -c 'import pytest, xdist' 2>/dev/null; then
	skip pytest "python3-pytest and python3-pytest-xdist not installed (make deps)"
	exit 0
fi
# The package as a user installs it: pip, from a copy of python/ (pip
# writes build files next to the sources), no index, no dependencies.
cp -r "$TOP/python" "$T/pkg"
if ! { $PY -m venv --system-site-packages "$T/venv" &&
	"$T/venv/bin/pip" install -q --no-build-isolation --no-index "$T/pkg"; } >"$T/pip.log" 2>&1; then
	fail "pip install python/" "$(tail -3 "$T/pip.log" | tr '\n' '|')"
	exit 0
fi
pass "pip installs the hermetic package from python/ with no dependencies"
VPY=$T/venv/bin/python
cp "$TOP/tests/integration/pytest/test_values.py" "$T/"
cd "$T"
export HERMETIC_BIN=$HERMETIC
# pytest from the venv; options of the daemon (or --no-daemon) through enroll
pyt() { timeout 300 "$VPY" -m pytest -p no:cacheprovider -s -q "$@" test_values.py 2>&1; }
run() { timeout 300 "$HERMETIC" enroll $SHIM_DAEMON_OPT --now @${SHIM_NOW%000000000} "$@" 2>&1; }
val() { grep "VALUES $1 " <<<"$2" | sed 's/^.*VALUES //'; }

# inert until used
out=$(pyt -k second)
grep -q "1 passed" <<<"$out" && ! grep -q "^hermetic:" <<<"$out" && grep -q "VALUES second time=" <<<"$out" &&
	[ "$(val second "$out")" != "$(val second "$(pyt -k second)")" ] &&
	pass "the plugin does nothing until used" || fail "the plugin is inert until used" "$(tr '\n' '|' <<<"$out")"

full=$(run --seed 42 -- "$VPY" -m pytest -p no:cacheprovider -s -q --hermetic-all test_values.py)
alone=$(run --seed 42 -- "$VPY" -m pytest -p no:cacheprovider -s -q --hermetic-all -k second test_values.py)
other=$(run --seed 42 -- "$VPY" -m pytest -p no:cacheprovider -s -q --hermetic-all --hermetic-seed 7 test_values.py)
s_full=$(val second "$full") s_alone=$(val second "$alone") s_other=$(val second "$other")
[ -n "$s_full" ] && [ "$s_full" = "$s_alone" ] &&
	pass "a test's time, uuid4, random and os.urandom are the same in the whole file and alone (-k)" ||
	fail "same values in the file and alone" "$s_full | $s_alone"
[ -n "$s_other" ] && [ "$s_other" != "$s_full" ] && pass "--hermetic-seed changes a test's values" ||
	fail "--hermetic-seed changes a test's values" "$s_other"
hdr=$(run --seed 42 -- "$VPY" -m pytest -p no:cacheprovider --co --hermetic-all --hermetic-seed 7 test_values.py)
grep -q "^hermetic: base seed 7 " <<<"$hdr" && pass "--hermetic-seed is printed in the header" ||
	fail "--hermetic-seed in the header" "$(head -5 <<<"$hdr")"
n=$(grep -c "VALUES [a-z]* time=${SHIM_NOW%000000000}.0 " <<<"$full")
[ "$n" = 4 ] && pass "the clock starts at --now in every test" || fail "the clock starts at --now in every test" "$n of 4: $full"
grep -q "VALUES sandbox advanced=3600.0 now=2020-01-01T01:00:00+00:00" <<<"$full" &&
	pass "the hermetic_sandbox fixture moves the clock" || fail "the fixture moves the clock" "$(val sandbox "$full")"
[ "$(val fixed "$full")" = "$(val fixed "$other")" ] && [ -n "$(val fixed "$full")" ] &&
	pass "@pytest.mark.hermetic(seed=) fixes a test's values" || fail "a marker's seed= fixes values" "$(val fixed "$full") | $(val fixed "$other")"
grep -q "VALUES off scope=None" <<<"$full" && pass "@pytest.mark.hermetic(off=True) exempts a test" ||
	fail "off=True exempts a test" "$(val off "$full")"

# a failing test prints a repro command; it reproduces the failure and its values
repro=$(grep -A1 '^reproduce' <<<"$other" | tail -1 | sed 's/^ *//')
case "$repro" in pytest\ *test_fails) pass "a failing test prints a repro command" ;;
*) fail "a failing test prints a repro command" "$repro" ;; esac
r=$(eval "timeout 300 $VPY -m $repro -p no:cacheprovider -s -q" 2>&1)
if grep -q "1 failed" <<<"$r" && [ "$(val fails "$r")" = "$(val fails "$other")" ] &&
	[ "$(grep -o 'fails on purpose: [0-9a-f-]*' <<<"$r" | head -1)" = "$(grep -o 'fails on purpose: [0-9a-f-]*' <<<"$other" | head -1)" ]; then
	pass "the repro line (pytest re-running itself under hermetic) reproduces the failure and its values"
else
	fail "the repro line reproduces the failure" "$(tr '\n' '|' <<<"$r" | tail -c 600)"
fi
grep -q "^hermetic: re-running under hermetic: " <<<"$r" && pass "a pytest that is not enrolled re-runs itself under hermetic enroll" ||
	fail "pytest re-runs itself under hermetic" "$(head -3 <<<"$r")"

# pytest-xdist: two workers, the same values per test
ok=1
x=$(run --seed 42 -- "$VPY" -m pytest -p no:cacheprovider -q -rA -n 2 --hermetic-all test_values.py)
for t in first second fixed fails; do
	[ "$(val $t "$x")" = "$(val $t "$full")" ] || { ok=0; bad="$t: $(val $t "$x") vs $(val $t "$full")"; }
done
grep -q "WORKER gw0" <<<"$x" && grep -q "WORKER gw1" <<<"$x" ||
	{ ok=0; bad="not two workers: $(grep WORKER <<<"$x" | tr '\n' '|')"; }
[ "$ok" = 1 ] && pass "under pytest -n 2 every test has the same values" || fail "pytest -n 2, same values" "${bad:-}"
x7=$(run --seed 42 -- "$VPY" -m pytest -p no:cacheprovider -q -rA -n 2 --hermetic-all --hermetic-seed 7 test_values.py)
[ -n "$(val second "$x7")" ] && [ "$(val second "$x7")" = "$(val second "$other")" ] &&
	pass "--hermetic-seed reaches the xdist workers" || fail "--hermetic-seed reaches the xdist workers" "$(val second "$x7") | $(val second "$other")"

# not enrolled, the marker alone: a clear error
cat >"$T/test_marked.py" <<'PYEOF'
import pytest
@pytest.mark.hermetic
def test_marked():
    pass
def test_plain():
    pass
PYEOF
m=$(timeout 300 "$VPY" -m pytest -p no:cacheprovider -q test_marked.py 2>&1)
rc=$?
grep -q "asks for a hermetic scope but pytest is not enrolled; run 'pytest --hermetic-all" <<<"$m" &&
	pass "a marked test in a pytest that is not enrolled says what to do" || fail "marker without enrollment" "$m"
# ... and only that test fails: the session goes on (not exit 4, "no tests ran")
[ $rc = 1 ] && grep -q "1 passed, 1 error" <<<"$m" && grep -q "^ERROR test_marked.py::test_marked" <<<"$m" &&
	pass "a marked test in a pytest that is not enrolled fails alone; the other tests run (exit 1)" ||
	fail "a marked test without enrollment fails alone" "rc=$rc $(tail -4 <<<"$m" | tr '\n' '|')"
# hermetic.sandbox() outside a run
s=$(timeout 60 "$VPY" -c 'import hermetic
with hermetic.sandbox("x"): pass' 2>&1)
grep -q "NotEnrolled: hermetic.sandbox('x') needs a process enrolled in a hermetic run; run it under hermetic: 'hermetic enroll -- COMMAND'" <<<"$s" &&
	pass "hermetic.sandbox() outside a run says what to do" || fail "sandbox() outside a run" "$s"

# --hermetic-record DIR: journals of failing tests only, indexed by node id
cp "$TOP/tests/integration/pytest/test_flaky.py" "$T/"
J=$T/journals
rec=$(timeout 300 "$VPY" -m pytest -p no:cacheprovider -p no:rerunfailures -s -q --hermetic-all --hermetic-seed 7 \
	--hermetic-record "$J" test_values.py 2>&1)
files=$(cd "$J" 2>/dev/null && ls *.hjournal 2>/dev/null)
idx=$($PY -c 'import json,sys; print(" ".join(e.get("scope","-") for e in json.load(open(sys.argv[1]))))' "$J/index.json" 2>&1)
[ "$(wc -w <<<"$files")" = 1 ] && [ "$idx" = "test_values.py::test_fails" ] &&
	pass "--hermetic-record keeps a journal for the failing test only, DIR/index.json names it" ||
	fail "--hermetic-record keeps journals of failing tests only" "files: $files index: $idx $(grep hermetic: <<<"$rec" | tr '\n' '|')"
jf=$J/$(head -1 <<<"$files")
show=$("$HERMETIC" journals show "$jf" 2>&1)
grep -q "^scope      test_values.py::test_fails: failed, seed " <<<"$show" &&
	pass "journals show names the journal's test" || fail "journals show names the test" "$(grep -i scope <<<"$show")"

# --hermetic-replay FILE: runs that test only, on its recorded values
rp=$(timeout 300 "$VPY" -m pytest -p no:cacheprovider -p no:rerunfailures -s -q --hermetic-replay "$jf" test_values.py 2>&1)
if grep -q "1 failed" <<<"$rp" && [ "$(grep -c 'VALUES ' <<<"$rp")" = 1 ] &&
	[ -n "$(val fails "$rp")" ] && [ "$(val fails "$rp")" = "$(val fails "$rec")" ]; then
	pass "--hermetic-replay runs the recorded test only, on its recorded values"
else
	fail "--hermetic-replay reproduces the test" "$(val fails "$rp") / $(val fails "$rec") $(grep -E 'hermetic|passed|failed' <<<"$rp" | tr '\n' '|')"
fi
grep -q "^hermetic: replaying $jf" <<<"$rp" && pass "--hermetic-replay goes through hermetic replay (its configuration, its warnings)" ||
	fail "--hermetic-replay through hermetic replay" "$(head -3 <<<"$rp")"

# After that failing run, 'journals list' does not say "nothing": the
# plugin's journals are in the directory only, and it says where.
jl=$("$HERMETIC" journals list 2>&1)
grep -q "^  $J  (hermetic journals list --dir $J)$" <<<"$jl" &&
	pass "journals list, after pytest --hermetic-record DIR, names DIR (its journals are not in the store)" ||
	fail "journals list names the plugin's directory" "$(tr '\n' '|' <<<"$jl")"

# The replay hint the recording printed works as printed (the recorded
# command carries --hermetic-record: ignored under replay).
hint=$(sed -n "s/^hermetic: journal of failing .*(replay with '\(.*\)')\$/\1/p" <<<"$rec" | head -1)
h=$(eval "timeout 300 $hint" 2>&1)
rc=$?
if [[ "$hint" == "hermetic replay $jf --scope 'test_values.py::test_fails'" ]] && [ $rc = 1 ] &&
	grep -q "1 failed" <<<"$h" && [ "$(val fails "$h")" = "$(val fails "$rec")" ] && [ "$(grep -c 'VALUES ' <<<"$h")" = 1 ]; then
	pass "the printed replay hint (hermetic replay FILE --scope NODEID), run as printed, reproduces the test"
else
	fail "the printed replay hint reproduces" "hint=[$hint] rc=$rc $(grep -E 'hermetic|passed|failed|rror' <<<"$h" | tr '\n' '|')"
fi

# --hermetic-record DIR outside the project, space form and = form: the same
# rootdir, node ids and seeds; the printed repro works from where CI ran it.
mkdir -p "$T/proj" "$T/ci-out"
cp "$TOP/tests/integration/pytest/test_values.py" "$T/proj/"
recin() { (cd "$T/proj" && timeout 300 "$VPY" -m pytest -p no:cacheprovider -p no:rerunfailures -s -q \
	--hermetic-all --hermetic-seed 7 "$@" test_values.py 2>&1); }
sp=$(recin --hermetic-record "$T/ci-out/space")
eq=$(recin --hermetic-record="$T/ci-out/eq")
scopes() { $PY -c 'import json,sys; print(" ".join(e.get("scope","-") for e in json.load(open(sys.argv[1]))))' "$1/index.json" 2>&1; }
seeds() { grep -o '^reproduce (its seed [0-9]*)' <<<"$1" | tr '\n' ' '; }
if [ "$(scopes "$T/ci-out/space")" = "test_values.py::test_fails" ] &&
	[ "$(scopes "$T/ci-out/eq")" = "test_values.py::test_fails" ] && [ -n "$(seeds "$sp")" ] &&
	[ "$(seeds "$sp")" = "$(seeds "$eq")" ] && [ "$(val fails "$sp")" = "$(val fails "$eq")" ]; then
	pass "--hermetic-record /abs/dir (space form) gives the node ids and seeds of the = form"
else
	fail "--hermetic-record space form and = form agree" "$(scopes "$T/ci-out/space") / $(scopes "$T/ci-out/eq") $(seeds "$sp") / $(seeds "$eq") $(grep -E '^hermetic|rootdir' <<<"$sp" | tr '\n' '|')"
fi
# ... the same when pytest is started enrolled (it re-runs itself joined, in the run)
en=$(cd "$T/proj" && run --seed 42 --record="$T/ci-out/en" --journal-per-scope -- "$VPY" -m pytest -p no:cacheprovider \
	-p no:rerunfailures -q --hermetic-all --hermetic-record "$T/ci-out/en" test_values.py)
[ "$(scopes "$T/ci-out/en")" = "test_values.py::test_fails" ] &&
	pass "... and started as 'hermetic enroll --record=DIR --journal-per-scope -- pytest --hermetic-record DIR'" ||
	fail "enrolled, space form: node ids" "$(scopes "$T/ci-out/en") $(grep -E '^hermetic' <<<"$en" | tr '\n' '|')"
repro=$(grep -A1 '^reproduce' <<<"$sp" | tail -1 | sed 's/^ *//')
r=$(cd "$T/proj" && eval "timeout 300 $VPY -m $repro -p no:cacheprovider -s -q" 2>&1)
grep -q "1 failed" <<<"$r" && [ "$(val fails "$r")" = "$(val fails "$sp")" ] &&
	pass "... and its printed repro reproduces the test from where it ran" ||
	fail "the space form's repro reproduces" "[$repro] $(grep -E 'hermetic|passed|failed|rror' <<<"$r" | tr '\n' '|')"

# --hermetic-replay of a journal you did not record (another ledger: another
# user's, another machine's): refused without a terminal, run with --hermetic-yes
fr=$(XDG_STATE_HOME=$T/elsewhere timeout 300 "$VPY" -m pytest -p no:cacheprovider -p no:rerunfailures -s -q \
	--hermetic-replay "$jf" test_values.py 2>&1 </dev/null)
rc=$?
fy=$(XDG_STATE_HOME=$T/elsewhere timeout 300 "$VPY" -m pytest -p no:cacheprovider -p no:rerunfailures -s -q \
	--hermetic-replay "$jf" --hermetic-yes test_values.py 2>&1 </dev/null)
if [ $rc = 79 ] && ! grep -q "VALUES " <<<"$fr" && grep -q "pytest: --hermetic-yes" <<<"$fr" &&
	[ "$(val fails "$fy")" = "$(val fails "$rec")" ] && [ -n "$(val fails "$fy")" ]; then
	pass "--hermetic-replay of a journal you did not record: refused without a terminal (79), run with --hermetic-yes"
else
	fail "--hermetic-replay of a foreign journal" "rc=$rc $(grep -E 'hermetic|passed|failed' <<<"$fr$fy" | tr '\n' '|')"
fi

# a rerun plugin's passing attempt does not drop the failing attempt's journal
if $PY -c 'import pytest_rerunfailures' 2>/dev/null; then
	J2=$T/journals2
	fl=$(FLAKY_MARKER=$T/flaky.marker timeout 300 "$VPY" -m pytest -p no:cacheprovider -q --reruns 1 \
		--hermetic-all --hermetic-record "$J2" test_flaky.py 2>&1)
	n=$(ls "$J2"/*.hjournal 2>/dev/null | wc -l)
	grep -q "1 passed, 1 rerun" <<<"$fl" && [ "$n" = 1 ] &&
		pass "a failing attempt keeps its journal when the rerun passes" ||
		fail "failing attempt's journal with a passing rerun" "$n journals: $(tail -3 <<<"$fl" | tr '\n' '|')"
else
	skip "a failing attempt keeps its journal when the rerun passes" "python3-pytest-rerunfailures not installed"
fi

# hermetic replay JOURNAL --scope NODEID on a whole-suite journal
W=$T/whole
run --seed 42 --record="$W" --keep-passing -- "$VPY" -m pytest -p no:cacheprovider -s -q --hermetic-all test_values.py >"$T/whole.out"
wj=$(ls "$W"/*.hjournal | head -1)
nsc=$("$HERMETIC" journals show "$wj" --json | $PY -c 'import json,sys; print(len([s for s in json.load(sys.stdin)["scopes"] if s["kind"]=="scope"]))')
[ "$nsc" = 5 ] && pass "a whole-suite journal holds a scope per test" || fail "a scope per test in the journal" "$nsc"
one=$(timeout 300 "$HERMETIC" replay "$wj" --scope test_values.py::test_second -- "$VPY" -m pytest -p no:cacheprovider \
	-s -q --hermetic-all -k second test_values.py 2>&1)
[ -n "$(val second "$one")" ] && [ "$(val second "$one")" = "$(val second "$(cat "$T/whole.out")")" ] && grep -q "1 passed" <<<"$one" &&
	pass "hermetic replay --scope replays one test of a whole-suite journal" ||
	fail "hermetic replay --scope" "$(val second "$one") $(grep -E 'hermetic|passed|failed' <<<"$one" | tr '\n' '|')"
# list --json: the run's id is "run_id", as in index.json and list --dir
lj=$("$HERMETIC" journals list --json | $PY -c 'import json,sys; a=json.load(sys.stdin); print(len(a), all(str(e["run_id"]) == str(e["id"]) for e in a))' 2>&1)
ld=$("$HERMETIC" journals list --dir "$W" --json | $PY -c 'import json,sys; a=json.load(sys.stdin); print(len(a), all("run_id" in e for e in a))' 2>&1)
[[ "$lj" == [1-9]*" True" ]] && [[ "$ld" == [1-9]*" True" ]] &&
	pass "journals list --json names the run id 'run_id', as list --dir --json does ('id' kept, deprecated)" ||
	fail "list --json says run_id" "store: $lj dir: $ld"
nos=$("$HERMETIC" replay "$wj" --scope nosuch -- true 2>&1)
grep -q "has no scope named 'nosuch'; its scopes: 'test_values.py::test_first'" <<<"$nos" &&
	pass "replay --scope of a name the journal lacks lists its scopes" || fail "replay --scope unknown name" "$nos"
