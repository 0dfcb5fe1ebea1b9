// SPDX-License-Identifier: MIT
/*
 * The supervisor's listener (supervise.h, docs/static.md).
 *
 * The filter enroll's child installs (inherited by every process of the
 * run, static ones too) returns SECCOMP_RET_USER_NOTIF for execve,
 * execveat and getrandom on x86_64, and allows everything else (the shim's
 * announcement, a getrandom with HM_SHIM_HELLO_FLAGS, too: it is how the
 * exec stop announces a supervised image, and it must not wait for us).
 *
 * An exec: its path is read from the caller's memory and the file's ELF
 * headers decide. An image with an interpreter loads the shim (it is in
 * LD_PRELOAD) and goes on untouched, unless it is a Go program (its
 * runtime reads the vDSO and makes raw getrandom calls itself); a static
 * image, and a Go one, is seized (PTRACE_SEIZE with PTRACE_O_TRACEEXEC)
 * before the exec goes on, so that it stops at the exec's end, before its
 * first instruction (supervise_exec.c). Forks are never stopped.
 *
 * uname, sysinfo and sched_getaffinity, where --identity pins the kernel
 * release, the memory size or a CPU count above the machine's (which only
 * the shim says otherwise), from low code only,
 * like timed waits: supervise_identity.c answers a supervised process.
 *
 * A getrandom: answered from the caller's seeded stream if its process is
 * one we set up at its exec, else it goes on to the kernel
 * (SECCOMP_USER_NOTIF_FLAG_CONTINUE: the shim's processes lose nothing but
 * the round trip, on the rare raw call they make).
 *
 * Security: the listener is enroll's, outside the run; a process of the
 * run cannot reach it, and the filter cannot be removed. We ptrace only
 * processes of the run, with enroll's own credentials (the kernel checks
 * them: same user and dumpable, or root's CAP_SYS_PTRACE, which the run's
 * processes themselves no longer have). Everything read from a process of
 * the run (paths, memory, its environment) is untrusted: bounded, and a
 * bad value only changes what that process gets.
 */
#include <elf.h>
#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <sys/auxv.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <linux/audit.h>
#include <linux/futex.h>
#include <linux/seccomp.h>
#include "util.h"
#include "engine.h"
#include "procfs.h"
#include "fdpass.h"
#include "supervise.h"
#include "hermetic/trace.h"
#include "hermetic/vdso.h"
#include "hermetic/vclock.h"

#define NR_EXECVE 59
#define NR_EXECVEAT 322
#define NR_GETRANDOM 318
#define NR_NANOSLEEP 35
#define NR_CLOCK_NANOSLEEP 230
#define NR_EPOLL_WAIT 232
#define NR_EPOLL_PWAIT 281
#define NR_FUTEX 202
#define NR_POLL 7
#define NR_SELECT 23
#define NR_PSELECT6 270
#define NR_PPOLL 271
#define NR_UNAME 63
#define NR_SYSINFO 99
#define NR_SCHED_GETAFFINITY 204
#define NR_GETDENTS64 217
#define X32_BIT 0x40000000u
#define GRND_ALL 0x7u /* NONBLOCK | RANDOM | INSECURE */
#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS /* Linux 6.6; Debian 12's headers are older */
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP 1UL
#endif

/* ---- the filter ---- */

/* Timed waits go to the supervisor only from code below 4 GiB: the text
 * of a non-PIE static or Go binary, where the raw calls of the processes
 * it supervises are made. The shim's processes wait through libc, mapped
 * high, and never pay a round trip for it. */
#define IP_HI (offsetof(struct seccomp_data, instruction_pointer) + 4)
#define NEVER 0xffffffffu

/* Jump offsets from instruction at to label l (BPF jumps go forward). */
#define TO(l, at) ((l) - (at)-1)
enum {
	L_GR = 19, L_EP = 21, L_PL = 24, L_PP = 27, L_SL = 31, L_FX = 37, L_FXT = 41,
	L_LOW = 45, L_ALLOW = 47, L_NOTIF = 48
};

