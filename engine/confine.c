// SPDX-License-Identifier: MIT
/*
 * The kernel backstop of a run, installed in enroll's child before CMD's
 * first instruction and inherited by every process of the run (static
 * binaries, raw syscalls and all). `enroll --confine off` is the one
 * opt-out, for suites that manage the machine. docs/containment.md has the
 * layers, what each kernel and privilege gives, and the trust model.
 *
 * A Landlock domain per run (confine_landlock.c) keeps its processes from
 * acting on any process outside it (ptrace access checks, signals), and the
 * seccomp filter (confine_filter.c) refuses bpf(), so no run reaches the
 * daemon's pinned maps and links whatever path to them it finds.
 *
 * A seccomp filter, for every run:
 *  - setting the host's clock is refused (clock_settime for every clock
 *    id, PTP clocks included, settimeofday, adjtimex, clock_adjtime; on the
 *    i386 ABI also stime and the *64 forms; and the hardware clock's
 *    RTC_SET_TIME and RTC_EPOCH_SET ioctls): EPERM. The shim moves the
 *    run's own clock without a syscall, so only what bypasses it reaches
 *    the filter;
 *  - TIOCSTI and TIOCLINUX (EPERM): typed into the terminal enroll runs
 *    on, a command runs in the user's shell after enroll exits, outside
 *    every run;
 *  - clone3 (ENOSYS, as Docker's profile answers it; libc falls back to
 *    clone): CLONE_INTO_CGROUP starts a child in any cgroup whose
 *    directory the caller can open and whose common ancestor's cgroup.procs
 *    it may write (container root, its own cgroup namespace);
 *  - perf_event_open of every process (pid -1) or of a cgroup (EPERM):
 *    samples of processes outside the run;
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
 * For root with CAP_SYS_ADMIN, whose processes could otherwise walk out of
 * the run's cgroup (root without it, in a container, gets Landlock rules
 * that refuse writes under /sys and cgroup2 instead: confine_landlock.c;
 * root in a chroot whose / is not a mount point gets its mounts made slaves
 * one by one: make_slave):
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
 *    (open_by_handle_at reaches any cgroup directory by its handle),
 *    CAP_PERFMON, CAP_SYSLOG and CAP_CHECKPOINT_RESTORE (they read or
 *    steer other processes: perf, kernel addresses, their memory), and,
 *    where the network is blocked and --raw-sockets was not given,
 *    CAP_NET_RAW (raw packets choose their own source). The
 *    inheritable and ambient sets are cleared of them too, since exec
 *    gives root its inheritable set back. Root keeps the rest: owning
 *    files, CAP_KILL, and CAP_SYS_TIME: with it the shim lets root move the run's
 *    own clock, as the kernel would, and the filter above refuses every
 *    call that would move the host's.
 * What root inside a run still can do: change files that processes outside
 * the run execute (the host's filesystem is its filesystem). Untrusted code
 * belongs to an unprivileged user (docs/reliability.md).
 */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <sched.h>
#include <stddef.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/seccomp.h>
#include "util.h"
#include "engine.h"
#include "confine.h"

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

static int refuse(struct confine *c, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int refuse(struct confine *c, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->refuse, sizeof(c->refuse), fmt, ap);
	va_end(ap);
	return err;
}

/* Each failure below says why in c->refuse, and the run is not started
 * (launch.c: "cannot confine the run: WHY"). */
static int add_mount(struct confine *c, struct confine_mount *v, int *n, int max, const char *path,
		     unsigned long fl, int id, int parent)
{
	if (*n == max)
		return refuse(c, -E2BIG, "more than %d mounts to handle under %s", max, path);
	snprintf(v[*n].path, sizeof(v[*n].path), "%s", path);
	v[*n].flags = fl;
	v[*n].id = id;
	v[(*n)++].parent = parent;
	return 0;
}

static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return !strncmp(path, dir, n) && (path[n] == '/' || path[n] == 0);
}

