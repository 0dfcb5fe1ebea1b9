// SPDX-License-Identifier: MIT
/*
 * --sched chaos: a seeded perturbation of one run's schedule, on the real
 * kernel scheduler (docs/scheduling.md has the reasoning and the figures).
 *
 * One controller thread per chaos run, at SCHED_FIFO CTL_PRIO on the CPUs
 * the run does not use. In one half of the seeds (hm_sched_spread) it pins
 * every task of the run to one CPU and gives each a seeded SCHED_FIFO
 * priority as it appears (a new task inherits its creator's priority and
 * CPU, and gets its own at the next tick, itself a seeded preemption
 * moment); then, at change points a seeded gap apart (the scale drawn per
 * run, log-uniform over 20..320 us), it lowers the task that is running
 * below every other task of the run: PCT (Burckhardt et al. 2010) on the
 * kernel's own scheduler, with change points counted in time rather than
 * instructions. With one CPU and strict priorities, the kernel switches at
 * once (an IPI from our CPU), between any two instructions, call or no
 * call. In the other half every task gets SCHED_RR SPREAD_PRIO on every CPU, so the
 * run's threads hold the CPUs together on a busy machine, and the shim's
 * start gate (preload/sched.c) lines them up.
 *
 * Privilege (hermeticd is root): only SCHED_FIFO priorities 1..HI_PRIO and
 * the affinity of tasks of the caller's own run (checked by the server
 * before we start, and re-checked for each task through /proc/TID/cgroup
 * just before each change, so a recycled thread id outside the run is left
 * alone; the window between the check and the call is microseconds, and a
 * reuse would need pid_max threads created in it). The watchdog: RT
 * throttling must be on (sched_rt_runtime_us not -1; we refuse otherwise),
 * so the run's CPU always keeps time for the rest of the machine; the run
 * stays on one CPU of several; change points rotate a spinning task down,
 * so no task of the run starves the others; and after CHAOS_MAX_NS of wall
 * time chaos ends by itself (every task back to SCHED_OTHER on every CPU).
 *
 * --sched serial uses the one-CPU half without change points: the
 * controller pins the run to one CPU and gives the tasks it finds outside
 * SCHED_FIFO (the run's first, which waits for it before its exec) the top
 * serial priority; every task then inherits its creator's CPU and
 * priority, and the shim lowers each task's own priority to one drawn from
 * the seed and its identity before its code runs (preload/sched.c). The controller makes no decision of the schedule
 * then: its ticks only adopt tasks that escaped and lower a spinner (a task
 * that ran SERIAL_SPIN_NS of CPU without blocking) to SCHED_RR 1, so it
 * cannot starve the rest (the run is then not serial any more; status
 * and the run's audit count it). Its privileged calls are chaos's own
 * (set_prio, sched_setaffinity: tasks of the caller's run, checked just
 * before), and it gives the run no privilege: tasks only lower their own
 * priorities.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>
#include "util.h"
#include "daemon.h"
#include "chaos.h"
#include "procfs.h"
#include "proto.h"

#define CHAOS_MAX_TASKS 256
#define CHAOS_MAX_NS (300ULL * 1000000000ULL) /* the watchdog's bound */
#define HI_PRIO 79 /* initial priorities in [LOW_BAND+1, HI_PRIO] */
#define LOW_BAND 30 /* change points lower into [1, LOW_BAND] */
#define CTL_PRIO 90 /* the controller itself */
#define SPREAD_PRIO 40 /* every task of a spread run */
#define MIN_TICK_NS 20000ULL /* the change-point scale: log-uniform from here */
#define TICK_OCTAVES 4 /* up to 16 times as long (0.6 ms) */
#define SERIAL_TICK_NS 2000000ULL /* serial: adoption and the spin check */
#define SERIAL_SPIN_NS 200000000ULL /* serial: CPU time without blocking */
#define SERIAL_SPIN_TICKS 5 /* serial: the spin check every 5th tick (10 ms) */