static void build_filter(struct supervise *s)
{
	uint32_t w = s->waits ? 0 : NEVER;
	/* uname, sysinfo and sched_getaffinity only where --identity pins
	 * what they say and the kernel cannot (supervise_identity.c), and
	 * getdents64 under --dir-order (supervise_dirorder.c) */
	uint32_t u = s->id.release[0] ? 0 : NEVER, m = s->id.memkb ? 0 : NEVER;
	uint32_t a = s->id.cpus || CPU_COUNT(&s->id.sched_cpus) ? 0 : NEVER;
	uint32_t g = s->id.dir_order ? 0 : NEVER;
	struct sock_filter f[] = {
		/* 0 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		/* 1 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, TO(L_ALLOW, 1)),
		/* 2 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		/* 3 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NR_EXECVE, TO(L_NOTIF, 3), 0),
		/* 4 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NR_EXECVEAT, TO(L_NOTIF, 4), 0),
		/* 5 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NR_GETRANDOM, TO(L_GR, 5), 0),
		/* 6 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, u | NR_UNAME, TO(L_LOW, 6), 0),
		/* 7 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, m | NR_SYSINFO, TO(L_LOW, 7), 0),
		/* 8 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, a | NR_SCHED_GETAFFINITY, TO(L_LOW, 8), 0),
		/* 9 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, g | NR_GETDENTS64, TO(L_LOW, 9), 0),
		/* 10 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, w | NR_NANOSLEEP, TO(L_LOW, 10), 0),
		/* 11 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, w | NR_CLOCK_NANOSLEEP, TO(L_LOW, 11), 0),
		/* 12 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, w | NR_EPOLL_WAIT, TO(L_EP, 12), 0),
		/* 13 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, w | NR_EPOLL_PWAIT, TO(L_EP, 13), 0),
		/* 14 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, w | NR_POLL, TO(L_PL, 14), 0),
		/* 15 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, w | NR_PPOLL, TO(L_PP, 15), 0),
		/* 16 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, w | NR_SELECT, TO(L_SL, 16), 0),
		/* 17 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, w | NR_PSELECT6, TO(L_SL, 17), 0),
		/* 18 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, w | NR_FUTEX, TO(L_FX, 18), TO(L_ALLOW, 18)),
		/* 19 L_GR: getrandom; the announcement goes straight to the kernel */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
		/* 20 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, HM_SHIM_HELLO_FLAGS, TO(L_ALLOW, 20), TO(L_NOTIF, 20)),
		/* 21 L_EP: epoll: a timeout of 0 polls, a negative one has no deadline */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[3])),
		/* 22 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, TO(L_ALLOW, 22), 0),
		/* 23 */ BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, 0x80000000u, TO(L_ALLOW, 23), TO(L_LOW, 23)),
		/* 24 L_PL: poll with a timeout above 0 (of descriptors, or none: a
		 * sleep) */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
		/* 25 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, TO(L_ALLOW, 25), 0),
		/* 26 */ BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, 0x80000000u, TO(L_ALLOW, 26), TO(L_LOW, 26)),
		/* 27 L_PP: ppoll with a timeout (the supervisor lets one with a
		 * signal mask go to the kernel) */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
		/* 28 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, TO(L_LOW, 28)),
		/* 29 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2]) + 4),
		/* 30 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, TO(L_ALLOW, 30), TO(L_LOW, 30)),
		/* 31 L_SL: select or pselect6 of no descriptors, with a timeout */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
		/* 32 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, TO(L_ALLOW, 32)),
		/* 33 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[4])),
		/* 34 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, TO(L_LOW, 34)),
		/* 35 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[4]) + 4),
		/* 36 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, TO(L_ALLOW, 36), TO(L_LOW, 36)),
		/* 37 L_FX: futex: FUTEX_WAIT or FUTEX_WAIT_BITSET (whatever the
		 * PRIVATE and CLOCK_REALTIME bits), with a timeout; a wait
		 * without one (a plain mutex) never comes here */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1])),
		/* 38 */ BPF_STMT(BPF_ALU | BPF_AND | BPF_K, ~(uint32_t)(FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME)),
		/* 39 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, FUTEX_WAIT, TO(L_FXT, 39), 0),
		/* 40 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, FUTEX_WAIT_BITSET, 0, TO(L_ALLOW, 40)),
		/* 41 L_FXT */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[3])),
		/* 42 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, TO(L_LOW, 42)),
		/* 43 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[3]) + 4),
		/* 44 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, TO(L_ALLOW, 44), TO(L_LOW, 44)),
		/* 45 L_LOW: a timed wait, uname, sysinfo, sched_getaffinity,
		 * getdents64: from low code only */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, IP_HI),
		/* 46 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, TO(L_NOTIF, 46), TO(L_ALLOW, 46)),
		/* 47 L_ALLOW */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		/* 48 L_NOTIF */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
	};

	_Static_assert(ARRAY_SIZE(f) <= SV_MAX_INSNS, "filter too long");
	_Static_assert(ARRAY_SIZE(f) == L_NOTIF + 1, "labels");
	memcpy(s->insns, f, sizeof(f));
	s->prog = (struct sock_fprog){ .len = ARRAY_SIZE(f), .filter = s->insns };
}

