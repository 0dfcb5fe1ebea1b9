// SPDX-License-Identifier: MIT
/*
 * hermeticd's cgroup v2 subtree: found from /proc/self/mountinfo (never
 * assumed: hosts with the hybrid layout mount it at .../unified), one child
 * cgroup per run.
 */
#include <fcntl.h>
#include <dirent.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/magic.h>
#include <inttypes.h>
#include "util.h"
#include "daemon.h"

static int remove_tree(int dir, const char *name, int depth);

/* mountinfo: "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [OPTIONAL...] - FSTYPE SOURCE SUPER" */
static int find_cgroup2(char *ret, size_t size)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096];

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char mnt[1024], *sep = strstr(line, " - ");
		char fstype[64];

		if (!sep || sscanf(sep + 3, "%63s", fstype) != 1 || strcmp(fstype, "cgroup2"))
			continue;
		if (sscanf(line, "%*s %*s %*s %*s %1023s", mnt) != 1)
			continue;
		/* Octal escapes (\040 for space) are not expected in a cgroup
		 * mount point; refuse rather than mis-parse one. */
		if (strchr(mnt, '\\') || strlen(mnt) >= size)
			continue;
		snprintf(ret, size, "%s", mnt);
		return 0;
	}
	return -ENOENT;
}

/* Delegate=yes: systemd hands us the unit's cgroup, and its rules (and the
 * kernel's, once a controller is enabled) allow processes only in leaves.
 * The daemon goes into <own>/daemon and the subtree beside it. A
 * restarted daemon starts in <own> again (systemd puts it there) and moves
 * into the same leaf; the runs in <own>/<subtree> were never the unit's
 * processes to kill (KillMode=process in hermeticd.service). This part
 * only finds <own>; hmd_cgroup_setup() moves. */
static int delegated_parent(struct hmd_cgroup *cg)
{
	char buf[8192], own[1024], *p;
	ssize_t n = hm_read_file_at(AT_FDCWD, "/proc/self/cgroup", buf, sizeof(buf));
	int r;

	if (n < 0)
		return n;
	if ((size_t)n >= sizeof(buf) - 1)
		return -EFBIG;
	/* Only the line that starts with "0::" (a v1 path may hold "0::"). */
	r = hm_cgroup_v2_path(buf, own, sizeof(own));
	if (r < 0)
		return r;
	p = own + 1;
	/* Already in our leaf (started twice in one unit, or by hand): the
	 * delegated cgroup is the leaf's parent. */
	{
		char *slash = strrchr(p, '/');

		if (!strcmp(slash ? slash + 1 : p, "daemon"))
			*(slash ? slash : p) = 0;
	}
	if (!*p) {
		hmd_err("--delegated: hermeticd runs in the root cgroup, which is not delegated "
			"to it (start it from a unit with Delegate=yes)");
		return -EPERM;
	}
	if (strlen(p) >= sizeof(cg->parent))
		return -ENAMETOOLONG;
	snprintf(cg->parent, sizeof(cg->parent), "%s", p);
	return 0;
}

static int delegate(struct hmd_cgroup *cg)
{
	char path[1536];

	snprintf(path, sizeof(path), "%s/%s/daemon", cg->mount, cg->parent);
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		return -errno;
	/* "0": this process, with all its threads (there are none yet). */
	snprintf(path, sizeof(path), "%s/%s/daemon/cgroup.procs", cg->mount, cg->parent);
	return hm_write_file_at(AT_FDCWD, path, "0");
}

