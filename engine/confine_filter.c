// SPDX-License-Identifier: MIT
/*
 * The run's seccomp filter (confine.c says what it refuses and why), built
 * before the fork by a tiny assembler for classic BPF with forward labels.
 */
#include <errno.h>
#include <stddef.h>
#include <sys/socket.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include "util.h"
#include "engine.h"
#include "confine.h"

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif
#ifndef SOCK_PACKET
#define SOCK_PACKET 10
#endif
#define IPPROTO_SMC_ 256
#define X32_BIT 0x40000000u
/* The terminal injection ioctls (asm-generic/ioctls.h, the same numbers on
 * both ABIs): TIOCSTI pushes bytes into a terminal's input queue, and
 * TIOCLINUX's TIOCL_PASTESEL pastes the console's selection into it. */
#define TIOCSTI_ 0x5412u
#define TIOCLINUX_ 0x541cu
#define PERF_FLAG_PID_CGROUP_ 0x4u

/* ---- a tiny assembler for classic BPF, with forward labels ---- */
enum label { L_X86_64, L_I386, L_IOCTL64, L_IOCTL32, L_PERF, L_SOCK, L_INET, L_PROTO,
	     L_SOCKETCALL, L_ALLOW, L_EPERM, L_ENOSYS, L_EAFNOSUPPORT, L_EPROTONOSUPPORT, N_LABELS };

struct bpfb {
	struct sock_filter *ins;
	int n;
	int at[N_LABELS];
	struct {
		int insn;
		enum label l;
	} fix[64];
	int n_fix;
	const char *bad; /* why the program cannot be built (a bug here, never the run's) */
};

static void emit(struct bpfb *b, uint16_t code, uint32_t k)
{
	if (b->n == CONFINE_MAX_INSNS) {
		b->bad = "seccomp filter too long";
		return;
	}
	b->ins[b->n++] = (struct sock_filter)BPF_STMT(code, k);
}

/* if (A == k) goto l; */
static void jeq(struct bpfb *b, uint32_t k, enum label l)
{
	emit(b, BPF_JMP | BPF_JEQ | BPF_K, k);
	if (b->bad || b->n_fix == (int)ARRAY_SIZE(b->fix)) {
		b->bad = "seccomp filter too long";
		return;
	}
	b->fix[b->n_fix].insn = b->n - 1;
	b->fix[b->n_fix++].l = l;
}

static void label(struct bpfb *b, enum label l)
{
	b->at[l] = b->n;
}

static void load(struct bpfb *b, uint32_t off)
{
	emit(b, BPF_LD | BPF_W | BPF_ABS, off);
}

/* The low 32 bits of argument n (x86 is little-endian; int arguments are
 * what the kernel reads of them). */
#define ARG(n) (offsetof(struct seccomp_data, args) + (n) * sizeof(uint64_t))
#define RET_ERRNO(e) (SECCOMP_RET_ERRNO | ((e) & SECCOMP_RET_DATA))

static void link_labels(struct bpfb *b)
{
	for (int i = 0; i < b->n_fix; i++) {
		int to = b->at[b->fix[i].l], from = b->fix[i].insn;

		if (to <= from || to - from - 1 > 255) {
			b->bad = "seccomp filter: bad jump";
			return;
		}
		b->ins[from].jt = to - from - 1;
		b->ins[from].jf = 0;
	}
}

