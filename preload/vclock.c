// SPDX-License-Identifier: MIT
/*
 * The run's one clock, as a shim process sees it: the shared page
 * (include/hermetic/vclock.h), this thread's slot in it, and the one way
 * every virtual wait is done (wait.c and timers.c use it).
 *
 * A virtual wait:
 *   1. hm_vw_begin publishes the deadline in the thread's slot (WAITING), or
 *      EXTERNAL for a wait on the real world, which keeps the run "busy".
 *   2. The caller blocks in the real primitive with a real timeout that
 *      only bounds how long a lost wake-up could cost (HM_VW_SAFETY_NS), or
 *      with the wait's own remaining time when it is EXTERNAL.
 *   3. When the run is idle and this is the earliest deadline, the keeper
 *      (hermeticd, quiesce.c) moves the clock to it and wakes this thread:
 *      FUTEX_WAKE on the slot's word for sleeps (hm_vw_sleep), SIGURG for
 *      every wait in a primitive we do not own (poll, condition variables,
 *      ...). The SIGURG handler, running in this thread, zeroes the timeout
 *      the primitive reads (hm_t.dl, hm_t.rel) when the deadline is due, so
 *      whether the signal comes before the kernel reads the timeout (it then
 *      reads 0) or during the wait (EINTR, and glibc's loops read it again),
 *      the wait ends at once. The timeout variable is set before the "is it
 *      due" check, so a wake-up between the check and the call is not lost.
 *   4. hm_vw_end frees the slot for the thread's next wait.
 *
 * Without a keeper (--no-daemon, HM_VK_SELF, or hermeticd gone for
 * HM_VW_KEEPER_DEAD_NS), waiters keep the clock themselves: each waits for
 * real at most HM_VW_GRACE_NS, and one whose grace ran out moves the clock
 * to the earliest deadline and wakes its owner. That cannot see threads that
 * compute, so it is approximate; it exists so that no run hangs.
 */
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <linux/futex.h>
#include "shim.h"
#include "config.h"

#define HM_VW_SAFETY_NS (1000LL * 1000 * 1000)
/* Sleeps this short are back-offs (a spin-then-sleep loop: the JVM's VM
 * thread waiting for a safepoint sleeps 10 us at a time), not timeouts: the
 * clock does not move for them, until a thread has made HM_VW_SHORT_RUN of
 * them in a row (then it is polling for time, which must pass). */
#define HM_VW_SHORT_NS (100LL * 1000)
#define HM_VW_SHORT_RUN 1000
#define HM_VW_GRACE_NS (2LL * 1000 * 1000)
#define HM_VW_KEEPER_DEAD_NS (3000LL * 1000 * 1000)
/* How late a virtual timer ends: as the kernel's, always after its deadline. */
#define HM_VW_SLACK_NS 1000LL

#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_ACQUIRE)
#define STORE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELEASE)

static struct hm_vslot *slots(void)
{
	return HM_VCLOCK_SLOTS(hm.vc);
}

bool hm_vc_cas_max(int64_t v)
{
	return hm_vclock_raise(&hm.vc->mono, (__s64)v);
}

/* A page of our own when the run's cannot be used: shared with our forked
 * children (MAP_SHARED), kept by its waiters (HM_VK_SELF). */
