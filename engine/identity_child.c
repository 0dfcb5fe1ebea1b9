// SPDX-License-Identifier: MIT
/*
 * A pinned identity applied in enroll's child between fork and exec, where
 * the kernel can say it to every process of the run, static and Go
 * binaries included: only async-signal-safe calls (no snprintf, no malloc).
 *
 * Root with CAP_SYS_ADMIN (identity_prepare's ns) gets:
 *  - a UTS namespace of the run's own, so sethostname and setdomainname
 *    change only what the run's processes see (uname, gethostname,
 *    /proc/sys/kernel/hostname), never the machine's name;
 *  - a mount namespace whose mounts are first made slaves of the host's
 *    (so nothing bound here propagates out), in which the generated files
 *    are bound over /proc/cpuinfo, /proc/stat, /proc/meminfo, the CPU lists
 *    under /sys/devices/system/cpu and /etc/hostname. confine_child then
 *    makes a namespace of its own inside this one (copying these binds) and
 *    drops CAP_SYS_ADMIN: nothing in the run can take them off.
 * Every run with an identity gets the real affinity of `cpus` CPUs (where
 * the machine has them), the umask and the descriptor limit.
 */
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include "util.h"
#include "identity.h"

#define FAIL(what)                                                                                \
	do {                                                                                       \
		*ret_what = (what);                                                                \
		return -errno;                                                                     \
	} while (0)

/* dir + "/" + name into buf (async-signal-safe). */
static const char *join(char *buf, size_t size, const char *dir, const char *name)
{
	size_t a = strlen(dir), b = strlen(name);

	if (a + 1 + b + 1 > size)
		return NULL;
	memcpy(buf, dir, a);
	buf[a] = '/';
	memcpy(buf + a + 1, name, b + 1);
	return buf;
}

/* A read-only bind of the generated file over target. A target the
 * machine lacks (no /etc/hostname) is skipped: there is nothing to hide.
 * A symlink is skipped too: the bind would land on what it points to
 * (/etc/localtime -> zoneinfo/Etc/UTC would make "Etc/UTC" another zone). */
static int bind_file(const char *src, const char *target, const char **ret_what)
{
	struct stat st;

	if (lstat(target, &st) < 0 || !S_ISREG(st.st_mode))
		return 0;
	if (mount(src, target, NULL, MS_BIND, NULL) < 0)
		FAIL("bind an identity file");
	if (mount(NULL, target, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV |
			MS_NOEXEC, NULL) < 0)
		FAIL("make an identity file read-only");
	return 0;
}

static int bind_generated(const struct run_identity *id, const char *name, const char *target,
			  const char **ret_what)
{
	char src[PATH_MAX];

	if (!join(src, sizeof(src), id->dir_files.path, name)) {
		errno = ENAMETOOLONG;
		FAIL("name an identity file");
	}
	return bind_file(src, target, ret_what);
}

static int namespaces(const struct run_identity *id, const char **ret_what)
{
	const struct identity_axes *ax = &id->ax;
	int r = 0;

	if (unshare(CLONE_NEWNS | CLONE_NEWUTS) < 0)
		FAIL("unshare(CLONE_NEWNS | CLONE_NEWUTS)");
	/* Before the first bind: ours must never reach the host's namespace.
	 * (identity_prepare's ns is confine's CONFINE_NS_FULL: / is a mount.) */
	if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0)
		FAIL("make / a slave mount");
	if (ax->hostname[0] && sethostname(ax->hostname, strlen(ax->hostname)) < 0)
		FAIL("sethostname");
	if (ax->domain[0] && setdomainname(ax->domain, strlen(ax->domain)) < 0)
		FAIL("setdomainname");
	if (ax->cpus &&
	    ((r = bind_generated(id, "cpuinfo", "/proc/cpuinfo", ret_what)) < 0 ||
	     (r = bind_generated(id, "stat", "/proc/stat", ret_what)) < 0 ||
	     (r = bind_generated(id, "cpulist", "/sys/devices/system/cpu/online", ret_what)) < 0 ||
	     (r = bind_generated(id, "cpulist", "/sys/devices/system/cpu/possible", ret_what)) < 0 ||
	     (r = bind_generated(id, "cpulist", "/sys/devices/system/cpu/present", ret_what)) < 0))
		return r;
	if (ax->memory_kb && (r = bind_generated(id, "meminfo", "/proc/meminfo", ret_what)) < 0)
		return r;
	if (ax->hostname[0] && (r = bind_generated(id, "hostname", "/etc/hostname", ret_what)) < 0)
		return r;
	if (ax->tz[0] && (r = bind_file(id->zone_file, "/etc/localtime", ret_what)) < 0)
		return r;
	return 0;
}

/* Soft limit `nofile`; the hard one IDENTITY_NOFILE_HARD where we may
 * (lowering is always allowed, raising needs CAP_SYS_RESOURCE), else the
 * machine's (identity_prepare says so). */
static int limits(const struct identity_axes *ax, const char **ret_what)
{
	struct rlimit rl = { .rlim_cur = ax->nofile, .rlim_max = IDENTITY_NOFILE_HARD };
	struct rlimit cur;

	if (setrlimit(RLIMIT_NOFILE, &rl) == 0)
		return 0;
	if (getrlimit(RLIMIT_NOFILE, &cur) < 0)
		FAIL("getrlimit(RLIMIT_NOFILE)");
	rl.rlim_max = cur.rlim_max;
	if (rl.rlim_cur > rl.rlim_max)
		rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
		FAIL("setrlimit(RLIMIT_NOFILE)");
	return 0;
}

int identity_child(const struct run_identity *id, const char **ret_what)
{
	int r;

	*ret_what = NULL;
	if (!id->prepared)
		return 0;
	if (id->ns && (r = namespaces(id, ret_what)) < 0)
		return r;
	/* EINVAL: a cpuset narrower than the plan; the shim still says `cpus` */
	if (id->set_mask && sched_setaffinity(0, sizeof(id->mask), &id->mask) < 0 && errno != EINVAL)
		FAIL("sched_setaffinity");
	if (id->ax.umask >= 0)
		umask((mode_t)id->ax.umask);
	if (id->ax.nofile && (r = limits(&id->ax, ret_what)) < 0)
		return r;
	return 0;
}
