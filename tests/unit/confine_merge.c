// SPDX-License-Identifier: MIT
/* engine/confine_merge.c: the confinement's seccomp filter and the
 * supervisor's as one program decide every system call as the two stacked
 * filters did. Both forms run in a classic-BPF interpreter (the seccomp
 * subset) for the x86_64 ABI (x32 too), the i386 ABI and a foreign one,
 * every system call number up to 460 under a spread of arguments and both
 * instruction-pointer halves, for the confinement with and without the
 * network blocked and the supervisor with its least and its most; the
 * stack's answer is the kernel's rule (every filter runs, the most
 * restrictive action wins, the newer filter's value between equals). The
 * kernel itself then takes the merged program and answers as it says.
 * And seccomp_fast (engine/seccomp_fast.c): each program with its dispatch
 * in front decides every call of the same sweep as the program alone, the
 * kernel takes it, and the numbers it allows walk less of it. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include "util.h"
#include "confine.h"
#include "supervise.h"
#include "hermetic/trace.h"
#include "test.h"

#define BAD 0xdeadbeefu /* the interpreter met what seccomp would refuse */

/* Classic BPF as seccomp runs it: A, X, 16 words of scratch memory, loads
 * of 32-bit words of struct seccomp_data, forward jumps only. */
static long steps; /* instructions run, all calls of run() together */

static uint32_t run(const struct sock_fprog *p, const struct seccomp_data *d)
{
	uint32_t A = 0, X = 0, M[16] = { 0 }, w;

	for (unsigned pc = 0; pc < p->len; pc++) {
		const struct sock_filter *f = &p->filter[pc];
		uint32_t k = f->k, src = BPF_SRC(f->code) == BPF_X ? X : k;

		steps++;

		switch (BPF_CLASS(f->code)) {
		case BPF_LD:
			if (f->code == (BPF_LD | BPF_W | BPF_ABS)) {
				if (k % 4 || k + 4 > sizeof(*d))
					return BAD;
				memcpy(&w, (const char *)d + k, 4);
				A = w;
			} else if (f->code == (BPF_LD | BPF_IMM)) {
				A = k;
			} else if (f->code == (BPF_LD | BPF_MEM) && k < 16) {
				A = M[k];
			} else {
				return BAD;
			}
			break;
		case BPF_LDX:
			if (f->code == (BPF_LDX | BPF_IMM))
				X = k;
			else if (f->code == (BPF_LDX | BPF_MEM) && k < 16)
				X = M[k];
			else
				return BAD;
			break;
		case BPF_ST:
		case BPF_STX:
			if (k >= 16)
				return BAD;
			M[k] = BPF_CLASS(f->code) == BPF_ST ? A : X;
			break;
		case BPF_ALU:
			switch (BPF_OP(f->code)) {
			case BPF_ADD: A += src; break;
			case BPF_SUB: A -= src; break;
			case BPF_MUL: A *= src; break;
			case BPF_AND: A &= src; break;
			case BPF_OR: A |= src; break;
			case BPF_XOR: A ^= src; break;
			case BPF_LSH: A = src < 32 ? A << src : 0; break;
			case BPF_RSH: A = src < 32 ? A >> src : 0; break;
			case BPF_NEG: A = -A; break;
			default: return BAD;
			}
			break;
		case BPF_JMP:
			if (BPF_OP(f->code) == BPF_JA) {
				if (k >= p->len - pc - 1)
					return BAD;
				pc += k;
				break;
			}
			{
				bool t;

				switch (BPF_OP(f->code)) {
				case BPF_JEQ: t = A == src; break;
				case BPF_JGT: t = A > src; break;
				case BPF_JGE: t = A >= src; break;
				case BPF_JSET: t = (A & src) != 0; break;
				default: return BAD;
				}
				if ((unsigned)(t ? f->jt : f->jf) >= p->len - pc - 1)
					return BAD;
				pc += t ? f->jt : f->jf;
			}
			break;
		case BPF_RET:
			return BPF_RVAL(f->code) == BPF_K ? k : BPF_RVAL(f->code) == BPF_A ? A : BAD;
		case BPF_MISC:
			if (BPF_MISCOP(f->code) == BPF_TAX)
				X = A;
			else
				A = X;
			break;
		default:
			return BAD;
		}
	}
	return BAD; /* fell off the end */
}

