#!/usr/bin/env bash
# Lineage keys and the environment through fork, vfork (with a bare envp),
# posix_spawn, system, popen, exec and threads; the clock a parent gets back
# when it reaps a child; an unenrolled process left alone.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/shim_lib.sh"
shim_built lineage || exit 0
have "$SHIM_CC" lineage || exit 0

cat >"$T/lin.c" <<'CEOF'
#define _GNU_SOURCE
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;
static char *show[] = { "/bin/sh", "-c",
			"echo \"$0 key=$HERMETIC_LINEAGE clock=$HERMETIC_CLOCK "
			"preload=${LD_PRELOAD##*/} rnd=$(od -An -tx1 -N4 /dev/urandom | tr -d ' ') "
			"t=$(date +%s)\"",
			NULL, NULL };
static char *bare_env[] = { "PATH=/usr/bin:/bin", NULL };

static void *thr(void *a)
{
	unsigned char b[4];

	getrandom(b, sizeof(b), 0);
	printf("thread %s %02x%02x%02x%02x\n", (char *)a, b[0], b[1], b[2], b[3]);
	if (!strcmp(a, "2"))
		sleep(50);
	return NULL;
}

int main(void)
{
	char line[256];
	pthread_t t;
	FILE *f;
	pid_t p;
	int st;

	show[3] = "fork";
	if (!(p = fork())) {
		execve(show[0], show, environ);
		_exit(127);
	}
	waitpid(p, &st, 0);
	show[3] = "vfork-bare-env";
	if (!(p = vfork())) {
		execve(show[0], show, bare_env);
		_exit(127);
	}
	waitpid(p, &st, 0);
	show[3] = "posix_spawn-bare-env";
	posix_spawn(&p, show[0], NULL, NULL, show, bare_env);
	waitpid(p, &st, 0);
	fflush(stdout);
	system("echo system key=$HERMETIC_LINEAGE");
	f = popen("echo popen key=$HERMETIC_LINEAGE", "r");
	while (fgets(line, sizeof(line), f))
		fputs(line, stdout);
	pclose(f);
	fflush(stdout);
	if (!(p = fork())) {
		pid_t q;

		if (!(q = fork())) {
			sleep(100);
			show[3] = "grandchild";
			execv(show[0], show);
			_exit(127);
		}
		waitpid(q, &st, 0);
		printf("child-after-grandchild t=%ld\n", (long)time(NULL));
		fflush(stdout);
		_exit(0);
	}
	waitpid(p, &st, 0);
	printf("parent-after-child t=%ld\n", (long)time(NULL));
	pthread_create(&t, NULL, thr, "1");
	pthread_join(t, NULL);
	pthread_create(&t, NULL, thr, "2");
	pthread_join(t, NULL);
	printf("after-join t=%ld\n", (long)time(NULL));
	fflush(stdout);
	show[3] = "execle-bare-env";
	execle(show[0], show[0], show[1], show[2], show[3], (char *)NULL, bare_env);
	return 1;
}
CEOF
"$SHIM_CC" -O2 -o "$T/lin" "$T/lin.c" -lpthread || { fail lineage "cannot compile"; exit 0; }

det "lineage tree reproducible" "$T/lin"
out=$DET_OUT
# The program is the run's first process, "1".
expect() {
	if grep -q "$2" <<<"$out"; then pass "$1"; else fail "$1" "$(tr '\n' '|' <<<"$out")"; fi
}
expect "fork child key" "^fork key=1.1 clock=virtual preload=libhermetic-preload.so"
expect "vfork child with bare envp keeps the shim" "^vfork-bare-env key=1.2 clock=virtual preload=libhermetic-preload.so"
expect "posix_spawn child with bare envp" "^posix_spawn-bare-env key=1.3 clock=virtual preload=libhermetic-preload.so"
expect "system child key" "^system key=1.4$"
expect "popen child key" "^popen key=1.5$"
expect "grandchild key and sleep" "^grandchild key=1.6.1 .* t=1577836900$"
expect "one clock: a parent after its child's sleep sees that time" "^child-after-grandchild t=1577836900$"
expect "grandparent too" "^parent-after-child t=1577836900$"
expect "one clock: after pthread_join, the thread's sleep has passed" "^after-join t=1577836950$"
expect "exec keeps the key" "^execle-bare-env key=1 clock=virtual preload=libhermetic-preload.so"
t1=$(grep "^thread 1 " <<<"$out") t2=$(grep "^thread 2 " <<<"$out")
[ -n "$t1" ] && [ -n "$t2" ] && [ "${t1#thread 1 }" != "${t2#thread 2 }" ] &&
	pass "threads have their own streams" || fail "threads have their own streams" "$t1 / $t2"
rnd=$(grep -o 'rnd=[0-9a-f]*' <<<"$out" | sort | uniq -d)
[ -z "$rnd" ] && pass "every process its own stream" || fail "every process its own stream" "$rnd"
# (other runs on this machine may have files of their own there: look for ours)
left=$(grep -l "^4[23] " /dev/shm/hermetic-exit-* 2>/dev/null | head -n 3)
[ -z "$left" ] && pass "no exit files left behind" || fail "no exit files left behind" "$left"

