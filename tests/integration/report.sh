# enroll --report FILE: one line of JSON per run, parsed here as a CI job's
# annotation step would, checked against what the run did; the repro
# command it carries repeats the run.
source "$(dirname "$0")/../lib.sh"
need_root report || exit 0
source "$(dirname "$0")/nethost.sh"
nethost_up || { fail "test host in a network namespace" "nethost_up failed"; exit 1; }
start_daemon || { fail "daemon starts" "see above"; exit 1; }
cd "$T"
R=$T/reports/run.jsonl
mkdir -p "$T/reports" "$T/journals"

# A failing run: refused the test host, one process without the shim,
# recorded. It prints a seeded random number, to check the repro with.
# A static binary cannot load the shim: without the supervisor (--supervise
# off; static.sh tests it) the kernel's audit names it.
printf '#include <sys/random.h>\nint main(void){char b[8];return getrandom(b,8,0)!=8;}\n' >"$T/staticrand.c"
cc -static -O1 -o "$T/staticrand" "$T/staticrand.c" || fail "build a static test binary" "cc -static failed"
cat >"$T/job.sh" <<EOF
od -An -N4 -tu4 /dev/urandom | tr -d ' '
"$T/staticrand"
"$PY" "$T/probe.py" tcp "$NH_HOST" "$NH_TCP"
exit 3
EOF
"$HERMETIC" enroll --supervise off --record="$T/journals" --report "$R" -- sh "$T/job.sh" >"$T/out1" 2>"$T/err1"
rc=$?
check "the failing run exits with its status" test "$rc" = 3
# A passing run reports to the same file: a second line.
"$HERMETIC" enroll --seed 77 --report "$R" -- true 2>"$T/err2"
check "the passing run exits 0" test $? = 0

cat >"$T/parse.py" <<'EOF'
import json, os, sys
path, dest, jdir = sys.argv[1:4]
lines = open(path).read().splitlines()
def check(ok, name, why=""):
    print(("PASS %s" % name) if ok else ("FAIL %s: %s" % (name, why)))
check(len(lines) == 2, "one line per run", "%d lines" % len(lines))
a, b = (json.loads(l) for l in lines[:2])
check(a["exit_status"] == 3 and a["passed"] is False and a["signal"] is None,
      "exit status of the failing run", a["exit_status"])
check(isinstance(a["seed"], int) and a["now"].endswith("Z") and "--now " + a["now"] in a["repro"],
      "seed and now", (a["seed"], a["now"]))
check(a["command"][0] == "sh" and a["command"][1].endswith("job.sh"), "command as an array", a["command"])
r = a["refusals"]
check(r["count"] == 1 and r["first"][0]["destination"] == dest and r["first"][0]["op"] == "connect",
      "the refused destination", r)
c = a["coverage"]
esc = [p for p in c["escaped"] if p["path"].endswith("staticrand")]
check(c["without_shim"] >= 1 and esc and esc[0]["getrandom"] >= 1 and c["complete"] is False,
      "coverage names the process that ran without the shim", c)
j = a["journal"]
check(j["id"] == str(a["run_id"]) and j["file"] and os.path.dirname(j["file"]) == jdir
      and os.path.exists(j["file"]), "journal id and file", j)
check(a["repro"].startswith("hermetic enroll --seed %d --now " % a["seed"]),
      "repro command", a["repro"])
check(b["exit_status"] == 0 and b["passed"] and b["seed"] == 77 and b["journal"] is None
      and b["refusals"]["count"] == 0 and b["coverage"]["complete"] is True,
      "the passing run's line", b)
print("REPRO " + a["repro"])
EOF
"$PY" "$T/parse.py" "$R" "$NH_HOST:$NH_TCP" "$T/journals" >"$T/parse.out" 2>&1
grep -E '^(PASS|FAIL) ' "$T/parse.out"
grep -q '^REPRO ' "$T/parse.out" || fail "the report parses as JSON Lines" "$(tail -n 5 "$T/parse.out" | tr '\n' '|')"
repro=$(sed -n 's/^REPRO //p' "$T/parse.out")
if [ -n "$repro" ]; then
	eval "$repro" >"$T/out3" 2>/dev/null
	rc=$?
	check "the report's repro command repeats the run (same seeded value, same status)" \
		sh -c "test $rc = 3 && test \"\$(head -n 1 '$T/out1')\" = \"\$(head -n 1 '$T/out3')\""
fi

# A path that cannot be written fails before the command runs.
"$HERMETIC" enroll --report "$T/nodir/r.json" -- touch "$T/ran" 2>"$T/err4"
rc=$?
check "an unwritable --report fails with 73 before the run" sh -c "test $rc = 73 && test ! -e '$T/ran' && grep -q 'cannot open' '$T/err4'"
# Without the daemon, what only the kernel knows is null, not zero.
"$HERMETIC" enroll --no-daemon --seed 1 --report "$T/nd.json" -- true 2>/dev/null
check "--no-daemon: refusals and coverage are null" "$PY" -c "
import json; d = json.loads(open('$T/nd.json').read())
assert d['refusals'] is None and d['coverage'] is None and d['run_id'] is None and d['network'] == 'unenforced', d"

# HERMETIC_DEBUG=phases: one line naming enroll's steps, whose times add up
# to its total; nothing of it without the variable.
HERMETIC_DEBUG=phases "$HERMETIC" enroll --seed 1 -- true 2>"$T/ph.err"
check "HERMETIC_DEBUG=phases: one line of enroll's steps whose times add up to the total" "$PY" -c "
import re, sys
lines = [l for l in open('$T/ph.err') if l.startswith('hermetic: phases (ms): ')]
assert len(lines) == 1, lines
body, total = lines[0][len('hermetic: phases (ms): '):].rsplit('; total ', 1)
steps = [p.rsplit(' ', 1) for p in body.split(', ')]
names = [n for n, _ in steps]
for want in ('parse', 'create', 'fork', 'child-confined', 'to-exec', 'command', 'end'):
    assert want in names, (want, names)
s = sum(float(ms) for _, ms in steps)
assert abs(s - float(total)) < 0.05 * len(steps) and float(total) > 0, (s, total)
"
"$HERMETIC" enroll --seed 1 -- true 2>"$T/ph0.err"
check "without HERMETIC_DEBUG enroll prints no phases" sh -c "! grep -q phases '$T/ph0.err'"
