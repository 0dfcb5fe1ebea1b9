#!/usr/bin/env bash
# The run pool (daemon/pool.c, docs/performance.md): hermeticd makes the
# parts of a run that no request decides (a cgroup, a clock page) while it
# is idle, and RUN_CREATE takes them. Made-ahead parts are never runs (status
# lists none, a user's run limit does not count them); each run's clock
# page is new (a run after one that moved its clock far starts where every
# run starts); a daemon that stops leaves none of them, and one started
# after a crash removes what the crashed one made ahead.
source "$(dirname "$0")/../lib.sh"

need_root "run pool" || exit 0
need_build "run pool" || exit 1
test_user U || { fail "create a test user" "useradd failed"; exit 1; }
start_daemon --max-runs-per-user 1 || { fail "daemon starts" "$(tail -n 5 "$T/daemon.log" | tr '\n' '|')"; exit 1; }
CG2=$(sed -n 's/^[0-9]* [0-9]* [^ ]* [^ ]* \([^ ]*\) .* - cgroup2 .*/\1/p' /proc/self/mountinfo | head -n1)
SUB=$CG2/$HMD_NAME
POOLDIR=$T/run/clock/pool.$HMD_NAME

# pool KEY...: the status document's fields (pool.cgroups, runs_total, ...)
pool() {
	timeout 20 "$HERMETIC" status --json 2>/dev/null | "${PY:-python3}" -c '
import json, sys
d = json.load(sys.stdin)
p = d.get("pool", {})
out = []
for k in sys.argv[1:]:
    out.append(str(p.get(k[5:], "none")) if k.startswith("pool.") else str(len(d[k]) if isinstance(d[k], list) else d[k]))
print(" ".join(out))' "$@"
}
# wait_full: until the daemon has made its pool (it does so when idle)
NOPOOL=
wait_full() {
	local s c p n
	[ -n "$NOPOOL" ] && return 1
	for _ in $(seq 200); do
		s=$(pool pool.cgroups pool.clock_pages pool.size)
		read -r c p n <<<"$s"
		[ -n "$n" ] && [ "$n" != none ] && [ "$c" = "$n" ] && [ "$p" = "$n" ] && return 0
		sleep 0.05
	done
	echo "$s"
	return 1
}
ncg() { find "$SUB" -mindepth 1 -maxdepth 1 -type d -name 'run-*' 2>/dev/null | wc -l; }
npages() { find "$POOLDIR" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l; }

# --- made ahead, and no run -------------------------------------------------------------
if why=$(wait_full); then
	pass "the daemon makes its pool when idle"
else
	fail "the daemon makes its pool when idle" "status pool cgroups, clock pages, size: $why"
	NOPOOL=1 # (the waits below would only wait)
fi
read -r size runs total <<<"$(pool pool.size runs runs_total)"
if [ "$runs" = 0 ] && [ "$total" = 0 ] && [ "$(ncg)" = "$size" ] && [ "$(npages)" = "$size" ]; then
	pass "made-ahead parts are no runs: status lists none ($size cgroups and $size pages held)"
else
	fail "made-ahead parts are no runs" "runs listed $runs, runs_total $total, cgroups $(ncg), pages $(npages), pool size $size"
fi
# A user at a limit of one run still gets its one: the pool counts for nobody.
out=$(as_user "$U" timeout 60 "$HERMETIC" enroll -- true 2>&1)
rc=$?
[ $rc = 0 ] && pass "--max-runs-per-user 1: the user's one run, with the pool full" ||
	fail "--max-runs-per-user 1: the user's one run, with the pool full" "rc=$rc $(echo "$out" | tail -n 2 | tr '\n' '|')"

# --- a new page per run --------------------------------------------------------------------
# The first run moves its clock 500 s on; the next two, from the pool, start
# where every run starts.
clock() { timeout 60 "$HERMETIC" enroll --seed 1 -- python3 -c "import time; time.sleep($1); print('%.6f' % time.monotonic())" 2>"$T/clock.err"; }
wait_full >/dev/null
before=$(pool pool.runs_from_pool)
far=$(clock 500)
wait_full >/dev/null
a=$(clock 0)
wait_full >/dev/null
b=$(clock 0)
after=$(pool pool.runs_from_pool)
if [ -n "$a" ] && [ "$a" = "$b" ] && awk -v a="$a" -v f="$far" 'BEGIN { exit !(a + 400 < f) }' &&
	[ "$before" != none ] && [ "$after" = $((before + 3)) ]; then
	pass "each run's clock page is new: after a run at $far s the next start at $a s, as the one after"
else
	fail "each run's clock page is new" "monotonic: $far, then $a and $b; runs from the pool $before -> $after; $(tail -n 2 "$T/clock.err" | tr '\n' '|')"
fi

# --- a stop leaves nothing; a crash's leftovers go with the next daemon ---------------------
wait_full >/dev/null
restart_daemon -9
if wait_full >/dev/null && [ "$(ncg)" = "$size" ] && [ "$(npages)" = "$size" ]; then
	pass "after a crash the next daemon removes the pool the crashed one made (only its own $size left)"
else
	fail "after a crash the next daemon removes the old pool" "cgroups $(ncg), pages $(npages), pool size $size; $(ls "$SUB" "$POOLDIR" 2>&1 | tr '\n' ' ')"
fi
stop_daemon
if [ ! -e "$SUB" ] && [ ! -e "$POOLDIR" ]; then
	pass "a stopped daemon leaves no pool: neither its cgroups nor its pages"
else
	fail "a stopped daemon leaves no pool" "left: $(ls -d "$SUB"/run-* "$POOLDIR" "$POOLDIR"/* 2>&1 | tr '\n' ' ')"
fi
