// SPDX-License-Identifier: MIT
/*
 * Directories whose files the daemon creates and removes once per run (run
 * records, clock pages) are kept in memory: on a disk file system each new
 * file costs an inode allocation that scans the recently deleted ones, and
 * each clock page is read in (zeroed) through readahead; on ext4 that was
 * several ms of the daemon's CPU per run, in its single-threaded main loop
 * (docs/performance.md). /run is a tmpfs on most systems; where the
 * directory is not on one, a private tmpfs goes on it (mode 0700, no
 * devices, no exec, no set-uid). It stays mounted while runs do, so a
 * daemon after a restart finds their files; the last daemon without runs
 * unmounts it. Failing to mount leaves the files on disk: slower, as correct.
 */
#include <dirent.h>
#include <sys/stat.h>
#include <sys/mount.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include "util.h"
#include "daemon.h"

static bool dir_empty(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	bool empty = true;

	if (!d)
		return false;
	while (empty && (e = readdir(d)))
		empty = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
	closedir(d);
	return empty;
}

/* A tmpfs mounted on the directory itself (not one it merely lies in, such
 * as /run): only a daemon mounts one there, so it is ours to unmount. */
static bool mount_point(const char *dir)
{
	char parent[600];
	struct stat a, b;

	if ((size_t)snprintf(parent, sizeof(parent), "%s/..", dir) >= sizeof(parent))
		return false;
	return stat(dir, &a) == 0 && stat(parent, &b) == 0 && a.st_dev != b.st_dev;
}

/* 1 when dir is a tmpfs of ours (mounted now, or by a daemon before us), 0
 * when it lies in one already, -errno. */
int hmd_tmpfs_ensure(const char *dir, unsigned long long size)
{
	struct statfs sf;
	char opts[64];

	if (statfs(dir, &sf) < 0)
		return -errno;
	if (sf.f_type == TMPFS_MAGIC || sf.f_type == RAMFS_MAGIC)
		return mount_point(dir) ? 1 : 0; /* one of ours, from a daemon before us */
	/* Files already there (runs of a daemon before this version, which
	 * kept them on disk) stay visible: no mount over them. */
	if (!dir_empty(dir))
		return -ENOTEMPTY;
	snprintf(opts, sizeof(opts), "mode=0700,size=%llu", size);
	/* Root's own directory, below the runtime directory only root writes. */
	if (mount("hermetic", dir, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, opts) < 0)
		return -errno;
	return 1;
}

void hmd_tmpfs_release(const char *dir)
{
	if (umount2(dir, MNT_DETACH) < 0)
		hmd_warn("Failed to unmount the tmpfs on %s: %s", dir, strerror(errno));
}
