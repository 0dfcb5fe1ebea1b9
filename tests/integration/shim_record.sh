#!/usr/bin/env bash
# Recording and replay in the shim (issue 4): per image and thread,
# every value the shim returned goes to a stream file in the spool directory
# (HERMETIC_RECORD) and comes back from it (HERMETIC_REPLAY), strictly or not.
source "$(dirname "$0")/../lib.sh"
SHIM_VIA_CLI=0 # jr() below sets the environment contract itself
source "$(dirname "$0")/shim_lib.sh"

# jr MODE CASE CMD...: the one place that knows how a run is recorded and
# replayed. Until `hermetic enroll --record` / `hermetic replay` assemble and
# extract journals, it sets the shim's environment contract (lib/config.h) by
# hand:
#   jr record CASE CMD...      run CMD recording into $T/CASE/spool
#   jr replay CASE CMD...      replay $T/CASE/spool strictly
#   jr replay-lax CASE CMD...  replay it, not strictly
# JR_CLOCK, JR_RNG (default off, off: real values) give the mode. Recordings
# use seed JR_SEED (42), replays JR_REPLAY_SEED (7): what a replay prints that
# matches the recording came from the recording. The command's exit status is
# jr's; replay outcomes ("mismatch ..."/"live ..." lines) land in $T/CASE/report.
jr() {
	local mode=$1 dir=$T/$2
	shift 2
	local env=(HERMETIC_RUN=none HERMETIC_NOW=$SHIM_NOW HERMETIC_TICK=$SHIM_TICK
		HERMETIC_CLOCK=${JR_CLOCK:-off} HERMETIC_RNG=${JR_RNG:-off}
		HERMETIC_SPIN_LIMIT=$SHIM_SPIN_LIMIT HERMETIC_ASLR=off HERMETIC_NETWORK=block
		HERMETIC_LINEAGE=1 HERMETIC_PRELOAD=$SHIM LD_PRELOAD=$SHIM)
	case $mode in
	record)
		rm -rf "$dir"
		mkdir -p "$dir/spool"
		env "${env[@]}" HERMETIC_SEED="${JR_SEED:-42}" HERMETIC_RECORD="$dir/spool" \
			setarch "$(uname -m)" -R "$@"
		;;
	replay | replay-lax)
		rm -rf "$dir/replay" "$dir/report"
		cp -r "$dir/spool" "$dir/replay"
		${JR_PREFIX:-} env "${env[@]}" HERMETIC_SEED="${JR_REPLAY_SEED:-7}" \
			HERMETIC_REPLAY="$dir/replay" \
			HERMETIC_REPLAY_STRICT=$([ "$mode" = replay ] && echo 1 || echo 0) \
			HERMETIC_REPLAY_REPORT="$dir/report" setarch "$(uname -m)" -R "$@"
		;;
	esac
}

shim_built record || exit 0
have "$SHIM_CC" record || exit 0
have python3 record || exit 0

# jsdump: prints what stream files hold, with lib/jstream.c's decoder.
cat >"$T/jsdump.c" <<'CEOF'
#include <stdio.h>
#include "jstream.h"

