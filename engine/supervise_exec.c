// SPDX-License-Identifier: MIT
/*
 * Execs (supervise.h, docs/static.md). At the exec's start (its seccomp
 * notification): what it would load, and whether the shim covers that.
 * At the exec stop of a supervised image: the process is at PTRACE_EVENT_EXEC, its new image loaded, not one of its
 * instructions run. We
 *   1. step it to the end of execve (its syscall-exit stop), a clean place
 *      to make it run syscalls of ours;
 *   2. find its auxiliary vector on its stack (argc, argv, envp, auxv);
 *   3. with the clock virtual and an AT_SYSINFO_EHDR to replace: map a
 *      region for the synthetic vDSO (include/hermetic/vdso.h), write the
 *      image and its data page into it, map the run's clock page over its
 *      end (the process opens it by path: it is a file of the run), make
 *      the image read-only and executable, and point AT_SYSINFO_EHDR at it;
 *   4. announce it to the kernel's view as the shim does (the audit then
 *      counts it as covered), and key its entropy stream as the shim would
 *      key its main thread's: (seed, image id, thread 0), the image id
 *      from HERMETIC_IMAGE in its environment and the binary it runs;
 *   5. put back its registers and the two bytes of code we borrowed, and
 *      detach. From then on it runs untraced.
 * Every syscall of ours runs as the process itself, through a syscall
 * instruction written over its entry point, single-stepped. If any step fails the process
 * is detached as it was, and a warning names it.
 */
#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <linux/seccomp.h>
#include <sys/user.h>
#include <sys/wait.h>
#include "util.h"
#include "engine.h"
#include "config.h"
#include "lineage.h"
#include "supervise.h"
#include "hermetic/trace.h"
#include "hermetic/vclock.h"
#include "hermetic/vdso.h"
#include "hermetic/sched.h"
#include "clockfd.h"

#define REGION (HM_VDSO_PAGE_OFF + HM_VCLOCK_SIZE)
#define NR_EXECVEAT 322

/* ---- the decision, at the exec's start ---- */

/* The ELF headers of an executable: does the shim cover it? Only what the
 * kernel would load counts: an x86_64 ELF; a script (#!) runs its
 * interpreter, which is left alone (docs/static.md). */
enum sv_kind sv_classify(int fd)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph[64];
	bool interp = false, go = false;
	size_t n;

	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64 ||
	    (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) || eh.e_phentsize != sizeof(Elf64_Phdr))
		return SV_NOT_ELF;
	n = eh.e_phnum < ARRAY_SIZE(ph) ? eh.e_phnum : ARRAY_SIZE(ph);
	if (pread(fd, ph, n * sizeof(ph[0]), eh.e_phoff) != (ssize_t)(n * sizeof(ph[0])))
		return SV_NOT_ELF;
	for (size_t i = 0; i < n; i++) {
		uint8_t note[256];
		size_t len = ph[i].p_filesz < sizeof(note) ? ph[i].p_filesz : sizeof(note);

		if (ph[i].p_type == PT_INTERP)
			interp = true;
		/* Go's linker puts its build id first, in a note named "Go". */
		if (ph[i].p_type == PT_NOTE && len >= 16 &&
		    pread(fd, note, len, ph[i].p_offset) == (ssize_t)len)
			for (size_t off = 0; off + 12 <= len;) {
				uint32_t nsz, dsz;

				memcpy(&nsz, note + off, 4);
				memcpy(&dsz, note + off + 4, 4);
				if ((nsz == 3 || nsz == 4) && off + 15 <= len && !memcmp(note + off + 12, "Go", 3))
					go = true;
				if (nsz > len || dsz > len)
					break;
				off += 12 + ((nsz + 3) & ~3u) + ((dsz + 3) & ~3u);
			}
	}
	if (!interp)
		return SV_STATIC;
	return go ? SV_GO_DYNAMIC : SV_SHIM;
}