/* Line by line: ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS ... - TYPE SOURCE SUPEROPTS */
static int read_mounts(struct confine *c)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096];
	int r = 0;

	if (!f)
		return refuse(c, -errno, "/proc/self/mountinfo: %s", strerror(errno));
	while (r == 0 && fgets(line, sizeof(line), f)) {
		char mp[1024], opts[256], type[64], *sep = strstr(line, " - ");
		int id, parent;

		if (!strchr(line, '\n'))
			return refuse(c, -EBADMSG, "a line of mountinfo is too long");
		if (!sep || sscanf(line, "%d %d %*s %*s %1023s %255s", &id, &parent, mp, opts) != 4 ||
		    sscanf(sep + 3, "%63s", type) != 1)
			return refuse(c, -EBADMSG, "cannot parse mountinfo: %s", line);
		unescape(mp);
		if (strlen(mp) >= sizeof(c->ro[0].path))
			return refuse(c, -ENAMETOOLONG, "mount point too long: %s", mp);
		if (!strcmp(mp, "/"))
			c->root_is_mount = true;
		r = add_mount(c, c->all, &c->n_all, ARRAY_SIZE(c->all), mp, mount_flags(opts), id,
			      parent);
		if (r == 0 && !strcmp(type, "cgroup2"))
			r = add_mount(c, c->cgroup2, &c->n_cgroup2, ARRAY_SIZE(c->cgroup2), mp,
				      mount_flags(opts), id, parent);
		else if (r == 0 && !strcmp(type, "bpf"))
			r = add_mount(c, c->bpf, &c->n_bpf, ARRAY_SIZE(c->bpf), mp, 0, id, parent);
		else if (r == 0 && under(mp, "/sys"))
			r = add_mount(c, c->ro, &c->n_ro, CONFINE_MAX_MOUNTS, mp, mount_flags(opts), id,
				      parent);
		if (!strcmp(mp, "/proc"))
			c->proc_mount = id;
	}
	return r;
}

static bool visible(const struct confine *c, int id)
{
	for (int i = 0; i < c->n_all; i++)
		if (c->all[i].id == id)
			return true;
	return false;
}

/*
 * In a chroot whose / is not a mount point (sbuild, pbuilder, a plain
 * chroot(8)) the mount that holds the root cannot be named, so it cannot be
 * made a slave: it stays a peer of the host's. A mount made, or a mount
 * unmounted, right under it would propagate to the host's namespace. Every
 * mount the namespace touches must hang off a mount we can see (and make a
 * slave, confine_child); otherwise enroll refuses here.
 */
static void check_chroot_targets(struct confine *c)
{
	for (int i = 0; i < c->n_bpf; i++)
		if (!visible(c, c->bpf[i].parent))
			snprintf(c->refuse, sizeof(c->refuse),
				 "the bpffs at %s is mounted right on this chroot's root, whose mount is "
				 "not visible here",
				 c->bpf[i].path);
	for (int i = 0; i < c->n_cgroup2; i++)
		if (!visible(c, c->cgroup2[i].parent))
			snprintf(c->refuse, sizeof(c->refuse),
				 "the cgroup2 at %s is mounted right on this chroot's root, whose mount "
				 "is not visible here",
				 c->cgroup2[i].path);
}

static bool have_cap(int cap)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];

	return syscall(SYS_capget, &h, d) == 0 && (d[cap / 32].effective & (1u << (cap % 32)));
}

/* Root without namespaces may write what the container lets it. /proc/sys
 * (core_pattern and the like start programs outside every run) must be
 * read-only already, as Docker and podman mount it. */
static void check_container(struct confine *c)
{
	struct statvfs sv;

	if (statvfs("/proc/sys", &sv) == 0 && !(sv.f_flag & ST_RDONLY)) {
		snprintf(c->refuse, sizeof(c->refuse),
			 "root here lacks CAP_SYS_ADMIN (a container?) and /proc/sys is writable,\n"
			 "  so the run's root processes could start programs outside the run\n"
			 "  (kernel.core_pattern). Mount /proc/sys read-only (Docker's and podman's\n"
			 "  default), run the job as an unprivileged user, or pass '--confine off'\n"
			 "  to accept that");
		return;
	}
	if (c->landlock_abi > 0)
		return;
	for (int i = 0; i < c->n_cgroup2; i++)
		if (!(c->cgroup2[i].flags & MS_RDONLY))
			snprintf(c->refuse, sizeof(c->refuse),
				 "root here lacks CAP_SYS_ADMIN (a container?) and %s (Landlock),\n"
				 "  so nothing keeps the run's root processes from leaving its cgroup\n"
				 "  through the writable cgroup2 at %s, and with it the blocked network.\n"
				 "  Run the job as an unprivileged user (best), mount the cgroup2\n"
				 "  read-only, or pass '--confine off' to accept that",
				 confine_landlock_why(c->landlock_abi), c->cgroup2[i].path);
}

