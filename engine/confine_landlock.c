// SPDX-License-Identifier: MIT
/*
 * The run's Landlock domain: what keeps a run's processes from acting on
 * processes outside it (docs/reliability.md, "Containment").
 *
 * Landlock needs no privilege, works for root and non-root, in containers
 * and chroots, and its domain is inherited by every process of the run
 * (static binaries and raw syscalls too). Whatever the ruleset handles, a
 * process in a Landlock domain
 *  - may ptrace, or pass the kernel's ptrace access check for, only
 *    processes in its own domain or one nested in it (ABI 1): so no
 *    PTRACE_ATTACH, /proc/PID/{mem,maps,environ,root,cwd,fd,map_files,ns},
 *    process_vm_readv/writev, pidfd_getfd or kcmp on a process outside the
 *    run: not the user's editor or shell, not enroll, not another run of the
 *    same user (each run is a domain of its own, a sibling), not the
 *    daemon. /proc/PID/root is how root in a run reached the host's mount
 *    namespace and the daemon's pins: that is closed by the same check;
 *  - with LANDLOCK_SCOPE_SIGNAL (ABI 6, kernel 6.12) may signal (kill,
 *    sigqueue, F_SETOWN's SIGIO) only processes of its domain. On older
 *    kernels signals to the user's other processes still go through:
 *    `hermetic status` and the run's --report say so.
 * A domain needs a ruleset that handles something. Where scoping exists
 * (ABI >= 6) the ruleset handles only the signal scope; before it, it
 * handles the creation of block devices (LANDLOCK_ACCESS_FS_MAKE_BLOCK)
 * with no rule allowing it, which no test needs and which keeps root from
 * making a node for the host's disk.
 *
 * Root without CAP_SYS_ADMIN (an ordinary container) gets no mount or
 * cgroup namespace of its own (confine.c), so its view of the cgroup2
 * hierarchy is the container's, where writing cgroup.procs would move a
 * process out of the run's cgroup (and with it out of the blocked network).
 * There the ruleset also handles LANDLOCK_ACCESS_FS_WRITE_FILE and allows it
 * everywhere except beneath /sys and every cgroup2 mount: rules on each
 * entry of each ancestor directory of those, computed before the fork
 * (confine_landlock_plan). Files later created directly in such an
 * ancestor ("/" itself) cannot be opened for writing either: said in the
 * report.
 *
 * Landlock restricts only the caller: enroll's child calls
 * landlock_restrict_self() after namespaces and capabilities and before
 * the seccomp filter, with no_new_privs set or CAP_SYS_ADMIN in effect.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <linux/landlock.h>
#include "util.h"
#include "engine.h"
#include "confine.h"

#ifndef LANDLOCK_CREATE_RULESET_VERSION
#define LANDLOCK_CREATE_RULESET_VERSION (1U << 0)
#endif
#define LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define LL_SCOPE_SIGNAL (1ULL << 1)

/* The ruleset attributes up to ABI 6; the kernel takes a prefix of them. */
struct ll_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;
	uint64_t scoped;
};

static void closedirp(DIR **d)
{
	if (*d)
		closedir(*d);
}
#define _cleanup_closedir_ _cleanup_(closedirp)

struct ll_beneath {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

int confine_landlock_abi(void)
{
	long v = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);

	return v < 0 ? -errno : (int)v;
}

const char *confine_landlock_why(int abi)
{
	switch (-abi) {
	case ENOSYS:
		return "this kernel has no Landlock";
	case EOPNOTSUPP:
		return "Landlock is disabled at boot (lsm= lacks landlock)";
	case EPERM:
	case EACCES:
		return "the container's seccomp profile refuses Landlock";
	default:
		return strerror(-abi);
	}
}

static int add_path(struct confine *c, const char *path)
{
	if (c->n_ll_paths == CONFINE_MAX_LL_PATHS)
		return -E2BIG;
	if (strlen(path) >= sizeof(c->ll_paths[0]))
		return -ENAMETOOLONG;
	snprintf(c->ll_paths[c->n_ll_paths++], sizeof(c->ll_paths[0]), "%s", path);
	return 0;
}

static bool is_or_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (n == 1)
		return true; /* "/" */
	return !strncmp(path, dir, n) && (path[n] == '/' || path[n] == 0);
}