/* ---- the kernel's vDSO, read in our own process (one kernel: its
 * functions lie at the same offsets in every process) ---- */

static void real_vdso(struct supervise *s)
{
	static const char *names[4] = { "__vdso_clock_gettime", "__vdso_gettimeofday",
					"__vdso_time", "__vdso_getcpu" };
	const uint8_t *base = (const uint8_t *)getauxval(AT_SYSINFO_EHDR);
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)base;
	const Elf64_Phdr *ph;
	const Elf64_Dyn *dyn = NULL;
	const Elf64_Sym *sym = NULL;
	const char *str = NULL;
	const uint32_t *hash = NULL;
	uint64_t load = 0;
	bool have_load = false;

	if (!base || memcmp(eh->e_ident, ELFMAG, SELFMAG))
		return;
	ph = (const Elf64_Phdr *)(base + eh->e_phoff);
	for (int i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type == PT_LOAD && !have_load) {
			load = ph[i].p_offset - ph[i].p_vaddr;
			have_load = true;
		} else if (ph[i].p_type == PT_DYNAMIC) {
			dyn = (const Elf64_Dyn *)(base + ph[i].p_offset);
		}
	}
	if (!dyn || !have_load)
		return;
	for (; dyn->d_tag != DT_NULL; dyn++) {
		const uint8_t *p = base + load + dyn->d_un.d_ptr;

		if (dyn->d_tag == DT_SYMTAB)
			sym = (const Elf64_Sym *)p;
		else if (dyn->d_tag == DT_STRTAB)
			str = (const char *)p;
		else if (dyn->d_tag == DT_HASH)
			hash = (const uint32_t *)p;
	}
	if (!sym || !str || !hash)
		return;
	for (uint32_t i = 0; i < hash[1]; i++)
		for (int k = 0; k < 4; k++)
			if (sym[i].st_shndx != SHN_UNDEF && !strcmp(str + sym[i].st_name, names[k]))
				s->real_off[k] = load + sym[i].st_value;
}

static int load_image(struct supervise *s, const char *path)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	ssize_t n;

	if (fd < 0 || fstat(fd, &st) < 0)
		return -errno;
	if (st.st_size < (off_t)sizeof(Elf64_Ehdr) || st.st_size > HM_VDSO_IMAGE_MAX)
		return -EFBIG;
	s->image = malloc(st.st_size);
	if (!s->image)
		return -ENOMEM;
	n = read(fd, s->image, st.st_size);
	if (n != st.st_size)
		return n < 0 ? -errno : -EIO;
	s->image_len = n;
	return 0;
}

