// SPDX-License-Identifier: MIT
/*
 * The kernel backstop of a run, installed in enroll's child before CMD's
 * first instruction and inherited by every process of the run (static
 * binaries, raw syscalls and all). `enroll --confine off` is the one
 * opt-out, for suites that manage the machine.
 *
 * A seccomp filter, for every run:
 *  - setting the host's clock is refused (clock_settime for every clock
 *    id, PTP clocks included, settimeofday, adjtimex, clock_adjtime; on the
 *    i386 ABI also stime and the *64 forms; and the hardware clock's
 *    RTC_SET_TIME and RTC_EPOCH_SET ioctls): EPERM. The shim moves the
 *    run's own clock without a syscall, so only what bypasses it reaches
 *    the filter;
 * and for runs whose network is blocked:
 *  - sockets of families the address hooks do not see are refused
 *    (EAFNOSUPPORT): all but AF_UNIX, AF_INET, AF_INET6 and AF_NETLINK
 *    (the resolver's). AF_PACKET and AF_VSOCK among them; and AF_INET with
 *    SOCK_PACKET, which the kernel turns into AF_PACKET; and IPPROTO_SMC,
 *    which carries TCP in a socket of its own (EPROTONOSUPPORT);
 *  - io_uring is refused (ENOSYS, so runtimes fall back to plain
 *    syscalls): its IORING_OP_SOCKET makes sockets no filter sees;
 *  - on the i386 ABI (int 0x80 works from 64-bit processes), socketcall's
 *    socket and socketpair are refused: the filter cannot read the family
 *    behind its pointer. The x32 ABI is filtered by the same numbers.
 * A non-root process can install a filter only with no_new_privs, which
 * also keeps setuid programs (sudo) and file capabilities from raising it
 * to a root that could leave the run.
 *
 * For root, whose processes could otherwise walk out of the run's cgroup:
 *  - a cgroup namespace rooted at the run (the child is already in it),
 *    and a mount namespace (slave to the host's, so the host's mounts
 *    still appear) in which every cgroup2 mount is replaced by one of that
 *    namespace, so that the run's cgroup is the root of what it sees: no
 *    cgroup.procs outside the run can be named;
 *  - the daemon's bpffs mounts are not in that namespace (its pinned
 *    programs and maps must not be unlinked from inside), nor is the
 *    daemon's directory of clock pages (an empty read-only tmpfs covers
 *    it: root opens any file, and another run's page, which its
 *    /proc/PID/maps names, holds that run's clock and seed), and /sys,
 *    /proc/sys and /proc/sysrq-trigger are read-only there (core_pattern,
 *    uevent_helper and the like start programs outside every run);
 *  - a bounding set without the capabilities that leave, or reach past,
 *    the run: CAP_SYS_ADMIN (mounts, setns back to the host's namespaces,
 *    BPF maps by id), CAP_BPF and CAP_NET_ADMIN (detach or replace the
 *    daemon's programs, reconfigure the host's network, tap devices),
 *    CAP_SYS_MODULE and CAP_SYS_RAWIO and CAP_SYS_BOOT (the kernel itself:
 *    modules, /dev/mem and ioperm, kexec), CAP_SYS_PTRACE (processes
 *    outside the run, the daemon and enroll among them: without it the
 *    kernel lets a process ptrace only same-uid, dumpable processes whose
 *    capabilities are a subset of its own), CAP_DAC_READ_SEARCH
 *    (open_by_handle_at reaches any cgroup directory by its handle). The
 *    inheritable and ambient sets are cleared of them too, since exec
 *    gives root its inheritable set back. Root keeps the rest: owning
 *    files, CAP_NET_RAW (raw packets still meet the daemon's egress hook),
 *    CAP_KILL, and CAP_SYS_TIME: with it the shim lets root move the run's
 *    own clock, as the kernel would, and the filter above refuses every
 *    call that would move the host's.
 * What root inside a run still can do: change files that processes outside
 * the run execute (the host's filesystem is its filesystem). Untrusted code
 * belongs to an unprivileged user (docs/reliability.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stddef.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/seccomp.h>
#include "util.h"
#include "cli.h"
#include "confine.h"

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif
#ifndef SOCK_PACKET
#define SOCK_PACKET 10
#endif
#define IPPROTO_SMC_ 256
#define X32_BIT 0x40000000u

/* ---- a tiny assembler for classic BPF, with forward labels ---- */
enum label { L_X86_64, L_I386, L_IOCTL64, L_IOCTL32, L_SOCK, L_INET, L_PROTO, L_SOCKETCALL,
	     L_ALLOW, L_EPERM, L_ENOSYS, L_EAFNOSUPPORT, L_EPROTONOSUPPORT, N_LABELS };

