// SPDX-License-Identifier: MIT
/*
 * A run's clock page (include/hermetic/vclock.h): a file in
 * <runtime-dir>/clock/ that the daemon maps and hands to the run as a
 * descriptor (RUN_CREATE's reply, RUN_CLOCK); the run's processes inherit
 * it (lib/clockfd.h). The directory is 0700 and the file 0600, both root's:
 * no process that is not root can open any page by its path, whatever name it
 * learns, and the page also holds the run's seed. The path is kept so that
 * a daemon after a restart finds the page again (hmd_clockpage_open).
 *
 * The run's descriptor is O_RDWR, so one of the run's processes can
 * truncate the file under our mapping; touching the mapping then raises SIGBUS in
 * the daemon. As compositors do with client memory, the SIGBUS handler looks
 * the faulting address up in the pages we mapped, puts anonymous zero pages
 * over that page's mapping (MAP_FIXED) and marks it broken; the faulting
 * access is retried and reads zeros, which the keeper treats as "no
 * waiters". The run loses its clock; the daemon and other runs lose nothing.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include "util.h"
#include "daemon.h"

/* every domain's page, and the pool's made ahead (pool.c) */
#define MAX_PAGES (HM_SCHED_DOMAINS + HMD_POOL_SIZE)

/* Read by the SIGBUS handler: plain words, updated with atomics. */
static struct {
	uintptr_t start; /* 0: free */
	int broken;
} pages[MAX_PAGES];

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	uintptr_t a = (uintptr_t)si->si_addr;

	for (int i = 0; i < MAX_PAGES; i++) {
		uintptr_t s = __atomic_load_n(&pages[i].start, __ATOMIC_ACQUIRE);

		if (s && a >= s && a < s + HM_VCLOCK_SIZE) {
			mmap((void *)s, HM_VCLOCK_SIZE, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
			__atomic_store_n(&pages[i].broken, 1, __ATOMIC_RELEASE);
			return;
		}
	}
	/* Not one of ours: a real bug. Die as we would have. */
	signal(SIGBUS, SIG_DFL);
	raise(SIGBUS);
}

/* Whether the clock directory is a tmpfs we mounted (daemon/tmpfs.c). */
static bool mounted;

int hmd_clockpage_init(const char *runtime_dir, char *ret_dir, size_t size)
{
	struct sigaction sa = { .sa_sigaction = on_sigbus, .sa_flags = SA_SIGINFO };
	int err;

	if ((size_t)snprintf(ret_dir, size, "%s/clock", runtime_dir) >= size)
		return -ENAMETOOLONG;
	/* 0700: nobody but us opens a page by path (a daemon before this
	 * version made it 0711 and opened pages to their users by name). */
	if (mkdir(ret_dir, 0700) < 0 && errno != EEXIST)
		return -errno;
	err = hmd_tmpfs_ensure(ret_dir, (unsigned long long)MAX_PAGES * HM_VCLOCK_SIZE + (1 << 20));
	if (err < 0)
		hmd_warn("clock pages stay on disk in %s (cannot mount a tmpfs there: %s)",
			 ret_dir, strerror(-err));
	mounted = err > 0;
	if (chmod(ret_dir, 0700) < 0)
		return -errno;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, NULL) < 0)
		return -errno;
	return 0;
}

/*
 * Make a page file, name in the directory dirfd (root's, 0700): created
 * exclusively, sized, mapped, its header written but for real_start
 * (hmd_clockpage_begin, when a run takes it). Its O_RDWR descriptor, the one
 * the run is given, in *ret_fd. Returns 0 or -errno, with nothing left.
 */
