// SPDX-License-Identifier: MIT
/*
 * The run's clock page as the CLI sees it (include/hermetic/vclock.h).
 * With a daemon, hermeticd creates the page and its keeper moves the clock;
 * we only set where the wall clock starts, before CMD's first instruction.
 * With --no-daemon there is no keeper: we create the page ourselves and the
 * run's processes keep the clock between them (HM_VK_SELF, approximate:
 * the shim cannot see the scheduler; docs/virtual-time.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <linux/types.h>
#include "cli.h"
#include "enroll.h"
#include "hermetic/vclock.h"
#include "scope.h"

static struct hm_vclock *map_page(const char *path)
{
	struct hm_vclock *vc;
	int fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0)
		die(EXIT_INTERNAL, "Failed to open the run's clock page '%s': %s", path,
		    strerror(errno));
	vc = mmap(NULL, HM_VCLOCK_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (vc == MAP_FAILED)
		die(EXIT_INTERNAL, "Failed to map the run's clock page '%s': %s", path,
		    strerror(errno));
	return vc;
}

/* A page of our own for --no-daemon, in $XDG_RUNTIME_DIR or /tmp. */
static struct hm_vclock *create_page(char *path, size_t size)
{
	const char *dir = getenv("XDG_RUNTIME_DIR");
	struct hm_vclock *vc;
	struct timespec ts;
	int fd;

	if (!dir || !*dir || access(dir, W_OK) < 0)
		dir = "/tmp";
	snprintf(path, size, "%s/hermetic-clock-XXXXXX", dir);
	fd = mkostemp(path, O_CLOEXEC);
	if (fd < 0)
		die(EXIT_INTERNAL, "Failed to create a clock page in '%s': %s", dir, strerror(errno));
	if (ftruncate(fd, HM_VCLOCK_SIZE) < 0)
		die(EXIT_INTERNAL, "Failed to size the clock page '%s': %s", path, strerror(errno));
	vc = mmap(NULL, HM_VCLOCK_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (vc == MAP_FAILED)
		die(EXIT_INTERNAL, "Failed to map the clock page '%s': %s", path, strerror(errno));
	clock_gettime(CLOCK_REALTIME, &ts);
	vc->size = HM_VCLOCK_SIZE;
	vc->nslots = HM_VSLOTS;
	vc->mono = HM_VMONO_BASE;
	vc->keeper = HM_VK_SELF;
	vc->real_start = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
	vc->version = HM_VCLOCK_VERSION;
	__atomic_store_n(&vc->magic, HM_VCLOCK_MAGIC, __ATOMIC_RELEASE);
	return vc;
}

static int64_t realtime_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/*
 * The line between file times from before the run and those stamped during
 * it (docs/file-times.md): now, and then wait until the kernel's coarse
 * clock - what it stamps inodes with - has passed it (at most one tick,
 * 1/HZ). Every stamp from before is at most now (stamps are never ahead of
 * the fine clock); every stamp the run causes is at least the coarse time
 * when it happens, so after the wait, above the line.
 */
static int64_t files_since(void)
{
	int64_t since = realtime_ns(CLOCK_REALTIME);
	struct timespec ms = { 0, 1000000 };

	for (int i = 0; i < 1000 && realtime_ns(CLOCK_REALTIME_COARSE) <= since; i++)
		nanosleep(&ms, NULL);
	return since;
}

void cli_vclock_setup(struct enroll *e)
{
	if (!e->cfg.clock_virtual)
		return;
	if (e->no_daemon) {
		e->vc = create_page(e->clock_path, sizeof(e->clock_path));
		e->clock_owned = true;
	} else {
		snprintf(e->clock_path, sizeof(e->clock_path), "%s", e->run.clock_path);
		if (!e->clock_path[0])
			die(EXIT_INTERNAL, "hermeticd sent no clock page for the run");
		e->vc = map_page(e->clock_path);
		if (e->vc->magic != HM_VCLOCK_MAGIC || e->vc->version != HM_VCLOCK_VERSION ||
		    e->vc->size != HM_VCLOCK_SIZE)
			die(EXIT_INTERNAL, "the run's clock page '%s' is not one this hermetic reads "
					   "(hermetic and hermeticd of different versions?)",
			    e->clock_path);
	}
	/* Monotonic time starts at a point within a second of HM_VMONO_BASE
	 * that depends on the seed: programs that seed generators from it (the
	 * JVM's Random, ThreadLocalRandom) repeat under one seed and change
	 * with it. The wall clock starts at --now: CLOCK_REALTIME = mono +
	 * wall_off. */
	int64_t mono = hm_mono_start(e->cfg.seed); /* (scopes start theirs alike, lib/scope.c) */

	__atomic_store_n(&e->vc->mono, mono, __ATOMIC_RELEASE);
	__atomic_store_n(&e->vc->wall_off, e->cfg.now_ns - mono, __ATOMIC_RELEASE);
	__atomic_store_n(&e->vc->files_since, files_since(), __ATOMIC_RELEASE);
}

void cli_vclock_finish(struct enroll *e)
{
	const char *d = getenv("HERMETIC_DEBUG");

	if (!e->vc)
		return;
	/* The keeper's counters (written by the run: what it says, not proof),
	 * read with pread: the run may have truncated the file under us. */
	if (d && strstr(d, "waits")) {
		struct hm_vclock h;
		int fd = open(e->clock_path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

		if (fd >= 0 && pread(fd, &h, sizeof(h), 0) == (ssize_t)sizeof(h))
			warnx_("clock: moved %llu times, woke %llu waiters; idle with nothing pending "
			       "%llu times, waiting on the real world %llu times",
			       (unsigned long long)h.advances, (unsigned long long)h.wakes,
			       (unsigned long long)h.idle_nothing, (unsigned long long)h.external);
		if (fd >= 0)
			close(fd);
	}
	munmap(e->vc, HM_VCLOCK_SIZE);
	e->vc = NULL;
	if (e->clock_owned)
		unlink(e->clock_path);
}