void confine_prepare(struct confine *c, bool on, bool block_net)
{
	int r;

	/* (a quarter of a MiB: writing zeros over zeros would fault in every
	 * page, and the fork would copy them) */
	if (c->prepared)
		memset(c, 0, sizeof(*c));
	c->prepared = true;
	c->on = on;
	c->block_net = block_net;
	c->root = geteuid() == 0;
	if (!on)
		return;
	confine_build_filter(c);
	if (c->refuse[0])
		return;
	c->landlock_abi = confine_landlock_abi();
	c->have_sys_admin = have_cap(CAP_SYS_ADMIN);
	c->ns = CONFINE_NS_NONE;
	if (c->root) {
		if (read_mounts(c) < 0)
			return; /* c->refuse says why */
		if (!c->have_sys_admin) {
			c->ns_why = "no CAP_SYS_ADMIN here (a container)";
			check_container(c);
		} else if (c->root_is_mount) {
			c->ns = CONFINE_NS_FULL;
		} else {
			c->ns = CONFINE_NS_CHROOT;
			check_chroot_targets(c);
		}
	} else {
		c->ns_why = "not needed: an unprivileged user cannot leave the run's cgroup";
	}
	/* Without CAP_SYS_ADMIN, seccomp and Landlock need no_new_privs. */
	c->no_new_privs = !c->root || !c->have_sys_admin;
	if (!c->refuse[0] && (r = confine_landlock_plan(c)) < 0)
		snprintf(c->refuse, sizeof(c->refuse), "Landlock rules for writes: %s", strerror(-r));
}

/* ---- in the child ---- */

/* CAP_NET_RAW last: kept when the run asked for raw sockets (--raw-sockets)
 * or its network is not blocked. */
static const int drop_caps[] = { CAP_SYS_ADMIN,	 CAP_BPF,	  CAP_NET_ADMIN,
				 CAP_SYS_MODULE, CAP_SYS_RAWIO,	  CAP_SYS_BOOT,
				 CAP_SYS_PTRACE, CAP_DAC_READ_SEARCH, CAP_PERFMON,
				 CAP_SYSLOG,	 CAP_CHECKPOINT_RESTORE, CAP_NET_RAW };

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

/* Slave: the host's mounts keep appearing, ours stay ours. In a chroot
 * whose / is not a mount point, each mount we can see, one by one
 * (check_chroot_targets made sure every mount we touch hangs off one). */
static int make_slave(const struct confine *c, const char **ret_what)
{
	if (c->ns == CONFINE_NS_FULL) {
		if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0)
			FAIL("make / a slave mount");
		return 0;
	}
	for (int i = 0; i < c->n_all; i++)
		if (mount(NULL, c->all[i].path, NULL, MS_REC | MS_SLAVE, NULL) < 0 && errno != EINVAL &&
		    errno != ENOENT)
			FAIL("make the chroot's mounts slaves");
	return 0;
}

static bool is_ro_mount(const struct confine *c, int id)
{
	for (int i = 0; i < c->n_ro; i++)
		if (c->ro[i].id == id)
			return true;
	return false;
}

/* Every mount under /sys read-only: mount_setattr(AT_RECURSIVE) on each
 * top one (Linux 5.12), else a remount of each. */
static int sys_readonly(const struct confine *c, const char **ret_what)
{
	struct mount_attr ma = { .attr_set = MOUNT_ATTR_RDONLY };

	for (int i = 0; i < c->n_ro; i++) {
		if (is_ro_mount(c, c->ro[i].parent))
			continue; /* done with its parent */
		if (mount_setattr(AT_FDCWD, c->ro[i].path, AT_RECURSIVE, &ma, sizeof(ma)) == 0)
			continue;
		if (errno == ENOENT || errno == EINVAL)
			continue; /* gone, or overmounted by another listed mount */
		if (errno != ENOSYS)
			FAIL("make /sys read-only");
		for (int k = 0; k < c->n_ro; k++)
			if (mount(NULL, c->ro[k].path, NULL,
				  MS_BIND | MS_REMOUNT | MS_RDONLY |
					  (c->ro[k].flags & (MS_NOSUID | MS_NODEV | MS_NOEXEC)),
				  NULL) < 0 &&
			    errno != EINVAL && errno != ENOENT)
				FAIL("make /sys read-only");
		return 0;
	}
	return 0;
}