# Not enrolled: the shim is inert.
out=$(LD_PRELOAD=$SHIM sh -c 'date +%Y; od -An -tx1 -N8 /dev/urandom; echo "key=${HERMETIC_LINEAGE:-none}"')
out2=$(LD_PRELOAD=$SHIM sh -c 'date +%Y; od -An -tx1 -N8 /dev/urandom; echo "key=${HERMETIC_LINEAGE:-none}"')
[ "$(head -n 1 <<<"$out")" -gt 2020 ] && [ "$out" != "$out2" ] && grep -q "key=none" <<<"$out" &&
	pass "inert when not enrolled" || fail "inert when not enrolled" "$out"

# The handle from C: active under the shim, "not active" without it.
cat >"$T/h.c" <<'CEOF'
#include <stdio.h>
#include <hermetic/hermetic.h>
int main(void)
{
	struct timespec ts;
	unsigned char b[4];

	long long now;
	int adv;

	hermetic_real_clock_gettime(CLOCK_REALTIME, &ts);
	now = hermetic_now_ns();
	adv = hermetic_advance_ns(1000000000);
	printf("active=%d seed=%llu key=%s now=%lld adv=%d real_year_ok=%d rnd=%zd\n",
	       hermetic_active(), (unsigned long long)hermetic_seed(), hermetic_lineage(), now, adv,
	       ts.tv_sec > 1700000000, hermetic_real_getrandom(b, 4, 0));
	printf("after=%lld\n", (long long)hermetic_now_ns());
	return 0;
}
CEOF
if "$SHIM_CC" -I"$TOP/include" -o "$T/h" "$T/h.c" -L"$B" -lhermetic -Wl,-rpath,"$B"; then
	out=$(shim_run 42 "$T/h")
	grep -q "^active=1 seed=42 key=1 now=1577836800000000000 adv=0 real_year_ok=1 rnd=4$" <<<"$out" &&
		grep -q "^after=1577836801000000000$" <<<"$out" && pass "handle active" ||
		fail "handle active" "$(tr '\n' '|' <<<"$out")"
	out=$("$T/h")
	grep -q "^active=0 seed=0 key= now=.* adv=-95 real_year_ok=1 rnd=4$" <<<"$out" &&
		pass "handle not active without the shim" || fail "handle not active without the shim" "$out"
else
	fail "handle" "cannot compile against libhermetic.so"
fi

# Exec wrappers and version-manager shims change nothing: a program's values
# depend on its place in the tree and on what it runs, not on exec hops or
# the helpers a wrapper forked before it (lib/lineage.h image ids).
if have python3 "exec wrappers"; then
	REALPY=$(python3 -c 'import os, sys; print(os.path.realpath(sys.executable))')
	cat >"$T/p.py" <<'PYEOF'
import os, subprocess, sys, uuid
print("self", uuid.uuid4(), os.urandom(4).hex(), os.environ["HERMETIC_LINEAGE"])
sys.stdout.flush()
subprocess.run([sys.executable, "-c",
    'import os, uuid; print("child", uuid.uuid4(), os.environ["HERMETIC_LINEAGE"])'])
PYEOF
	# A pyenv-style shim: a bash script that forks helpers (one of them the
	# very program it then runs) and execs the real program.
	mkdir -p "$T/shims"
	cat >"$T/shims/python3" <<SHEOF
#!/usr/bin/env bash
set -e
version=\$(echo 3 | tr -d ' ')
helper=\$("$REALPY" -c 'import uuid; print(uuid.uuid4())')
echo "helper \$helper" >"$T/helper.out"
exec "$REALPY" "\$@"
SHEOF
	chmod +x "$T/shims/python3"
	# (each a command line for shim_run, as a user would type it after "--")
	ways=("python3 $T/p.py" "sh -c 'exec python3 $T/p.py'" "env python3 $T/p.py"
		"$REALPY $T/p.py" "env PATH=$T/shims:\$PATH python3 $T/p.py")
	[ -x /root/.pyenv/shims/python3 ] && ways+=("/root/.pyenv/shims/python3 $T/p.py")
	first=
	for w in "${ways[@]}"; do
		out=$(eval "shim_run 42 $w" 2>&1)
		if [ -z "$first" ]; then
			first=$out
			[ "$(grep -c '^self \|^child ' <<<"$out")" = 2 ] && grep -q ' 1$' <<<"$out" &&
				grep -q '^child .* 1\.1$' <<<"$out" && pass "wrappers: python3 runs as 1, its child as 1.1" ||
				fail "wrappers: python3 runs as 1, its child as 1.1" "$(tr '\n' '|' <<<"$out")"
		elif [ "$out" = "$first" ]; then
			pass "wrappers: '$w' prints what 'python3' does"
		else
			fail "wrappers: '$w' prints what 'python3' does" "$(tr '\n' '|' <<<"$out") vs $(tr '\n' '|' <<<"$first")"
		fi
	done
	other=$(shim_run 43 python3 "$T/p.py" 2>&1)
	[ -n "$other" ] && [ "$other" != "$first" ] && pass "wrappers: another seed, other values" ||
		fail "wrappers: another seed, other values" "$other"
	# The shim's helper is child 1.1 of an earlier image, running the same
	# program as the real one's child 1.1: their streams differ.
	helper=$(sed -n 's/^helper //p' "$T/helper.out")
	child=$(sed -n 's/^child \([^ ]*\) .*/\1/p' <<<"$first")
	[ -n "$helper" ] && [ -n "$child" ] && [ "$helper" != "$child" ] &&
		pass "wrappers: a helper child of the wrapper and the program's child do not share a stream" ||
		fail "wrappers: a helper child of the wrapper and the program's child do not share a stream" "$helper / $child"
fi
