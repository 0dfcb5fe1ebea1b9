// SPDX-License-Identifier: MIT
/*
 * --sched chaos in the shim: start points (docs/scheduling.md). A race
 * between two threads (or processes) shows only while both run; a new
 * thread starts tens of microseconds after pthread_create returns, so a
 * short racy loop in each is over before the other begins, and on a busy
 * machine the two rarely hold a CPU at once.
 *
 * In the spread half of the seeds (hm_sched_spread; the daemon gives the
 * run's tasks one real-time priority on every CPU), a new thread before
 * its function and a forked child after fork wait at a gate in a shared
 * page until no start has come for a seeded quiet time, each on a CPU of
 * its own: threads created one after the other leave together. 1 in 8
 * goes on at once, 1 in 4 then takes a seeded head start. In both halves
 * the creator, after pthread_create or fork, spins a seeded number of
 * iterations half the time, so that what it does next meets the new
 * thread's start, or does not.
 *
 * The decisions are a function of the seed, this process (its lineage,
 * hm.proc) and the point (thread number, fork number); spins are counted
 * in iterations. HERMETIC_SCHED_SEED, read at initialisation (init.c),
 * turns it on.
 *
 * --sched serial (HERMETIC_SCHED_MODE=serial): no spins, no gate. The run
 * is on one CPU at SCHED_FIFO (hermeticd, daemon/chaos.c), a new thread or
 * child at its creator's priority, queued behind it; before its own code
 * each task lowers its own priority to its draw, hm_serial_prio(seed,
 * hm.proc, thread number), a function of the seed and the task's
 * deterministic identity, when the draw is below what it inherited (an
 * unprivileged task may lower its priority, not raise it: a draw above
 * keeps the creator's, and ties run in the kernel's FIFO order, which is
 * as deterministic). The creator, by seed, yields once after the
 * creation, so that the new task may go first. The kernel then runs the
 * highest runnable task of the run until it blocks, so every choice at a
 * blocking point follows from the seed.
 *
 * Under either mode sched_getaffinity answers the CPUs the run had before
 * the pinning (HERMETIC_SCHED_CPUS): programs size their pools for the
 * machine they would have had; the schedule is the only thing changed.
 */
#include <sched.h>
#include <stdlib.h>
#include <sys/mman.h>
#include "shim.h"
#include "config.h"
#include "proto.h"