int main(int argc, char **argv)
{
	static unsigned char buf[1 << 24];
	int bad = 0;

	for (int i = 1; i < argc; i++) {
		struct hm_jstream_dec d;
		struct hm_jrec r;
		FILE *f = fopen(argv[i], "rb");
		size_t n;
		int k;

		if (!f)
			return 2;
		n = fread(buf, 1, sizeof(buf), f);
		fclose(f);
		if (hm_jstream_dec_init(&d, buf, n) < 0) {
			printf("%s: bad header: %s\n", argv[i], d.why);
			bad = 1;
			continue;
		}
		printf("stream %s %u %016llx %s %u %u\n", d.hdr.lineage, d.hdr.thread,
		       (unsigned long long)d.hdr.image, d.hdr.exe, d.hdr.exe_count, d.hdr.gen);
		while ((k = hm_jstream_next(&d, &r)) > 0) {
			printf("%llu %s %s", (unsigned long long)r.index, hm_jrec_type_name(r.type),
			       r.type == HM_JREC_END ? "-" : hm_jrec_call_name(r.type, r.call));
			if (r.type == HM_JREC_CLOCK)
				printf(" id=%d ns=%lld", r.clock.id, (long long)r.clock.ns);
			else if (r.type == HM_JREC_ENTROPY)
				printf(" len=%zu", r.entropy.len);
			else if (r.type == HM_JREC_WAIT)
				printf(" timed_out=%d result=%lld", r.wait.timed_out,
				       (long long)r.wait.result);
			else if (r.type == HM_JREC_END)
				printf(" reason=%llu", (unsigned long long)r.end.reason);
			printf("\n");
		}
		if (k < 0) {
			printf("%s: malformed at %zu: %s\n", argv[i], d.off, d.why);
			bad = 1;
		} else if (!d.ended) {
			printf("%s: no end record\n", argv[i]);
			bad = 1;
		}
	}
	return bad;
}
CEOF
"$SHIM_CC" -O2 -D_GNU_SOURCE -I"$TOP/lib" -I"$TOP/include" $LIBHERMETIC_CFLAGS -o "$T/jsdump" "$T/jsdump.c" \
	"$B/libhermetic.a" ||
	{ fail record "cannot compile the stream decoder"; exit 0; }

