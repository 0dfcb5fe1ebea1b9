// SPDX-License-Identifier: MIT
/*
 * One daemon per cgroup subtree. Two daemons on one subtree would each
 * take the other's runs for leftovers, and the one that stops removes
 * what the other uses. The lock must not depend on anything a second
 * daemon may be started with differently (--runtime-dir, --socket): its
 * file is named after the cgroup2 hierarchy (the device of its mount) and
 * the subtree's path in it, in a directory of root's (/run is root's to
 * write, so nobody else can have made it or plant a file in it).
 */
#include <fcntl.h>
#include <inttypes.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include "util.h"
#include "daemon.h"

/* FNV-1a, 64 bits: a name for the key that fits any path length. */
static uint64_t fnv1a(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

static int lock_path(const struct hmd_cgroup *cg, char *path, size_t size)
{
	const char *rel = cg->subtree + strlen(cg->mount), *name = strrchr(cg->subtree, '/') + 1;
	char key[1024];
	struct stat st;

	if (stat(cg->mount, &st) < 0)
		return -errno;
	snprintf(key, sizeof(key), "%u:%u:%s", major(st.st_dev), minor(st.st_dev), rel);
	if ((size_t)snprintf(path, size, "%s/%s.%016" PRIx64 ".lock", HMD_SUBTREE_LOCK_DIR, name,
			     fnv1a(key)) >= size)
		return -ENAMETOOLONG;
	return 0;
}

/* The directory: made by root 0700, and refused if anyone else could
 * write it (then a file in it may not be the lock it seems). */
static int lock_dir(void)
{
	struct stat st;

	if (mkdir(HMD_SUBTREE_LOCK_DIR, 0700) < 0 && errno != EEXIST)
		return -errno;
	if (lstat(HMD_SUBTREE_LOCK_DIR, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode) || st.st_uid != 0 || (st.st_mode & 022))
		return -EPERM;
	return 0;
}

int hmd_subtree_lock(const struct hmd_cgroup *cg, const char *socket_path, char *path,
		     size_t path_size, char *holder, size_t holder_size)
{
	char info[600];
	int r;

	holder[0] = 0;
	if ((r = lock_path(cg, path, path_size)) < 0 || (r = lock_dir()) < 0)
		return r;
	/* The holder unlinks the file when it exits; so a lock counts only
	 * if the path still names the very file locked (else the holder just
	 * removed it: take the new one). Waits 5 s for one that is stopping. */
	for (int i = 0; i < 100; i++) {
		struct stat a, b;
		int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);

		if (fd < 0)
			return -errno;
		if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
			if (fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_ino == b.st_ino &&
			    a.st_dev == b.st_dev) {
				snprintf(info, sizeof(info), "pid %d, socket %s\n", (int)getpid(),
					 socket_path);
				if (ftruncate(fd, 0) < 0 || pwrite(fd, info, strlen(info), 0) < 0) {
					r = -errno;
					close(fd);
					return r;
				}
				return fd;
			}
		} else if (errno != EWOULDBLOCK) {
			r = -errno;
			close(fd);
			return r;
		} else {
			ssize_t n = pread(fd, info, sizeof(info) - 1, 0);

			if (n > 0) {
				info[n] = 0;
				info[strcspn(info, "\n")] = 0;
				snprintf(holder, holder_size, "%s", info);
			}
		}
		close(fd);
		usleep(50000);
	}
	return -EBUSY;
}

void hmd_subtree_unlock(int fd, const char *path)
{
	if (fd < 0)
		return;
	/* Still holding the lock: a waiter re-checks the path. */
	unlink(path);
	close(fd);
}