int supervise_prepare(struct supervise *s, bool want, uint64_t seed, bool clock, bool rng,
		      int page_fd, const char *vdso_path, struct hm_vclock *vc,
		      bool waits, uint64_t tick_ns, struct eng_error *err)
{
	struct seccomp_notif_sizes sz;
	int r;

	if (s->prepared)
		memset(s, 0, sizeof(*s));
	s->prepared = true;
	s->sock[0] = s->sock[1] = s->listener = s->page_fd = -1;
	s->seed = seed;
	/* The page reaches processes only as a descriptor (lib/clockfd.h):
	 * CMD inherits page_fd at its number, and a supervised process maps
	 * the one it inherited (supervise_exec.c). */
	s->clock = clock && page_fd >= 0;
	s->rng = rng;
	s->cmd_page_fd = page_fd;
	s->vc = vc;
	s->tick_ns = tick_ns;
	s->waits = s->clock && vc && waits;
	if (s->waits && want)
		s->page_fd = fcntl(page_fd, F_DUPFD_CLOEXEC, 3);
	s->procs_hi = 0; /* an entry's descriptors are set when it is taken */
	sv_threads_init(s);
	if (!want || (!s->clock && !s->rng))
		return 0;
	if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sz) < 0) {
		snprintf(s->off_why, sizeof(s->off_why), "seccomp user notification: %s",
			 strerror(errno));
		return 0;
	}
	s->req_size = sz.seccomp_notif > sizeof(*s->req) ? sz.seccomp_notif : sizeof(*s->req);
	s->resp_size = sz.seccomp_notif_resp > sizeof(*s->resp) ? sz.seccomp_notif_resp
								 : sizeof(*s->resp);
	s->req = calloc(1, s->req_size);
	s->resp = calloc(1, s->resp_size);
	if (!s->req || !s->resp)
		return eng_fail(err, ENOMEM, "out of memory");
	if (s->clock && (!vdso_path || (r = load_image(s, vdso_path)) < 0)) {
		snprintf(s->off_why, sizeof(s->off_why), "the synthetic vDSO %s: %s",
			 vdso_path ? vdso_path : "libhermetic-vdso.so",
			 vdso_path ? strerror(-r) : "not found");
		s->clock = s->waits = false; /* entropy still */
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, s->sock) < 0) {
		snprintf(s->off_why, sizeof(s->off_why), "socketpair: %s", strerror(errno));
		return 0;
	}
	real_vdso(s);
	build_filter(s);
	s->debug_waits = getenv("HERMETIC_DEBUG") && strstr(getenv("HERMETIC_DEBUG"), "waits");
	s->debug = s->debug_waits || (getenv("HERMETIC_DEBUG") && strstr(getenv("HERMETIC_DEBUG"), "supervise"));
	s->want = true;
	return 0;
}

void supervise_set_dir_order(struct supervise *s, int order, uint64_t key)
{
	s->id.dir_order = order;
	s->id.dir_key = key;
	if (s->want)
		build_filter(s); /* before the fork: the child installs it */
}

void supervise_set_sched_cpus(struct supervise *s, const cpu_set_t *cpus)
{
	s->id.sched_cpus = *cpus;
	if (s->want)
		build_filter(s); /* before the fork: the child installs it */
}

void supervise_set_identity(struct supervise *s, const char *release, const char *hostname,
			    const char *domain, uint64_t memkb, unsigned cpus)
{
	s->id.cpus = cpus;
	snprintf(s->id.release, sizeof(s->id.release), "%s", release);
	snprintf(s->id.hostname, sizeof(s->id.hostname), "%s", hostname);
	snprintf(s->id.domain, sizeof(s->id.domain), "%s", domain);
	s->id.memkb = memkb;
	if (s->want)
		build_filter(s); /* before the fork: the child installs it */
}

/* ---- what this machine allows (hermetic status) ---- */

/* Can we seize a child of ours, as enroll seizes a process at its exec?
 * A container's own seccomp profile or LSM may refuse ptrace although
 * Yama allows it: try it on a child that only waits to be killed. */
static bool probe_seize(char *why, size_t wsize)
{
	int st, err = 0;
	pid_t pid = fork();

	if (pid < 0) {
		snprintf(why, wsize, "cannot try ptrace: fork: %s", strerror(errno));
		return false;
	}
	if (pid == 0) {
		for (;;)
			pause();
	}
	if (ptrace(PTRACE_SEIZE, pid, 0, 0) < 0)
		err = errno;
	kill(pid, SIGKILL);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (err)
		snprintf(why, wsize, "ptrace is refused here (PTRACE_SEIZE: %s): every process without "
			 "the shim runs on the real clock and entropy", strerror(err));
	return !err;
}

bool supervise_probe(bool vdso, char *why, size_t wsize)
{
	struct seccomp_notif_sizes sz;
	char buf[16];

	why[0] = 0;
	if (!vdso) {
		snprintf(why, wsize, "libhermetic-vdso.so not found next to the shim: entropy only");
	}
	if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sz) < 0) {
		snprintf(why, wsize, "no seccomp user notification here: %s", strerror(errno));
		return false;
	}
	/* Yama's 3 forbids every ptrace; 1 and 2 allow ours (enroll is the
	 * run's ancestor; root has CAP_SYS_PTRACE). */
	if (hm_read_file_at(AT_FDCWD, "/proc/sys/kernel/yama/ptrace_scope", buf, sizeof(buf)) > 0 &&
	    buf[0] == '3') {
		snprintf(why, wsize, "ptrace is disabled here (kernel.yama.ptrace_scope = 3)");
		return false;
	}
	return probe_seize(why, wsize);
}

/* ---- in the child ---- */