# spool_ok CASE: every stream file decodes completely, ends with an END
# record, is mode 0600 and names in its header the stream its file name
# ("<lineage>.<thread>.<image>.hjs") says. Leaves each decoded as FILE.txt.
spool_ok() {
	local f base img rest thr lin hdr n=0
	for f in "$T/$1"/spool/*.hjs; do
		[ -e "$f" ] || { echo "no stream files"; return 1; }
		n=$((n + 1))
		base=${f##*/} base=${base%.hjs}
		img=${base##*.} rest=${base%.*}
		thr=${rest##*.} lin=${rest%.*}
		"$T/jsdump" "$f" >"$f.txt" || { echo "$base: $(tail -n 1 "$f.txt")"; return 1; }
		hdr=$(head -n 1 "$f.txt")
		[[ "$hdr" == "stream $lin $thr $img "* ]] || { echo "$base holds '$hdr'"; return 1; }
		[ "$(stat -c %a "$f")" = 600 ] || { echo "$base has mode $(stat -c %a "$f")"; return 1; }
	done
	[ $n -gt 0 ]
}

# sfile CASE LINEAGE THREAD EXE COUNT: the stream file of that thread of the
# image of process LINEAGE running EXE (a regex) for the COUNT-th time
# (spool_ok CASE first).
sfile() {
	local t
	for t in "$T/$1"/spool/*.hjs.txt; do
		if head -n 1 "$t" | grep -Eq "^stream $2 $3 [0-9a-f]{16} $4 $5 [0-9]+\$"; then
			echo "${t%.txt}"
			return 0
		fi
	done
	return 1
}

# simage CASE LINEAGE EXE COUNT: that image's id (16 hex digits).
simage() {
	local f
	f=$(sfile "$1" "$2" 0 "$3" "$4") || return 1
	head -n 1 "$f.txt" | cut -d' ' -f4
}

# The interpreter the python3 on PATH runs in the end (through any shim).
PYEXE='python3[.0-9]*'


# same NAME A B: PASS when the outputs are identical and not empty.
same() {
	if [ -n "$2" ] && [ "$2" = "$3" ]; then
		pass "$1"
	else
		fail "$1" "$(printf '%s' "$2" | head -c 300 | tr '\n' '|') vs $(printf '%s' "$3" | head -c 300 | tr '\n' '|')"
	fi
}


# report_clean CASE: the replay reported no mismatch and no live value
report_clean() {
	[ ! -s "$T/$1/report" ] || { cat "$T/$1/report"; return 1; }
}

# ---- Python: time.time(), uuid4(), os.urandom(8), exit 1 ------------------------
cat >"$T/basic.py" <<'EOF'
import os, sys, time, uuid
print(time.time())
print(uuid.uuid4())
print(os.urandom(8).hex())
sys.exit(1)
EOF
sed 's/^print(uuid.uuid4())$/print(uuid.uuid4())\nprint(uuid.uuid4())/' "$T/basic.py" >"$T/changed.py"

rec=$(jr record basic python3 "$T/basic.py" 2>&1)
rc=$?
[ $rc = 1 ] && [ "$(head -n 1 <<<"$rec" | cut -d. -f1)" -gt 1700000000 ] 2>/dev/null &&
	pass "python recorded with --clock off --rng off: real values, exit 1" ||
	fail "python recorded with --clock off --rng off: real values, exit 1" "rc=$rc $rec"
check "python spool: every stream decodes, ends, is 0600" spool_ok basic
g=$(simage basic 1 "$PYEXE" 1)
rep=$(jr replay basic python3 "$T/basic.py" 2>&1)
rc=$?
same "python replays with identical output" "$rec" "$rep"
[ $rc = 1 ] && pass "python replay exits 1 like the recording" || fail "python replay exits 1 like the recording" "rc=$rc"
check "python replay reports nothing" report_clean basic

# One extra uuid4(): strict replay stops at that call, naming process and call.
out=$(jr replay basic python3 "$T/changed.py" 2>&1)
rc=$?
msg=$(grep 'replay mismatch' <<<"$out")
line=$(cat "$T/basic/report" 2>/dev/null)
[ $rc = 87 ] && pass "changed program: strict replay exits 87" ||
	fail "changed program: strict replay exits 87" "rc=$rc $out"
[[ "$msg" =~ ^hermetic:\ replay\ mismatch\ in\ process\ 1\ thread\ 0\ \(python3[.0-9]*,\ pid\ [0-9]+,\ comm\ python3\):\ call\ \#([0-9]+)\ asked\ getrandom\(16\ bytes\),\ recorded\ getrandom\(8\ bytes\)$ ]] &&
	callno=${BASH_REMATCH[1]} && pass "changed program: the message names process, thread and call" ||
	{ callno=x; fail "changed program: the message names process, thread and call" "$out"; }
[ "$line" = "mismatch 1 0 $g $callno getrandom(16) getrandom(8)" ] &&
	pass "changed program: one report line" || fail "changed program: one report line" "$line"
[ "$(head -n 2 <<<"$out")" = "$(head -n 2 <<<"$rec")" ] &&
	pass "changed program: values before the mismatch replayed" ||
	fail "changed program: values before the mismatch replayed" "$out"
# Not strict: completes; the extra call is live, the rest resynchronises.
out=$(jr replay-lax basic python3 "$T/changed.py" 2>/dev/null)
rc=$?
line=$(cat "$T/basic/report" 2>/dev/null)
[ $rc = 1 ] && [ "$line" = "live 1 0 $g 1" ] &&
	pass "changed program: --no-strict completes and reports one live value" ||
	fail "changed program: --no-strict completes and reports one live value" "rc=$rc report=$line"
exp=$(sed -n '1,2p;4p' <<<"$out")
same "changed program: --no-strict resynchronises after the extra call" "$rec" "$exp"

# A process with no recorded stream: strict reports it asked, recorded nothing.
mkdir -p "$T/none/spool"
out=$(jr replay none python3 "$T/basic.py" 2>&1)
rc=$?
# (the first image to ask: the one the recording's first stream of process 1 came from)
img=$(sed -n 's/^mismatch 1 0 \([0-9a-f]\{16\}\) 1 [a-z_]*([0-9A-Z_]*) nothing$/\1/p' "$T/none/report" 2>/dev/null)
[ $rc = 87 ] && [ -n "$img" ] && [ -e "$T/basic/spool/1.0.$img.hjs" ] &&
	pass "no recorded stream: strict mismatch, recorded nothing" ||
	fail "no recorded stream: strict mismatch, recorded nothing" "rc=$rc $(cat "$T/none/report" 2>&1)"

# Seeded mode: the replay (another seed) prints what the recording printed,
# a live run with that seed does not, and recording changes nothing.
JR_CLOCK=virtual JR_RNG=all
rec=$(jr record seeded python3 "$T/basic.py" 2>&1)
plain=$(shim_run 42 python3 "$T/basic.py" 2>&1)
live7=$(shim_run 7 python3 "$T/basic.py" 2>&1)
rep=$(jr replay seeded python3 "$T/basic.py" 2>&1)
same "seeded recording prints what an unrecorded run prints" "$plain" "$rec"
same "seeded replay with another seed prints the recording" "$rec" "$rep"
[ "$live7" != "$rec" ] && pass "... which that seed alone does not" || fail "... which that seed alone does not" "$live7"
unset JR_CLOCK JR_RNG

# ---- Python: three layers of subprocesses --------------------------------------
cat >"$T/layers.py" <<'EOF'
import os, subprocess, sys, time, uuid
depth = int(sys.argv[1]) if len(sys.argv) > 1 else 0
print(depth, time.time(), uuid.uuid4(), os.urandom(8).hex(), flush=True)
if depth < 2:
    r = subprocess.run([sys.executable, __file__, str(depth + 1)])
    print(depth, "child exited", r.returncode, time.time(), uuid.uuid4(), flush=True)
sys.exit(1)
EOF
rec=$(jr record layers python3 "$T/layers.py" 2>&1)
rc=$?
[ $rc = 1 ] && [ "$(wc -l <<<"$rec")" = 5 ] && pass "three layers recorded" || fail "three layers recorded" "rc=$rc $rec"
check "three layers: every stream decodes" spool_ok layers
sfile layers 1.1 0 "$PYEXE" 1 >/dev/null && sfile layers 1.1.1 0 "$PYEXE" 1 >/dev/null &&
	pass "three layers: streams per process and image" ||
	fail "three layers: streams per process and image" "$(head -q -n 1 "$T/layers/spool"/*.txt | tr '\n' '|')"
rep=$(jr replay layers python3 "$T/layers.py" 2>&1)
rc=$?
same "three layers replay with identical output" "$rec" "$rep"
[ $rc = 1 ] && pass "three layers replay exits 1" || fail "three layers replay exits 1" "rc=$rc"

# ---- Python: four threads, each printing its own readings ----------------------
cat >"$T/threads.py" <<'EOF'
import os, sys, threading, time, uuid
out = {}
def work(i):
    out[i] = (time.time(), uuid.uuid4(), os.urandom(8).hex(), time.time())
ts = [threading.Thread(target=work, args=(i,)) for i in range(4)]
for t in ts: t.start()
for t in ts: t.join()
for i in range(4): print("thread", i, *out[i])
print("main", time.time(), uuid.uuid4())
sys.exit(1)
EOF
rec=$(jr record threads python3 "$T/threads.py" 2>&1)
check "four threads: every stream decodes" spool_ok threads
n=0
for i in 1 2 3 4; do sfile threads 1 $i "$PYEXE" 1 >/dev/null && n=$((n + 1)); done
[ $n = 4 ] && pass "four threads: one stream each" ||
	fail "four threads: one stream each" "$(head -q -n 1 "$T/threads/spool"/*.txt | tr '\n' '|')"
ok=1
for i in 1 2 3; do # threads race for the GIL differently every time
	rep=$(jr replay threads python3 "$T/threads.py" 2>&1)
	[ "$rep" = "$rec" ] || { ok=0; break; }
done
[ $ok = 1 ] && [ -n "$rec" ] && pass "four threads replay with identical output (3 times)" ||
	fail "four threads replay with identical output (3 times)" "$(tr '\n' '|' <<<"$rec") vs $(tr '\n' '|' <<<"$rep")"
! grep -q '^mismatch' "$T/threads/report" 2>/dev/null && pass "four threads: no mismatch" ||
	fail "four threads: no mismatch" "$(cat "$T/threads/report")"

# ---- C: wait outcomes, threads, fork, a failed exec, exec ----------------------
cat >"$T/w.c" <<'CEOF'
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void show(const char *what)
{
	unsigned char b[8];

	getrandom(b, sizeof(b), 0);
	printf("%s %lld ", what, ns(CLOCK_REALTIME));
	for (int i = 0; i < 8; i++)
		printf("%02x", b[i]);
	printf("\n");
}

/* Many values per thread: stream buffers fill and are flushed. */
static void *worker(void *arg)
{
	uint64_t h = 1469598103934665603ULL;
	unsigned char b[16];

	for (int i = 0; i < 20000; i++) {
		h = (h ^ (uint64_t)ns(CLOCK_REALTIME)) * 1099511628211ULL;
		if (i % 4 == 0) {
			getrandom(b, sizeof(b), 0);
			for (int j = 0; j < 16; j++)
				h = (h ^ b[j]) * 1099511628211ULL;
		}
	}
	*(uint64_t *)arg = h;
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t c = PTHREAD_COND_INITIALIZER;
	struct timespec dl, s = { 0, 100 * 1000 * 1000 };
	struct pollfd pf;
	pthread_t t[4];
	uint64_t h[4];
	long long a, b;
	int p[2], r, st;
	pid_t pid;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 1) { /* the exec'd image */
		show("gen1");
		return 3;
	}
	show("start");
	if (pipe(p))
		return 2;
	pf = (struct pollfd){ p[0], POLLIN, 0 };
	a = ns(CLOCK_MONOTONIC);
	r = poll(&pf, 1, 1000); /* times out */
	b = ns(CLOCK_MONOTONIC);
	printf("poll %d revents %d after %lld ms\n", r, pf.revents, (b - a) / 1000000);
	if (write(p[1], "x", 1) != 1)
		return 2;
	r = poll(&pf, 1, 5000); /* an event */
	printf("poll %d revents %d\n", r, pf.revents);
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += dl.tv_nsec >= 700000000;
	dl.tv_nsec = (dl.tv_nsec + 300000000) % 1000000000;
	pthread_mutex_lock(&m);
	r = pthread_cond_timedwait(&c, &m, &dl);
	pthread_mutex_unlock(&m);
	printf("cond_timedwait %s\n", r == ETIMEDOUT ? "timed out" : strerror(r));
	a = ns(CLOCK_MONOTONIC);
	nanosleep(&s, NULL);
	b = ns(CLOCK_MONOTONIC);
	printf("nanosleep %lld ms, time %ld\n", (b - a) / 1000000, (long)time(NULL));
	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, worker, &h[i]);
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		printf("thread %d %016llx\n", i + 1, (unsigned long long)h[i]);
	}
	if ((pid = fork()) == 0) {
		show("child");
		_exit(0);
	}
	waitpid(pid, &st, 0);
	show("parent");
	execl("/nonexistent/hermetic", "x", (char *)NULL); /* fails: the stream goes on */
	show("after a failed exec");
	execl("/proc/self/exe", argv[0], "gen1", (char *)NULL);
	return 1;
}
CEOF
"$SHIM_CC" -O2 -o "$T/w" "$T/w.c" -lpthread || { fail record "cannot compile w.c"; exit 0; }

