// SPDX-License-Identifier: MIT
/*
 * The run's clock page as the engine sees it (include/hermetic/vclock.h).
 * With a daemon, hermeticd creates the page and its keeper moves the clock;
 * it hands us the page as a descriptor. We set where the wall clock starts
 * and the run's seed, before CMD's first instruction, and pass the
 * descriptor on to CMD (HERMETIC_CLOCK_FD, lib/clockfd.h): no path of the
 * page, and no seed, appears in CMD's environment or its maps.
 *
 * With --no-daemon, or --clock off, there is no daemon page: we make one
 * of our own, a sealed memfd (no path at all), that carries the seed and,
 * for --no-daemon, the clock, which the run's processes keep between them
 * (HM_VK_SELF, approximate: the shim cannot see the scheduler;
 * docs/virtual-time.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <linux/types.h>
#include "util.h"
#include "engine.h"
#include "vclock.h"
#include "raw_syscall.h"
#include "clockfd.h"
#include "hermetic/vclock.h"
#include "scope.h"
#include "phases.h"

/* A page of our own: a memfd sealed at its size, so no process of the run
 * can shrink it under another's mapping. */
static int create_page(struct eng_error *err)
{
	_cleanup_close_ int fd = memfd_create("hermetic-clock", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	struct hm_vclock *vc;
	struct timespec ts;

	if (fd < 0)
		return eng_fail(err, errno, "Failed to create a clock page: %s", strerror(errno));
	if (ftruncate(fd, HM_VCLOCK_SIZE) < 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0)
		return eng_fail(err, errno, "Failed to size the clock page: %s", strerror(errno));
	vc = mmap(NULL, HM_VCLOCK_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (vc == MAP_FAILED)
		return eng_fail(err, errno, "Failed to map the clock page: %s", strerror(errno));
	clock_gettime(CLOCK_REALTIME, &ts);
	vc->size = HM_VCLOCK_SIZE;
	vc->nslots = HM_VSLOTS;
	vc->mono = HM_VMONO_BASE;
	vc->keeper = HM_VK_SELF;
	vc->flags = HM_VCF_OWN;
	vc->real_start = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
	vc->version = HM_VCLOCK_VERSION;
	__atomic_store_n(&vc->magic, HM_VCLOCK_MAGIC, __ATOMIC_RELEASE);
	(void)munmap(vc, HM_VCLOCK_SIZE); /* the page stays, in fd */
	return steal_fd(&fd);
}

/* What CMD inherits as 0, 1, 2 and leads out of the run (a pipe, a socket,
 * a terminal: the same test as the shim's, preload/peers.c), noted in the
 * page before CMD starts. The shim of the run's first process would note
 * them too, but the first process may have no shim (a static binary): its
 * first shim descendant would then take its own pipes, the run's, for the
 * world's. */
static void note_stdio(struct hm_vclock *vc)
{
	uint32_t n = 0;

	for (int fd = 0; fd < 3; fd++) {
		struct stat st;
		bool dup = false;

		if (fstat(fd, &st) < 0 ||
		    !(S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) ||
		      (S_ISCHR(st.st_mode) && (major(st.st_rdev) == 136 || major(st.st_rdev) == 4 ||
					       major(st.st_rdev) == 5))))
			continue;
		for (uint32_t i = 0; i < n; i++)
			dup |= vc->outside[i][0] == (uint64_t)st.st_dev &&
			       vc->outside[i][1] == (uint64_t)st.st_ino;
		if (dup)
			continue;
		vc->outside[n][0] = st.st_dev;
		vc->outside[n][1] = st.st_ino;
		n++;
	}
	__atomic_store_n(&vc->n_outside, n, __ATOMIC_RELEASE);
	__atomic_fetch_or(&vc->flags, HM_VCF_STDIO, __ATOMIC_RELEASE);
}

static int64_t realtime_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/*
 * The line B between file times from before the run and those stamped during
 * it (docs/file-times.md): the time the kernel would stamp a file with when
 * enroll starts, read as the change time of a new memfd. A stamp is the
 * coarse clock or, on kernels with multigrain timestamps (6.13+), at most
 * the floor the kernel keeps above every fine-grained stamp it has handed
 * out; a new inode gets the greater of the two. So every stamp from before
 * is at most B.
 *
 * A stamp the run causes must be above B. On a multigrain kernel that is
 * done at once: enroll writes a byte to the memfd whose times it has just
 * read, and the kernel stamps that change finely (the times were looked at
 * since the last change) and raises its floor to the stamp. Every later
 * stamp of any inode, on a multigrain filesystem or not, is at least the
 * floor (current_time() and inode_set_ctime_current() start from
 * ktime_get_coarse_real_ts64_mg(), the greater of the coarse clock and the
 * floor), so above B. The check verifies itself: the memfd's new mtime is
 * read back, and only a stamp above B passes the line (line_passed). A
 * kernel without multigrain times stamps the write with its coarse clock,
 * B itself unless the clock ticked meanwhile: then the command must not
 * start before the coarse clock has passed B (files_passed), the child's
 * wait in run_clock_wait_files just before its exec: 0 to 1/HZ after B (the
 * fine clock there would take that plus the lag of the tick's interrupt,
 * 2.2 ms on the VM this was measured on). Reading B when the process starts
 * lets that wait overlap the parsing, the daemon's answer and the
 * confinement instead of adding to them.
 */
static int64_t process_start_ns;
static bool process_line_passed; /* a stamp above B was handed out after it */

static int64_t stamp_ns(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000000000LL + ts->tv_nsec;
}

/* Change the memfd whose times were just read and read its mtime back:
 * true when the kernel stamped the change above b, so that no later stamp
 * falls at or below b. */
static bool line_passed(int fd, int64_t b)
{
	struct stat st;

	if (write(fd, "B", 1) != 1 || fstat(fd, &st) < 0)
		return false;
	return stamp_ns(&st.st_mtim) > b;
}

/* The first thing enroll and replay do: the earliest B there can be.
 * Without a memfd (a seccomp profile may refuse it), the fine clock, which
 * no stamp is ahead of. HERMETIC_TEST_LINE_WAIT (tests, measurements):
 * no fine stamp, the coarse clock's wait as on a kernel without multigrain
 * times (only slower: it gives the process no power it lacks). */
void run_clock_mark_start(void)
{
	int64_t fine = realtime_ns(CLOCK_REALTIME);
	int fd = memfd_create("hermetic-line", MFD_CLOEXEC);
	struct stat st;

	process_start_ns = fine;
	process_line_passed = false;
	if (fd < 0)
		return;
	if (fstat(fd, &st) == 0) {
		int64_t t = stamp_ns(&st.st_ctim);

		/* a stamp of this moment: not ahead of the fine clock now,
		 * not behind it by more than a long tick */
		if (t <= realtime_ns(CLOCK_REALTIME) && t > fine - 1000000000LL) {
			process_start_ns = t;
			process_line_passed = !getenv("HERMETIC_TEST_LINE_WAIT") && line_passed(fd, t);
		}
	}
	close(fd);
}

static void files_since(struct run_clock *c)
{
	if (!process_start_ns)
		run_clock_mark_start();
	c->files_since = process_start_ns;
	c->line_passed = process_line_passed;
}

void run_clock_init(struct run_clock *c)
{
	*c = (struct run_clock){ .page_fd = -1 };
	files_since(c);
}

/* Whether no stamp from now on can be at or below B: a fine stamp raised
 * the kernel's floor above it, or the coarse clock has passed it. */
static bool files_passed(const struct run_clock *c, int64_t coarse)
{
	return !c->files_since || c->line_passed || coarse > c->files_since;
}

/* In the child (async-signal-safe calls only, errno untouched: it runs
 * after the child's ready mark, launch_child.c): until the line is passed,
 * sleeping to the coarse clock's next tick as its age says. The child is in
 * the run already: its sleeps are ppoll's, which the kernel's view of the
 * run does not trace and the supervisor's filter does not take (each
 * nanosleep was an event in the command's journal, a variable number of
 * them: a tickless CPU's coarse clock can stand longer than a tick).
 * HERMETIC_DEBUG=phases: how long it waited, in the shared word the
 * parent reads (run_clock_note_line). */
void run_clock_wait_files(const struct run_clock *c)
{
	int64_t t0 = realtime_ns(CLOCK_MONOTONIC);

	for (int i = 0; i < 1000; i++) {
		int64_t coarse = realtime_ns(CLOCK_REALTIME_COARSE), left;
		struct timespec ts;

		if (files_passed(c, coarse))
			break;
		/* The coarse clock moves by one tick at once, c->coarse_tick_ns
		 * after it last did (it is coarse's age short of that). */
		left = c->coarse_tick_ns - (realtime_ns(CLOCK_REALTIME) - coarse);
		if (left < 20000)
			left = 20000;
		left += 20000;
		ts.tv_sec = left / 1000000000;
		ts.tv_nsec = left % 1000000000;
		/* (raw: it runs after the child's ready mark, launch_child.c) */
		(void)raw_syscall6(SYS_ppoll, 0, 0, (long)&ts, 0, 0, 0);
	}
	if (c->waited_ns)
		__atomic_store_n(c->waited_ns, realtime_ns(CLOCK_MONOTONIC) - t0, __ATOMIC_RELEASE);
}

/* HERMETIC_DEBUG=phases, once the command's exec is answered: how the line
 * was passed, as a note of its own under the phases line. */
void run_clock_note_line(const struct run_clock *c)
{
	int64_t waited;

	if (!c->files_since || !cli_phases_enabled())
		return;
	if (c->line_passed) {
		cli_phase_note("line B: passed by a fine stamp");
		return;
	}
	waited = c->waited_ns ? __atomic_load_n(c->waited_ns, __ATOMIC_ACQUIRE) : -1;
	if (waited < 0)
		cli_phase_note("line B: the coarse clock's, wait not measured");
	else
		cli_phase_note("line B: waited %lld us for the coarse clock", (long long)(waited / 1000));
}

int run_clock_setup(struct run_clock *c, bool own_page, const struct hm_config *cfg,
		    struct eng_error *err)
{
	struct hm_clockfd cf;
	struct timespec res;
	int r, fd;

	if (own_page) {
		if ((c->page_fd = create_page(err)) < 0)
			return c->page_fd;
	} else if (c->page_fd < 0) {
		return eng_fail(err, EPROTO, "hermeticd sent no clock page for the run "
					     "(hermetic and hermeticd of different versions?)");
	}
	/* Out of the way of the numbers programs pick (the shim keeps it
	 * where it is, or moves it, preload/fdkeep.c); still ours only until
	 * CMD's exec (launch.c clears FD_CLOEXEC in the child). */
	fd = fcntl(c->page_fd, F_DUPFD_CLOEXEC, HM_CLOCKFD_MIN);
	if (fd < 0) /* EINVAL: a soft RLIMIT_NOFILE of at most 1000 */
		fd = fcntl(c->page_fd, F_DUPFD_CLOEXEC, HM_CLOCKFD_LOW);
	if (fd >= 0) {
		close(c->page_fd);
		c->page_fd = fd;
	}
	c->vc = hm_clockpage_map(c->page_fd, &r);
	if (!c->vc)
		return eng_fail(err, -r, "the run's clock page is not one this hermetic reads (%s; "
					 "hermetic and hermeticd of different versions?)",
				strerror(-r));
	if ((r = hm_clockfd_stat(c->page_fd, &cf)) < 0)
		return eng_fail(err, -r, "Failed to stat the run's clock page: %s", strerror(-r));
	hm_clockfd_format(&cf, c->page_env);
	/* The seed lives in the page, not in CMD's environment. */
	c->vc->seed = cfg->seed;
	__atomic_store_n(&c->vc->has_seed, 1, __ATOMIC_RELEASE);
	if (!cfg->clock_virtual) {
		c->files_since = 0; /* no file times of the run's own: no wait */
		return 0;
	}
	/* Monotonic time starts at a point within a second of HM_VMONO_BASE
	 * that depends on the seed: programs that seed generators from it (the
	 * JVM's Random, ThreadLocalRandom) repeat under one seed and change
	 * with it. The wall clock starts at --now: CLOCK_REALTIME = mono +
	 * wall_off. */
	int64_t mono = hm_mono_start(cfg->seed); /* (scopes start theirs alike, lib/scope.c) */

	c->mono0 = mono;
	__atomic_store_n(&c->vc->lag_milli, cfg->lag_milli, __ATOMIC_RELEASE);
	__atomic_store_n(&c->vc->mono, mono, __ATOMIC_RELEASE);
	__atomic_store_n(&c->vc->wall_off, cfg->now_ns - mono, __ATOMIC_RELEASE);
	note_stdio(c->vc);
	if (!c->files_since)
		files_since(c);
	c->coarse_tick_ns = clock_getres(CLOCK_REALTIME_COARSE, &res) == 0 && !res.tv_sec &&
					    res.tv_nsec > 0
				    ? res.tv_nsec
				    : 1000000;
	__atomic_store_n(&c->vc->files_since, c->files_since, __ATOMIC_RELEASE);
	/* HERMETIC_DEBUG=phases: a word the child writes its wait into (a
	 * shared mapping: the child's memory is its own after the fork). */
	if (!c->line_passed && cli_phases_enabled()) {
		void *w = mmap(NULL, sizeof(*c->waited_ns), PROT_READ | PROT_WRITE,
			       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

		if (w != MAP_FAILED) {
			c->waited_ns = w;
			*c->waited_ns = -1;
		}
	}
	return 0;
}

/* A string the run wrote: up to its first NUL, printable ASCII only. */
static void copy_str(char *dst, size_t size, const char *src, size_t len)
{
	size_t n = 0;

	for (; n < len && n + 1 < size && src[n]; n++)
		dst[n] = src[n] >= 0x20 && src[n] < 0x7f ? src[n] : '?';
	dst[n] = 0;
}

void run_clock_read_lag(struct run_clock *c, const struct hm_config *cfg)
{
	struct hm_vclock h; /* (a page's header: 4 KiB) */
	uint64_t logged;

	if (!c->vc)
		return;
	/* What the run wrote (pread: a process holding the page's descriptor
	 * may have truncated it): its own account of itself, shown as such. */
	if (pread(c->page_fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h))
		return;
	logged = h.lag_logged < HM_VLAG_LOG ? h.lag_logged : HM_VLAG_LOG;
	c->lag_fires = h.lag_fires > h.lag_logged ? h.lag_fires : h.lag_logged;
	c->n_lag = 0;
	for (uint64_t i = 0; i < logged && c->n_lag < (int)(sizeof(c->lag) / sizeof(c->lag[0])); i++) {
		const struct hm_vlag *l = &h.lag[i];
		struct run_lag *o = &c->lag[c->n_lag];

		if (!l->ready)
			continue;
		copy_str(o->process, sizeof(o->process), l->lineage, sizeof(l->lineage));
		copy_str(o->what, sizeof(o->what), l->what, sizeof(l->what));
		o->thread = l->thread;
		o->virt_s = l->virt / 1e9;
		o->real_s = l->real / 1e9;
		o->clock_s = (l->mono - c->mono0) / 1e9;
		c->n_lag++;
	}
	if (!c->lag_fires)
		return;
	/* (every line starts "lag bound:", so that a script can tell them
	 * from the command's own output) */
	eng_warn("lag bound: %llu timed wait%s ended while the run was busy (--lag-bound %.3g; "
		 "each moved only its own thread's clock, to its deadline: docs/virtual-time.md)",
		 (unsigned long long)c->lag_fires, c->lag_fires == 1 ? "" : "s",
		 cfg->lag_milli / 1000.0);
	for (int i = 0; i < c->n_lag && i < 5; i++) {
		char who[32];

		/* (the shim's timer thread: preload/timers.c numbers it so) */
		if (c->lag[i].thread == 0xffff0000u)
			snprintf(who, sizeof(who), "timers");
		else
			snprintf(who, sizeof(who), "thread %u", c->lag[i].thread);
		eng_warn("lag bound: process %s %s: %s of %.6g s timed out after %.3f s of real "
			 "time (its clock at %.6f s)",
			 c->lag[i].process, who, c->lag[i].what, c->lag[i].virt_s, c->lag[i].real_s,
			 c->lag[i].clock_s);
	}
	if (c->lag_fires > 5)
		eng_warn("lag bound: ... and %llu more (--report lists the first %d)",
			 (unsigned long long)c->lag_fires - 5, HM_VLAG_LOG);
}

/* In the run, through the page descriptor it inherited (clockfd.h), and
 * only while that number still holds the page. */
void run_clock_mark_nested(void)
{
	const char *v = getenv(HM_ENV_CLOCK_FD);
	struct hm_clockfd c;
	__u64 one = 1;

	if (!v || hm_clockfd_parse(v, &c) < 0 || hm_clockfd_check(&c) < 0)
		return; /* best effort: the message says it all the same */
	if (pwrite(c.fd, &one, sizeof(one), offsetof(struct hm_vclock, nested_refused)) < 0)
		(void)0;
}

void run_clock_read_dns(struct run_clock *c)
{
	struct hm_vclock h;

	if (!c->vc)
		return;
	/* pread: the run may have truncated the page under us. */
	if (pread(c->page_fd, &h, sizeof(h), 0) == (ssize_t)sizeof(h)) {
		c->have_dns = true;
		c->dns_refused = h.dns_refused;
		c->nested_refused = h.nested_refused != 0;
		for (int i = 0; i < 4; i++) {
			memcpy(c->dns_first[i], h.dns_first[i], sizeof(c->dns_first[i]));
			c->dns_first[i][sizeof(c->dns_first[i]) - 1] = 0;
		}
	}
	if (!c->dns_refused)
		return;
	{
		char line[512] = "";
		size_t used = 0;

		for (int i = 0; i < 4 && c->dns_first[i][0]; i++)
			used += snprintf(line + used, sizeof(line) - used, "%s%s", i ? ", " : "",
					 c->dns_first[i]);
		eng_warn("refused %" PRIu64 " DNS lookup%s (not in /etc/hosts; --allow HOST:PORT lets "
			 "a name through): %s",
			 c->dns_refused, c->dns_refused == 1 ? "" : "s", line);
	}
}

void run_clock_finish(struct run_clock *c, const struct hm_config *cfg)
{
	const char *d = getenv("HERMETIC_DEBUG");

	if (!c->vc)
		return;
	/* The keeper's counters (written by the run: what it says, not proof),
	 * read with pread: the run may have truncated the file under us. */
	if (d && strstr(d, "waits") && cfg->clock_virtual) {
		struct hm_vclock h;

		if (pread(c->page_fd, &h, sizeof(h), 0) == (ssize_t)sizeof(h))
			eng_warn("clock: moved %llu times, woke %llu waiters; idle with nothing "
				 "pending %llu times, waiting on the real world %llu times",
				 (unsigned long long)h.advances, (unsigned long long)h.wakes,
				 (unsigned long long)h.idle_nothing, (unsigned long long)h.external);
	}
	(void)munmap(c->vc, HM_VCLOCK_SIZE); /* a mapping of ours: cannot fail */
	c->vc = NULL;
	if (c->waited_ns)
		(void)munmap(c->waited_ns, sizeof(*c->waited_ns)); /* ours: cannot fail */
	c->waited_ns = NULL;
	close(c->page_fd);
	c->page_fd = -1;
}