struct bpfb {
	struct sock_filter *ins;
	int n;
	int at[N_LABELS];
	struct {
		int insn;
		enum label l;
	} fix[64];
	int n_fix;
};

static void emit(struct bpfb *b, uint16_t code, uint32_t k)
{
	if (b->n == CONFINE_MAX_INSNS)
		die(EXIT_INTERNAL, "seccomp filter too long");
	b->ins[b->n++] = (struct sock_filter)BPF_STMT(code, k);
}

/* if (A == k) goto l; */
static void jeq(struct bpfb *b, uint32_t k, enum label l)
{
	emit(b, BPF_JMP | BPF_JEQ | BPF_K, k);
	if (b->n_fix == (int)ARRAY_SIZE(b->fix))
		die(EXIT_INTERNAL, "seccomp filter too long");
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

		if (to <= from || to - from - 1 > 255)
			die(EXIT_INTERNAL, "seccomp filter: bad jump");
		b->ins[from].jt = to - from - 1;
		b->ins[from].jf = 0;
	}
}

static void build_filter(struct confine *c)
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
	if (c->block_net) {
		jeq(&b, 102 /* socketcall */, L_SOCKETCALL);
		jeq(&b, 359 /* socket */, L_SOCK);
		jeq(&b, 360 /* socketpair */, L_SOCK);
		for (size_t i = 0; i < ARRAY_SIZE(uring); i++)
			jeq(&b, uring[i], L_ENOSYS);
	}
	emit(&b, BPF_RET | BPF_K, SECCOMP_RET_ALLOW);

	label(&b, L_IOCTL64);
	load(&b, ARG(1));
	for (size_t i = 0; i < ARRAY_SIZE(rtc64); i++)
		jeq(&b, rtc64[i], L_EPERM);
	emit(&b, BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	label(&b, L_IOCTL32);
	load(&b, ARG(1));
	for (size_t i = 0; i < ARRAY_SIZE(rtc32); i++)
		jeq(&b, rtc32[i], L_EPERM);
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
	link_labels(&b);
	c->prog = (struct sock_fprog){ .len = b.n, .filter = c->insns };
}

/* ---- mounts, read before the fork ---- */

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape(char *s)
{
	char *o = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*o++ = *s;
		}
	}
	*o = 0;
}

static unsigned long mount_flags(const char *opts)
{
	static const struct {
		const char *name;
		unsigned long flag;
	} map[] = { { "ro", MS_RDONLY },	 { "nosuid", MS_NOSUID },   { "nodev", MS_NODEV },
		    { "noexec", MS_NOEXEC },	 { "noatime", MS_NOATIME }, { "nodiratime", MS_NODIRATIME },
		    { "relatime", MS_RELATIME } };
	char buf[256], *save, *t;
	unsigned long f = 0;

	snprintf(buf, sizeof(buf), "%s", opts);
	for (t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
		for (size_t i = 0; i < ARRAY_SIZE(map); i++)
			if (!strcmp(t, map[i].name))
				f |= map[i].flag;
	return f;
}

static void add_mount(struct confine_mount *v, int *n, int max, const char *path, unsigned long fl)
{
	if (*n == max)
		die(EXIT_INTERNAL, "cannot confine the run: more than %d mounts to handle under %s", max,
		    path);
	snprintf(v[*n].path, sizeof(v[*n].path), "%s", path);
	v[(*n)++].flags = fl;
}

static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return !strncmp(path, dir, n) && (path[n] == '/' || path[n] == 0);
}

static void read_mounts(struct confine *c)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096];

	if (!f)
		die(EXIT_INTERNAL, "cannot confine the run: /proc/self/mountinfo: %s", strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		char mp[1024], opts[256], type[64], *sep = strstr(line, " - ");

		if (!sep || sscanf(line, "%*s %*s %*s %*s %1023s %255s", mp, opts) != 2 ||
		    sscanf(sep + 3, "%63s", type) != 1)
			continue;
		unescape(mp);
		if (strlen(mp) >= sizeof(c->ro[0].path))
			die(EXIT_INTERNAL, "cannot confine the run: mount point too long: %s", mp);
		if (!strcmp(type, "cgroup2"))
			add_mount(c->cgroup2, &c->n_cgroup2, ARRAY_SIZE(c->cgroup2), mp, mount_flags(opts));
		else if (!strcmp(type, "bpf"))
			add_mount(c->bpf, &c->n_bpf, ARRAY_SIZE(c->bpf), mp, 0);
		else if (under(mp, "/sys"))
			add_mount(c->ro, &c->n_ro, CONFINE_MAX_MOUNTS, mp, mount_flags(opts));
	}
}

