#!/usr/bin/env bash
# pytest's own report under hermetic is timed on the real clock (the
# plugin's _real_timing): --durations, JUnit time= and timestamp and the
# "in N s" line are within 10% of real time, measured by the tests on the
# kernel's /proc/uptime and by this script outside the run; the tests' own
# clocks stay virtual.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/shim_lib.sh"
shim_built "pytest durations" || exit 0
PY=/usr/bin/python3 # Debian's pytest is Debian's python's (tests/deps.sh)
if ! $PY -c 'import pytest' 2>/dev/null; then
	skip "pytest durations" "python3-pytest not installed (make deps)"
	exit 0
fi
cp -r "$TOP/python" "$T/pkg"
if ! { $PY -m venv --system-site-packages "$T/venv" &&
	"$T/venv/bin/pip" install -q --no-build-isolation --no-index "$T/pkg"; } >"$T/pip.log" 2>&1; then
	fail "pytest durations: pip install python/" "$(tail -3 "$T/pip.log" | tr '\n' '|')"
	exit 0
fi
cp "$TOP/tests/integration/pytest/test_durations.py" "$T/"
cd "$T" || exit 1

t0=$(date +%s.%N)
timeout 300 "$HERMETIC" enroll $SHIM_DAEMON_OPT --now @${SHIM_NOW%000000000} -- \
	"$T/venv/bin/python" -m pytest -p no:cacheprovider -q --durations=0 --junitxml="$T/junit.xml" \
	test_durations.py >"$T/out" 2>&1
rc=$?
t1=$(date +%s.%N)
if [ $rc != 0 ]; then
	fail "pytest durations: the suite passes enrolled" "rc=$rc $(tail -n 15 "$T/out" | tr '\n' '|')"
	exit 0
fi
# One line per case: "NAME<TAB>ok" or "NAME<TAB>what was seen".
$PY - "$T/out" "$T/junit.xml" "$t0" "$t1" >"$T/checks" 2>&1 <<'EOF'
import datetime, re, sys
import xml.etree.ElementTree as ET
out, xml, t0, t1 = open(sys.argv[1]).read(), sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
# (the busy tests are long enough that 10% is more than a stall under load;
# the third, 0.3 s, only shows the tests' own clock stays virtual)
busy = {"test_busy_short": 1.0, "test_busy_long": 2.0}
least = 1.0 + 2.0 + 0.3 - 3 * 0.01  # /proc/uptime counts in 10 ms steps
def near(got, want):
    return abs(got - want) <= 0.1 * want
def case(name, ok, seen):
    print("%s\t%s" % (name, "ok" if ok else seen))
calls = dict((m.group(2), float(m.group(1))) for m in
             re.finditer(r"^([0-9.]+)s call +test_durations\.py::(\w+)$", out, re.M))
case("--durations: each test's call is within 10% of the real time it took",
     len(calls) == 3 and all(near(calls.get(t, -1), s) for t, s in busy.items()), calls)
root = ET.parse(xml).getroot()
suite = root if root.tag == "testsuite" else root.find("testsuite")
times = dict((c.get("name"), float(c.get("time"))) for c in suite.iter("testcase"))
case("JUnit: each testcase time= is within 10% of the real time it took",
     len(times) == 3 and all(near(times.get(t, -1), s) for t, s in busy.items()), times)
total = float(suite.get("time"))
case("JUnit: the testsuite time= is real (at least the tests' 3.3 s, at most the run's %.2f s)" % (t1 - t0),
     least <= total <= t1 - t0, total)
stamp = datetime.datetime.fromisoformat(suite.get("timestamp")).timestamp()
case("JUnit: the testsuite timestamp is the real time it started (%.0f..%.0f)" % (t0, t1),
     t0 - 1 <= stamp <= t1, "%s (%.0f)" % (suite.get("timestamp"), stamp))
m = re.search(r"\b3 passed in ([0-9.]+)s", out)
case("the 'N passed in S s' line is real: within 10% of the JUnit suite time, at least 3.3 s",
     m is not None and near(float(m.group(1)), total) and float(m.group(1)) >= least,
     m and m.group(0))
EOF
if [ "$(wc -l <"$T/checks")" != 5 ]; then
	fail "pytest durations: the checks ran" "$(tr '\n' '|' <"$T/checks")"
	exit 0
fi
while IFS=$'\t' read -r name res; do
	[ "$res" = ok ] && pass "$name" || fail "$name" "$res; $(grep -E 'passed|call|failed' "$T/out" | tr '\n' '|')"
done <"$T/checks"