int supervise_child(struct supervise *s, const struct sock_fprog *prog)
{
	struct iovec iov;
	ssize_t r;
	int err = 0, fd;

	if (!s->want)
		return 0;
	close(s->sock[0]);
	fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER,
		     prog ? prog : &s->prog);
	if (fd < 0)
		err = errno;
	iov = (struct iovec){ .iov_base = &err, .iov_len = sizeof(err) };
	/* A filter whose listener does not reach enroll cannot be removed,
	 * and every exec would fail (ENOSYS, no listener): then the child
	 * reports and ends (launch.c). Without a filter it runs unsupervised. */
	r = hm_fdpass_send(s->sock[1], &iov, 1, &fd, fd >= 0 ? 1 : 0);
	if (r < 0 && fd >= 0)
		return (int)r;
	if (fd >= 0)
		close(fd);
	close(s->sock[1]);
	return fd >= 0;
}

/* ---- in the parent ---- */

void supervise_parent(struct supervise *s)
{
	if (s->sock[1] >= 0)
		close(s->sock[1]);
	s->sock[1] = -1;
}

int supervise_sock_fd(const struct supervise *s)
{
	return s->sock[0];
}

int supervise_listener_fd(const struct supervise *s)
{
	return s->on ? s->listener : -1;
}

void supervise_recv_listener(struct supervise *s)
{
	int err = 0, fd = -1, nfd = 0, flags = 0;
	struct iovec iov = { .iov_base = &err, .iov_len = sizeof(err) };
	bool ctl = false;
	ssize_t n;

	n = hm_fdpass_recv(s->sock[0], &iov, 1, &fd, 1, &nfd, &flags, &ctl);
	if (n > 0 && nfd == 1) {
		s->listener = fd;
		s->on = true;
		/* The caller waits for our answer: switch to us on its CPU rather
		 * than wake us wherever (Linux 6.6; older kernels wake as usual). */
		ioctl(s->listener, SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP);
	} else if (n == sizeof(err) && err) {
		snprintf(s->off_why, sizeof(s->off_why), "seccomp user notification: %s",
			 strerror(err));
	} else if (!s->off_why[0]) {
		snprintf(s->off_why, sizeof(s->off_why), "the command's process sent no listener");
	}
	close(s->sock[0]);
	s->sock[0] = -1;
}

void supervise_gone(struct supervise *s)
{
	supervise_wait_drop(s, NULL);
	if (s->listener >= 0)
		close(s->listener);
	s->listener = -1;
	s->on = false;
}

void supervise_finish(struct supervise *s)
{
	if (s->debug && s->vc)
		eng_warn("supervisor: %llu waits, %llu getrandom answered, %llu Go images drawing in "
		       "the process; the run's clock: %llu advances, %llu wakes, %llu idle "
		       "with nothing, %llu on the world, %llu lag fires (%llu as the wait began)",
		       (unsigned long long)s->waits_total, (unsigned long long)s->entropy_calls,
		       (unsigned long long)s->gorand, (unsigned long long)s->vc->advances,
		       (unsigned long long)s->vc->wakes, (unsigned long long)s->vc->idle_nothing,
		       (unsigned long long)s->vc->external, (unsigned long long)s->vc->lag_fires,
		       (unsigned long long)s->vc->lag_prompt);
	if (s->debug && s->vc) {
		const uint64_t *w = s->wstat;

		eng_warn("supervisor: timed waits handed over: %llu sleeps, %llu futex, %llu epoll, "
			 "%llu poll; %llu to the kernel, %llu back-offs, %llu answered at once; "
			 "ended by their event %llu, by the run's clock %llu, by --lag-bound %llu, "
			 "by real time %llu (on the world), %llu futex polls after their hold",
			 (unsigned long long)w[SV_WS_SLEEP], (unsigned long long)w[SV_WS_FUTEX],
			 (unsigned long long)w[SV_WS_EPOLL], (unsigned long long)w[SV_WS_POLL],
			 (unsigned long long)w[SV_WS_KERNEL], (unsigned long long)w[SV_WS_BACKOFF],
			 (unsigned long long)w[SV_WS_AT_ONCE], (unsigned long long)w[SV_WS_EVENT],
			 (unsigned long long)w[SV_WS_CLOCK], (unsigned long long)w[SV_WS_LAG],
			 (unsigned long long)w[SV_WS_REAL], (unsigned long long)w[SV_WS_HOLD]);
	}
	supervise_wait_stop(s);
	sv_threads_clear(s);
	sv_dirorder_free(s);
	if (s->page_fd >= 0)
		close(s->page_fd);
	s->page_fd = -1;
	supervise_wait_drop(s, NULL);
	for (int i = 0; i < s->procs_hi; i++)
		if (s->procs[i].pid)
			supervise_wait_drop(s, &s->procs[i]);
	if (s->listener >= 0)
		close(s->listener);
	if (s->sock[0] >= 0)
		close(s->sock[0]);
	s->listener = s->sock[0] = -1;
	s->on = false;
	free(s->image);
	free(s->req);
	free(s->resp);
	s->image = NULL;
	s->req = NULL;
	s->resp = NULL;
}