static int root_namespaces(const struct confine *c, const char **ret_what)
{
	int r;

	/* The child is in the run's cgroup already: the namespace's root is
	 * the run. */
	if (unshare(CLONE_NEWCGROUP | CLONE_NEWNS) < 0)
		FAIL("unshare(CLONE_NEWCGROUP | CLONE_NEWNS)");
	if ((r = make_slave(c, ret_what)) < 0)
		return r;
	/* /sys read-only first, recursively, one call per top mount; the run's
	 * cgroup2 goes on top of it afterwards, writable. */
	if ((r = sys_readonly(c, ret_what)) < 0)
		return r;
	/* Mounted over, never unmounted: an unmount waits for an RCU grace
	 * period (milliseconds each), a mount does not, and without
	 * CAP_SYS_ADMIN nothing in the run can take ours off. The pins stay
	 * the daemon's: no run can unlink one (bpf() itself is refused). */
	for (int i = 0; i < c->n_bpf; i++)
		if (mount("hermetic", c->bpf[i].path, "tmpfs",
			  MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,mode=0555") < 0 &&
		    errno != ENOENT)
			FAIL("hide a bpffs mount");
	/* The run's own cgroup2 over the host's, with a tmpfs between them:
	 * the kernel refuses a cgroup2 right on a mount of its own superblock
	 * (EBUSY), and an unmount would cost a grace period. */
	for (int i = 0; i < c->n_cgroup2; i++) {
		unsigned long fl = c->cgroup2[i].flags & (MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RELATIME);

		if (mount("hermetic", c->cgroup2[i].path, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
			  "size=4k,mode=0555") < 0)
			FAIL("hide the host's cgroup2");
		if (mount("cgroup2", c->cgroup2[i].path, "cgroup2", fl, NULL) < 0)
			FAIL("mount the run's cgroup2");
	}
	/* The run's own page comes as a descriptor: it needs no path. A
	 * directory this view lacks (a chroot) is out of reach already. */
	if (c->hide[0] && mount("hermetic", c->hide, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
				"size=4k,nr_inodes=1,mode=0") < 0 && errno != ENOENT)
		FAIL("hide hermeticd's clock pages");
	/* In a chroot without /proc there is no /proc/sys to protect; a bind
	 * there must hang off a /proc we could make a slave. */
	if (c->ns == CONFINE_NS_FULL || c->proc_mount) {
		if ((r = ro_bind("/proc/sys", MS_NOSUID | MS_NODEV | MS_NOEXEC, ret_what)) < 0 &&
		    r != -ENOENT)
			return r;
		if ((r = ro_bind("/proc/sysrq-trigger", MS_NOSUID | MS_NODEV | MS_NOEXEC, ret_what)) <
			    0 &&
		    r != -ENOENT)
			return r;
	}
	return 0;
}

/* Drop what leaves the run from the bounding and inheritable sets. Without
 * CAP_SETPCAP (some containers) a capability already absent from the
 * bounding set needs no dropping; one present would stay: refuse. */
static int root_caps(const struct confine *c, const char **ret_what)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];
	/* CAP_NET_RAW goes where the network is blocked, unless asked for:
	 * raw packets the egress hook would take for loopback's answered the
	 * test host (issue 25); with --network off nothing is refused anyway. */
	size_t n = ARRAY_SIZE(drop_caps) - (c->raw_sockets || !c->block_net ? 1 : 0);

	/* EINVAL: a capability newer than the kernel (CAP_PERFMON, CAP_BPF,
	 * CAP_CHECKPOINT_RESTORE before 5.8/5.9), which nothing can hold. */
	for (size_t i = 0; i < n; i++)
		if (prctl(PR_CAPBSET_DROP, drop_caps[i], 0, 0, 0) < 0 &&
		    !(errno == EPERM && prctl(PR_CAPBSET_READ, drop_caps[i], 0, 0, 0) == 0) &&
		    !(errno == EINVAL && drop_caps[i] >= CAP_PERFMON))
			FAIL("drop capabilities from the bounding set");
	if (syscall(SYS_capget, &h, d) < 0)
		FAIL("capget");
	for (size_t i = 0; i < n; i++)
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
	if (c->ns != CONFINE_NS_NONE && (r = root_namespaces(c, ret_what)) < 0)
		return r;
	/* Exec must not hand back what the run may not have. */
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		FAIL("clear the ambient capabilities");
	if (c->root && (r = root_caps(c, ret_what)) < 0)
		return r;
	if (c->no_new_privs && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		FAIL("set no_new_privs");
	/* Checked: the domain is what keeps the run from other processes. */
	if (c->no_new_privs && prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
		FAIL("check no_new_privs");
	if ((r = confine_landlock_apply(c, ret_what)) < 0)
		return r;
	/* Merged: supervise_child installs it with the supervisor's, right
	 * after (launch.c); nothing between the two runs CMD's code. */
	return c->merged ? 0 : confine_install_filter(c, ret_what);
}

int confine_install_filter(const struct confine *c, const char **ret_what)
{
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &c->prog, 0, 0) < 0)
		FAIL("install the seccomp filter");
	return 0;
}
