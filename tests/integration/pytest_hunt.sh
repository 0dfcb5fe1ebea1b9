# pytest --hermetic-hunt N: each test runs N times in one pytest process,
# each time in a scope of its own seed; a seed-dependent test among passing
# ones is found, and its printed reproduction ('pytest --hermetic-all
# --hermetic-seed=K NODEID') fails again, with the same value.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/shim_lib.sh"
shim_built pytest_hunt || exit 0
PY=/usr/bin/python3
if ! $PY -c 'import pytest' 2>/dev/null; then
	skip pytest_hunt "python3-pytest not installed (make deps)"
	exit 0
fi
cp "$TOP/tests/integration/pytest/test_hunt.py" "$T/"
cd "$T"
export HERMETIC_BIN=$HERMETIC PYTHONPATH=$TOP/python
pyt() { timeout 300 "$PY" -m pytest -p hermetic.pytest_plugin -p no:cacheprovider -q "$@" 2>&1; }

out=$(pyt --hermetic-hunt 20 test_hunt.py)
rc=$?
check "a hunt with a failing test exits 1" test $rc = 1
if grep -q "1 failed, 2 passed" <<<"$out"; then
	pass "pytest reports one result per test: the seed-dependent one failed, the others passed"
else
	fail "one result per test" "$(tail -5 <<<"$out" | tr '\n' '|')"
fi
line=$(grep "^test_hunt.py::test_seed_dependent: failed with" <<<"$out")
if [ -n "$line" ] && ! grep -q "test_passes: failed\|test_random_but_fine: failed" <<<"$out"; then
	pass "the hunt names the seed-dependent test, and only it: ${line%%; reproduce*}"
else
	fail "the hunt names the seed-dependent test" "$(grep -A4 'hermetic hunt' <<<"$out" | tr '\n' '|')"
fi
repro=${line#*reproduce: }
case "$repro" in
"pytest --hermetic-all --hermetic-seed="[0-9]*" test_hunt.py::test_seed_dependent")
	pass "the reproduction is a pytest --hermetic-seed ... NODEID line" ;;
*) fail "the reproduction is a pytest --hermetic-seed ... NODEID line" "$repro" ;;
esac
# The first failing seed's byte, as the hunt saw it, and as the repro sees it.
want=$(grep -m1 -o "random byte [0-9]* < 64" <<<"$out")
r=$(eval "pyt ${repro#pytest } -s")
got=$(grep -m1 -o "random byte [0-9]* < 64" <<<"$r")
if grep -q "1 failed" <<<"$r" && [ -n "$want" ] && [ "$want" = "$got" ]; then
	pass "the printed reproduction fails again, with the same value ($got)"
else
	fail "the printed reproduction fails again" "want '$want', got '$got': $(tail -3 <<<"$r" | tr '\n' '|')"
fi
out=$(pyt --hermetic-hunt 10 -k "passes or fine" test_hunt.py)
rc=$?
if [ $rc = 0 ] && grep -q "0 of 2 tests failed under some seed (10 seeds each)" <<<"$out"; then
	pass "passing tests hunted with 10 seeds each: none failed (exit 0)"
else
	fail "passing tests hunted" "exit $rc: $(tail -4 <<<"$out" | tr '\n' '|')"
fi
out=$(pyt --hermetic-hunt 0 test_hunt.py)
check "--hermetic-hunt 0 is refused" grep -q "at least one run" <<<"$out"