int hmd_cgroup_locate(struct hmd_cgroup *cg, const char *name, const char *runtime_dir,
		      bool delegated)
{
	int r;

	cg->subtree_fd = -1;
	cg->mounted_by_us = false;
	cg->parent[0] = 0;
	r = find_cgroup2(cg->mount, sizeof(cg->mount));
	if (r == -ENOENT) {
		/* No cgroup v2 anywhere: mount one of our own. */
		snprintf(cg->mount, sizeof(cg->mount), "%s/cgroup2", runtime_dir);
		if (mkdir(cg->mount, 0755) < 0 && errno != EEXIST)
			return -errno;
		if (mount("cgroup2", cg->mount, "cgroup2", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
			return -errno;
		cg->mounted_by_us = true;
	} else if (r < 0) {
		return r;
	}
	if (strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, "..") ||
	    !strcmp(name, "daemon") || !*name)
		return -EINVAL;
	if (delegated) {
		r = delegated_parent(cg);
		if (r < 0)
			return r;
	}
	if ((size_t)snprintf(cg->subtree, sizeof(cg->subtree), "%s%s%s/%s", cg->mount,
			     *cg->parent ? "/" : "", cg->parent, name) >= sizeof(cg->subtree))
		return -ENAMETOOLONG;
	return 0;
}

int hmd_cgroup_setup(struct hmd_cgroup *cg)
{
	int r;

	if (cg->parent[0]) {
		r = delegate(cg);
		if (r < 0)
			return r;
	}
	if (mkdir(cg->subtree, 0755) < 0 && errno != EEXIST)
		return -errno;
	cg->subtree_fd = open(cg->subtree, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cg->subtree_fd < 0)
		return -errno;
	/* Runs left behind by a daemon before us are adopted or removed by
	 * hmd_runs_adopt() (adopt.c), once the pinned maps are loaded. */
	return 0;
}

void hmd_cgroup_teardown(struct hmd_cgroup *cg)
{
	if (cg->subtree_fd >= 0) {
		close(cg->subtree_fd);
		cg->subtree_fd = -1;
		if (rmdir(cg->subtree) < 0)
			hmd_warn("Failed to remove cgroup '%s': %s", cg->subtree, strerror(errno));
	}
	if (cg->mounted_by_us && umount2(cg->mount, MNT_DETACH) == 0)
		rmdir(cg->mount);
}

int hmd_cgroup_create_run(struct hmd_cgroup *cg, uint64_t run_id, int *ret_fd, uint64_t *ret_cgid,
			  char *ret_path, size_t path_size)
{
	char name[32];
	struct stat st;
	int fd;

	snprintf(name, sizeof(name), "run-%" PRIu64, run_id);
	if (mkdirat(cg->subtree_fd, name, 0755) < 0)
		return -errno;
	fd = openat(cg->subtree_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		int r = -errno;

		if (fd >= 0)
			close(fd);
		unlinkat(cg->subtree_fd, name, AT_REMOVEDIR);
		return r;
	}
	/* On cgroup v2 the cgroup id that bpf_get_current_cgroup_id() returns
	 * is the kernfs node id, which is the directory's inode number. */
	*ret_cgid = st.st_ino;
	*ret_fd = fd;
	snprintf(ret_path, path_size, "%s/%s", cg->subtree, name);
	return 0;
}

int hmd_cgroup_populated(int run_fd)
{
	char buf[256];
	ssize_t n = hm_read_file_at(run_fd, "cgroup.events", buf, sizeof(buf));

	if (n < 0)
		return n;
	return hm_cgroup_events_populated(buf);
}

int hmd_cgroup_kill(int run_fd)
{
	return hm_write_file_at(run_fd, "cgroup.kill", "1");
}

/* Remove dir/name and every cgroup below it, deepest first. Processes
 * of a run (root ones) may have made cgroups inside it; they must not keep
 * the run from going. Bounded depth: the kernel's cgroup.max.depth aside,
 * a run's tree deeper than this is left and logged by the caller. */
static int remove_tree(int dir, const char *name, int depth)
{
	_cleanup_close_ int fd = -1;
	struct dirent *de;
	DIR *d;

	if (unlinkat(dir, name, AT_REMOVEDIR) == 0)
		return 0;
	if ((errno != EBUSY && errno != ENOTEMPTY) || depth > 32)
		return -errno;
	fd = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	d = fdopendir(dup(fd));
	if (!d)
		return -ENOMEM;
	while ((de = readdir(d)))
		if (de->d_type == DT_DIR && strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			remove_tree(fd, de->d_name, depth + 1);
	closedir(d);
	return unlinkat(dir, name, AT_REMOVEDIR) < 0 ? -errno : 0;
}

int hmd_cgroup_remove_run(struct hmd_cgroup *cg, uint64_t run_id)
{
	char name[32];

	snprintf(name, sizeof(name), "run-%" PRIu64, run_id);
	return remove_tree(cg->subtree_fd, name, 0);
}

int hmd_cgroup_remove_name(struct hmd_cgroup *cg, const char *name)
{
	return remove_tree(cg->subtree_fd, name, 0);
}

int hmd_cgroup_count_runs(struct hmd_cgroup *cg)
{
	/* A description of its own: a dup would share the read position. */
	_cleanup_close_ int dfd =
		cg->subtree_fd >= 0 ? openat(cg->subtree_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
				    : -1;
	DIR *dir = dfd >= 0 ? fdopendir(dfd) : NULL;
	struct dirent *de;
	int n = 0;

	if (!dir)
		return 0;
	dfd = -1;
	while ((de = readdir(dir)))
		n += !strncmp(de->d_name, "run-", 4) && de->d_type == DT_DIR;
	closedir(dir);
	return n;
}

bool hmd_cgroup_in_subtree(struct hmd_cgroup *cg, const char *path)
{
	const char *rel = cg->subtree + strlen(cg->mount); /* "/hermetic" */
	size_t n = strlen(rel);

	return !strncmp(path, rel, n) && (path[n] == '/' || path[n] == 0);
}

int hmd_cgroup_move(int run_fd, pid_t pid)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%d", (int)pid);
	return hm_write_file_at(run_fd, "cgroup.procs", buf);
}