/* The kernel's rule for a stack (kernel/seccomp.c seccomp_run_filters):
 * from the newest filter to the oldest, a result replaces the one so far
 * only when its action is strictly more restrictive (a smaller signed
 * ACTION_ONLY: KILL_PROCESS, being negative, the most). */
static uint32_t stacked(const struct sock_fprog *older, const struct sock_fprog *newer,
			const struct seccomp_data *d)
{
	const struct sock_fprog *order[2] = { newer, older };
	uint32_t ret = SECCOMP_RET_ALLOW;

	for (int i = 0; i < 2; i++) {
		uint32_t cur = run(order[i], d);

		if (cur == BAD)
			return BAD;
		if ((int32_t)(cur & SECCOMP_RET_ACTION_FULL) < (int32_t)(ret & SECCOMP_RET_ACTION_FULL))
			ret = cur;
	}
	return ret;
}

static struct confine conf;
static struct supervise sv;
static struct sock_filter out[CONFINE_MAX_MERGED_INSNS];

struct tally {
	long cases, differ, bad;
	long errno_, notif, allow; /* by the merged program's action */
	char first[256];
};

/* Values that steer the two programs' branches: families, socket types,
 * protocols, socketcall's calls, ioctl commands, futex operations, the
 * shim's getrandom flags, timeouts of 0, -1 and some. */
static const uint32_t vals[] = { 0, 1, 2, 3, 4, 8, 9, 10, 16, 17, 40, 100, 128, 137, 256, 0x5401,
				 0x5412, 0x541c, 0x4024700a, 0x4008700e, 0x4004700e, 0xffffffffu,
				 HM_SHIM_HELLO_FLAGS, 0x80000000u };

/* What the sweep compares merged with: the two stacked, or (want_prog
 * set) one program alone. */
static const struct sock_fprog *want_prog;

static void one(const struct sock_fprog *merged, struct seccomp_data *d, struct tally *t)
{
	uint32_t want = want_prog ? run(want_prog, d) : stacked(&conf.prog, &sv.prog, d),
		 got = run(merged, d);

	t->cases++;
	if (want == BAD || got == BAD)
		t->bad++;
	if (want != got && !t->differ++)
		snprintf(t->first, sizeof(t->first), "arch %#x nr %d args %#llx %#llx %#llx %#llx: stacked %#x, merged %#x",
			 d->arch, d->nr, (unsigned long long)d->args[0], (unsigned long long)d->args[1],
			 (unsigned long long)d->args[2], (unsigned long long)d->args[3], want, got);
	switch (got & SECCOMP_RET_ACTION_FULL) {
	case SECCOMP_RET_ERRNO: t->errno_++; break;
	case SECCOMP_RET_USER_NOTIF: t->notif++; break;
	case SECCOMP_RET_ALLOW: t->allow++; break;
	}
}

/* Every number below 460 (and its x32 twin on x86_64) under 240 argument
 * vectors drawn from vals (high halves 0, 1 or all ones), at a low and a
 * high instruction pointer. */
static void sweep(const struct sock_fprog *merged, uint32_t arch, struct tally *t)
{
	static const uint32_t highs[] = { 0, 0, 0, 1, 0xffffffffu };
	uint64_t x = 0x9e3779b97f4a7c15ull;
	struct seccomp_data d;

	memset(t, 0, sizeof(*t));
	for (int v = 0; v < 240; v++) {
		memset(&d, 0, sizeof(d));
		d.arch = arch;
		for (int a = 0; a < 6; a++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			d.args[a] = (v ? vals[(x >> 33) % ARRAY_SIZE(vals)] : 0) |
				    (uint64_t)highs[(x >> 17) % ARRAY_SIZE(highs)] << 32 * (v > 16);
		}
		for (int nr = 0; nr < 460; nr++) {
			for (int ip = 0; ip < 2; ip++) {
				d.instruction_pointer = ip ? 0x7f1234561000ull : 0x401000ull;
				d.nr = nr;
				one(merged, &d, t);
				if (arch == AUDIT_ARCH_X86_64) {
					d.nr = nr | 0x40000000;
					one(merged, &d, t);
				}
			}
		}
	}
}