/* ---- processes ---- */

/* The thread group of a thread, and (ppid, if not NULL) its parent's
 * (/proc/TID/status); 0 if gone. */
static int status_ids(int tid, int *ppid)
{
	char buf[2048];
	int v = 0;

	if (hm_proc_status(tid, buf, sizeof(buf)) <= 0 || hm_status_int(buf, "Tgid", &v) < 0)
		return 0;
	if (ppid && hm_status_int(buf, "PPid", ppid) < 0)
		*ppid = 0;
	return v;
}

static int tgid_of(int tid)
{
	return status_ids(tid, NULL);
}

static struct sv_proc *find(struct supervise *s, int pid)
{
	for (int i = 0; i < s->procs_hi; i++)
		if (s->procs[i].pid == pid)
			return &s->procs[i];
	return NULL;
}

struct sv_proc *sv_proc_new(struct supervise *s, int pid)
{
	struct sv_proc *p = find(s, pid);

	if (!p)
		p = find(s, 0);
	if (!p && s->procs_hi < SV_MAX_PROCS)
		p = &s->procs[s->procs_hi++]; /* never used: all zeros */
	if (!p) {
		/* Full: the oldest entries are likely gone; reuse a dead one. */
		for (int i = 0; i < SV_MAX_PROCS && !p; i++)
			if (kill(s->procs[i].pid, 0) < 0 && errno == ESRCH)
				p = &s->procs[i];
	}
	if (!p)
		return NULL;
	if (!p->pid)
		s->n_procs++;
	else
		supervise_wait_drop(s, p);
	memset(p, 0, sizeof(*p));
	p->pidfd = p->ep_ours = p->ep_fd = p->epi_fd = -1;
	p->pid = pid;
	p->gen = ++s->proc_gen;
	p->start = hm_proc_start(pid);
	return p;
}