void confine_build_filter(struct confine *c)
{
	/* x86_64 and x32 (by the same numbers), then i386. */
	static const uint32_t clock64[] = { 227 /* clock_settime */, 164 /* settimeofday */,
					    159 /* adjtimex */, 305 /* clock_adjtime */ };
	static const uint32_t clock32[] = { 264, 79, 124, 343, 25 /* stime */,
					    404 /* clock_settime64 */, 405 /* clock_adjtime64 */ };
	static const uint32_t uring[] = { 425, 426, 427 }; /* setup, enter, register: both ABIs */
	/* RTC_SET_TIME = _IOW('p', 0x0a, struct rtc_time), RTC_EPOCH_SET = _IOW('p', 0x0e, long):
	 * the long is 8 bytes on x86_64, 4 on i386. */
	static const uint32_t rtc64[] = { 0x4024700a, 0x4008700e }, rtc32[] = { 0x4024700a, 0x4004700e };
	struct bpfb b = { .ins = c->insns };

	load(&b, offsetof(struct seccomp_data, arch));
	jeq(&b, AUDIT_ARCH_X86_64, L_X86_64);
	jeq(&b, AUDIT_ARCH_I386, L_I386);
	emit(&b, BPF_RET | BPF_K, RET_ERRNO(ENOSYS)); /* no other ABI exists here */

	label(&b, L_X86_64);
	load(&b, offsetof(struct seccomp_data, nr));
	emit(&b, BPF_ALU | BPF_AND | BPF_K, ~X32_BIT);
	for (size_t i = 0; i < ARRAY_SIZE(clock64); i++)
		jeq(&b, clock64[i], L_EPERM);
	jeq(&b, 16 /* ioctl */, L_IOCTL64);
	jeq(&b, 321 /* bpf */, L_EPERM);
	jeq(&b, 435 /* clone3 */, L_ENOSYS);
	jeq(&b, 298 /* perf_event_open */, L_PERF);
	if (c->block_net) {
		jeq(&b, 41 /* socket */, L_SOCK);
		jeq(&b, 53 /* socketpair */, L_SOCK);
		for (size_t i = 0; i < ARRAY_SIZE(uring); i++)
			jeq(&b, uring[i], L_ENOSYS);
	}
	emit(&b, BPF_RET | BPF_K, SECCOMP_RET_ALLOW);

	label(&b, L_I386);
	load(&b, offsetof(struct seccomp_data, nr));
	for (size_t i = 0; i < ARRAY_SIZE(clock32); i++)
		jeq(&b, clock32[i], L_EPERM);
	jeq(&b, 54 /* ioctl */, L_IOCTL32);
	jeq(&b, 357 /* bpf */, L_EPERM);
	jeq(&b, 435 /* clone3 */, L_ENOSYS);
	jeq(&b, 336 /* perf_event_open */, L_PERF);
	if (c->block_net) {
		jeq(&b, 102 /* socketcall */, L_SOCKETCALL);
		jeq(&b, 359 /* socket */, L_SOCK);
		jeq(&b, 360 /* socketpair */, L_SOCK);
		for (size_t i = 0; i < ARRAY_SIZE(uring); i++)
			jeq(&b, uring[i], L_ENOSYS);
	}
	emit(&b, BPF_RET | BPF_K, SECCOMP_RET_ALLOW);

	/* The kernel reads the ioctl command as an unsigned int: the low 32
	 * bits, on both ABIs. */
	label(&b, L_IOCTL64);
	load(&b, ARG(1));
	for (size_t i = 0; i < ARRAY_SIZE(rtc64); i++)
		jeq(&b, rtc64[i], L_EPERM);
	jeq(&b, TIOCSTI_, L_EPERM);
	jeq(&b, TIOCLINUX_, L_EPERM);
	emit(&b, BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	label(&b, L_IOCTL32);
	load(&b, ARG(1));
	for (size_t i = 0; i < ARRAY_SIZE(rtc32); i++)
		jeq(&b, rtc32[i], L_EPERM);
	jeq(&b, TIOCSTI_, L_EPERM);
	jeq(&b, TIOCLINUX_, L_EPERM);
	emit(&b, BPF_RET | BPF_K, SECCOMP_RET_ALLOW);

	/* perf_event_open(attr, pid, cpu, group_fd, flags): pid -1 (an int:
	 * the low 32 bits) is every process on a CPU, and PERF_FLAG_PID_CGROUP
	 * makes pid a cgroup's descriptor: both watch processes outside the
	 * run. A pid of the run's own is the kernel's to check (ptrace access,
	 * which Landlock scopes to the run). */
	label(&b, L_PERF);
	load(&b, ARG(1));
	jeq(&b, 0xffffffffu, L_EPERM);
	load(&b, ARG(4));
	emit(&b, BPF_ALU | BPF_AND | BPF_K, PERF_FLAG_PID_CGROUP_);
	jeq(&b, PERF_FLAG_PID_CGROUP_, L_EPERM);
	emit(&b, BPF_RET | BPF_K, SECCOMP_RET_ALLOW);

	label(&b, L_SOCKETCALL);
	if (c->block_net) {
		load(&b, ARG(0));
		jeq(&b, 1 /* SYS_SOCKET */, L_EAFNOSUPPORT);
		jeq(&b, 8 /* SYS_SOCKETPAIR */, L_EAFNOSUPPORT);
		emit(&b, BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	}

	label(&b, L_SOCK);
	if (c->block_net) {
		load(&b, ARG(0));
		jeq(&b, AF_UNIX, L_ALLOW);
		jeq(&b, AF_NETLINK, L_ALLOW);
		jeq(&b, AF_INET, L_INET);
		jeq(&b, AF_INET6, L_PROTO);
		emit(&b, BPF_RET | BPF_K, RET_ERRNO(EAFNOSUPPORT));
		label(&b, L_INET);
		load(&b, ARG(1));
		emit(&b, BPF_ALU | BPF_AND | BPF_K, 0xf); /* SOCK_TYPE_MASK */
		jeq(&b, SOCK_PACKET, L_EAFNOSUPPORT);
		label(&b, L_PROTO);
		load(&b, ARG(2));
		jeq(&b, IPPROTO_SMC_, L_EPROTONOSUPPORT);
	}
	label(&b, L_ALLOW);
	emit(&b, BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	label(&b, L_EPERM);
	emit(&b, BPF_RET | BPF_K, RET_ERRNO(EPERM));
	label(&b, L_ENOSYS);
	emit(&b, BPF_RET | BPF_K, RET_ERRNO(ENOSYS));
	label(&b, L_EAFNOSUPPORT);
	emit(&b, BPF_RET | BPF_K, RET_ERRNO(EAFNOSUPPORT));
	label(&b, L_EPROTONOSUPPORT);
	emit(&b, BPF_RET | BPF_K, RET_ERRNO(EPROTONOSUPPORT));
	if (!b.bad)
		link_labels(&b);
	if (b.bad) {
		snprintf(c->refuse, sizeof(c->refuse), "%s", b.bad);
		return;
	}
	c->prog = (struct sock_fprog){ .len = b.n, .filter = c->insns };
}