/* The action the merged program gives one call. */
static uint32_t call(const struct sock_fprog *merged, uint32_t arch, int nr, uint64_t a0, uint64_t a1,
		     uint64_t a2, uint64_t a3, uint64_t ip)
{
	struct seccomp_data d = { .nr = nr, .arch = arch, .instruction_pointer = ip,
				  .args = { a0, a1, a2, a3 } };
	uint32_t got = run(merged, &d);

	return got == stacked(&conf.prog, &sv.prog, &d) ? got : BAD;
}

#define EPERM_ (SECCOMP_RET_ERRNO | EPERM)
#define ENOSYS_ (SECCOMP_RET_ERRNO | ENOSYS)
#define NOTIF SECCOMP_RET_USER_NOTIF
#define ALLOW SECCOMP_RET_ALLOW
#define X64 AUDIT_ARCH_X86_64
#define I386 AUDIT_ARCH_I386
#define LOW 0x401000ull
#define HIGH 0x7f1234561000ull

static void named_cases(const struct sock_fprog *m, const char *tag, bool net, bool waits)
{
	char name[160];

#define NAMED(what, cond)                                               \
	do {                                                            \
		snprintf(name, sizeof(name), "%s: %s", tag, what);      \
		CHECK(name, cond);                                      \
	} while (0)
	NAMED("x86_64 clock_settime refused (EPERM)", call(m, X64, 227, 0, 0, 0, 0, LOW) == EPERM_);
	NAMED("x86_64 bpf refused (EPERM)", call(m, X64, 321, 0, 0, 0, 0, HIGH) == EPERM_);
	NAMED("x86_64 clone3 refused (ENOSYS)", call(m, X64, 435, 0, 0, 0, 0, HIGH) == ENOSYS_);
	NAMED("x86_64 execve stopped for the supervisor", call(m, X64, 59, 0, 0, 0, 0, HIGH) == NOTIF);
	NAMED("x86_64 getrandom stopped, the shim's hello let through",
	      call(m, X64, 318, 0, 0, 0, 0, HIGH) == NOTIF &&
		      call(m, X64, 318, 0, 0, HM_SHIM_HELLO_FLAGS, 0, HIGH) == ALLOW);
	NAMED("x86_64 read allowed", call(m, X64, 0, 0, 0, 0, 0, LOW) == ALLOW);
	NAMED("x86_64 TIOCSTI refused, another ioctl allowed",
	      call(m, X64, 16, 0, 0x5412, 0, 0, HIGH) == EPERM_ && call(m, X64, 16, 0, 0x5401, 0, 0, HIGH) == ALLOW);
	NAMED("x32 clock_settime refused, x32 execve not stopped",
	      call(m, X64, 227 | 0x40000000, 0, 0, 0, 0, LOW) == EPERM_ &&
		      call(m, X64, 59 | 0x40000000, 0, 0, 0, 0, LOW) == ALLOW);
	NAMED("i386 clock_settime and stime refused (EPERM)",
	      call(m, I386, 264, 0, 0, 0, 0, LOW) == EPERM_ && call(m, I386, 25, 0, 0, 0, 0, LOW) == EPERM_);
	NAMED("i386 execve allowed (the supervisor stops x86_64 only)", call(m, I386, 11, 0, 0, 0, 0, LOW) == ALLOW);
	NAMED("another ABI refused (ENOSYS)", call(m, AUDIT_ARCH_AARCH64, 59, 0, 0, 0, 0, LOW) == ENOSYS_);
	NAMED(net ? "x86_64 AF_INET6 socket of IPPROTO_SMC refused, AF_UNIX allowed"
		  : "x86_64 sockets allowed (network not blocked)",
	      net ? call(m, X64, 41, 10, 1, 256, 0, HIGH) == (SECCOMP_RET_ERRNO | EPROTONOSUPPORT) &&
			    call(m, X64, 41, 1, 1, 0, 0, HIGH) == ALLOW
		  : call(m, X64, 41, 17, 3, 0, 0, HIGH) == ALLOW);
	NAMED(net ? "i386 socketcall(SYS_SOCKET) refused (EAFNOSUPPORT)" : "i386 socketcall allowed",
	      call(m, I386, 102, 1, 0, 0, 0, LOW) == (net ? (SECCOMP_RET_ERRNO | EAFNOSUPPORT) : ALLOW));
	NAMED(waits ? "x86_64 nanosleep from low code stopped, from high code allowed"
		    : "x86_64 nanosleep allowed (no virtual waits)",
	      waits ? call(m, X64, 35, 0, 0, 0, 0, LOW) == NOTIF && call(m, X64, 35, 0, 0, 0, 0, HIGH) == ALLOW
		    : call(m, X64, 35, 0, 0, 0, 0, LOW) == ALLOW);
}