/* Rules for every entry of dir except the excluded paths, recursing into
 * the entries that lie on the way to one of them. */
static int allow_all_but(struct confine *c, const char *dir, char ex[][256], int n_ex, int depth)
{
	_cleanup_closedir_ DIR *d = opendir(dir);
	struct dirent *de;
	char path[256];
	int r;

	if (!d)
		return -errno;
	if (depth > 16)
		return -ELOOP;
	while ((de = readdir(d))) {
		bool skip = false, on_way = false;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", strcmp(dir, "/") ? dir : "",
				     de->d_name) >= sizeof(path))
			return -ENAMETOOLONG;
		for (int i = 0; i < n_ex; i++) {
			skip |= !strcmp(path, ex[i]);
			on_way |= is_or_under(ex[i], path) && strcmp(path, ex[i]);
		}
		if (skip)
			continue;
		r = on_way ? allow_all_but(c, path, ex, n_ex, depth + 1) : add_path(c, path);
		if (r < 0)
			return r;
	}
	return 0;
}

int confine_landlock_plan(struct confine *c)
{
	char ex[CONFINE_MAX_MOUNTS + 1][256];
	int n_ex = 0;

	c->ll_fs = 0;
	c->ll_scoped = 0;
	c->n_ll_paths = 0;
	if (c->landlock_abi <= 0)
		return 0;
	if (c->landlock_abi >= 6)
		c->ll_scoped = LL_SCOPE_SIGNAL;
	else
		c->ll_fs = LANDLOCK_ACCESS_FS_MAKE_BLOCK;
	if (!c->root || c->ns != CONFINE_NS_NONE)
		return 0;
	/* Root without namespaces: no writes beneath /sys or any cgroup2. */
	snprintf(ex[n_ex++], sizeof(ex[0]), "/sys");
	for (int i = 0; i < c->n_cgroup2; i++)
		if (!is_or_under(c->cgroup2[i].path, "/sys"))
			snprintf(ex[n_ex++], sizeof(ex[0]), "%s", c->cgroup2[i].path);
	for (int i = 0; i < n_ex; i++)
		if (!strcmp(ex[i], "/"))
			return -EINVAL; /* a cgroup2 mounted at /: nothing could be written */
	c->ll_fs |= LANDLOCK_ACCESS_FS_WRITE_FILE;
	c->ll_writes_limited = true;
	return allow_all_but(c, "/", ex, n_ex, 0);
}

#define FAIL(what)                                                                                \
	do {                                                                                       \
		*ret_what = (what);                                                                \
		r = -errno;                                                                        \
		goto out;                                                                          \
	} while (0)

/* In the child, before exec: only syscalls. */
int confine_landlock_apply(const struct confine *c, const char **ret_what)
{
	struct ll_attr attr = { .handled_access_fs = c->ll_fs, .scoped = c->ll_scoped };
	size_t size = c->ll_scoped ? sizeof(attr) : sizeof(attr.handled_access_fs);
	int rs = -1, r = 0;

	if (c->landlock_abi <= 0)
		return 0;
	rs = (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0);
	if (rs < 0)
		FAIL("create the Landlock ruleset");
	for (int i = 0; i < c->n_ll_paths; i++) {
		struct ll_beneath pb = { .allowed_access = LANDLOCK_ACCESS_FS_WRITE_FILE };
		struct stat st;

		pb.parent_fd = open(c->ll_paths[i], O_PATH | O_CLOEXEC | O_NOFOLLOW);
		if (pb.parent_fd < 0)
			continue; /* gone since the plan, or a dangling link: nothing to allow */
		/* On a file only file rights may be given; a link's target is
		 * allowed by the rule for where it lies. */
		if (fstat(pb.parent_fd, &st) == 0 && !S_ISLNK(st.st_mode) &&
		    syscall(SYS_landlock_add_rule, rs, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) < 0 &&
		    errno != EINVAL) {
			close(pb.parent_fd);
			FAIL("add a Landlock rule");
		}
		close(pb.parent_fd);
	}
	if (syscall(SYS_landlock_restrict_self, rs, 0) < 0)
		FAIL("enter the Landlock domain");
out:
	if (rs >= 0)
		close(rs);
	return r;
}