static uint64_t mix(uint64_t a, uint64_t b)
{
	uint64_t z = a ^ (b + 0x9e3779b97f4a7c15ULL) * 0xbf58476d1ce4e5b9ULL;

	z += 0x9e3779b97f4a7c15ULL;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* The run's start gate: one shared page per image, inherited over fork
 * (MAP_SHARED), so that a thread and a forked child meet there too. */
struct gate {
	_Atomic int64_t last_ns; /* CLOCK_MONOTONIC of the latest arrival */
	_Atomic uint32_t arrivals;
};
static struct gate *gate;

/* "0-3,8" into hm.sched_cpus; false when it does not parse. */
static bool parse_cpus(const char *s)
{
	CPU_ZERO(&hm.sched_cpus);
	while (s && *s) {
		unsigned long a = 0, b;

		if (*s < '0' || *s > '9')
			return false;
		while (*s >= '0' && *s <= '9')
			a = a * 10 + (unsigned long)(*s++ - '0');
		b = a;
		if (*s == '-') {
			s++;
			b = 0;
			if (*s < '0' || *s > '9')
				return false;
			while (*s >= '0' && *s <= '9')
				b = b * 10 + (unsigned long)(*s++ - '0');
		}
		if (b < a || b >= CPU_SETSIZE)
			return false;
		for (unsigned long i = a; i <= b; i++)
			CPU_SET(i, &hm.sched_cpus);
		if (*s == ',')
			s++;
		else if (*s)
			return false;
	}
	return CPU_COUNT(&hm.sched_cpus) > 0;
}

void hm_sched_init(void)
{
	const char *mode;
	void *p;

	if (!hm.sched)
		return;
	mode = getenv(HM_ENV_SCHED_MODE);
	hm.sched_serial = mode && !strcmp(mode, "serial");
	hm.sched_cpus_set = parse_cpus(getenv(HM_ENV_SCHED_CPUS));
	if (hm.sched_serial)
		return; /* no gate: one task runs at a time */
	p = mmap(NULL, sizeof(struct gate), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		 -1, 0);
	gate = p == MAP_FAILED ? NULL : p; /* without it: head starts only */
}

static void spin(uint64_t iters)
{
	for (volatile uint64_t i = 0; i < iters; i++)
		;
}

static int64_t mono_ns(void)
{
	struct timespec ts;

	/* The real clock, by raw syscall: the run's virtual one stands still. */
	if (hm_sys(SYS_clock_gettime, CLOCK_MONOTONIC, &ts, 0) < 0)
		return 0;
	return ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

/* Wait until no start point has been reached for quiet_ns (at most
 * GATE_MAX_NS): every thread and process that starts in a burst leaves
 * the gate at once, so the sides of a race run together. A start that is
 * only late: a legal schedule. */
#define GATE_MAX_NS (5 * 1000000LL)
static void wait_gate(int64_t quiet_ns, uint64_t k)
{
	int64_t now = mono_ns(), until = now + GATE_MAX_NS, last;
	cpu_set_t mask, one;
	bool moved = false;
	uint32_t a;
	int n, cpu = -1;

	if (!gate || !now)
		return;
	a = atomic_fetch_add(&gate->arrivals, 1);
	CPU_ZERO(&mask);
	/* Waiters on one CPU would leave the gate one after the other: each
	 * waits on a CPU of its own (of those it may use, in arrival order
	 * from a seeded start), and gets its own mask back as it leaves. */
	if (hm_sys(SYS_sched_getaffinity, 0, sizeof(mask), &mask) > 0 &&
	    (n = CPU_COUNT(&mask)) > 1) {
		int want = (int)((a + k) % (uint64_t)n);

		for (int i = 0; i < CPU_SETSIZE && cpu < 0; i++)
			if (CPU_ISSET(i, &mask) && want-- == 0)
				cpu = i;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		moved = hm_sys(SYS_sched_setaffinity, 0, sizeof(one), &one) == 0;
	}
	atomic_store(&gate->last_ns, now);
	for (int i = 0; (now = mono_ns()) && now < until; i++) {
		last = atomic_load(&gate->last_ns);
		if (now - last >= quiet_ns)
			break;
		if (i >= 16)
			(void)hm_sys(SYS_sched_yield, 0, 0, 0);
	}
	if (moved)
		(void)hm_sys(SYS_sched_setaffinity, 0, sizeof(mask), &mask);
}

/* --sched serial: this task's own priority, before its own code runs. A
 * failure (a task that left SCHED_FIFO or its CPU on its own, or a run
 * without the daemon's limit) leaves the inherited one: still a
 * deterministic order, only not the seed's. */
static void serial_set(uint64_t index)
{
	struct sched_param sp = { .sched_priority = hm_serial_prio(hm.sched_seed, hm.proc, index) };
	struct sched_param now;

	if (hm_sys(SYS_sched_getparam, 0, &now, 0) < 0 || sp.sched_priority >= now.sched_priority)
		return;
	(void)hm_sys(SYS_sched_setscheduler, 0, SCHED_FIFO, &sp);
}

void hm_sched_image(void)
{
	if (hm.sched && hm.sched_serial)
		serial_set(hm_t.index);
}

bool hm_sched_affinity(pid_t pid, size_t size, cpu_set_t *mask)
{
	size_t n = size < sizeof(cpu_set_t) ? size : sizeof(cpu_set_t);

	if (!hm.sched || !hm.sched_cpus_set)
		return false;
	/* The calling process's own tasks only: another's mask is the
	 * kernel's to say. */
	if (pid && pid != hm.pid && pid != (pid_t)hm_sys(SYS_gettid, 0, 0, 0))
		return false;
	memset(mask, 0, size);
	memcpy(mask, &hm.sched_cpus, n);
	return true;
}

void hm_sched_point(enum hm_sched_where where, uint64_t n)
{
	uint64_t k, run = mix(hm.sched_seed, 0);
	int64_t quiet;

	if (likely(!hm.sched))
		return;
	if (hm.sched_serial) {
		if (where == HM_SCHED_THREAD || where == HM_SCHED_FORK_CHILD)
			serial_set(where == HM_SCHED_THREAD ? n : 0);
		else if (mix(mix(hm.sched_seed, hm.proc), n * 4 + where) & 1)
			/* By seed, the creator lets the new task (queued behind
			 * it at its priority) go first: it lowers itself to its
			 * draw and gives the CPU back, or, drawn at or above the
			 * creator's, runs its own code first. A decision at a
			 * point of the program: as deterministic. */
			(void)hm_sys(SYS_sched_yield, 0, 0, 0);
		return;
	}
	k = mix(mix(hm.sched_seed, hm.proc), n * 4 + where);
	/* The run's quiet time, log-uniform over 20 us .. 640 us (seeded). */
	quiet = (20000LL << (run % 6)) * (int64_t)(8 + (run >> 3) % 8) / 8;
	if (where == HM_SCHED_CREATOR || where == HM_SCHED_FORK_PARENT) {
		/* The creator goes on after a seeded delay, half the time: up
		 * to 2^17 iterations (about 0.1 ms), so that what it does next
		 * meets the new thread's start, or does not. */
		if (k & 1)
			spin((1ULL << ((k >> 1) % 18)) + ((k >> 8) & 0xffff));
		return;
	}
	/* With the run spread over the CPUs, 7 in 8 new threads and children
	 * wait at the gate, the others go. On one CPU under the daemon's
	 * priorities, a waiter would only spin: none waits. */
	if (k % 8 && hm_sched_spread(hm.sched_seed))
		wait_gate(quiet, run >> 20);
	/* Then, 1 in 4, a seeded head start for the others: up to 2^10
	 * iterations (a microsecond or less), to land inside a short window. */
	k >>= 3;
	if (k % 4 == 0)
		spin((1ULL << ((k >> 2) % 11)) + ((k >> 6) & 0x3ff));
}