int hmd_clockpage_make(int dirfd, const char *name, struct hm_vclock **ret, int *ret_fd)
{
	struct hm_vclock *vc;
	int fd, err, slot;

	for (slot = 0; slot < MAX_PAGES && pages[slot].start; slot++)
		;
	if (slot == MAX_PAGES)
		return -EUSERS;
	fd = openat(dirfd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	/* Ours (root's), 0600: the run gets a descriptor, never the file.
	 * A run enrolled by root that hands work to other users (su, setpriv,
	 * a server that drops to nobody) hands them the descriptor too. */
	if (ftruncate(fd, HM_VCLOCK_SIZE) < 0) {
		err = -errno;
		goto fail;
	}
	vc = mmap(NULL, HM_VCLOCK_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (vc == MAP_FAILED) {
		err = -errno;
		goto fail;
	}
	/* A new file: every byte not written here is zero. */
	vc->size = HM_VCLOCK_SIZE;
	vc->nslots = HM_VSLOTS;
	vc->mono = HM_VMONO_BASE;
	vc->wall_off = 0; /* the client sets it before its command starts */
	vc->keeper = HM_VK_DAEMON;
	vc->version = HM_VCLOCK_VERSION;
	__atomic_store_n(&vc->magic, HM_VCLOCK_MAGIC, __ATOMIC_RELEASE);
	__atomic_store_n(&pages[slot].broken, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&pages[slot].start, (uintptr_t)vc, __ATOMIC_RELEASE);
	*ret = vc;
	*ret_fd = fd;
	return 0;
fail:
	close(fd);
	(void)unlinkat(dirfd, name, 0); /* ours, just made: nothing else to do */
	return err;
}

/* The run's real start: when a run takes the page. */
void hmd_clockpage_begin(struct hm_vclock *vc)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	vc->real_start = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* A page a daemon before us created (adoption after a restart). The
 * directory and the file are root's: the run can write the page through
 * its descriptor, not replace it; what it holds is checked as any page is. */
int hmd_clockpage_open(const char *path, struct hm_vclock **ret)
{
	struct hm_vclock *vc;
	struct stat st;
	int fd, slot, err;

	for (slot = 0; slot < MAX_PAGES && pages[slot].start; slot++)
		;
	if (slot == MAX_PAGES)
		return -EUSERS;
	fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size < HM_VCLOCK_SIZE) {
		err = errno && !S_ISREG(st.st_mode) ? -EINVAL : -EBADMSG;
		close(fd);
		return err;
	}
	vc = mmap(NULL, HM_VCLOCK_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	err = vc == MAP_FAILED ? -errno : 0;
	close(fd);
	if (err < 0)
		return err;
	__atomic_store_n(&pages[slot].broken, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&pages[slot].start, (uintptr_t)vc, __ATOMIC_RELEASE);
	/* Read through the SIGBUS guard: a truncated page reads zeros. */
	if (__atomic_load_n(&vc->magic, __ATOMIC_ACQUIRE) != HM_VCLOCK_MAGIC ||
	    vc->version != HM_VCLOCK_VERSION || vc->size != HM_VCLOCK_SIZE) {
		hmd_clockpage_destroy(vc, NULL);
		return -EBADMSG;
	}
	*ret = vc;
	return 0;
}

/* A new descriptor of the page at path, for the run (O_RDWR: its
 * processes write their slots). -errno when it is not a regular file. */
int hmd_clockpage_fd(const char *path)
{
	struct stat st;
	int fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	return fd;
}

/* At shutdown: the tmpfs we mounted goes when no run is left to need it
 * (keep: runs go on, their pages stay for the next daemon). */
void hmd_clockpage_fini(const char *dir, bool keep)
{
	if (mounted && !keep) {
		hmd_tmpfs_release(dir);
		mounted = false;
	}
}

bool hmd_clockpage_broken(const struct hm_vclock *vc)
{
	for (int i = 0; i < MAX_PAGES; i++)
		if (__atomic_load_n(&pages[i].start, __ATOMIC_ACQUIRE) == (uintptr_t)vc)
			return __atomic_load_n(&pages[i].broken, __ATOMIC_ACQUIRE);
	return true;
}

void hmd_clockpage_destroy(struct hm_vclock *vc, const char *path)
{
	for (int i = 0; i < MAX_PAGES; i++)
		if (pages[i].start == (uintptr_t)vc) {
			__atomic_store_n(&pages[i].start, 0, __ATOMIC_RELEASE);
			break;
		}
	munmap(vc, HM_VCLOCK_SIZE);
	if (path && *path)
		unlink(path);
}