/* The kernel takes the merged program (no listener: a USER_NOTIF answer is
 * ENOSYS) and answers as the interpreter said: in a child. */
static int kernel_child(const struct sock_fprog *m)
{
	struct timespec ts = { 0 };
	pid_t pid;
	int st;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
		    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, m) < 0)
			_exit(10);
		if (syscall(SYS_clock_settime, CLOCK_REALTIME, &ts) != -1 || errno != EPERM)
			_exit(11);
		if (syscall(SYS_execve, "/nonexistent", NULL, NULL) != -1 || errno != ENOSYS)
			_exit(12);
		if (syscall(SYS_getpid) <= 0)
			_exit(13);
		_exit(0);
	}
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 100 + WTERMSIG(st);
}

/* The instructions p runs for the calls it allows, one call of each
 * number below 460 of arch (arguments 0), added up: about what the
 * kernel's install walks (seccomp_cache_prepare runs the program for
 * every number, up to the first load of an argument). */
static long allow_walk(const struct sock_fprog *p, uint32_t arch)
{
	struct seccomp_data d = { .arch = arch, .instruction_pointer = HIGH };
	long sum = 0;

	for (int nr = 0; nr < 460; nr++) {
		long before = steps;

		d.nr = nr;
		if (run(p, &d) == SECCOMP_RET_ALLOW)
			sum += steps - before;
	}
	return sum;
}

/* seccomp_fast: p with its dispatch decides every call as p, and walks
 * few instructions for the numbers it allows. */
static void fast_cases(const struct sock_fprog *p, const char *tag, bool kernel)
{
	static struct sock_filter buf[CONFINE_MAX_MERGED_INSNS + FAST_MAX_INSNS];
	struct sock_fprog f = { .len = p->len, .filter = buf };
	long slow64 = allow_walk(p, AUDIT_ARCH_X86_64), slow32 = allow_walk(p, AUDIT_ARCH_I386);
	long fast64, fast32;
	struct tally t;
	char name[200];
	int r;

	memcpy(buf, p->filter, p->len * sizeof(buf[0]));
	r = seccomp_fast(&f, ARRAY_SIZE(buf));
	snprintf(name, sizeof(name), "%s: seccomp_fast puts its dispatch in front (%d)", tag, r);
	CHECK(name, r == 0 && f.len > p->len && !memcmp(buf + f.len - p->len, p->filter, p->len * sizeof(buf[0])));
	if (r < 0)
		return;
	want_prog = p;
	for (int a = 0; a < 3; a++) {
		static const uint32_t arches[] = { AUDIT_ARCH_X86_64, AUDIT_ARCH_I386, AUDIT_ARCH_AARCH64 };

		sweep(&f, arches[a], &t);
		snprintf(name, sizeof(name), "%s: with the dispatch, every call of %s as without (%ld cases)", tag,
			 a == 0 ? "x86_64 and x32" : a == 1 ? "i386" : "another ABI", t.cases);
		CHECK(name, !t.differ && !t.bad);
		if (t.differ)
			printf("# first difference: %s\n", t.first);
	}
	want_prog = NULL;
	fast64 = allow_walk(&f, AUDIT_ARCH_X86_64);
	fast32 = allow_walk(&f, AUDIT_ARCH_I386);
	snprintf(name, sizeof(name),
		 "%s: the allowed numbers walk at most 3/4 of what they did (x86_64 %ld -> %ld, i386 %ld -> %ld)",
		 tag, slow64, fast64, slow32, fast32);
	CHECK(name, (fast64 + fast32) * 4 <= (slow64 + slow32) * 3);
	if (kernel) {
		r = kernel_child(&f);
		snprintf(name, sizeof(name), "%s: the kernel takes it with the dispatch and answers so (child %d)",
			 tag, r);
		CHECK(name, r == 0);
	}
}