t0=$(now_ms)
rec=$(jr record waits "$T/w" 2>&1)
rc=$? rec_ms=$(($(now_ms) - t0))
# (real: at least the poll's 1000 ms; a loaded machine wakes it late, once
# 1010 ms on a CI trial, so no tighter bound than "under two seconds")
[ $rc = 3 ] && grep -qE '^poll 0 revents 0 after 1[0-9]{3} ms$' <<<"$rec" && [ $rec_ms -ge 1400 ] &&
	pass "C recorded with the clock off: real waits" || fail "C recorded with the clock off: real waits" "rc=$rc ${rec_ms}ms $rec"
check "C spool: every stream decodes" spool_ok waits
# w, run twice in process 1 (it execs itself); its fork child 1.1 still in w's
# image (count 0); four threads of the first image.
reason() { f=$(sfile waits "$@") && sed -n 's/.* end - reason=//p' "$f.txt"; }
main=$(sfile waits 1 0 w 1).txt
[ "$(reason 1 0 w 1)" = 1 ] && [ "$(reason 1 0 w 2)" = 0 ] && [ "$(reason 1.1 0 w 0)" = 0 ] &&
	[ "$(reason 1 1 w 1)$(reason 1 2 w 1)$(reason 1 3 w 1)$(reason 1 4 w 1)" = 2222 ] &&
	pass "streams end: exec, exit, fork child's exit, thread exits" ||
	fail "streams end: exec, exit, fork child's exit, thread exits" "$(head -q -n 1 "$T/waits/spool"/*.txt | tr '\n' '|')"