void confine_prepare(struct confine *c, bool on, bool block_net)
{
	memset(c, 0, sizeof(*c));
	c->on = on;
	c->block_net = block_net;
	c->root = geteuid() == 0;
	if (!on)
		return;
	build_filter(c);
	if (c->root)
		read_mounts(c);
}

/* ---- in the child ---- */

static const int drop_caps[] = { CAP_SYS_ADMIN,  CAP_BPF,	     CAP_NET_ADMIN, CAP_SYS_MODULE,
				 CAP_SYS_RAWIO,  CAP_SYS_BOOT,  CAP_SYS_PTRACE, CAP_DAC_READ_SEARCH };

#define FAIL(what)                                                                                \
	do {                                                                                       \
		*ret_what = (what);                                                                \
		return -errno;                                                                     \
	} while (0)

static int ro_bind(const char *path, unsigned long flags, const char **ret_what)
{
	if (mount(path, path, NULL, MS_BIND, NULL) < 0)
		FAIL("bind /proc/sys");
	if (mount(NULL, path, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | flags, NULL) < 0)
		FAIL("make /proc/sys read-only");
	return 0;
}

static int root_namespaces(const struct confine *c, const char **ret_what)
{
	int r;

	/* The child is in the run's cgroup already: the namespace's root is
	 * the run. */
	if (unshare(CLONE_NEWCGROUP | CLONE_NEWNS) < 0)
		FAIL("unshare(CLONE_NEWCGROUP | CLONE_NEWNS)");
	/* Slave: the host's mounts keep appearing, ours stay ours. */
	if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0)
		FAIL("make / a slave mount");
	for (int i = c->n_bpf - 1; i >= 0; i--)
		if (umount2(c->bpf[i].path, MNT_DETACH) < 0 && errno != EINVAL && errno != ENOENT)
			FAIL("hide a bpffs mount");
	for (int i = 0; i < c->n_cgroup2; i++) {
		const char *p = c->cgroup2[i].path;

		if (umount2(p, MNT_DETACH) < 0 && errno != EINVAL)
			FAIL("unmount the host's cgroup2");
		if (mount("cgroup2", p, "cgroup2",
			  (c->cgroup2[i].flags & (MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RELATIME)), NULL) <
		    0)
			FAIL("mount the run's cgroup2");
	}
	/* Deepest first does not matter: each remount touches one mount. */
	for (int i = 0; i < c->n_ro; i++) {
		bool cg = false;

		for (int k = 0; k < c->n_cgroup2; k++)
			cg |= !strcmp(c->ro[i].path, c->cgroup2[k].path);
		if (cg)
			continue;
		if (mount(NULL, c->ro[i].path, NULL,
			  MS_BIND | MS_REMOUNT | MS_RDONLY |
				  (c->ro[i].flags & (MS_NOSUID | MS_NODEV | MS_NOEXEC)),
			  NULL) < 0 &&
		    errno != EINVAL && errno != ENOENT)
			FAIL("make /sys read-only");
	}
	/* The run's own page comes as a descriptor: it needs no path. */
	if (c->hide[0] && mount("hermetic", c->hide, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
				"size=4k,nr_inodes=1,mode=0") < 0)
		FAIL("hide hermeticd's clock pages");
	if ((r = ro_bind("/proc/sys", MS_NOSUID | MS_NODEV | MS_NOEXEC, ret_what)) < 0)
		return r;
	if ((r = ro_bind("/proc/sysrq-trigger", MS_NOSUID | MS_NODEV | MS_NOEXEC, ret_what)) < 0 &&
	    r != -ENOENT)
		return r;
	return 0;
}

static int root_caps(const char **ret_what)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];

	for (size_t i = 0; i < ARRAY_SIZE(drop_caps); i++)
		if (prctl(PR_CAPBSET_DROP, drop_caps[i], 0, 0, 0) < 0)
			FAIL("drop capabilities from the bounding set");
	if (syscall(SYS_capget, &h, d) < 0)
		FAIL("capget");
	for (size_t i = 0; i < ARRAY_SIZE(drop_caps); i++)
		d[drop_caps[i] / 32].inheritable &= ~(1u << (drop_caps[i] % 32));
	if (syscall(SYS_capset, &h, d) < 0)
		FAIL("capset");
	return 0;
}

int confine_child(const struct confine *c, const char **ret_what)
{
	int r;

	*ret_what = NULL;
	if (!c->on)
		return 0;
	if (c->root && (r = root_namespaces(c, ret_what)) < 0)
		return r;
	/* Exec must not hand back what the run may not have. */
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		FAIL("clear the ambient capabilities");
	if (c->root && (r = root_caps(ret_what)) < 0)
		return r;
	if (!c->root && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		FAIL("set no_new_privs");
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &c->prog, 0, 0) < 0)
		FAIL("install the seccomp filter");
	return 0;
}
