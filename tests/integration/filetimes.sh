# File times under the virtual clock (preload/files.c, filetab.c, fwrites.c,
# pyc.c; docs/file-times.md): files from before a run keep one constant
# shift that does not depend on the run's exact start, and Python's bytecode
# caches are translated with it; a file the run changes shows the virtual
# time of the change. Every constraint at once: the same file shows the same
# time in two runs; a file just written is fresh by the run's clock; no .pyc
# from before a run is found stale or rewritten, and a .pyc a run writes is
# valid outside it; make rebuilds exactly what changed, never loops and sees
# nothing from the future; touch -d, cp -p and tar round-trip; zipfile takes
# what a run wrote; a midnight-rotating log does not rotate at once.
source "$(dirname "$0")/../lib.sh"
need_root filetimes || exit 0
start_daemon || { fail "filetimes: daemon" "did not start"; exit 0; }
export TZ=UTC
NOW=1577836800

run() { "$HERMETIC" enroll --seed 7 --now @$NOW -- "$@" 2>>"$T/enroll.err"; }

# --- the line between files from before the run and the run's own -----------
# A file stat'ed and then changed just before enroll starts carries a
# fine-grained stamp on a kernel with multigrain timestamps, above the
# coarse clock: it is from before the run (shifted, over a day before the
# virtual now). A file the command writes with its first instructions is
# the run's (at or after the virtual now). 30 of each: the moments race the kernel's tick.
# The command's first instruction writes: a static program, which then
# execs stat (with the shim) to look.
cat >"$T/firstwrite.c" <<'C'
#include <fcntl.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, "x", 1) != 1)
		return 1;
	close(fd);
	execl(argv[2], "stat", "-c", "%Y", argv[1], (char *)0);
	return 127;
}
C
cc -static -O1 -o "$T/firstwrite" "$T/firstwrite.c" || fail "the line: build a static test program" "cc -static failed"
pre_bad="" own_bad=""
for i in $(seq 30); do
	got=$(/usr/bin/python3 -c 'import os, sys
p = sys.argv[1]
open(p, "w").write("a"); os.stat(p); open(p, "a").write("b")
os.execv(sys.argv[2], [sys.argv[2], "enroll", "--seed", "7", "--now", "@" + sys.argv[3], "--", "stat", "-c", "%Y", p])' \
		"$T/line-$i" "$HERMETIC" "$NOW" 2>>"$T/enroll.err")
	[ -n "$got" ] && [ "$got" -le $((NOW - 86400)) ] || pre_bad+=" $i:$got"
	# --no-daemon: the shortest way from enroll's start to the command's
	# (no daemon, no confinement), so that the write often comes within the
	# kernel's tick of B: the wait before the exec (or, on a multigrain
	# kernel, a fine stamp enroll's own writes to the clock page caused
	# meanwhile) must keep it above B.
	got=$("$HERMETIC" enroll --no-daemon --seed 7 --now @$NOW -- "$T/firstwrite" "$T/own-$i" \
		"$(command -v stat)" 2>>"$T/enroll.err")
	[ -n "$got" ] && [ "$got" -ge $NOW ] || own_bad+=" $i:$got"
done
[ -z "$pre_bad" ] && pass "the line: 30 files changed (with a fine stamp) just before enroll are from before the run" ||
	fail "the line: 30 files changed (with a fine stamp) just before enroll are from before the run" "seen as the run's:$pre_bad (virtual now $NOW)"
[ -z "$own_bad" ] && pass "the line: 30 files the command writes first thing are the run's" ||
	fail "the line: 30 files the command writes first thing are the run's" "seen as from before:$own_bad (virtual now $NOW)"

# --- the line without the coarse clock's wait --------------------------------
# On a kernel with multigrain timestamps (6.13+) enroll passes the line at
# once: it changes the memfd whose times it has just read, the kernel stamps
# that change finely and raises its floor, under which no later stamp of any
# file falls, so the command does not wait for the coarse clock
# (engine/vclock.c). The probe: a memfd's times read, then a byte written, 20
# times; fine stamping when every write is stamped above the ctime read
# before it (a coarse clock gives the same stamp within its tick: most of 20
# back-to-back probes fall in one).
fine=$(python3 -c '
import os
n = 0
for _ in range(20):
    fd = os.memfd_create("probe")
    b = os.fstat(fd).st_ctime_ns
    os.write(fd, b"x")
    n += os.fstat(fd).st_mtime_ns > b
    os.close(fd)
print(n)')
if [ "$fine" = 20 ]; then FINE=1; else FINE=0; fi
PROBE="probe: $fine of 20 memfd writes stamped above the ctime just read, kernel $(uname -r)"
# No run waits: each says how it passed the line (HERMETIC_DEBUG=phases).
waits=""
for i in $(seq 10); do
	HERMETIC_DEBUG=phases timeout 60 "$HERMETIC" enroll --seed 7 --now @$NOW -- true 2>"$T/ph.err"
	grep -q '^hermetic: phases: line B: passed by a fine stamp$' "$T/ph.err" ||
		waits+=" $i:$(grep -o 'line B: .*' "$T/ph.err" | head -n 1 | tr ' ' _)"
done
if [ "$FINE" = 1 ]; then
	[ -z "$waits" ] && pass "the line: no run waits for the coarse clock where the kernel stamps finely (10 of 10 passed by a fine stamp; $PROBE)" ||
		fail "the line: no run waits where the kernel stamps finely" "notes:$waits ($PROBE)"
else
	# A coarse kernel (before 6.13): the wait stays, and says so.
	grep -q '^hermetic: phases: line B: waited [0-9]* us for the coarse clock$' "$T/ph.err" &&
		pass "the line: no run waits where the kernel stamps finely: not applicable, the kernel stamps coarsely ($PROBE); the run waited, and said so" ||
		fail "the line: a run on a coarse kernel waits and says so" "$(tr '\n' '|' <"$T/ph.err") ($PROBE)"
fi

# On a ramfs, which has no multigrain times (its stamps are the coarse clock
# or the kernel's floor): mounted in a mount namespace of the test's own, on
# a tmpfs of its own. 10 files the command writes first thing are the run's
# although enroll did not wait (where the kernel stamps finely): the floor
# holds for every filesystem.
mkdir -p "$T/rfs"
cat >"$T/ramfs.sh" <<'SH'
set -u
T=$1 H=$2 NOW=$3
mount -t tmpfs -o size=1m hmtest "$T/rfs" && mkdir "$T/rfs/r" && mount -t ramfs hmtest "$T/rfs/r" || exit 1
[ "$(stat -f -c %T "$T/rfs/r")" = ramfs ] || { echo "not a ramfs: $(stat -f -c %T "$T/rfs/r")"; exit 1; }
for i in $(seq 10); do
	got=$(HERMETIC_DEBUG=phases "$H" enroll --no-daemon --seed 7 --now @$NOW -- "$T/firstwrite" \
		"$T/rfs/r/own-$i" "$(command -v stat)" 2>"$T/rfs.err")
	note=$(grep -o 'line B: .*' "$T/rfs.err" | head -n 1)
	echo "$i $got ${note// /_}"
done
# The way of a kernel without multigrain times (Debian's 6.1 and 6.12),
# taken here on purpose (HERMETIC_TEST_LINE_WAIT): the coarse clock's wait.
for i in $(seq 10); do
	got=$(HERMETIC_TEST_LINE_WAIT=1 HERMETIC_DEBUG=phases "$H" enroll --no-daemon --seed 7 --now @$NOW -- \
		"$T/firstwrite" "$T/rfs/r/wait-$i" "$(command -v stat)" 2>"$T/rfs.err")
	note=$(grep -o 'line B: .*' "$T/rfs.err" | head -n 1)
	echo "wait-$i $got ${note// /_}" >>"$T/rfs-wait.out"
done
# The kernel's part alone, as enroll does it (engine/vclock.c): a memfd's
# ctime read (B), a byte written to it, at once a file written on the ramfs:
# stamped above B, 50 times; the control without the byte: at B (one tick
# of the coarse clock holds many of them).
python3 - "$T/rfs/r" >"$T/floor.out" <<'PY'
import os, sys
def trial(i, fine):
    fd = os.memfd_create("line")
    b = os.fstat(fd).st_ctime_ns
    if fine:
        os.write(fd, b"B")
    p = os.path.join(sys.argv[1], "floor-%d-%d" % (fine, i))
    with open(p, "w") as f:
        f.write("x")
    os.close(fd)
    return os.stat(p).st_mtime_ns > b
print(sum(trial(i, 1) for i in range(50)), sum(trial(i, 0) for i in range(50)))
PY
SH
res=$(timeout 120 unshare -m --propagation private bash "$T/ramfs.sh" "$T" "$HERMETIC" "$NOW" 2>&1)
read -r floor_fine floor_none <"$T/floor.out" 2>/dev/null
wres=$(cat "$T/rfs-wait.out" 2>/dev/null)
bad=$(awk -v now=$NOW -v fine=$FINE 'NF < 2 || $2 !~ /^[0-9]+$/ || $2 < now || (fine && $3 != "line_B:_passed_by_a_fine_stamp") { printf " %s", $0 }' <<<"$res")
if [ "$(wc -l <<<"$res")" = 10 ] && [ -z "$bad" ]; then
	if [ "$FINE" = 1 ]; then
		pass "the line on a ramfs (no multigrain times): 10 files the command writes first thing are the run's, none waited for ($PROBE)"
	else
		pass "the line on a ramfs: 10 files the command writes first thing are the run's (the coarse clock's wait: $PROBE)"
	fi
else
	fail "the line on a ramfs: 10 files the command writes first thing are the run's, none waited for" \
		"$(tr '\n' '|' <<<"$res") bad:$bad (virtual now $NOW; $PROBE)"
fi
wbad=$(awk -v now=$NOW '$2 !~ /^[0-9]+$/ || $2 < now || $3 !~ /^line_B:_waited_[0-9]+_us_for_the_coarse_clock$/ { printf " %s", $0 }' <<<"$wres")
if [ "$(wc -l <<<"$wres")" = 10 ] && [ -z "$wbad" ]; then
	pass "the line on a ramfs, the coarse clock's way (HERMETIC_TEST_LINE_WAIT, as on a kernel without multigrain times): 10 files written first thing are the run's, each run said how long it waited"
else
	fail "the line on a ramfs, the coarse clock's way: 10 files written first thing are the run's" \
		"$(tr '\n' '|' <<<"$wres") bad:$wbad (virtual now $NOW)"
fi
if [ "$FINE" = 1 ]; then
	[ "${floor_fine:-}" = 50 ] && [ "${floor_none:-50}" -lt 50 ] &&
		pass "the kernel's floor on a ramfs: after a fine stamp of enroll's kind, 50 of 50 files written at once are above B (without it, $floor_none of 50)" ||
		fail "the kernel's floor on a ramfs: after a fine stamp, every file written at once is above B" \
			"with the stamp ${floor_fine:-?} of 50, without ${floor_none:-?} of 50 ($PROBE)"
else
	pass "the kernel's floor on a ramfs: not applicable, the kernel stamps coarsely ($PROBE)"
fi

# --- the same file, the same time, run after run ---------------------------
echo data >"$T/old"
a=$(run stat -c '%.9Y %.9X %.9Z' "$T/old")
sleep 0.2
b=$(run stat -c '%.9Y %.9X %.9Z' "$T/old")
if [ -n "$a" ] && [ "$a" = "$b" ]; then
	pass "stat: one file, one time in two runs with one seed ($a)"
else
	fail "stat: one file, one time in two runs with one seed" "'$a' vs '$b'"
fi
mt=${a%%.*}
[ "$mt" -le $NOW ] 2>/dev/null && pass "stat: a file from before the run is older than the virtual now" ||
	fail "stat: a file from before the run is older than the virtual now" "$a"

# --- files the run changes: the virtual time of the change -------------------
# Each way a run changes a file (shell, Python, stdio at exit, a compiler,
# cp, touch, touch -d, truncate), in two runs with one seed, each in a fresh
# directory: the same mtime, atime and ctime, and the time of the change.
cat >"$T/writes.sh" <<'EOF'
echo a >sh
python3 -c 'open("py", "w").write("x")'
awk 'BEGIN { print "x" > "awk" }'
printf 'int main(void) { return 0; }\n' >c.c && cc -c c.c -o c.o
sleep 2
cp sh cp && touch t && touch -d @1577836900 future && truncate -s 1 sh
python3 -c 'import os, time; open("late", "w").write("x"); print("age", time.time() - os.path.getmtime("late"))'
stat -c '%n %.9Y %.9X %.9Z' sh py awk c.o cp t future late
EOF
for i in 1 2; do
	rm -rf "$T/w$i" && mkdir -p "$T/w$i" && (cd "$T/w$i" && run sh "$T/writes.sh" >out 2>&1)
done
w1=$(cat "$T/w1/out") w2=$(cat "$T/w2/out")
if [ "$(grep -c '^[a-z.]* [0-9.]* [0-9.]* [0-9.]*$' <<<"$w1")" = 8 ] && [ "$w1" = "$w2" ]; then
	pass "files a run writes: the same mtime, atime, ctime in two runs with one seed"
else
	fail "files a run writes: the same mtime, atime, ctime in two runs with one seed" \
		"$(diff <(echo "$w1") <(echo "$w2") | tr '\n' '|') $(tr '\n' '|' <<<"$w1")"
fi
mt() { awk -v f="$1" '$1 == f { split($2, s, "."); print s[1] }' <<<"$w1"; }
want="sh=$((NOW + 2)) py=$NOW awk=$NOW c.o=$NOW cp=$((NOW + 2)) t=$((NOW + 2)) future=$((NOW + 100)) late=$((NOW + 2))"
got="sh=$(mt sh) py=$(mt py) awk=$(mt awk) c.o=$(mt c.o) cp=$(mt cp) t=$(mt t) future=$(mt future) late=$(mt late)"
[ "$got" = "$want" ] && pass "a file shows the virtual time at which the run changed it" ||
	fail "a file shows the virtual time at which the run changed it" "got $got, want $want"
age=$(sed -n 's/^age //p' <<<"$w1")
if awk -v a="$age" 'BEGIN { exit !(a != "" && a >= 0 && a < 1) }'; then
	pass "a just-written file is under one second old by the run's clock ($age s)"
else
	fail "a just-written file is under one second old by the run's clock" "age '$age': $(tr '\n' '|' <<<"$w1")"
fi
# Many writes through one descriptor at one page time need one fstat, not
# one each (files.c rewrote): the stamps the later ones leave still stand
# for the time of the writes, also when the clock has moved before another
# process (stat(1)) meets them; and the first write after a move is that
# move's time.
cat >"$T/rewrite.sh" <<'EOF'
python3 -c '
import os, time
fd = os.open("many", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
for i in range(20000):
    os.write(fd, b"x")
time.sleep(3)
os.write(fd, b"y")
time.sleep(2)
for i in range(20000):
    os.write(fd, b"z")
os.close(fd)
fd = os.open("once", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
for i in range(20000):
    os.write(fd, b"x")
os.close(fd)
time.sleep(4)
'
stat -c '%n %Y %Z' many once
EOF
for i in 1 2; do
	rm -rf "$T/r$i" && mkdir -p "$T/r$i" && (cd "$T/r$i" && run sh "$T/rewrite.sh" >out 2>&1)
done
r1=$(cat "$T/r1/out") r2=$(cat "$T/r2/out")
want="many $((NOW + 5)) $((NOW + 5))|once $((NOW + 5)) $((NOW + 5))"
name="20,000 write(2)s at one clock time, then a move: stat in another process shows the writes' time"
if [ "$(tr '\n' '|' <<<"$r1" | sed 's/|$//')" = "$want" ] && [ "$r1" = "$r2" ]; then
	pass "$name"
else
	fail "$name" "got $(tr '\n' '|' <<<"$r1") and $(tr '\n' '|' <<<"$r2"), want $want"
fi
# Four writers at once, each writing, sleeping and reading the others' files:
# every process meets every stamp, in whatever real order; the times repeat.
cat >"$T/par.sh" <<'EOF'
for w in 1 2 3 4; do
	(for i in 1 2 3 4 5 6; do echo "$w $i" >"f$w.$i"; cat f* >/dev/null 2>&1; stat f* >/dev/null; sleep 0.$w; done) &
done
wait
stat -c '%n %.9Y %.9Z' f*
EOF
for i in 1 2; do
	rm -rf "$T/p$i" && mkdir -p "$T/p$i" && (cd "$T/p$i" && run sh "$T/par.sh" >out 2>&1)
done
p1=$(cat "$T/p1/out") p2=$(cat "$T/p2/out")
if [ "$(grep -c '^f[0-9.]* [0-9.]* [0-9.]*$' <<<"$p1")" = 24 ] && [ "$p1" = "$p2" ] &&
	[ "$(awk '{ print $2 }' <<<"$p1" | sort -u | wc -l)" -gt 6 ]; then
	pass "four concurrent writers: the same times in two runs with one seed"
else
	fail "four concurrent writers: the same times in two runs with one seed" \
		"$(diff <(echo "$p1") <(echo "$p2") | head -n 6 | tr '\n' '|') $(head -n 4 <<<"$p1" | tr '\n' '|')"
fi
# A replay sees the recorded run's times for the files it writes again.
mkdir -p "$T/rp" && cd "$T/rp" || exit 1
rp() { sh -c 'echo a >f; sleep 3; python3 -c "open(\"g\", \"w\").write(\"x\")"; stat -c "%n %.9Y %.9X %.9Z" f g'; }
rec=$("$HERMETIC" enroll --seed 7 --now @$NOW --record="$T/rpj" --keep-passing -- bash -c "$(declare -f rp); rp" 2>>"$T/enroll.err")
rm -f f g
j=$(ls "$T"/rpj/*.hjournal 2>/dev/null | head -n 1)
rep=$([ -n "$j" ] && "$HERMETIC" replay "$j" 2>>"$T/enroll.err")
if [ -n "$rec" ] && [ "$rec" = "$rep" ] && [ "$(awk '{ print int($2) }' <<<"$rec" | tr '\n' ' ')" = "$NOW $((NOW + 3)) " ]; then
	pass "replay: files the run writes show the recorded run's times"
else
	fail "replay: files the run writes show the recorded run's times" "recorded '$(tr '\n' '|' <<<"$rec")', replayed '$(tr '\n' '|' <<<"$rep")'"
fi
cd "$T" || exit 1
# logging's midnight rotation computes the next midnight from the log's
# mtime: with a file from the past it rotates on the first record.
rot=$(cd "$T/w1" && run python3 -c '
import logging, logging.handlers, os, time
h = logging.handlers.TimedRotatingFileHandler("app.log", when="midnight")
log = logging.getLogger("t"); log.addHandler(h); log.warning("first"); log.warning("second")
h.close()
print(sorted(f for f in os.listdir(".") if f.startswith("app.log")), h.rolloverAt > time.time())')
[ "$rot" = "['app.log'] True" ] && pass "a midnight-rotating log does not roll over on its first record" ||
	fail "a midnight-rotating log does not roll over on its first record" "$rot"

# --- Python's bytecode caches -------------------------------------------------
# A throwaway copy of a real package (the interpreter's own json), first
# on the path; caches written by a bare run, as root, bytecode writing on.
# Every cache goes under $T (PYTHONPYCACHEPREFIX), the interpreter's own
# too: a run that got it wrong rewrites only copies.
PY=python3
pkg=$("$PY" -c 'import json, os; print(os.path.dirname(json.__file__))')
mkdir -p "$T/site"
cp -r "$pkg" "$T/site/json" && rm -rf "$T/site/json/__pycache__"
py() { env -u PYTHONDONTWRITEBYTECODE PYTHONPATH="$T/site" PYTHONPYCACHEPREFIX="$T/pycache" "$@"; }
snapshot() { (cd "$T/pycache$T/site/json" && for f in *.pyc; do echo "$f $(stat -c '%i %.9Y %s' "$f") $(sha256sum <"$f")"; done); }
py "$PY" -c 'import json.tool' || fail "pyc: bare import" "failed"
before=$(snapshot)
[ "$(wc -l <<<"$before")" -ge 4 ] || fail "pyc: bare run wrote the caches" "$before"
py "$HERMETIC" enroll -- "$PY" -v -c 'import json.tool' >/dev/null 2>"$T/v1"
stale=$(grep -c "is stale" "$T/v1")
ours=$(grep -c "pyc matches $T/site/json/" "$T/v1")
if [ "$stale" = 0 ] && [ "$ours" -ge 4 ]; then
	pass "pyc: caches from before the run are valid in it ($ours match, 0 stale)"
else
	fail "pyc: caches from before the run are valid in it" "$stale stale, $ours matching: $(grep -m 3 'stale' "$T/v1" | tr '\n' '|')"
fi
after=$(snapshot)
[ "$before" = "$after" ] && pass "pyc: the run rewrote no cache" ||
	fail "pyc: the run rewrote no cache" "$(diff <(echo "$before") <(echo "$after") | tr '\n' '|')"
rm -rf "$T/pycache$T/site/json"
py "$HERMETIC" enroll -- "$PY" -c 'import json.tool' 2>/dev/null
written=$(snapshot)
py "$PY" -v -c 'import json.tool' >/dev/null 2>"$T/v2"
if [ "$(wc -l <<<"$written")" -ge 4 ] && ! grep -q "is stale" "$T/v2" &&
	[ "$(grep -c "pyc matches $T/site/json/" "$T/v2")" -ge 4 ] && [ "$(snapshot)" = "$written" ]; then
	pass "pyc: caches a run writes are valid outside it, and not rewritten there"
else
	fail "pyc: caches a run writes are valid outside it, and not rewritten there" \
		"$(grep -m 3 'stale' "$T/v2" | tr '\n' '|') $(diff <(echo "$written") <(snapshot) | head -n 4 | tr '\n' '|')"
fi
# The interpreters' own caches (read only: no writing into them here).
for p in "$PY" /usr/bin/python3; do
	[ -x "$(command -v "$p")" ] || continue
	for what in "-c pass" "-m pip --version"; do
		PYTHONDONTWRITEBYTECODE=1 "$HERMETIC" enroll -- "$p" -v $what >/dev/null 2>"$T/v3"
		n=$(grep -c "is stale" "$T/v3") m=$(grep -c " matches " "$T/v3")
		if [ "$n" = 0 ] && [ "$m" -gt 2 ]; then
			pass "pyc: $p $what finds its own caches valid ($m)"
		else
			fail "pyc: $p $what finds its own caches valid" "$n stale, $m matching"
		fi
	done
done

# --- make ----------------------------------------------------------------------
mkdir -p "$T/mk" && cd "$T/mk" || exit 1
printf 'int a(void) { return 1; }\n' >a.c
printf 'int a(void);\nint main(void) { return a() - 1; }\n' >b.c
printf 'prog: a.o b.o\n\tcc -o $@ a.o b.o\n%%.o: %%.c\n\tcc -c $<\n' >Makefile
m1=$(run make 2>&1)
touch b.c # an edit outside the run
m2=$(run make 2>&1)
m3=$(run make 2>&1)
m4=$(make 2>&1) # outside again
run touch a.c # an edit inside the run
m5=$(run make 2>&1)
m6=$(run make 2>&1)
if grep -q "cc -c a.c" <<<"$m1" && grep -q "cc -c b.c" <<<"$m1" &&
	grep -q "cc -c b.c" <<<"$m2" && ! grep -q "cc -c a.c" <<<"$m2" && grep -q "cc -o prog" <<<"$m2" &&
	grep -q "up to date" <<<"$m3" && grep -q "up to date" <<<"$m4" &&
	grep -q "cc -c a.c" <<<"$m5" && ! grep -q "cc -c b.c" <<<"$m5" && grep -q "up to date" <<<"$m6"; then
	pass "make: rebuilds exactly what an edit outside or inside made stale, then stops"
else
	fail "make: rebuilds exactly what an edit outside or inside made stale, then stops" \
		"$(printf '%s\n==\n' "$m1" "$m2" "$m3" "$m4" "$m5" "$m6" | tr '\n' '|')"
fi
if grep -qi "skew\|in the future" <<<"$m1$m2$m3$m5$m6"; then
	fail "make: no clock-skew warnings" "$(grep -i 'skew\|future' <<<"$m1$m2$m3$m5$m6" | head -n 2 | tr '\n' '|')"
else
	pass "make: no clock-skew warnings"
fi
# Within one run: an edit after time has passed is rebuilt, then nothing.
rm -f ./*.o prog
m7=$(run sh -c 'make; sleep 1; echo "/* edit */" >>b.c; echo ==; make; echo ==; make' 2>&1)
if grep -q "cc -c a.c" <<<"${m7%%==*}" && [ "$(grep -c "cc -c" <<<"$m7")" = 3 ] &&
	grep -q "cc -c b.c" <<<"$(sed -n '/^==$/,$p' <<<"$m7")" && grep -q "up to date" <<<"${m7##*==}" &&
	! grep -qi "skew\|in the future" <<<"$m7"; then
	pass "make: within one run, rebuilds exactly what an edit made stale, then stops"
else
	fail "make: within one run, rebuilds exactly what an edit made stale, then stops" "$(tr '\n' '|' <<<"$m7")"
fi
cd "$T" || exit 1

# --- setting times, copying, archiving ---------------------------------------
mkdir -p "$T/rt"
out=$(cd "$T/rt" && run sh -c '
	echo x >f && touch -d "2019-06-01 12:00:00.25" f && stat -c "%y" f &&
	cp -p f g && stat -c "%.9Y" f g &&
	tar cf a.tar f && mkdir x && tar xf a.tar -C x && stat -c "%Y" f x/f &&
	echo new >w && stat -c "%Y" w &&
	python3 -c "import zipfile; zipfile.ZipFile(\"z.zip\", \"w\").write(\"w\"); print(\"zip ok\")"' 2>&1)
lines() { sed -n "$1p" <<<"$out"; }
[ "$(lines 1)" = "2019-06-01 12:00:00.250000000 +0000" ] && pass "touch -d round-trips" ||
	fail "touch -d round-trips" "$(tr '\n' '|' <<<"$out")"
[ -n "$(lines 2)" ] && [ "$(lines 2)" = "$(lines 3)" ] && pass "cp -p round-trips" ||
	fail "cp -p round-trips" "$(tr '\n' '|' <<<"$out")"
[ -n "$(lines 4)" ] && [ "$(lines 4)" = "$(lines 5)" ] && pass "tar round-trips" ||
	fail "tar round-trips" "$(tr '\n' '|' <<<"$out")"
w=$(lines 6)
[ "$w" = $NOW ] && pass "a file the run writes shows the virtual now of its writing" ||
	fail "a file the run writes shows the virtual now of its writing" "$w, want $NOW"
[ "$(lines 7)" = "zip ok" ] && pass "zipfile takes a file the run wrote" ||
	fail "zipfile takes a file the run wrote" "$(tr '\n' '|' <<<"$out")"
# Outside, the file set inside holds its real time: virtual + the run's
# shift, E - now, E the first 1 January more than a day after the start.
real=$(stat -c %Y "$T/rt/f") virt=$(date -u -d '2019-06-01 12:00:00' +%s)
y=$(date -u -d "@$(($(date +%s) + 86400))" +%Y)
shift_s=$(($(date -u -d "$((y + 1))-01-01" +%s) - NOW))
[ $((real - virt)) = "$shift_s" ] && pass "a time set inside is the real time outside, moved by the run's shift" ||
	fail "a time set inside is the real time outside, moved by the run's shift" "real $real, virtual $virt, shift $shift_s"