/* A string of the calling process's memory. */
static int read_str(int pid, uint64_t addr, char *buf, size_t size)
{
	size_t got = 0;

	while (got < size - 1) {
		size_t chunk = 4096 - ((addr + got) & 4095);
		struct iovec l, r;
		ssize_t n;

		if (chunk > size - 1 - got)
			chunk = size - 1 - got;
		l = (struct iovec){ .iov_base = buf + got, .iov_len = chunk };
		r = (struct iovec){ .iov_base = (void *)(addr + got), .iov_len = chunk };
		n = process_vm_readv(pid, &l, 1, &r, 1, 0);
		if (n <= 0)
			return -EFAULT;
		if (memchr(buf + got, 0, n))
			return 0;
		got += n;
	}
	return -ENAMETOOLONG;
}

/* What an execve or execveat of the notification would load, opened. */
int sv_open_target(const struct seccomp_notif *req, char *path, size_t size)
{
	const struct seccomp_data *d = &req->data;
	char full[4200];
	uint64_t addr = d->nr == NR_EXECVEAT ? d->args[1] : d->args[0];
	int dirfd = d->nr == NR_EXECVEAT ? (int)d->args[0] : AT_FDCWD;

	if (read_str(req->pid, addr, path, size) < 0)
		return -EFAULT;
	if (path[0] == '/')
		snprintf(full, sizeof(full), "/proc/%u/root%s", req->pid, path);
	else if (dirfd == AT_FDCWD)
		snprintf(full, sizeof(full), "/proc/%u/cwd/%s", req->pid, path);
	else if (!path[0])
		snprintf(full, sizeof(full), "/proc/%u/fd/%d", req->pid, dirfd);
	else
		snprintf(full, sizeof(full), "/proc/%u/fd/%d/%s", req->pid, dirfd, path);
	return open(full, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
}

/*
 * Whether the image an execve/execveat of req starts gets the shim: its
 * environment names libhermetic-preload.so in LD_PRELOAD, which the
 * dynamic loader then loads first. A program that execs with an
 * environment of its own making through a raw syscall the shim does not
 * see (Go's os/exec with cmd.Env set, a static program's execve) starts a
 * dynamic image without it; the supervisor then takes it as it takes a
 * static one (the loader and libc find the synthetic vDSO where the
 * kernel's was). One process_vm_readv reads the pointers, one more the
 * first bytes of every string; only an LD_PRELOAD is read whole.
 */
bool sv_env_has_shim(const struct seccomp_notif *req)
{
	static const char key[] = "LD_PRELOAD=";
	const struct seccomp_data *d = &req->data;
	uint64_t envp = d->nr == NR_EXECVEAT ? d->args[3] : d->args[2];
	uint64_t ptrs[512];
	char heads[512][sizeof(key) - 1];
	struct iovec l, r[512];
	ssize_t got;
	size_t n = 0, k;

	if (!envp)
		return false;
	l = (struct iovec){ .iov_base = ptrs, .iov_len = sizeof(ptrs) };
	r[0] = (struct iovec){ .iov_base = (void *)envp, .iov_len = sizeof(ptrs) };
	/* (a short read at the end of the caller's mapping is fine) */
	got = process_vm_readv(req->pid, &l, 1, r, 1, 0);
	if (got < (ssize_t)sizeof(ptrs[0]))
		return false;
	while (n < (size_t)got / sizeof(ptrs[0]) && ptrs[n])
		n++;
	for (k = 0; k < n; k++)
		r[k] = (struct iovec){ .iov_base = (void *)ptrs[k], .iov_len = sizeof(heads[0]) };
	l = (struct iovec){ .iov_base = heads, .iov_len = n * sizeof(heads[0]) };
	got = process_vm_readv(req->pid, &l, 1, r, n, 0);
	for (k = 0; got > 0 && k < n && (k + 1) * sizeof(heads[0]) <= (size_t)got; k++) {
		char v[4096];

		if (memcmp(heads[k], key, sizeof(heads[0])))
			continue;
		if (read_str(req->pid, ptrs[k], v, sizeof(v)) == 0 &&
		    strstr(v + sizeof(key) - 1, "libhermetic-preload.so"))
			return true;
	}
	return false;
}

/* ---- the exec stop ---- */

/* The environment the new image of pid started with loads the shim (as
 * sv_env_has_shim, read from /proc/PID/environ: NUL-separated, the whole
 * of it, since we trace the process). */
static bool environ_has_shim(int pid)
{
	static const char key[] = "LD_PRELOAD=";
	char path[64], *buf = NULL;
	size_t cap = 0, len = 0;
	bool found = false;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/environ", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return true; /* cannot see it: leave it to the shim, as before */
	for (;;) {
		if (len == cap) {
			char *nb = cap < (1u << 24) ? realloc(buf, cap ? cap * 2 : 8192) : NULL;

			if (!nb) {
				found = true; /* as when we cannot see it */
				goto cleanup;
			}
			buf = nb;
			cap = cap ? cap * 2 : 8192;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	for (size_t i = 0; i < len;) {
		size_t e = i;

		while (e < len && buf[e])
			e++;
		if (e - i >= sizeof(key) - 1 && !memcmp(buf + i, key, sizeof(key) - 1) &&
		    memmem(buf + i, e - i, "libhermetic-preload.so", 22))
			found = true;
		i = e + 1;
	}
cleanup:
	free(buf);
	close(fd);
	return found;
}


struct tracee {
	int pid;
	int memfd; /* /proc/PID/mem */
	int sig; /* a signal that arrived meanwhile, delivered at detach */
	struct user_regs_struct regs; /* at the end of execve */
	uint64_t code; /* the 8 bytes at regs.rip */
	bool code_saved;
	int added; /* a page descriptor the supervisor put in at its exec, or -1 */
	int inherited_closed; /* its own, marked closed by its parent's program, or -1 */
	uint64_t vdso_base; /* where the synthetic vDSO went, or 0 */
	/* the top of its initial stack from its stack pointer, read at once
	 * (argc, argv, envp and the auxiliary vector are usually all in it) */
	uint8_t stack[8192];
	size_t stack_len;
};

/* Wait for the next ptrace stop of t that is a syscall stop; signals that
 * arrive meanwhile are kept for the detach. */
static int wait_syscall_stop(struct tracee *t)
{
	for (;;) {
		int st;

		if (waitpid(t->pid, &st, __WALL) < 0)
			return -errno;
		if (!WIFSTOPPED(st))
			return -ESRCH; /* it died */
		if (WSTOPSIG(st) == (SIGTRAP | 0x80))
			return 0;
		if ((st >> 16) == 0 && WSTOPSIG(st) != SIGTRAP)
			t->sig = WSTOPSIG(st);
		if (ptrace(PTRACE_SYSCALL, t->pid, 0, 0) < 0)
			return -errno;
	}
}

/*
 * One syscall made by the tracee; its result (-errno on failure). It runs
 * the syscall instruction at t->regs.rip in one single step: a single stop
 * after it (the trap the kernel reports on the way out of the syscall),
 * where syscall-entry and -exit stops cost two, and on this path of every
 * exec each stop is two context switches. A signal that arrives meanwhile
 * is kept for the detach (the step is made again without it: a syscall it
 * interrupted before its end is restarted from the same instruction).
 */
static long inject(struct tracee *t, long nr, long a, long b, long c, long d, long e, long f)
{
	struct user_regs_struct r = t->regs;

	r.rax = nr;
	r.orig_rax = -1;
	r.rdi = a;
	r.rsi = b;
	r.rdx = c;
	r.r10 = d;
	r.r8 = e;
	r.r9 = f;
	if (ptrace(PTRACE_SETREGS, t->pid, 0, &r) < 0)
		return -errno;
	for (int tries = 0; tries < 64; tries++) {
		int st;

		if (ptrace(PTRACE_SINGLESTEP, t->pid, 0, 0) < 0)
			return -errno;
		if (waitpid(t->pid, &st, __WALL) < 0)
			return -errno;
		if (!WIFSTOPPED(st))
			return -ESRCH; /* it died */
		if ((st >> 16) == 0 && WSTOPSIG(st) != SIGTRAP)
			t->sig = WSTOPSIG(st);
		if (ptrace(PTRACE_GETREGS, t->pid, 0, &r) < 0)
			return -errno;
		if (r.rip == t->regs.rip + 2) /* past the syscall instruction: done */
			return (long)r.rax;
		if (r.rip != t->regs.rip)
			return -EIO; /* not where we put it: leave it (the caller undoes) */
	}
	return -EINTR;
}

static int peek(struct tracee *t, uint64_t addr, void *buf, size_t len)
{
	return pread(t->memfd, buf, len, (off_t)addr) == (ssize_t)len ? 0 : -EFAULT;
}

static int poke(struct tracee *t, uint64_t addr, const void *buf, size_t len)
{
	return pwrite(t->memfd, buf, len, (off_t)addr) == (ssize_t)len ? 0 : -EFAULT;
}

/* What the auxiliary vector on the initial stack says: where the
 * AT_SYSINFO_EHDR entry's value is (0: none) and that value, AT_ENTRY (the
 * program's entry point) and AT_RANDOM (the address of its 16 bytes), 0
 * where absent. */
struct auxv {
	uint64_t sysinfo_at, sysinfo, entry, random;
};

/* A word of its stack: from t->stack where it holds it (one read instead
 * of one per word: this is on the path of every exec of a static program). */
static int peek_stack(struct tracee *t, uint64_t addr, void *buf, size_t len)
{
	if (addr >= t->regs.rsp && addr - t->regs.rsp + len <= t->stack_len) {
		memcpy(buf, t->stack + (addr - t->regs.rsp), len);
		return 0;
	}
	return peek(t, addr, buf, len);
}

static int read_auxv(struct tracee *t, struct auxv *a)
{
	uint64_t sp = t->regs.rsp, argc, w;
	ssize_t got;
	int n = 0;

	memset(a, 0, sizeof(*a));
	/* (a short read ends at the end of its stack mapping) */
	got = pread(t->memfd, t->stack, sizeof(t->stack), (off_t)sp);
	t->stack_len = got > 0 ? (size_t)got : 0;
	if (peek_stack(t, sp, &argc, 8) < 0 || argc > 1 << 20)
		return -EFAULT;
	sp += 8 * (argc + 2); /* argv and its NULL */
	do { /* envp, up to its NULL */
		if (peek_stack(t, sp, &w, 8) < 0 || ++n > 1 << 20)
			return -EFAULT;
		sp += 8;
	} while (w);
	for (n = 0; n < 512; n++, sp += 16) {
		uint64_t kv[2];

		if (peek_stack(t, sp, kv, 16) < 0)
			return -EFAULT;
		if (kv[0] == AT_NULL)
			break;
		if (kv[0] == AT_ENTRY)
			a->entry = kv[1];
		if (kv[0] == AT_RANDOM)
			a->random = kv[1];
		if (kv[0] == AT_SYSINFO_EHDR) {
			a->sysinfo_at = sp + 8;
			a->sysinfo = kv[1];
		}
	}
	return 0;
}

/*
 * The 16 bytes AT_RANDOM points at, from the process's seed: its own
 * stream (hm_stream_key's thread HM_STREAM_AT_RANDOM), so its getrandom
 * stream stays as it was. Go's runtime seeds its hash functions from
 * them (its fastrand too, but mixed with the TSC: docs/static.md), musl
 * and glibc their stack canary and pointer guard; nothing has read them yet,
 * before the first instruction. A canary that the seed fixes is known to
 * whoever knows the seed: the run's own user, the one it protects against
 * only in the run's own processes.
 */
/* The kernel's view learns that the image is covered as it learns it of
 * the shim's (bpf/trace.bpf.c, hm_rename): prctl(PR_SET_NAME, the name the
 * thread has, HM_SHIM_HELLO_FLAGS). The name is written below the stack
 * pointer, which at the exec stop is unused stack the kernel mapped. */
static void announce(struct tracee *t)
{
	char path[64], name[16] = { 0 };
	uint64_t at = (t->regs.rsp - 512) & ~15ULL;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/comm", t->pid);
	n = hm_read_file_at(AT_FDCWD, path, name, sizeof(name) - 1);
	if (n <= 0)
		return;
	if (name[n - 1] == '\n')
		name[n - 1] = 0;
	if (poke(t, at, name, sizeof(name)) < 0)
		return;
	inject(t, SYS_prctl, PR_SET_NAME, (long)at, HM_SHIM_HELLO_FLAGS, 0, 0, 0);
}

static int seed_at_random(struct tracee *t, const struct sv_proc *p, uint64_t addr)
{
	uint8_t key[HM_CHACHA_KEY_SIZE], b[16];
	struct hm_chacha_stream st;

	hm_stream_key(p->seed, p->image, HM_STREAM_AT_RANDOM, key);
	hm_chacha_stream_init(&st, key);
	hm_chacha_stream_read(&st, b, sizeof(b));
	return poke(t, addr, b, sizeof(b));
}

/* The environment of the process at its exec stop, read once for the
 * several variables set_up asks about (sv_exec_stop empties it). */
static struct {
	int pid; /* 0: nothing read */
	ssize_t len;
	char buf[65536];
} env_cache;

/* The process's environment as exec gave it: the value of name, in buf. */
static bool env_get(int pid, const char *name, char *buf, size_t size)
{
	char path[64];
	char *env = env_cache.buf;
	size_t nlen = strlen(name);
	ssize_t n;

	if (env_cache.pid != pid) {
		snprintf(path, sizeof(path), "/proc/%d/environ", pid);
		env_cache.len = hm_read_file_at(AT_FDCWD, path, env, sizeof(env_cache.buf));
		env_cache.pid = pid;
	}
	if ((n = env_cache.len) <= 0)
		return false;
	for (char *p = env; p < env + n; p += strlen(p) + 1)
		if (!strncmp(p, name, nlen) && p[nlen] == '=' && strlen(p + nlen + 1) < size) {
			memcpy(buf, p + nlen + 1, strlen(p + nlen + 1) + 1);
			return true;
		}
	return false;
}

static const char *parse_hex16(const char *s, uint64_t *ret)
{
	uint64_t v = 0;

	for (int i = 0; i < 16; i++, s++) {
		int d = *s >= '0' && *s <= '9' ? *s - '0' : *s >= 'a' && *s <= 'f' ? *s - 'a' + 10 : -1;

		if (d < 0)
			return NULL;
		v = v << 4 | d;
	}
	*ret = v;
	return s;
}

/* The image id the shim would compute in this process (preload/spawn.c,
 * hm_lineage_init): its process id and runs from HERMETIC_IMAGE (none: the
 * run's first process), the binary from /proc/PID/exe. */
void sv_exe_name(int pid, char exe[HM_EXE_MAX])
{
	char exe_path[4096], path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	n = readlink(path, exe_path, sizeof(exe_path) - 1);
	exe_path[n > 0 ? n : 0] = 0;
	hm_exe_name(exe_path, exe);
}

static uint64_t image_of(int pid)
{
	char img[512], exe[HM_EXE_MAX];
	uint64_t proc = 0;
	const char *runs = "", *s;

	if (env_get(pid, HM_ENV_IMAGE, img, sizeof(img)) && (s = parse_hex16(img, &proc)) &&
	    *s == ':' && (s = strchr(s + 1, ':')) && (s = strchr(s + 1, ':')))
		runs = s + 1;
	if (!proc) {
		proc = hm_proc_root();
		runs = "";
	}
	sv_exe_name(pid, exe);
	return hm_image_id(proc, exe, hm_runs_get(runs, exe) + 1);
}

/* The number at which the stopped process holds the run's clock page: the
 * one HERMETIC_CLOCK_FD names in its environment, if that descriptor is
 * still the page (its st_dev and st_ino, seen through /proc/PID/fd). The
 * page has no path a process could open (lib/clockfd.h). -errno if none. */
static int tracee_page_fd(const struct supervise *s, int pid, bool *ret_closed)
{
	struct hm_clockfd c;
	struct stat st;
	char v[HM_CLOCKFD_STR], path[64];

	if (!env_get(pid, HM_ENV_CLOCK_FD, v, sizeof(v)) || hm_clockfd_parse(v, &c) < 0)
		return -ENOENT;
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", pid, c.fd);
	if (stat(path, &st) < 0)
		return -errno;
	if ((uint64_t)st.st_dev != c.dev || (uint64_t)st.st_ino != c.ino)
		return -ESTALE;
	*ret_closed = c.closed;
	return c.fd;
}

/* Steps 3: the synthetic vDSO. 0, or -errno (the process is as it was). */
static int map_vdso(struct supervise *s, struct tracee *t, uint64_t auxv_at, uint64_t real_base,
		    bool mono)
{
	struct hm_vdso_data d = { .magic = HM_VDSO_DATA_MAGIC,
				  .flags = HM_VDSO_WALL | (mono ? HM_VDSO_MONO : 0),
				  .tick = s->tick_ns, .tick_after = 100000 /* the shim's HM_TICK_AFTER */ };
	__u64 *real[4] = { &d.real_clock_gettime, &d.real_gettimeofday, &d.real_time,
			      &d.real_getcpu };
	bool closed = false;
	long base, fd = tracee_page_fd(s, t->pid, &closed), r;

	/* ":c": its parent's program closed it (preload/fdkeep.c): mapped,
	 * it is closed below like ours, before the program's first instruction */
	if (fd >= 0 && closed)
		t->inherited_closed = (int)fd;
	if (fd < 0)
		fd = t->added; /* it has none: ours (supervise.c) */
	if (fd < 0)
		return -EBADF; /* it has no page: as without the synthetic vDSO */
	for (int i = 0; i < 4; i++)
		*real[i] = real_base && s->real_off[i] ? real_base + s->real_off[i] : 0;
	base = inject(t, SYS_mmap, 0, REGION, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		      -1, 0);
	if (base < 0 && base > -4096)
		return (int)base;
	if (poke(t, base, s->image, s->image_len) < 0 ||
	    poke(t, base + HM_VDSO_DATA_OFF, &d, sizeof(d)) < 0) {
		r = -EFAULT;
		goto fail;
	}
	/* Its own descriptor of the page, mapped in its address space; the
	 * descriptor stays its own, for its children. */
	r = inject(t, SYS_mmap, base + HM_VDSO_PAGE_OFF, HM_VCLOCK_SIZE, PROT_READ,
		   MAP_SHARED | MAP_FIXED, fd, 0);
	if (r != base + HM_VDSO_PAGE_OFF) {
		r = r < 0 ? r : -EINVAL;
		goto fail;
	}
	/* the image read-only; its data page stays the process's to count in */
	r = inject(t, SYS_mprotect, base, HM_VDSO_DATA_OFF, PROT_READ | PROT_EXEC, 0, 0, 0);
	if (r < 0)
		goto fail;
	r = poke(t, auxv_at, &base, 8);
	if (r < 0)
		goto fail;
	t->vdso_base = (uint64_t)base;
	return 0;
fail:
	inject(t, SYS_munmap, base, REGION, 0, 0, 0, 0);
	return (int)r;
}

/* Its timer slack, HM_SCHED_SUPER_SLACK, through /proc (Linux 4.6 on):
 * no syscall of its own to make it run (two ptrace stops on the path of
 * every exec). Writing another process's timerslack_ns takes
 * CAP_SYS_NICE over its user namespace, which root's enroll has; -errno
 * otherwise, and the caller has the process make the prctl itself. */
static int set_slack(int pid)
{
	char path[64], v[32];
	_cleanup_close_ int fd = -1;
	int n = snprintf(v, sizeof(v), "%llu", (unsigned long long)HM_SCHED_SUPER_SLACK);

	snprintf(path, sizeof(path), "/proc/%d/timerslack_ns", pid);
	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) < 0)
		return -errno;
	return write(fd, v, n) == n ? 0 : -EPERM;
}

static bool env_off(int pid, const char *name, const char *on)
{
	char v[32];

	return env_get(pid, name, v, sizeof(v)) && strcmp(v, on);
}

/* Steps 1 to 4 on a stopped tracee; false: it was left as it was. */
static bool set_up(struct supervise *s, struct tracee *t)
{
	struct auxv av = { 0 };
	static const uint16_t syscall_insn = 0x050f;
	bool clock = s->clock && !env_off(t->pid, HM_ENV_CLOCK, "virtual");
	bool rng = s->rng && !env_off(t->pid, HM_ENV_RNG, "all");
	struct sv_proc *p;
	bool vclock, mono = false;
	int r = 0;

	if (ptrace(PTRACE_SYSCALL, t->pid, 0, 0) < 0 || wait_syscall_stop(t) < 0 ||
	    ptrace(PTRACE_GETREGS, t->pid, 0, &t->regs) < 0)
		return false;
	if (peek(t, t->regs.rip, &t->code, 8) < 0 || poke(t, t->regs.rip, &syscall_insn, 2) < 0) {
		sv_warn_pid(t->pid, "cannot write to its memory", errno);
		return false;
	}
	t->code_saved = true;
	if ((clock || rng) && (r = read_auxv(t, &av)) < 0) {
		sv_warn_pid(t->pid, "cannot read its auxiliary vector", 0);
	} else if (clock && !av.sysinfo_at) {
		sv_warn_pid(t->pid, "no vDSO to replace (its clock stays real)", 0);
		r = -ENOENT;
	}
	/* Its waits reach us only from code below 4 GiB (the filter): a PIE
	 * (static-pie) image keeps the kernel's monotonic clock and waits, so
	 * that a real sleep is never measured on a clock that did not move. */
	mono = s->waits && av.entry && av.entry < (1ULL << 32);
	if (clock && r == 0 && (r = map_vdso(s, t, av.sysinfo_at, av.sysinfo, mono)) < 0)
		sv_warn_pid(t->pid, "cannot map the synthetic vDSO (its clock stays real)", -r);
	vclock = clock && r == 0;
	p = rng || vclock ? sv_proc_new(s, t->pid) : NULL;
	if (p) {
		uint8_t key[HM_CHACHA_KEY_SIZE];
		char seed_s[32];
		uint64_t seed = s->seed;
		const char *end;

		p->image = image_of(t->pid);
		p->vmono = vclock && mono;
		/* the seed the shim would read: this process's HERMETIC_SEED */
		if (env_get(t->pid, HM_ENV_SEED, seed_s, sizeof(seed_s)) &&
		    (end = hm_parse_dec_u64(seed_s, &seed)) && *end)
			seed = s->seed;
		p->seed = seed;
		hm_stream_key(seed, p->image, 0, key);
		hm_chacha_stream_init(&p->rng, key);
		p->rng_on = rng;
		if (rng && av.random && seed_at_random(t, p, av.random) < 0)
			sv_warn_pid(t->pid, "cannot write its AT_RANDOM bytes", errno);
		/* Go's crypto/rand in the process, from the blocks of this
		 * stream the supervisor would have answered; its raw calls
		 * elsewhere from blocks that never meet them */
		if (rng && vclock &&
		    sv_gorand_setup(s, t->pid, t->memfd, av.entry, t->vdso_base, key) == 0) {
			p->rng.block = HM_VDSO_RNG_SUPER_BLOCK;
			s->gorand++;
		}
	} else if (rng || vclock) {
		sv_warn_pid(t->pid, "too many supervised processes at once (its entropy and waits are real)", 0);
		rng = false;
	}
	/* Its timed waits are ours: the kernel's count tells them by the
	 * timer slack its threads inherit (bpf/sched.bpf.c; 21 ns more than
	 * the default does not change a real timer). */
	if (p && p->vmono && set_slack(t->pid) < 0) {
		long e = inject(t, SYS_prctl, PR_SET_TIMERSLACK, HM_SCHED_SUPER_SLACK, 0, 0, 0, 0);

		if (e < 0)
			sv_warn_pid(t->pid, "cannot mark its timed waits (the keeper may not count them)",
				    (int)-e);
	}
	/* The kernel's view: covered, if both routes it needs are in place. */
	if ((!clock || r == 0) && (rng || !s->rng))
		announce(t);
	/* Ours is mapped (or not needed): the program never sees it. */
	/* A descriptor left open is one more in its table, nothing worse. */
	if (t->added >= 0)
		(void)inject(t, SYS_close, t->added, 0, 0, 0, 0, 0);
	if (t->inherited_closed >= 0)
		(void)inject(t, SYS_close, t->inherited_closed, 0, 0, 0, 0, 0);
	return true;
}

/* The descriptor supervise.c put into pid at its exec, or -1; the slot is
 * free again. */
static int take_added(struct supervise *s, int pid)
{
	for (int i = 0; i < (int)ARRAY_SIZE(s->added); i++)
		if (s->added[i].pid == pid) {
			s->added[i].pid = 0;
			return s->added[i].fd;
		}
	return -1;
}

void sv_exec_stop(struct supervise *s, int pid)
{
	struct tracee t = { .pid = pid, .memfd = -1, .inherited_closed = -1 };
	struct hm_vslot *busy;
	char path[64];
	unsigned long former = 0;
	int fd;
	enum sv_kind k = SV_NOT_ELF;

	env_cache.pid = 0; /* (a pid may come again: its environment is new) */
	/* A thread that execs takes its leader's pid: the descriptor was put
	 * in under the thread's own id, which the event message gives. */
	if (ptrace(PTRACE_GETEVENTMSG, pid, 0, &former) < 0 || !former)
		former = (unsigned long)pid;
	t.added = take_added(s, (int)former);

	/* The image the kernel loaded decides (the path seen at the exec's
	 * start may have changed since). */
	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
		k = sv_classify(fd);
		close(fd);
	}
	/* (a dynamic image is ours only when its environment leaves the
	 * shim out: on_exec seized it for that) */
	if (k == SV_SHIM && !environ_has_shim(pid))
		k = SV_NO_SHIM;
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	if (k == SV_STATIC || k == SV_GO_DYNAMIC || k == SV_NO_SHIM)
		t.memfd = open(path, O_RDWR | O_CLOEXEC);
	/* While we set it up the process is stopped for us, not waiting for
	 * anything of the run's: the run must not look idle (the exec stop
	 * itself counts as running in bpf/sched.bpf.c, our own stops do not). */
	busy = sv_slot_begin(s, pid, 0, pid, INT64_MAX, true);
	if (t.memfd >= 0 && set_up(s, &t))
		s->supervised++;
	if (t.code_saved) {
		poke(&t, t.regs.rip, &t.code, 8);
		ptrace(PTRACE_SETREGS, pid, 0, &t.regs);
	}
	if (t.memfd >= 0)
		close(t.memfd);
	ptrace(PTRACE_DETACH, pid, 0, t.sig);
	sv_slot_end(s, busy);
}
