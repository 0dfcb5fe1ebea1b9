// SPDX-License-Identifier: MIT
/*
 * The run pool: the parts of a run that no request decides, made while the
 * daemon has nothing else to do, so that RUN_CREATE only fills in what the
 * request says (docs/performance.md). Two kinds, HMD_POOL_SIZE of each:
 *  - a cgroup <subtree>/run-<id>, made and opened, its id taken then: empty,
 *    root's, with no policy entry, no clock domain and no record, so no
 *    process can be in it and nothing counts it as a run (the run list,
 *    the per-user limit and status walk d->runs only). The policy, the
 *    resolver, the domain and the record go in when a run takes it, before
 *    its client learns of it, as for a cgroup made on request.
 *  - a clock page, a new file (zeros but its header) in <clock
 *    dir>/pool.<subtree>, mapped and open, renamed into the clock directory
 *    under the run's name when taken: each page is used by one run only,
 *    so no value of an earlier run can be in it.
 * They are made one at a time, after 1 ms without an event (main.c). A
 * request never waits for the pool: an empty pool means the part is made
 * on request, as before. What is left at a stop is removed (hmd_pool_drain);
 * after a crash the next daemon removes the cgroups as runs without a
 * record (adopt.c) and empties the pages' directory (hmd_pool_init).
 */
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sys/stat.h>
#include "util.h"
#include "daemon.h"

void hmd_pool_init(struct hmd *d, const char *subtree)
{
	struct hmd_pool *p = &d->pool;
	struct dirent *de;
	DIR *dir;
	int fd;

	p->dirfd = -1;
	if (!d->keeper)
		return;
	if ((size_t)snprintf(p->dir, sizeof(p->dir), "%s/pool.%s", hmd_keeper_dir(d->keeper),
			     subtree) >= sizeof(p->dir))
		return;
	/* Root's, 0700, inside the clock directory (same file system: a page
	 * is renamed out of it). Per subtree: daemons of other subtrees may
	 * share the runtime directory. */
	if (mkdir(p->dir, 0700) < 0 && errno != EEXIST)
		goto fail;
	fd = open(p->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		goto fail;
	/* What a daemon before us made ahead and never gave a run. */
	dir = fdopendir(dup(fd));
	if (dir) {
		while ((de = readdir(dir)))
			if (de->d_type == DT_REG)
				(void)unlinkat(fd, de->d_name, 0); /* best effort: a page left is only space */
		closedir(dir);
	}
	p->dirfd = fd;
	return;
fail:
	hmd_warn("no clock pages made ahead (%s: %s): each is made when its run asks", p->dir,
		 strerror(errno));
}

bool hmd_pool_short(struct hmd *d)
{
	const struct hmd_pool *p = &d->pool;

	return !p->failed && (p->n_cg < HMD_POOL_SIZE || (p->dirfd >= 0 && p->n_clock < HMD_POOL_SIZE));
}

/* A run cgroup under the next free id, made now (for the pool, or for a
 * run the pool had none for). An id can still be taken after a restart: a
 * cgroup a crashed daemon left, being killed, under an id this daemon's
 * clock-based start reached again. The cgroup, created exclusively,
 * decides: take the next id, up to 64 times. */
int hmd_run_cgroup_make(struct hmd *d, uint64_t *ret_id, int *ret_fd, uint64_t *ret_cgid,
			char *ret_path, size_t path_size)
{
	int err;

	for (int tries = 0;; tries++) {
		*ret_id = d->next_run_id++;
		err = hmd_cgroup_create_run(&d->cg, *ret_id, ret_fd, ret_cgid, ret_path, path_size);
		if (err != -EEXIST || tries == 64)
			return err;
	}
}

static int fill_cgroup(struct hmd *d)
{
	struct hmd_pool_cg *e = &d->pool.cg[d->pool.n_cg];
	char path[256];
	int err = hmd_run_cgroup_make(d, &e->id, &e->fd, &e->cgid, path, sizeof(path));

	if (err < 0)
		return err;
	d->pool.n_cg++;
	return 0;
}

void hmd_pool_fill(struct hmd *d)
{
	struct hmd_pool *p = &d->pool;
	int err;

	if (p->n_cg < HMD_POOL_SIZE)
		err = fill_cgroup(d);
	else if (p->dirfd >= 0 && p->n_clock < HMD_POOL_SIZE &&
		 (err = hmd_keeper_prepare(p->dirfd, &p->clock[p->n_clock])) == 0)
		p->n_clock++;
	else
		return;
	if (err < 0) {
		p->failed = true;
		hmd_debug("pool: cannot make a part ahead: %s", strerror(-err));
	}
}

int hmd_pool_take_cgroup(struct hmd *d, uint64_t *ret_id, int *ret_fd, uint64_t *ret_cgid)
{
	struct hmd_pool *p = &d->pool;

	if (!p->n_cg) {
		p->missed++;
		return -ENOENT;
	}
	/* The oldest first: ids go out in the order they were taken. */
	*ret_id = p->cg[0].id;
	*ret_fd = p->cg[0].fd;
	*ret_cgid = p->cg[0].cgid;
	memmove(&p->cg[0], &p->cg[1], --p->n_cg * sizeof(p->cg[0]));
	p->taken++;
	return 0;
}

int hmd_pool_take_clock(struct hmd *d, struct hmd_clock_prep *ret)
{
	struct hmd_pool *p = &d->pool;

	if (!p->n_clock)
		return -ENOENT;
	*ret = p->clock[0];
	memmove(&p->clock[0], &p->clock[1], --p->n_clock * sizeof(p->clock[0]));
	return 0;
}

void hmd_pool_drain(struct hmd *d)
{
	struct hmd_pool *p = &d->pool;
	int err;

	while (p->n_cg) {
		struct hmd_pool_cg *e = &p->cg[--p->n_cg];

		close(e->fd);
		err = hmd_cgroup_remove_run(&d->cg, e->id);
		if (err < 0)
			hmd_warn("Failed to remove cgroup '%s/run-%" PRIu64 "' (made ahead, never a "
				 "run's): %s",
				 d->cg.subtree, e->id, strerror(-err));
	}
	while (p->n_clock)
		hmd_keeper_discard(p->dirfd, &p->clock[--p->n_clock]);
	if (p->dirfd >= 0) {
		close(p->dirfd);
		p->dirfd = -1;
		if (rmdir(p->dir) < 0)
			hmd_warn("Failed to remove '%s': %s", p->dir, strerror(errno));
	}
}