static void private_page(const char *why, const char *what)
{
	void *p = (void *)hm_sys6(SYS_mmap, 0, HM_VCLOCK_SIZE, PROT_READ | PROT_WRITE,
				  MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (why)
		hm_warn("the run's clock page is unusable (", why, what);
	if ((unsigned long)p > -4096UL) {
		hm.clock = false; /* no memory for a clock: real time, said above */
		hm.vc = NULL;
		return;
	}
	hm.vc = p;
	hm.vc->size = HM_VCLOCK_SIZE;
	hm.vc->nslots = HM_VSLOTS;
	hm.vc->mono = HM_VMONO_BASE;
	hm.vc->wall_off = hm.now0 - HM_VMONO_BASE;
	hm.vc->keeper = HM_VK_SELF;
	hm.vc->lag_milli = HM_DEFAULT_LAG_MILLI;
	hm.vc->version = HM_VCLOCK_VERSION;
	hm.vc->magic = HM_VCLOCK_MAGIC;
}

void hm_vc_init(struct hm_vclock *page, const char *why)
{
	/* (no page named: the shim used alone, without the CLI) */
	if (!page)
		return private_page(why, "): this process keeps its own clock");
	/* hm_clockpage_map checked its size and layout (lib/clockfd.c). */
	hm.vc = page;
}

/* ---- slots ---- */

/* FNV-1a over the lineage key and the thread index: the tie-break among
 * equal deadlines depends only on where the thread is in the program. */
static uint64_t order_key(void)
{
	uint64_t h = 1469598103934665603ULL;

	for (const char *p = hm.lineage; *p; p++)
		h = (h ^ (uint8_t)*p) * 1099511628211ULL;
	for (int i = 0; i < 4; i++)
		h = (h ^ ((hm_t.index >> (8 * i)) & 0xff)) * 1099511628211ULL;
	return h;
}

static uint32_t my_tid(void)
{
	if (!hm_t.tid)
		hm_t.tid = (uint32_t)hm_sys(SYS_gettid, 0, 0, 0);
	return hm_t.tid;
}

/* This thread's slot, claimed on first use; NULL when the page is full. */
static struct hm_vslot *my_slot(void)
{
	struct hm_vslot *s = slots();
	uint32_t tid = my_tid();

	if (hm_t.slot > 0) {
		struct hm_vslot *m = &s[hm_t.slot - 1];

		/* Still ours? The keeper frees the slots of threads it finds dead,
		 * and a forked child inherits its parent thread's number. */
		if (LOAD(m->tid) == tid && LOAD(m->state) != HM_VS_FREE)
			return m;
		hm_t.slot = 0;
	}
	for (uint32_t n = 0, i = tid % HM_VSLOTS; n < HM_VSLOTS; n++, i = (i + 1) % HM_VSLOTS) {
		uint32_t free_ = HM_VS_FREE;

		if (LOAD(s[i].state) != HM_VS_FREE ||
		    !__atomic_compare_exchange_n(&s[i].state, &free_, HM_VS_OWNED, false,
						 __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			continue;
		STORE(s[i].tid, tid);
		STORE(s[i].pid, (uint32_t)hm.pid);
		STORE(s[i].order, order_key());
		hm_vclock_raise_hw(&hm.vc->hw, i + 1);
		hm_t.slot = i + 1;
		return &s[i];
	}
	return NULL;
}

void hm_vc_thread_exit(void)
{
	struct hm_vslot *s;

	if (!hm.vc || hm_t.slot <= 0)
		return;
	s = &slots()[hm_t.slot - 1];
	if (LOAD(s->tid) == my_tid())
		STORE(s->state, HM_VS_FREE);
	hm_t.slot = 0;
}

/* The process exits or execs: its threads' slots go (they cannot say so). */
void hm_vc_process_exit(void)
{
	struct hm_vslot *s;
	uint32_t hw;

	if (!hm.vc || hm.vc->keeper == 0)
		return;
	s = slots();
	hw = LOAD(hm.vc->hw);
	for (uint32_t i = 0; i < hw && i < HM_VSLOTS; i++)
		if (LOAD(s[i].state) != HM_VS_FREE && LOAD(s[i].pid) == (uint32_t)hm.pid)
			STORE(s[i].state, HM_VS_FREE);
	hm_t.slot = 0;
}

void hm_vc_fork_child(void)
{
	hm_t.slot = 0;
	hm_t.tid = 0;
	hm_t.vw = NULL;
}

/* ---- keeping the clock without a keeper ---- */

static bool self_keeping(void)
{
	int64_t beat;

	if (LOAD(hm.vc->keeper) != HM_VK_DAEMON)
		return true;
	beat = LOAD(hm.vc->beat);
	return beat && hm_real_ns(CLOCK_MONOTONIC) - beat > HM_VW_KEEPER_DEAD_NS;
}

static void wake_slot(struct hm_vslot *s)
{
	siginfo_t si;

	if (LOAD(s->wake) == HM_VW_FUTEX) {
		__atomic_fetch_add(&s->futex, 1, __ATOMIC_RELEASE);
		hm_sys6(SYS_futex, (long)&s->futex, FUTEX_WAKE, INT32_MAX, 0, 0, 0);
		return;
	}
	memset(&si, 0, sizeof(si));
	si.si_signo = SIGURG;
	si.si_code = SI_QUEUE;
	si.si_value.sival_int = HM_VWAKE_MAGIC;
	hm_sys6(SYS_rt_tgsigqueueinfo, LOAD(s->pid), LOAD(s->tid), SIGURG, (long)&si, 0, 0);
}

/* Our grace ran out with nothing happening: move the clock to the earliest
 * deadline and wake its owner (it may be us).
 *
 * Without a keeper nobody counts runnable threads, so "nothing happening"
 * is read off the page: a wait begun or ended anywhere in the run since we
 * last looked means somebody is running. A thread of the run that runs
 * between its waits (a parent polling a child with short sleeps) is then
 * never overtaken by a long sleeper: a thread between waits that the kernel
 * calls runnable (state R in /proc, also when a loaded machine has not
 * given it a CPU yet) keeps the clock where it is. Where /proc cannot say,
 * the sleeper waits for the run to stay quiet for two graces in a row
 * before it moves the clock to its own deadline (one grace is shorter than
 * the poller's period of a grace and its work). */
static bool run_quiet(struct hm_vwait *w)
{
	uint64_t a = LOAD(hm.vc->activity);

	if (a != w->activity) {
		w->activity = a;
		w->quiet = 0;
		return false;
	}
	w->quiet++;
	return true;
}

/* The kernel's word on a thread between waits: 1 runnable (state R), 0 not,
 * -1 cannot tell (gone, or another pid namespace's /proc). */
static int thread_runnable(uint32_t pid, uint32_t tid)
{
	char path[64] = "/proc/", buf[512], *p = path + 6, *st;
	long fd, n;

	p += hm_fmt_u64(p, 12, pid);
	memcpy(p, "/task/", 6);
	p += 6;
	p += hm_fmt_u64(p, 12, tid);
	memcpy(p, "/stat", 6);
	fd = hm_sys6(SYS_openat, AT_FDCWD, (long)path, O_RDONLY | O_CLOEXEC, 0, 0, 0);
	if (fd < 0)
		return -1;
	n = hm_sys(SYS_read, fd, buf, sizeof(buf) - 1);
	hm_sys(SYS_close, fd, 0, 0);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	st = strrchr(buf, ')'); /* the name may hold anything but ends at the last ')' */
	if (!st || st[1] != ' ' || !st[2])
		return -1;
	return st[2] == 'R';
}

static void self_keep(struct hm_vwait *w)
{
	struct hm_vslot *s = slots(), *best = NULL;
	int64_t bdl = 0;
	uint64_t bord = 0;
	uint32_t hw = LOAD(hm.vc->hw);
	bool busy = false;

	for (uint32_t i = 0; i < hw && i < HM_VSLOTS; i++) {
		int64_t dl;
		uint64_t ord;

		if (LOAD(s[i].state) == HM_VS_OWNED && i + 1 != (uint32_t)hm_t.slot) {
			/* A thread between waits: if the kernel says it runs (or is
			 * about to), the run is not idle; if it cannot say, wait
			 * longer to be sure. */
			int r = thread_runnable(LOAD(s[i].pid), LOAD(s[i].tid));

			if (r == 1)
				return;
			busy |= r < 0;
		}
		if (LOAD(s[i].state) != HM_VS_WAITING)
			continue;
		dl = LOAD(s[i].deadline);
		ord = LOAD(s[i].order);
		if (!best || dl < bdl || (dl == bdl && ord < bord)) {
			best = &s[i];
			bdl = dl;
			bord = ord;
		}
	}
	/* A timer of ours may be due first, its helper not waiting yet. */
	if (hm_timers_next() < (best ? bdl : INT64_MAX)) {
		if (hm_vc_cas_max(hm_timers_next()))
			__atomic_fetch_add(&hm.vc->advances, 1, __ATOMIC_RELAXED);
		return;
	}
	if (!best)
		return;
	if (best == &s[hm_t.slot - 1] && busy && w->quiet < 2)
		return; /* ours is first, another thread may run: wait longer */
	if (LOAD(best->flags) & HM_VSF_SHORT)
		STORE(best->woken, LOAD(best->seq)); /* ends without the clock moving */
	else if (hm_vc_cas_max(bdl))
		__atomic_fetch_add(&hm.vc->advances, 1, __ATOMIC_RELAXED);
	if (best != &s[hm_t.slot - 1])
		wake_slot(best);
}

/* The lag bound without a keeper: each waiter bounds its own wait, as the
 * keeper would (quiesce.c's lag): once it has waited K times the virtual
 * time it still has to wait, in real time, it ends it (hm_vw_end moves its
 * own readings to the deadline). */
static bool self_lag(struct hm_vwait *w)
{
	uint64_t milli = LOAD(hm.vc->lag_milli);
	int64_t mono = LOAD(hm.vc->mono), now, since, base;
	double k;
	bool series;

	if (!milli || !w->s || w->short_wait || w->deadline == INT64_MAX || w->deadline <= mono)
		return false;
	now = hm_real_ns(CLOCK_MONOTONIC);
	series = hm_t.lag_a_real > 0 && hm_t.lag_a_mono == mono;
	base = series ? hm_t.lag_a_real : w->real_begin;
	if (now - base < HM_VLAG_FLOOR_NS)
		return false;
	if (mono != w->lag_mono) {
		w->lag_mono = mono;
		w->lag_moved = now;
	}
	since = w->lag_moved > w->real_begin ? w->lag_moved : w->real_begin;
	k = (double)milli / 1000.0;
	/* busy since it began, since the clock last moved, or since the
	 * series of waits the bound ended began (quiesce.c's rule) */
	if ((double)(now - w->real_begin) < k * (double)(w->deadline - w->start) &&
	    (double)(now - since) < k * (double)(w->deadline - mono) &&
	    (!series || (double)(now - hm_t.lag_a_real) <
				k * (double)(hm_t.lag_a_credit + (w->deadline - mono))))
		return false;
	if (!series) {
		hm_t.lag_a_mono = mono;
		hm_t.lag_a_real = w->real_begin;
		hm_t.lag_a_credit = 0;
	}
	hm_t.lag_a_credit += w->deadline - mono;
	/* (as the keeper: the run's clock stays, the waiter's own moves) */
	__atomic_fetch_add(&hm.vc->lag_fires, 1, __ATOMIC_RELAXED);
	w->self_lagged = true;
	return true;
}

/* ---- one virtual wait ---- */

bool hm_vw_begin(struct hm_vwait *w, int64_t deadline, uint32_t wake, bool external,
		 const char *what)
{
	struct hm_vslot *s;

	/* A timer ends after its deadline, never on it, as a kernel's does
	 * (timer slack): a program that measures a wait of d then sees at
	 * least d also after the rounding of its own arithmetic (CPython's
	 * test_eintr: t1 - t0 >= 0.2 in floating point, which an exact
	 * virtual 0.2 s fails for about half of all seeds). */
	if (deadline < INT64_MAX - HM_VW_SLACK_NS)
		deadline += HM_VW_SLACK_NS;
	w->asked = deadline;
	/* The caller's deadline is on this thread's view, which is ahead of the
	 * run's clock by what the lag bound gave it alone: on the run's clock
	 * the wait is as long as it asked. */
	if (deadline != INT64_MAX)
		deadline -= hm_t.lagoff;
	w->s = NULL;
	w->deadline = deadline;
	w->external = external;
	w->what = what;
	w->start = hm.vc ? LOAD(hm.vc->mono) : 0;
	w->prev = hm_t.vw;
	w->at_once = false;
	w->self_lagged = false;
	w->real_begin = 0;
	if (!hm.vc || !(s = my_slot()))
		return false;
	w->s = s;
	w->wakes = hm_t.wakes;
	w->short_wait = false;
	if (!external && deadline != INT64_MAX) {
		/* A longer wait starts the count again; past the limit, tiny sleeps
		 * move the clock until the thread waits longer. */
		if (deadline - w->start > HM_VW_SHORT_NS) {
			hm_t.shorts = 0;
		} else if (wake == HM_VW_FUTEX && !hm_t.no_short && hm_t.shorts < HM_VW_SHORT_RUN) {
			w->short_wait = true;
			hm_t.shorts++;
		}
	}
	/* A short wait is published as due now: the keeper ends it first when the
	 * run is idle, without moving the clock, and says so in s->woken. */
	STORE(s->deadline, w->short_wait ? w->start : deadline);
	STORE(s->flags, w->short_wait ? HM_VSF_SHORT : 0u);
	STORE(s->wake, wake);
	w->real_begin = hm_real_ns(CLOCK_MONOTONIC);
	w->lag_mono = w->start;
	w->lag_moved = w->real_begin;
	STORE(s->real_begin, w->real_begin);
	w->seq = __atomic_add_fetch(&s->seq, 1, __ATOMIC_ACQ_REL);
	w->activity = __atomic_add_fetch(&hm.vc->activity, 1, __ATOMIC_RELAXED);
	w->quiet = 0;
	STORE(s->state, external ? HM_VS_EXTERNAL : HM_VS_WAITING);
	hm_t.vw = w;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	return true;
}

/* HERMETIC_DEBUG=waits: one line per timed wait, to say which rule it
 * followed and how it ended. */
static void debug_wait(const struct hm_vwait *w, bool lagged)
{
	char line[384], *p = line; /* (what follows the prefix: at most 136 bytes) */
	int64_t now = LOAD(hm.vc->mono), len = w->deadline - w->start - HM_VW_SLACK_NS;
	const char *parts[] = { "hermetic: wait: process ", hm.lineage, " thread " };

	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		size_t n = strlen(parts[i]);

		if (p + n >= line + sizeof(line) - 160)
			break;
		memcpy(p, parts[i], n);
		p += n;
	}
	p += hm_fmt_u64(p, 12, hm_t.index);
	*p++ = ' ';
	memcpy(p, w->what, strlen(w->what));
	p += strlen(w->what);
	if (w->deadline == INT64_MAX) {
		memcpy(p, " without a timeout", 18);
		p += 18;
	} else {
		memcpy(p, " for ", 5);
		p += 5;
		p += hm_fmt_i64(p, 22, len / 1000);
		memcpy(p, " us", 3);
		p += 3;
	}
	memcpy(p, w->external ? ", external (real time)" : ", virtual", w->external ? 22 : 9);
	p += w->external ? 22 : 9;
	if (w->deadline != INT64_MAX) {
		bool due = hm_vw_due(w);

		memcpy(p, due ? ": timed out" : ": event", due ? 11 : 7);
		p += due ? 11 : 7;
		if (lagged) {
			memcpy(p, " (lag bound)", 12);
			p += 12;
		}
	}
	memcpy(p, ", clock ", 8);
	p += 8;
	p += hm_fmt_i64(p, 22, now / 1000);
	memcpy(p, " us\n", 4);
	p += 4;
	hm_sys(SYS_write, 2, line, p - line);
}

/* The lag bound ended this wait (the keeper's mark, or our own): say so in
 * the page's log, which hermetic enroll prints, and in the journal. */
static void lag_log(const struct hm_vwait *w)
{
	uint64_t i = __atomic_fetch_add(&hm.vc->lag_logged, 1, __ATOMIC_RELAXED);
	struct hm_vlag *l;
	size_t n;

	hm_t.lagged = true;
	if (i >= HM_VLAG_LOG)
		return;
	l = &hm.vc->lag[i];
	l->thread = hm_t.index;
	l->virt = w->deadline - w->start - HM_VW_SLACK_NS;
	l->real = hm_real_ns(CLOCK_MONOTONIC) - w->real_begin;
	l->mono = hm_clock_now(CLOCK_MONOTONIC); /* (its own clock, now at the deadline) */
	n = strlen(w->what);
	memcpy(l->what, w->what, n < sizeof(l->what) - 1 ? n : sizeof(l->what) - 1);
	n = strlen(hm.lineage);
	memcpy(l->lineage, hm.lineage, n < sizeof(l->lineage) - 1 ? n : sizeof(l->lineage) - 1);
	STORE(l->ready, 1u);
}

void hm_vw_end(struct hm_vwait *w)
{
	/* The lag bound ended it before the run's clock came: this thread's
	 * readings go to its deadline, nobody else's (docs/virtual-time.md). */
	bool lagged = w->s && !w->short_wait && (w->self_lagged || LOAD(w->s->lagged) == w->seq) &&
		      LOAD(hm.vc->mono) < w->deadline;

	if (lagged) {
		hm_clock_lag_to(w->asked);
		lag_log(w);
	}
	if (unlikely(hm.debug_waits) && w->s)
		debug_wait(w, lagged);
	hm_t.vw = w->prev;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (w->s)
		__atomic_fetch_add(&hm.vc->activity, 1, __ATOMIC_RELAXED);
	if (w->s)
		STORE(w->s->state, w->prev && w->prev->s == w->s ?
					   (w->prev->external ? HM_VS_EXTERNAL : HM_VS_WAITING) :
					   HM_VS_OWNED);
	if (w->prev && w->s)
		STORE(w->s->deadline, w->prev->deadline); /* a wait in a handler ended */
	/* A poll whose descriptors were ready when it was called did not wait:
	 * it is a round of a polling loop, as a zero-timeout poll is (clock.c). */
	if (!w->at_once)
		hm_clock_waited();
}

bool hm_vw_due(const struct hm_vwait *w)
{
	if (LOAD(hm.vc->mono) >= w->deadline)
		return true;
	if (w->self_lagged || (w->s && !w->short_wait && LOAD(w->s->lagged) == w->seq))
		return true; /* the lag bound ended it (hm_vw_end) */
	return w->short_wait && w->s && LOAD(w->s->woken) == w->seq;
}


/* How long the next real call may block, in real ns. */
int64_t hm_vw_real_ns(const struct hm_vwait *w)
{
	int64_t left = w->deadline - LOAD(hm.vc->mono);

	if (left < 0)
		left = 0;
	if (w->external)
		return left; /* the real world keeps real deadlines */
	if (self_keeping())
		return left < HM_VW_GRACE_NS ? left : HM_VW_GRACE_NS;
	return HM_VW_SAFETY_NS;
}

/* The real call timed out for real. External: the deadline came in real
 * time, and the run's clock goes there too. Without a keeper: maybe move
 * the clock ourselves. */
void hm_vw_real_timeout(struct hm_vwait *w)
{
	if (w->external) {
		hm_vc_cas_max(w->deadline);
	} else if (self_keeping()) {
		if (self_lag(w))
			return;
		if (run_quiet(w))
			self_keep(w);
	}
}

/* Prepare hm_t.rel for a raw syscall with a relative timeout, then say
 * whether to make it at all (false: the deadline is due). The order matters:
 * a wake-up between the two zeroes hm_t.rel, one after the check finds it
 * zero or interrupts the call. */
bool hm_vw_arm_rel(struct hm_vwait *w)
{
	hm_t.rel = ns_to_ts(hm_vw_real_ns(w));
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	return !hm_vw_due(w);
}

/* The same for a primitive taking an absolute deadline on the real clock id. */
bool hm_vw_arm_abs(struct hm_vwait *w, clockid_t real_id)
{
	hm_t.dl = ns_to_ts(hm_real_ns(real_id) + hm_vw_real_ns(w));
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	return !hm_vw_due(w);
}

/* A sleep: until the deadline (0), or a signal's handler ran (-EINTR). */
int hm_vw_sleep(struct hm_vwait *w)
{
	for (;;) {
		uint32_t v = LOAD(w->s->futex);
		struct timespec ts;
		long r;

		if (hm_vw_due(w))
			return 0;
		ts = ns_to_ts(hm_vw_real_ns(w));
		/* A shared futex (the page is a MAP_SHARED file): the keeper, in
		 * another process, wakes it. */
		r = hm_sys6(SYS_futex, (long)&w->s->futex, FUTEX_WAIT, v, (long)&ts, 0, 0);
		if (r == -ETIMEDOUT) {
			hm_vw_real_timeout(w);
		} else if (r == -EINTR && !hm_vw_due(w)) {
			return -EINTR; /* a handler ran: the program's, as the kernel says */
		}
	}
}

/* SIGURG with our magic (signals.c): this thread's wait may be due. */
void hm_vw_on_wake(void)
{
	struct hm_vwait *w = hm_t.vw;

	hm_t.wakes++;
	if (w && hm.vc && hm_vw_due(w)) {
		hm_t.rel.tv_sec = hm_t.rel.tv_nsec = 0;
		hm_t.dl.tv_sec = hm_t.dl.tv_nsec = 0;
	}
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}