/* Do processes a and b run the same executable (/proc/PID/exe)? */
static bool same_exe(int a, int b)
{
	char pa[64], pb[64];
	struct stat sa, sb;

	snprintf(pa, sizeof(pa), "/proc/%d/exe", a);
	snprintf(pb, sizeof(pb), "/proc/%d/exe", b);
	return stat(pa, &sa) == 0 && stat(pb, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

/*
 * A process the supervisor has not seen: forks never stop (docs/static.md),
 * so a fork child of a process it serves first shows up at its first wait
 * or getrandom, with the synthetic vDSO and the filter it inherited. If it
 * still runs its parent's executable (an exec of a static image would have
 * been seen; one of a shim image carries the shim), it gets its parent's
 * clock and a stream of its own keyed as the shim keys a fork child: the
 * n-th child of its parent's image (lib/lineage.h), n counting that
 * parent's children in the order they first come here. A grandchild whose
 * parent never came is taken up through it (depth: at most 4). NULL: none
 * of ours.
 */
static struct sv_proc *inherit(struct supervise *s, int tgid, int ppid, int depth)
{
	struct sv_proc *pp = ppid > 1 ? find(s, ppid) : NULL, *p;
	uint8_t key[HM_CHACHA_KEY_SIZE];
	int up = 0;

	if (ppid <= 1 || !same_exe(tgid, ppid))
		return NULL;
	if (!pp && depth < 4 && status_ids(ppid, &up) == ppid)
		pp = inherit(s, ppid, up, depth + 1);
	if (!pp || pp->start != hm_proc_start(ppid))
		return NULL;
	char exe[HM_EXE_MAX];

	sv_exe_name(tgid, exe);
	/* count 0: a fork child still running its parent's image */
	uint64_t image = hm_image_id(hm_proc_child(pp->image, ++pp->children), exe, 0);
	bool vmono = pp->vmono, rng_on = pp->rng_on;
	uint64_t seed = pp->seed;

	if (!(p = sv_proc_new(s, tgid))) /* pp stays: the table is full of live ones */
		return NULL;
	p->image = image;
	p->vmono = vmono;
	p->seed = seed;
	p->rng_on = rng_on;
	hm_stream_key(seed, image, 0, key);
	hm_chacha_stream_init(&p->rng, key);
	if (s->debug)
		eng_warn("supervisor: %d is fork child %u of %d, on its clock", tgid, pp->children, ppid);
	return p;
}

/* The process notification req is from, if it is one we serve (its pid
 * not reused since), or NULL. Known threads are not looked up again
 * (supervise_threads.c). */
struct sv_proc *sv_served(struct supervise *s, const struct seccomp_notif *req)
{
	int tid = (int)req->pid, ppid = 0, tgid;
	struct sv_proc *p;

	if (!s->n_procs)
		return NULL; /* none of ours: no need to look */
	if ((p = sv_thread_get(s, tid)))
		return p;
	tgid = status_ids(tid, &ppid);
	p = tgid ? find(s, tgid) : NULL;
	if (tgid && !p)
		p = inherit(s, tgid, ppid, 0);
	if (!p || p->start != hm_proc_start(tgid))
		return NULL;
	sv_thread_put(s, req, p);
	return p;
}

void sv_warn_path(int pid, const char *exe, const char *what, int err)
{
	eng_warn("process %d (%s) runs without the run's clock and entropy: %s%s%s", pid, exe, what,
	       err ? ": " : "", err ? strerror(err) : "");
}

void sv_warn_pid(int pid, const char *what, int err)
{
	char exe[256] = "?";
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 1] = 0;
	sv_warn_path(pid, exe, what, err);
}

/* ---- exec ---- */

/* The page has no path (lib/clockfd.h): a process whose program closed its
 * inherited descriptor (Python's close_fds) gets one from us, put in while
 * its exec waits on the notification. It survives the exec and is closed
 * at the exec stop, before the new image's first instruction, so the
 * program never sees it. */
static void add_page_fd(struct supervise *s, const struct seccomp_notif *req)
{
	struct seccomp_notif_addfd a = { .id = req->id, .srcfd = (uint32_t)s->cmd_page_fd };
	int slot = -1, fd;

	if (!s->clock || s->cmd_page_fd < 0)
		return;
	for (int i = 0; i < (int)ARRAY_SIZE(s->added); i++)
		if (!s->added[i].pid || s->added[i].pid == (int)req->pid) {
			slot = i;
			break;
		}
	if (slot < 0)
		return; /* (the process maps the one it inherited, if any) */
	fd = ioctl(s->listener, SECCOMP_IOCTL_NOTIF_ADDFD, &a);
	if (fd < 0)
		return;
	s->added[slot].pid = (int)req->pid;
	s->added[slot].fd = fd;
}

static void on_exec(struct supervise *s, const struct seccomp_notif *req)
{
	struct sv_proc *p;
	enum sv_kind k;
	char path[4096];
	int fd, tgid;

	s->execs++;
	/* A new image: what the old one was given ends here. */
	if (s->n_procs && (tgid = tgid_of(req->pid)) && (p = find(s, tgid))) {
		supervise_wait_drop(s, p);
		p->pid = 0;
		s->n_procs--;
	}
	path[0] = 0;
	fd = sv_open_target(req, path, sizeof(path));
	if (fd < 0 && s->debug)
		eng_warn("supervisor: exec of %s by %u: cannot open it (%s)", path, req->pid,
		       strerror(errno));
	if (fd < 0)
		return; /* the exec will fail, or we cannot see it: nothing to do */
	k = sv_classify(fd);
	close(fd);
	/* A dynamic image the shim will not be loaded into: as a static one. */
	if (k == SV_SHIM && !sv_env_has_shim(req))
		k = SV_NO_SHIM;
	if (s->debug)
		eng_warn("supervisor: exec of %s by %u: %s", path, req->pid,
		       k == SV_STATIC	    ? "static, supervised"
		       : k == SV_GO_DYNAMIC ? "Go, supervised"
		       : k == SV_NO_SHIM    ? "dynamic without the shim in its environment, supervised"
		       : k == SV_SHIM	    ? "dynamic, the shim's"
					    : "not an ELF of this machine");
	if (k != SV_STATIC && k != SV_GO_DYNAMIC && k != SV_NO_SHIM)
		return;
	/* The notification still stands for this very task (its pid is not
	 * a reused one), so the seize below is of the process that execs. */
	if (ioctl(s->listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &req->id) < 0)
		return;
	if (ptrace(PTRACE_SEIZE, req->pid, 0,
		   PTRACE_O_TRACEEXEC | PTRACE_O_TRACESYSGOOD) < 0) {
		if (errno != ESRCH) {
			s->refused++;
			sv_warn_path(req->pid, path, "cannot trace it at its exec", errno);
		}
		return;
	}
	add_page_fd(s, req);
}

/* ---- entropy ---- */

static void on_getrandom(struct supervise *s, const struct seccomp_notif *req,
			 struct seccomp_notif_resp *resp)
{
	const struct seccomp_data *d = &req->data;
	uint64_t len = d->args[1], done = 0;
	uint8_t buf[16384];
	struct sv_proc *p = sv_served(s, req);

	if (!p || !p->rng_on) {
		resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
		return;
	}
	s->entropy_calls++;
	if ((unsigned)d->args[2] & ~GRND_ALL) {
		resp->error = -EINVAL;
		return;
	}
	if (len > 33554431) /* as the kernel: at most INT_MAX >> 6 bytes per call */
		len = 33554431;
	while (done < len) {
		size_t n = len - done < sizeof(buf) ? len - done : sizeof(buf);
		struct iovec l = { .iov_base = buf, .iov_len = n };
		struct iovec r = { .iov_base = (void *)(d->args[0] + done), .iov_len = n };
		ssize_t w;

		hm_chacha_stream_read(&p->rng, buf, n);
		w = process_vm_writev(req->pid, &l, 1, &r, 1, 0);
		if (w <= 0)
			break;
		done += w;
		if ((size_t)w < n)
			break;
	}
	if (!done && len) {
		resp->error = -EFAULT;
		return;
	}
	resp->val = done;
}

void supervise_notify(struct supervise *s)
{
	memset(s->req, 0, s->req_size);
	if (ioctl(s->listener, SECCOMP_IOCTL_NOTIF_RECV, s->req) < 0)
		return; /* ENOENT: the caller died meanwhile; EINTR */
	memset(s->resp, 0, s->resp_size);
	s->resp->id = s->req->id;
	switch (s->req->data.nr) {
	case NR_EXECVE:
	case NR_EXECVEAT:
		on_exec(s, s->req);
		s->resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
		break;
	case NR_GETRANDOM:
		on_getrandom(s, s->req, s->resp);
		break;
	case NR_UNAME:
	case NR_SYSINFO:
	case NR_SCHED_GETAFFINITY:
		sv_identity_call(s, s->req, s->resp);
		break;
	case NR_GETDENTS64:
		sv_dirorder_call(s, s->req, s->resp);
		break;
	case NR_NANOSLEEP:
	case NR_CLOCK_NANOSLEEP:
	case NR_EPOLL_WAIT:
	case NR_EPOLL_PWAIT:
	case NR_POLL:
	case NR_PPOLL:
	case NR_SELECT:
	case NR_PSELECT6:
	case NR_FUTEX: {
		struct sv_proc *p = sv_served(s, s->req);

		if (!p || !p->vmono)
			s->resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
		else if (sv_wait_begin(s, p, s->req, s->resp))
			return; /* answered later (supervise_wait_tick), or already */
		break;
	}
	default:
		s->resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
		break;
	}
	if (ioctl(s->listener, SECCOMP_IOCTL_NOTIF_SEND, s->resp) < 0 && errno != ENOENT)
		eng_warn("supervisor: cannot answer process %u: %s", s->req->pid, strerror(errno));
}

bool supervise_stopped(struct supervise *s, int pid, int st)
{
	if (!WIFSTOPPED(st))
		return false;
	if ((st >> 8) == (SIGTRAP | (PTRACE_EVENT_EXEC << 8))) {
		sv_exec_stop(s, pid);
		return true;
	}
	/* Seized for an exec that then failed: a signal came; let it go,
	 * with the signal (a group stop's signal is the stop itself). */
	if ((st >> 16) == PTRACE_EVENT_STOP)
		ptrace(PTRACE_DETACH, pid, 0, 0);
	else
		ptrace(PTRACE_DETACH, pid, 0, WSTOPSIG(st));
	return true;
}
