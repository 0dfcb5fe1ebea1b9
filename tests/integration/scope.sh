#!/usr/bin/env bash
# Scopes: a named part of a run (one test) whose clock starts at --now and
# whose streams are keyed by (seed, scope, lineage within it), so that its
# values do not depend on what ran before it; through the C API, through
# /dev/hermetic/ with no FFI (a node:test hook), inherited by children.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/shim_lib.sh"
shim_built scope || exit 0
D=$TOP/tests/integration/scope
SHIM_NOW_S=${SHIM_NOW%000000000}

$SHIM_CC -O1 -I "$TOP/include" -o "$T/scoped" "$D/scoped.c" -L"$B" -lhermetic -Wl,-rpath,"$B" ||
	{ fail "scope: build the C helper"; exit 0; }

# lines LABEL OUT: the lines of OUT tagged LABEL
lines() { grep "^$1 " <<<"$2"; }

child='!sh -c "head -c 8 /dev/urandom | od -An -tx1 | tr -d \" \"; date +%s"'
a=$(shim_run 42 timeout 60 "$T/scoped" first +7 second "$child" 2>&1)
b=$(shim_run 42 timeout 60 "$T/scoped" +3 second "$child" 2>&1)
c=$(shim_run 43 timeout 60 "$T/scoped" second "$child" 2>&1)
sa=$(lines second "$a") sb=$(lines second "$b") sc=$(lines second "$c")
[ -n "$sa" ] && [ "$sa" = "$sb" ] && pass "a scope's clock and entropy do not depend on what ran before it" ||
	fail "a scope's values do not depend on what ran before it" "$sa | $sb"
[ "$sa" != "$sc" ] && pass "a scope's values follow the seed" || fail "a scope's values follow the seed" "$sc"
grep -q "^second wall $SHIM_NOW_S.000000000 " <<<"$sa" && pass "a scope's clock starts at --now" ||
	fail "a scope's clock starts at --now" "$sa"
w1=$(lines second "$a" | sed -n 1p | awk '{print $3}') w2=$(lines second "$a" | sed -n 2p | awk '{print $3}')
[ "${w2%.*}" = $((SHIM_NOW_S + 2)) ] && [ "${w1%.*}" = $SHIM_NOW_S ] && pass "a scope's clock moves with its sleeps" ||
	fail "a scope's clock moves with its sleeps" "$w1 $w2"
# the child started inside: its entropy and its clock are the scope's
ca=$(grep -A2 '^second ' <<<"$a" | grep -vE '^(second|after)' | tr '\n' ' ')
cb=$(grep -A2 '^second ' <<<"$b" | grep -vE '^(second|after)' | tr '\n' ' ')
[ -n "$ca" ] && [ "$ca" = "$cb" ] && pass "processes started in a scope inherit it" ||
	fail "processes started in a scope inherit it" "$ca | $cb"
grep -q " $((SHIM_NOW_S + 2)) *$" <<<"$ca" && pass "a child reads the scope's clock" ||
	fail "a child reads the scope's clock" "$ca"
# after leaving: the run's clock again, and no value repeats
before=$(lines before "$a" | awk '{print $7}') after=$(lines after "$a" | awk '{print $7}' | sort -u)
n_after=$(lines after "$a" | wc -l)
if [ -n "$after" ] && ! grep -qx "$before" <<<"$after" && [ "$(wc -l <<<"$after")" = "$n_after" ]; then
	pass "after a scope, the streams go on without repeating"
else
	fail "after a scope, the streams go on without repeating" "$before / $after"
fi
aw=$(lines after "$a" | tail -1 | awk '{print $3}')
[ "${aw%.*}" -ge $((SHIM_NOW_S + 11)) ] && pass "after a scope, the run's clock" || fail "after a scope, the run's clock" "$aw"
grep -q "^leave outside: No such file or directory" <<<"$a" && pass "leaving outside a scope is refused" ||
	fail "leaving outside a scope is refused" "$(tail -1 <<<"$a")"
bad=$(shim_run 42 timeout 60 "$T/scoped" "$(printf 'bad\tname')" 2>&1)
grep -q "Invalid argument" <<<"$bad" && pass "a name with control characters is refused" ||
	fail "a name with control characters is refused" "$bad"

# /dev/hermetic/: the way in without FFI
# (the shell opens it itself, so the shell enters the scope; date inherits it)
st=$(shim_run 42 timeout 60 bash -c 'exec 3<"/dev/hermetic/scope/enter?name=a%20b&now=2030-01-01T00:00:00Z"; cat <&3; date -u +%FT%T; exec 3</dev/hermetic/scope/leave; cat <&3; date -u +%Y' 2>&1)
grep -qx "scope a%20b" <<<"$st" && grep -qx "2030-01-01T00:00:00" <<<"$st" && pass "/dev/hermetic/scope/enter enters a scope, its now= sets where its clock starts" ||
	fail "/dev/hermetic/scope/enter" "$(tr '\n' '|' <<<"$st")"
grep -qx "scope -" <<<"$st" && [ "$(tail -1 <<<"$st")" = 2020 ] && pass "/dev/hermetic/scope/leave leaves it" ||
	fail "/dev/hermetic/scope/leave" "$(tr '\n' '|' <<<"$st")"
e=$(shim_run 42 timeout 60 sh -c 'cat "/dev/hermetic/scope/enter?seed=x" 2>&1; cat /dev/hermetic/nonsense 2>&1' 2>&1)
grep -q "Invalid argument" <<<"$e" && grep -q "No such file" <<<"$e" && pass "/dev/hermetic/ refuses bad operations" ||
	fail "/dev/hermetic/ refuses bad operations" "$e"
out=$(cat /dev/hermetic/status 2>&1)
grep -q "No such file" <<<"$out" && pass "/dev/hermetic/ does not exist outside a run" || fail "/dev/hermetic/ outside a run" "$out"

# A node:test hook: each test in its own scope, so a test prints the same
# in the whole file and alone (--test-name-pattern).
if have node "scope node:test hook"; then
	run_node() { (cd "$D" && shim_run 42 timeout 120 node --test --require ./hermetic-hooks.js "$@" values.test.js 2>&1); }
	full=$(run_node) alone=$(run_node --test-name-pattern beta)
	fb=$(grep '^# beta ' <<<"$full") ab=$(grep '^# beta ' <<<"$alone") fa=$(grep '^# alpha ' <<<"$full")
	if [ -n "$fb" ] && [ "$fb" = "$ab" ] && grep -q "^# beta ${SHIM_NOW_S}000 5000 " <<<"$fb" && [ "${fa#* * * * }" != "${fb#* * * * }" ]; then
		pass "node:test hook: a test's time and entropy are the same in the file and alone"
	else
		fail "node:test hook: same in the file and alone" "$fa | $fb | $ab"
	fi
fi
