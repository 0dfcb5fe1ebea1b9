#!/usr/bin/env bash
# A run enrolled by root whose processes become another user (su, a server
# dropping to nobody, Python's subprocess user=) keeps one clock: the
# process that changed uid inherits the run's clock page descriptor, instead of
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

# What allows it: the descriptor, not the file. The page is root's, 0600,
# and the user a process became cannot open it by any path.
page=$("$HERMETIC" enroll --seed 3 -- sh -c 'fd=${HERMETIC_CLOCK_FD%%:*}
	stat -L -c "%a %u" /proc/self/fd/$fd
	p=$(readlink /proc/self/fd/$fd)
	'"${nobody[*]}"' sh -c "cat \"$p\" >/dev/null 2>&1 && echo opened || echo refused"' 2>&1)
if [ "$page" = "$(printf '600 0\nrefused')" ]; then
	pass "root's run: the page is root's 0600, a descriptor to the users it becomes"
else
	fail "root's run: the page is root's 0600, a descriptor to the users it becomes" \
		"$(tr '\n' '|' <<<"$page")"
fi