grep -q ' wait poll timed_out=1 result=0$' "$main" &&
	grep -q ' wait poll timed_out=0 result=1$' "$main" &&
	grep -q ' wait pthread_cond_timedwait timed_out=1 result=110$' "$main" &&
	grep -q ' wait nanosleep timed_out=1 result=0$' "$main" &&
	pass "wait outcomes recorded (poll timed out, poll event, cond timed out, sleep)" ||
	fail "wait outcomes recorded (poll timed out, poll event, cond timed out, sleep)" "$(grep wait "$main" | tr '\n' '|')"
[ "$(grep -c ' entropy getrandom len=8' "$main")" = 3 ] &&
	pass "a failed exec keeps the stream going" ||
	fail "a failed exec keeps the stream going" "$(tr '\n' '|' <"$main")"
# (at once: the replayed timeouts never reach the kernel, so no poll with the
# recorded 1000 ms timeout is made - strace says, not a stopwatch)
rep=$(JR_PREFIX="strace -f -qq -e trace=poll,ppoll -o $T/rep.strace" jr replay waits "$T/w" 2>&1)
rc=$?
same "C replays with identical output (waits, threads, fork, exec)" "$rec" "$rep"
if [ $rc = 3 ] && [ -s "$T/rep.strace" ] && ! grep -q 'poll(.*, 1, 1000)\|ppoll(.*{tv_sec=1, tv_nsec=0}' "$T/rep.strace"; then
	pass "C replay: timed-out waits time out at once (no real 1000 ms poll)"