struct chaos_task {
	pid_t tid;
	int prio;
	bool seen; /* in this scan */
	bool spun; /* serial: lowered for spinning */
	long nvcsw; /* serial: voluntary switches at the last check */
	uint64_t run0; /* serial: its CPU time then (ns) */
};

struct hmd_chaos {
	pthread_t th;
	atomic_bool stop;
	int cgfd; /* the run's cgroup directory (our own descriptor) */
	char cgpath[256]; /* as /proc/TID/cgroup names it: "/hermetic/run-N" */
	uint64_t seed, rng;
	int cpu; /* the run's CPU, -1: spread (the kernel's placement) */
	bool serial; /* --sched serial: no change points, the shim's priorities */
	uint64_t tick_ns; /* the mean gap between change points */
	struct chaos_task t[CHAOS_MAX_TASKS];
	int n;
	atomic_uint_fast64_t changes, tasks, lost, spun; /* for status */
	atomic_bool watchdog_fired;
};

static uint64_t next(struct hmd_chaos *c)
{
	/* splitmix64: every decision is a function of the seed and its order */
	uint64_t z = (c->rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static int draw(struct hmd_chaos *c, int lo, int hi)
{
	return lo + (int)(next(c) % (uint64_t)(hi - lo + 1));
}

int hmd_chaos_supported(char *why, size_t size)
{
	char buf[64];
	ssize_t n = hm_read_file_at(AT_FDCWD, "/proc/sys/kernel/sched_rt_runtime_us", buf,
				    sizeof(buf));

	if (n < 0) {
		snprintf(why, size, "cannot read /proc/sys/kernel/sched_rt_runtime_us: %s",
			 strerror((int)-n));
		return (int)n;
	}
	if (atol(buf) < 0) {
		snprintf(why, size, "RT throttling is off (kernel.sched_rt_runtime_us = -1): a "
			 "real-time run could starve this machine; set it back to 950000");
		return -EPERM;
	}
	return 0;
}

/* Is tid a task of the run now? Keyed on /proc/TID/cgroup's "0::" line. */
static bool in_run(const struct hmd_chaos *c, pid_t tid)
{
	char p[64], buf[512], cg[256];
	size_t n = strlen(c->cgpath);

	snprintf(p, sizeof(p), "/proc/%d/cgroup", (int)tid);
	if (hm_read_file_at(AT_FDCWD, p, buf, sizeof(buf)) < 0 ||
	    hm_cgroup_v2_path(buf, cg, sizeof(cg)) < 0)
		return false;
	return !strncmp(cg, c->cgpath, n) && (cg[n] == 0 || cg[n] == '/');
}

static int set_prio(struct hmd_chaos *c, pid_t tid, int prio)
{
	struct sched_param sp = { .sched_priority = prio };

	/* Spread, all at one priority: round robin, so that a thread that
	 * spins (a Go runtime's, a spin lock's) cannot keep a CPU from the
	 * run's other threads for longer than a time slice. */
	int policy = !prio ? SCHED_OTHER : c->cpu < 0 ? SCHED_RR : SCHED_FIFO;

	if (c->serial && prio == 1)
		policy = SCHED_RR; /* spinners lowered together share the CPU */

	if (!in_run(c, tid))
		return -ESRCH;
	/* Privileged: a task of the caller's own run (just checked). */
	if (sched_setscheduler(tid, policy, &sp) < 0)
		return -errno;
	return 0;
}

/* Serial: a task already at SCHED_FIFO inherited its creator's priority
 * (and CPU), which is the deterministic start the shim builds on: left as
 * it is. Only a task outside SCHED_FIFO (the run's first, which waits for
 * this before its exec, or one that left it) gets the top serial priority;
 * the shim lowers each task from there (it may only lower: no task of the
 * run gets a limit to raise its own). */
static int serial_adopt(struct hmd_chaos *c, struct chaos_task *t)
{
	struct sched_param sp;
	int pol = sched_getscheduler(t->tid);

	if (pol < 0)
		return -errno;
	if ((pol & ~SCHED_RESET_ON_FORK) == SCHED_FIFO && sched_getparam(t->tid, &sp) == 0) {
		t->prio = sp.sched_priority;
		return 0;
	}
	t->prio = HM_SERIAL_TOP;
	return set_prio(c, t->tid, t->prio); /* checks that the task is the run's */
}

/* CPU time of tid (the first field of /proc/TID/schedstat), 0 if gone. */
static uint64_t cpu_ns(pid_t tid)
{
	char p[64], buf[128];

	snprintf(p, sizeof(p), "/proc/%d/schedstat", (int)tid);
	if (hm_read_file_at(AT_FDCWD, p, buf, sizeof(buf)) < 0)
		return 0;
	return strtoull(buf, NULL, 10);
}

/* Serial: a task that ran SERIAL_SPIN_NS of CPU since it last blocked (its
 * voluntary switch count unchanged) keeps every lower task of the run from
 * the CPU for as long as it spins: it drops to SCHED_RR 1, below all. The
 * status file for the switch count is read only when the CPU time says so. */
static void serial_spin_check(struct hmd_chaos *c)
{
	char buf[4096]; /* the switch counts are near the end of status */

	for (int i = 0; i < c->n; i++) {
		struct chaos_task *t = &c->t[i];
		uint64_t ns = cpu_ns(t->tid);
		int v;

		if (t->spun || !ns)
			continue;
		if (t->nvcsw >= 0 && ns - t->run0 < SERIAL_SPIN_NS)
			continue;
		if (hm_proc_status(t->tid, buf, sizeof(buf)) < 0 ||
		    hm_status_int(buf, "voluntary_ctxt_switches", &v) < 0)
			continue;
		if (v != t->nvcsw) { /* it blocked since: measure from here */
			t->nvcsw = v;
			t->run0 = ns;
			continue;
		}
		if (set_prio(c, t->tid, 1) == 0) {
			t->prio = 1;
			t->spun = true;
			atomic_fetch_add(&c->spun, 1);
		}
	}
}

static struct chaos_task *find(struct hmd_chaos *c, pid_t tid)
{
	for (int i = 0; i < c->n; i++)
		if (c->t[i].tid == tid)
			return &c->t[i];
	return NULL;
}

static void adopt(struct hmd_chaos *c, pid_t tid)
{
	struct chaos_task *t = find(c, tid);
	cpu_set_t set;

	if (t) {
		t->seen = true;
		return;
	}
	if (c->n == CHAOS_MAX_TASKS) {
		atomic_fetch_add(&c->lost, 1);
		return;
	}
	if (!in_run(c, tid))
		return;
	if (c->cpu >= 0) {
		CPU_ZERO(&set);
		CPU_SET(c->cpu, &set);
		/* Privileged: the affinity of a task of the caller's own run. */
		if (sched_setaffinity(tid, sizeof(set), &set) < 0)
			return;
	}
	t = &c->t[c->n];
	/* Spread: one priority for all, so that the run's threads have the
	 * CPUs together, whatever else the machine runs. */
	*t = (struct chaos_task){ .tid = tid, .seen = true, .nvcsw = -1,
				  .prio = c->cpu < 0 ? SPREAD_PRIO : draw(c, LOW_BAND + 1, HI_PRIO) };
	if (c->serial) {
		if (serial_adopt(c, t) < 0)
			return;
	} else if (set_prio(c, tid, t->prio) < 0) {
		return;
	}
	c->n++;
	atomic_fetch_add(&c->tasks, 1);
}

/* The tasks of the cgroup at dirfd and below (depth-bounded). */
static void scan_dir(struct hmd_chaos *c, int dirfd, int depth)
{
	char buf[16384];
	ssize_t n = hm_read_file_at(dirfd, "cgroup.threads", buf, sizeof(buf));
	DIR *dir;
	struct dirent *de;
	int fd;

	if (n > 0)
		for (char *s = buf, *e; *s; s = e) {
			long tid = strtol(s, &e, 10);

			if (e == s)
				break;
			if (tid > 0)
				adopt(c, (pid_t)tid);
			while (*e == '\n')
				e++;
		}
	if (depth >= 4 || (fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return;
	if (!(dir = fdopendir(fd))) {
		close(fd);
		return;
	}
	while ((de = readdir(dir)))
		if (de->d_type == DT_DIR && de->d_name[0] != '.') {
			int sub = openat(dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

			if (sub >= 0) {
				scan_dir(c, sub, depth + 1);
				close(sub);
			}
		}
	closedir(dir);
}

static void scan(struct hmd_chaos *c)
{
	int k = 0;

	for (int i = 0; i < c->n; i++)
		c->t[i].seen = false;
	scan_dir(c, c->cgfd, 0);
	for (int i = 0; i < c->n; i++) /* forget the tasks that are gone */
		if (c->t[i].seen)
			c->t[k++] = c->t[i];
	c->n = k;
}

/* Is tid runnable ('R' in /proc/TID/stat, after the command's ')')? */
static bool runnable(pid_t tid)
{
	return hm_proc_state(tid) == 'R';
}

/* A change point: the runnable task of highest priority (the one on the
 * CPU) goes below every other task of the run (PCT's change point: the
 * next lower priority). When the low band is used up, every task draws a
 * fresh priority (a new PCT round). */
static void change_point(struct hmd_chaos *c)
{
	struct chaos_task *top = NULL;
	int floor = HI_PRIO + 1;

	for (int i = 0; i < c->n; i++) {
		if (c->t[i].prio < floor)
			floor = c->t[i].prio;
		if ((!top || c->t[i].prio > top->prio) && runnable(c->t[i].tid))
			top = &c->t[i];
	}
	if (!top || c->n < 2)
		return;
	if (floor <= 1) { /* a new round: every task a fresh priority */
		for (int i = 0; i < c->n; i++) {
			c->t[i].prio = draw(c, LOW_BAND + 1, HI_PRIO);
			(void)set_prio(c, c->t[i].tid, c->t[i].prio);
		}
		floor = LOW_BAND + 1;
	}
	top->prio = floor > LOW_BAND ? LOW_BAND : floor - 1;
	if (set_prio(c, top->tid, top->prio) == 0)
		atomic_fetch_add(&c->changes, 1);
}

static void restore_all(struct hmd_chaos *c)
{
	cpu_set_t all;

	CPU_ZERO(&all);
	for (int i = 0; i < CPU_SETSIZE; i++)
		CPU_SET(i, &all);
	for (int i = 0; i < c->n; i++) {
		if (set_prio(c, c->t[i].tid, 0) < 0)
			continue;
		(void)sched_setaffinity(c->t[i].tid, sizeof(all), &all);
	}
	c->n = 0;
}

static void *chaos_main(void *arg)
{
	struct hmd_chaos *c = arg;
	uint64_t start = hm_now_ns(), ticks = 0;
	struct timespec ts;

	/* Our ticks must be punctual: no timer slack, and a real-time
	 * priority above the run's, so that a loaded machine does not make
	 * them late (we sleep between them; a tick's work is bounded by the
	 * run's task table). */
	(void)prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	{
		struct sched_param sp = { .sched_priority = CTL_PRIO };

		(void)sched_setscheduler(0, SCHED_FIFO, &sp);
	}
	while (!atomic_load(&c->stop)) {
		/* Gaps uniform in [0, 2 * the run's scale). */
		uint64_t gap = c->serial ? c->tick_ns : next(c) % (2 * c->tick_ns);

		ts = (struct timespec){ .tv_sec = gap / 1000000000ULL, .tv_nsec = gap % 1000000000ULL };
		(void)clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
		scan(c);
		if (c->serial) {
			/* one read of schedstat per task: not at every tick */
			if (++ticks % SERIAL_SPIN_TICKS == 0)
				serial_spin_check(c);
		}
		else if (c->cpu >= 0)
			change_point(c);
		if (hm_now_ns() - start > CHAOS_MAX_NS) {
			atomic_store(&c->watchdog_fired, true);
			break;
		}
	}
	restore_all(c);
	return NULL;
}

/* The run's CPU: drawn by seed among those the daemon may use, leaving the
 * controller the others. */
static int pick_cpu(struct hmd_chaos *c, cpu_set_t *others)
{
	cpu_set_t mine;
	int n = 0, k, cpu = -1;

	if (sched_getaffinity(0, sizeof(mine), &mine) < 0)
		return -errno;
	n = CPU_COUNT(&mine);
	if (n < 1)
		return -ENODEV;
	k = (int)(next(c) % (uint64_t)n);
	*others = mine;
	for (int i = 0; i < CPU_SETSIZE && cpu < 0; i++)
		if (CPU_ISSET(i, &mine) && k-- == 0)
			cpu = i;
	if (n > 1)
		CPU_CLR(cpu, others);
	return cpu;
}

int hmd_chaos_start(struct hmd_chaos **ret, int cgfd, const char *cgpath, uint64_t seed,
		    bool serial)
{
	struct hmd_chaos *c = calloc(1, sizeof(*c));
	pthread_attr_t attr;
	cpu_set_t others;
	int err;

	if (!c)
		return -ENOMEM;
	c->seed = c->rng = seed;
	c->serial = serial;
	snprintf(c->cgpath, sizeof(c->cgpath), "%s", cgpath);
	if ((c->cgfd = fcntl(cgfd, F_DUPFD_CLOEXEC, 3)) < 0) {
		err = -errno;
		free(c);
		return err;
	}
	if ((c->cpu = pick_cpu(c, &others)) < 0) {
		err = c->cpu;
		goto fail;
	}
	if (!serial && hm_sched_spread(seed))
		c->cpu = -1; /* the run on every CPU, with the shim's start gate */
	/* Log-uniform: MIN_TICK_NS times 2^(0..TICK_OCTAVES), in 1/8 octaves. */
	{
		unsigned k = (unsigned)(next(c) % (TICK_OCTAVES * 8 + 1));

		c->tick_ns = serial ? SERIAL_TICK_NS : (MIN_TICK_NS << (k / 8)) * (8 + k % 8) / 8;
	}
	if ((err = -pthread_attr_init(&attr)) < 0)
		goto fail;
	(void)pthread_attr_setaffinity_np(&attr, sizeof(others), &others);
	err = -pthread_create(&c->th, &attr, chaos_main, c);
	pthread_attr_destroy(&attr);
	if (err < 0)
		goto fail;
	*ret = c;
	return 0;
fail:
	close(c->cgfd);
	free(c);
	return err;
}

void hmd_chaos_describe(const struct hmd_chaos *c, struct hmd_chaos_info *ret)
{
	*ret = (struct hmd_chaos_info){
		.seed = c->seed,
		.cpu = c->cpu,
		.tick_ns = c->tick_ns,
		.changes = atomic_load(&c->changes),
		.tasks = atomic_load(&c->tasks),
		.lost = atomic_load(&c->lost),
		.serial = c->serial,
		.spun = atomic_load(&c->spun),
		.watchdog_fired = atomic_load(&c->watchdog_fired),
	};
}

void hmd_chaos_stop(struct hmd_chaos *c)
{
	if (!c)
		return;
	atomic_store(&c->stop, true);
	(void)pthread_join(c->th, NULL);
	close(c->cgfd);
	free(c);
}
