// SPDX-License-Identifier: MIT
/*
 * A run's clock page (include/hermetic/vclock.h): a file in
 * <runtime-dir>/clock/ that the run's processes open by path (from
 * HERMETIC_CLOCK_PAGE) and map, and that the daemon maps too.
 *
 * The file belongs to the run's user, so one of the run's processes can
 * truncate it under our mapping; touching the mapping then raises SIGBUS in
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
#include <sys/random.h>
#include <sys/stat.h>
#include "util.h"
#include "daemon.h"

#define MAX_PAGES HM_SCHED_DOMAINS

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

int hmd_clockpage_init(const char *runtime_dir, char *ret_dir, size_t size)
{
	struct sigaction sa = { .sa_sigaction = on_sigbus, .sa_flags = SA_SIGINFO };

	if ((size_t)snprintf(ret_dir, size, "%s/clock", runtime_dir) >= size)
		return -ENAMETOOLONG;
	/* 0711: users open their own run's page by its exact name. */
	if (mkdir(ret_dir, 0711) < 0 && errno != EEXIST)
		return -errno;
	if (chmod(ret_dir, 0711) < 0)
		return -errno;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, NULL) < 0)
		return -errno;
	return 0;
}

/*
 * Create the page file for a run of uid:gid and map it. now_wall is the
 * virtual CLOCK_REALTIME at the start. Returns the mapping in *ret and the
 * path in ret_path; 0 or -errno.
 */
int hmd_clockpage_create(const char *dir, uint64_t run_id, uid_t uid, gid_t gid,
			 struct hm_vclock **ret, char *ret_path, size_t path_size)
{
	struct hm_vclock *vc;
	struct timespec ts;
	uint64_t tag[2];
	int fd, err, slot;

	for (slot = 0; slot < MAX_PAGES && pages[slot].start; slot++)
		;
	if (slot == MAX_PAGES)
		return -EUSERS;
	if (getrandom(tag, sizeof(tag), 0) != sizeof(tag))
		return errno ? -errno : -EIO;
	if ((size_t)snprintf(ret_path, path_size, "%s/run-%" PRIu64 "-%016" PRIx64 "%016" PRIx64,
			     dir, run_id, tag[0], tag[1]) >= path_size)
		return -ENAMETOOLONG;
	fd = open(ret_path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	/* The run's processes open it as the user that enrolled. */
	if (fchown(fd, uid, gid) < 0 || ftruncate(fd, HM_VCLOCK_SIZE) < 0) {
		err = -errno;
		goto fail;
	}
	/*
	 * A run enrolled by root may hand work to other users (su, a server
	 * that drops to nobody, Python's subprocess user=): those processes must
	 * open the page too, or they leave the run's one clock. So root's pages
	 * are 0666 and the name is the capability: 128 random bits, in a
	 * directory only root can list (0711). Whoever learns the name (from
	 * such a process's environment) can move that run's clock and nothing
	 * else: the keeper signals only the run's own tasks, and a truncated
	 * page is survived (on_sigbus). Other users' runs cannot change uid, so
	 * their pages stay 0600.
	 */
	if (uid == 0 && fchmod(fd, 0666) < 0) {
		err = -errno;
		goto fail;
	}
	vc = mmap(NULL, HM_VCLOCK_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (vc == MAP_FAILED) {
		err = -errno;
		goto fail;
	}
	close(fd);
	clock_gettime(CLOCK_REALTIME, &ts);
	vc->size = HM_VCLOCK_SIZE;
	vc->nslots = HM_VSLOTS;
	vc->mono = HM_VMONO_BASE;
	vc->wall_off = 0; /* the client sets it before its command starts */
	vc->keeper = HM_VK_DAEMON;
	vc->real_start = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
	vc->version = HM_VCLOCK_VERSION;
	__atomic_store_n(&vc->magic, HM_VCLOCK_MAGIC, __ATOMIC_RELEASE);
	__atomic_store_n(&pages[slot].broken, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&pages[slot].start, (uintptr_t)vc, __ATOMIC_RELEASE);
	*ret = vc;
	return 0;
fail:
	close(fd);
	unlink(ret_path);
	return err;
}

/* A page a daemon before us created (adoption after a restart). The
 * directory is root's (0711): the run's user can write the file, not
 * replace it; what it holds is checked as any page is. */
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