else
	fail "C replay: timed-out waits time out at once" "rc=$rc $(grep poll "$T/rep.strace" | head -5 | tr '\n' '|')"
fi
check "C replay reports nothing" report_clean waits

JR_CLOCK=virtual JR_RNG=all
rec=$(jr record waitsv "$T/w" 2>&1)
rep=$(jr replay waitsv "$T/w" 2>&1)
same "C, seeded and virtual: replay with another seed prints the recording" "$rec" "$rep"
check "C, seeded and virtual: spool decodes" spool_ok waitsv
unset JR_CLOCK JR_RNG

# ---- dying without exit: abort(), and a kill while hanging in a wait ----------
cat >"$T/die.c" <<'CEOF'
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct timespec ts;
	unsigned char b[8];

	for (int i = 0; i < 100; i++) {
		clock_gettime(CLOCK_REALTIME, &ts);
		getrandom(b, sizeof(b), 0);
	}
	if (!strcmp(argv[1], "abort"))
		abort();
	fprintf(fopen(argv[2], "w"), "%d\n", (int)getpid()); /* (closed at exit) */
	fflush(NULL);
	poll(NULL, 0, 60000); /* hangs (the clock is off) until killed */
	return 0;
}
CEOF
"$SHIM_CC" -O2 -o "$T/die" "$T/die.c" || { fail record "cannot compile die.c"; exit 0; }
jr record abort "$T/die" abort >/dev/null 2>&1
for f in "$T/abort/spool"/*.hjs; do "$T/jsdump" "$f" >"$f.txt"; done
f=$(sfile abort 1 0 die 1)
out=$("$T/jsdump" "$f" 2>&1)
[ $? = 0 ] && [ "$(grep -c ' entropy getrandom len=8$' <<<"$out")" = 100 ] &&
	pass "abort(): the stream is complete and ended" ||
	fail "abort(): the stream is complete and ended" "$(tail -n 2 <<<"$out" | tr '\n' '|')"
jr record hang "$T/die" hang "$T/die.pid" >/dev/null 2>&1 &
pid=$!
for _ in $(seq 100); do
	[ -s "$T/die.pid" ] && break
	sleep 0.05
done
sleep 0.2
[ -s "$T/die.pid" ] && kill -KILL "$(cat "$T/die.pid")"
wait $pid 2>/dev/null
for f in "$T/hang/spool"/*.hjs; do "$T/jsdump" "$f" >"$f.txt"; done
f=$(sfile hang 1 0 die 1)
out=$("$T/jsdump" "$f" 2>&1)
[ "$(grep -c ' entropy getrandom len=8$' <<<"$out")" = 100 ] && grep -q 'no end record' <<<"$out" &&
	pass "killed while hanging in a wait: the values before it are on disk" ||
	fail "killed while hanging in a wait: the values before it are on disk" "$(tail -n 2 <<<"$out" | tr '\n' '|')"
