#!/usr/bin/env bash
# A run enrolled by root whose processes become another user (su, a server
# dropping to nobody, Python's subprocess user=) keeps one clock: the
# process that changed uid opens the run's clock page too, instead of
# warning "the run's clock page is unusable" and keeping a private clock
# that starts again at --now (found by CPython's test_subprocess in the
# compatibility matrix, docs/compatibility.md).
source "$(dirname "$0")/../lib.sh"
need_root clock_users || exit 0
start_daemon || { fail clock_users "daemon did not start"; exit 0; }
cd "$T" || exit 1
nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups)

out=$("$HERMETIC" enroll --seed 3 --now 2020-01-01T00:00:00Z -- \
	sh -c "sleep 100; ${nobody[*]} date -u +%T" 2>&1)
if [ "$out" = "00:01:40" ]; then
	pass "a process that became nobody reads the run's clock"
else
	fail "a process that became nobody reads the run's clock" "got: $(tr '\n' '|' <<<"$out")"
fi

# ... and its waits are the run's: the keeper moves the one clock for them.
out=$("$HERMETIC" enroll --seed 3 --now 2020-01-01T00:00:00Z -- \
	sh -c "sleep 100; ${nobody[*]} sh -c 'sleep 50; date -u +%T'; date -u +%T" 2>&1)
if [ "$out" = "$(printf '00:02:30\n00:02:30')" ]; then
	pass "its sleeps move the run's clock"
else
	fail "its sleeps move the run's clock" "got: $(tr '\n' '|' <<<"$out")"
fi

# The page that allows it: 0666, named by 128 random bits (the name is the
# capability; the directory cannot be listed).
page=$("$HERMETIC" enroll --seed 3 -- sh -c 'stat -c "%a %n" "$HERMETIC_CLOCK_PAGE"' 2>&1)
if [[ "$page" =~ ^666\ .*/run-[0-9]+-[0-9a-f]{32}$ ]]; then
	pass "root's run: the page is 0666, its name unguessable"
else
	fail "root's run: the page is 0666, its name unguessable" "$page"
fi
