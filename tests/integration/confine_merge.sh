# The run's seccomp filters as one program (engine/confine_merge.c): where
# the confinement and the supervisor both filter, CMD's processes carry one
# filter more than enroll's own, not two; each alone is one; and the
# merged program still refuses what the confinement refuses and stops what
# the supervisor stops. (tests/unit/confine_merge.c proves the program
# decides every call as the two did.)
source "$(dirname "$0")/../lib.sh"
need_root confine_merge || exit 0
start_daemon || { fail "daemon starts" "see above"; exit 1; }
cd "$T"

filters() { awk '$1 == "Seccomp_filters:" { print $2 }' "${1:-/proc/self/status}"; }
base=$(filters)
if [ -z "$base" ]; then
	fail "this kernel counts a process's seccomp filters" "no Seccomp_filters line in /proc/self/status (Linux 5.9+)"
	exit 0
fi
# run NAME WANT ARGS...: the filters CMD carries beyond ours.
run() {
	local name=$1 want=$2 n rc
	shift 2
	"$HERMETIC" enroll "$@" -- sh -c 'awk '\''$1 == "Seccomp_filters:" { print $2 }'\'' /proc/self/status' \
		>"$T/n" 2>"$T/err"
	rc=$?
	n=$(cat "$T/n")
	if [ $rc = 0 ] && [ -n "$n" ] && [ $((n - base)) = "$want" ]; then
		pass "$name"
	else
		fail "$name" "rc=$rc filters=$n (ours $base), want $want more: $(tr '\n' '|' <"$T/err")"
	fi
}
run "confined and supervised: one filter, not two" 1
run "confined, not supervised (--clock off --rng off): one filter" 1 --clock off --rng off
run "supervised, not confined (--confine off): one filter" 1 --confine off

# What the confinement refuses, under the merged program: bpf() is EPERM
# (the kernel's own answer to command 9999 would be EINVAL).
cat >"$T/bpf.py" <<'PY'
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
r = libc.syscall(321, 9999, 0, 0)
print(r, os.strerror(ctypes.get_errno()))
PY
"$HERMETIC" enroll -- python3 "$T/bpf.py" >"$T/bpf.out" 2>"$T/bpf.err"
rc=$?
if [ $rc = 0 ] && grep -qx -- "-1 Operation not permitted" "$T/bpf.out"; then
	pass "the merged program refuses bpf() (EPERM)"
else
	fail "the merged program refuses bpf() (EPERM)" "rc=$rc $(cat "$T/bpf.out") $(tr '\n' '|' <"$T/bpf.err")"
fi
# What the supervisor stops, under the merged program: a process without
# the shim gets the run's entropy, the same under the same seed.
cat >"$T/rand.c" <<'C'
#include <stdio.h>
#include <sys/random.h>
int main(void) { unsigned long long v; if (getrandom(&v, 8, 0) != 8) return 1; printf("%llx\n", v); return 0; }
C
if cc -static -O1 -o "$T/rand" "$T/rand.c" 2>"$T/cc.err"; then
	a=$("$HERMETIC" enroll --seed 5 -- "$T/rand" 2>/dev/null)
	b=$("$HERMETIC" enroll --seed 5 -- "$T/rand" 2>/dev/null)
	c=$("$HERMETIC" enroll --seed 6 -- "$T/rand" 2>/dev/null)
	if [ -n "$a" ] && [ "$a" = "$b" ] && [ "$a" != "$c" ]; then
		pass "the merged program stops a static binary's getrandom for the supervisor (same seed, same bytes)"
	else
		fail "the merged program stops a static binary's getrandom for the supervisor" "seed 5: '$a' '$b', seed 6: '$c'"
	fi
else
	fail "build a static test binary" "$(tr '\n' '|' <"$T/cc.err")"
fi

# Where the merged program cannot go in, the confinement's goes in alone.
# A filter with a listener above enroll (the kernel allows one listener per
# filter tree: EBUSY) makes the supervisor's install fail, as before: the
# run goes unsupervised, and must still be confined.
cat >"$T/listener.c" <<'C'
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	struct sock_filter allow[] = { BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW) };
	struct sock_fprog p = { 1, allow };
	int st, fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &p);
	pid_t pid;
	if (fd < 0) { perror("seccomp"); return 90; }
	pid = fork(); /* the listener stays open in this process */
	if (pid == 0) { execvp(argv[1], argv + 1); _exit(91); }
	if (pid < 0 || waitpid(pid, &st, 0) != pid) return 92;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 93;
}
C
if cc -O1 -o "$T/listener" "$T/listener.c" 2>"$T/cc2.err"; then
	"$T/listener" "$HERMETIC" enroll -- sh -c 'awk '\''$1 == "Seccomp_filters:" { print $2 }'\'' /proc/self/status; python3 "$1"' sh "$T/bpf.py" >"$T/fb.out" 2>"$T/fb.err"
	rc=$?
	n=$(head -n 1 "$T/fb.out")
	if [ $rc = 0 ] && [ "$n" = $((base + 2)) ] && grep -qx -- "-1 Operation not permitted" "$T/fb.out"; then
		pass "where the merged program cannot go in (a listener above), the confinement's goes in alone: bpf() EPERM"
	else
		fail "where the merged program cannot go in, the confinement's goes in alone" \
			"rc=$rc filters=$n (want $((base + 2))) $(tr '\n' '|' <"$T/fb.out") $(tail -n 3 "$T/fb.err" | tr '\n' '|')"
	fi
else
	fail "build the listener test program" "$(tr '\n' '|' <"$T/cc2.err")"
fi