int main(void)
{
	struct sock_fprog m, kill_prog;
	struct sock_filter kill_ins[] = { BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS) };
	struct tally t;
	char name[200];
	int r;

	for (int net = 0; net < 2; net++) {
		for (int most = 0; most < 2; most++) {
			cpu_set_t cpus;
			const char *tag = net ? (most ? "net blocked, supervisor's most" : "net blocked, supervisor's least")
					      : (most ? "net open, supervisor's most" : "net open, supervisor's least");

			memset(&conf, 0, sizeof(conf));
			conf.block_net = net;
			confine_build_filter(&conf);
			/* The supervisor's program as supervise_prepare leaves it,
			 * and as --identity, --dir-order and --sched chaos change it. */
			memset(&sv, 0, sizeof(sv));
			sv.want = true;
			sv.waits = most;
			CPU_ZERO(&cpus);
			if (most) {
				CPU_SET(0, &cpus);
				supervise_set_identity(&sv, "6.1.0-hermetic", "host", "(none)", 4194304, 2);
				supervise_set_sched_cpus(&sv, &cpus);
				supervise_set_dir_order(&sv, 1, 77);
			} else {
				supervise_set_dir_order(&sv, 0, 0);
			}
			r = confine_merge(&conf.prog, &sv.prog, out, ARRAY_SIZE(out), &m);
			snprintf(name, sizeof(name), "%s: merged, one program as long as the two", tag);
			CHECK(name, r == 0 && conf.prog.len && sv.prog.len && m.len == conf.prog.len + sv.prog.len);
			if (r < 0)
				continue;
			sweep(&m, AUDIT_ARCH_X86_64, &t);
			printf("# %s, x86_64: %ld cases, %ld ERRNO, %ld USER_NOTIF, %ld ALLOW\n", tag, t.cases,
			       t.errno_, t.notif, t.allow);
			snprintf(name, sizeof(name), "%s: x86_64 and x32, every call as the two stacked", tag);
			CHECK(name, !t.differ && !t.bad && t.errno_ && t.notif && t.allow);
			if (t.differ)
				printf("# first difference: %s\n", t.first);
			sweep(&m, AUDIT_ARCH_I386, &t);
			snprintf(name, sizeof(name), "%s: i386, every call as the two stacked", tag);
			CHECK(name, !t.differ && !t.bad && t.errno_ && t.allow && !t.notif);
			if (t.differ)
				printf("# first difference: %s\n", t.first);
			sweep(&m, AUDIT_ARCH_AARCH64, &t);
			snprintf(name, sizeof(name), "%s: another ABI, every call as the two stacked", tag);
			CHECK(name, !t.differ && !t.bad && t.errno_ == t.cases);
			named_cases(&m, tag, net, most);
			if (net && most) {
				r = kernel_child(&m);
				snprintf(name, sizeof(name), "%s: the kernel takes it and answers so (child %d)", tag, r);
				CHECK(name, r == 0);
			}
			snprintf(name, sizeof(name), "%s, merged", tag);
			fast_cases(&m, name, net && most);
			snprintf(name, sizeof(name), "%s, the confinement's alone", tag);
			fast_cases(&conf.prog, name, false);
			snprintf(name, sizeof(name), "%s, the supervisor's alone", tag);
			fast_cases(&sv.prog, name, false);
		}
	}
	kill_prog = (struct sock_fprog){ .len = 1, .filter = kill_ins };
	CHECK("a confinement that could kill is not merged (-EINVAL)",
	      confine_merge(&kill_prog, &sv.prog, out, ARRAY_SIZE(out), &m) == -EINVAL);
	CHECK("a supervisor that could refuse is not merged (-EINVAL)",
	      confine_merge(&conf.prog, &conf.prog, out, ARRAY_SIZE(out), &m) == -EINVAL);
	CHECK("a program too long for the buffer is not merged (-E2BIG)",
	      confine_merge(&conf.prog, &sv.prog, out, conf.prog.len, &m) == -E2BIG);
	T_EXIT();
}
