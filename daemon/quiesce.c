// SPDX-License-Identifier: MIT
/*
 * The clock keeper: a thread of hermeticd that moves each run's virtual
 * clock when, and only when, the run cannot move without it.
 *
 * bpf/sched.bpf.c puts a record on a ring buffer each time a run's count of
 * runnable tasks falls to 0. For each, and every 50 ms for every run (in case
 * a record was lost), the keeper:
 *   1. re-reads the count: still 0, or a task woke meanwhile (then nothing);
 *   2. scans the run's clock page: a thread blocked on the real world
 *      (EXTERNAL) means the run is not idle; otherwise the earliest deadline
 *      among waiting threads not yet woken for this wait, ties broken by the
 *      slot's order key, which depends only on the program;
 *   3. (a futex wait the supervisor holds, HM_VSF_ASK: first asks the
 *      supervisor whether its word changed meanwhile, and goes on only
 *      once it says no)
 *   4. moves the clock there (never backwards) and wakes that one waiter:
 *      FUTEX_WAKE on its slot, or SIGURG to the thread. Waking it makes it
 *      runnable in the kernel's count before we return (sched_waking runs
 *      in our context), so the next idle moment is a new record.
 * A write(2) to a run's page file (not a store through the mapping: those
 * raise no inotify event) asks for step 1 for that run now: the supervisor
 * in enroll (engine/supervise_wait.c) publishes a wait on a thread's behalf
 * after that thread blocked, when the run may already be idle with no new
 * record to come. Any process of the run may ask; a check is always safe,
 * and inotify merges a flood of identical events.
 * One waiter per idle moment: two deadlines at the same time are handled
 * one after the other, each after the run has gone idle again, so which one
 * "happened first" is decided by the order key, not by the scheduler.
 * docs/virtual-time.md has the argument in full.
 *
 * The page is written by the run's processes: every field is read once, and
 * nothing read from it is trusted beyond that run (the thread to signal is
 * looked up in the kernel's table of the run's own tasks).
 */
#include <bpf/libbpf.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/random.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include "util.h"
#include "daemon.h"

#define TICK_NS (50LL * 1000 * 1000)
#define GC_TICKS 40 /* dead owners' slots are freed every 2 s */

struct kclock {
	bool used;
	uint64_t cgid;
	uint64_t run_id;
	struct hm_vclock *vc;
	char path[256];
	uint32_t *woken; /* per slot: the wait (seq + 1) we last woke */
	/* the lag bound: per slot, the wait (seq + 1) first seen and the run's
	 * clock then; the clock when we last saw it move, and when (real) */
	struct kseen {
		uint32_t seq;
		int64_t mono;
		/* a series of waits of one thread that the bound ended while the
		 * run's clock stood at a_mono: the real time the first began, and
		 * the virtual time the bound has given the thread since */
		uint32_t a_tid;
		int64_t a_mono, a_real, a_credit;
		/* the clock when the bound last ended a wait of the supervisor's
		 * in the series, which then moves it to a_mono, and what that
		 * added to a_credit: unless the wait's event came first
		 * (lag_series_follow) */
		int64_t a_mono0, a_last;
	} *seen;
	int64_t last_mono, t_move;
	/* The deadline an idle moment last woke a waiter at, and when (real):
	 * other waits due by then are the keeper's to wake, one per idle
	 * moment (lag_due) */
	int64_t tie_dl, tie_real;
};

struct hmd_keeper {
	pthread_t thread;
	pthread_mutex_t lock;
	struct hmd_sched *sched;
	struct ring_buffer *rb;
	int epfd, stop_fd, timer_fd, ino_fd;
	int lag_fd; /* one-shot: the next time the lag bound fires a wait */
	int64_t lag_next; /* that time (real ns), INT64_MAX: none known */
	/* No domain at or above this one is used: the walks of every tick
	 * stop here, not at HM_SCHED_DOMAINS (slots are taken lowest first). */
	uint32_t dom_hw;
	unsigned ticks;
	char dir[512];
	int dirfd; /* dir: where runs' pages are */
	struct kclock clocks[HM_SCHED_DOMAINS];
};

#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_ACQUIRE)
#define STORE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELEASE)
#define INC(x) __atomic_fetch_add(&(x), 1, __ATOMIC_RELAXED)

static int wake_signal(const struct hm_sched_tid *t)
{
	siginfo_t si = { 0 };

	si.si_signo = SIGURG;
	si.si_code = SI_QUEUE;
	si.si_value.sival_int = HM_VWAKE_MAGIC;
	/* Root signalling one of the run's own threads, found by the kernel
	 * (not by the page): the page can only make us wake its own run. */
	if (syscall(SYS_rt_tgsigqueueinfo, t->tgid, t->tid, SIGURG, &si) < 0)
		return -errno;
	return 0;
}

/* Kernel work the run queued is still in flight (bpf/sched.bpf.c: a PTY's
 * bytes on their way to a reader of the run), and was queued recently
 * enough that it is not taken for work that was cancelled and will never
 * say it ended (HM_SCHED_WORK_HOLD_NS). The bound only ever delays a move
 * of the clock, by real time, when the count is wrong. */
static bool work_in_flight(const struct hm_sched_dom *st)
{
	return st->nwork > 0 && hm_now_ns() - st->work_ns < HM_SCHED_WORK_HOLD_NS;
}

/* The kernel's count says no thread of the run is running (save those
 * blocked on the supervisor, which the slots decide), and no work it
 * queued is still on its way. process() reads this twice, the slots
 * between: the second reading's nwork is read after the first saw nrun at
 * 0, so work queued before that moment is seen (or its end, with the
 * wake-up it made counted in nrun first). */
static bool idle_now(struct hmd_keeper *k, const struct kclock *c, uint32_t dom,
		     struct hm_sched_dom *st)
{
	return hmd_sched_read(k->sched, dom, st) == 0 && st->cgid == c->cgid &&
	       st->nrun <= st->nsuper && st->nsuper >= 0 && !work_in_flight(st);
}

/* Still idle after the walk of the slots, as it was before: no wait of the
 * run began or ended meanwhile (the page's activity count, which a thread
 * bumps before it changes its slot), and the kernel's count agrees again.
 * Without this, a thread woken out of a wait on the world (a recv from
 * an --allow'ed host) just after the count was read, and out of it by the
 * time the walk reached its slot, looked idle: the clock jumped to the
 * next timer while it ran (an alarm(10) fired at once, 1 run in 100). A
 * thread that wakes bumps the count of running threads before it can run,
 * so either the second reading sees it running, or the activity count has
 * moved. A quiet moment missed here comes back as the kernel's next quiet
 * event or the tick. */
static bool still_idle(struct hmd_keeper *k, const struct kclock *c, uint32_t dom,
		       uint64_t activity)
{
	struct hm_sched_dom st;

	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return idle_now(k, c, dom, &st) && LOAD(c->vc->activity) == activity;
}

/* The run of domain dom may be idle: act on it (lock held). */
static void process(struct hmd_keeper *k, uint32_t dom)
{
	struct kclock *c = &k->clocks[dom];
	struct hm_sched_dom st;
	struct hm_vclock *vc = c->vc;
	struct hm_vslot *slots;
	uint32_t hw;
	uint64_t activity;

	if (!c->used || hmd_clockpage_broken(vc))
		return;
	/* Read before the kernel's count: see still_idle(). */
	activity = LOAD(vc->activity);
	if (!idle_now(k, c, dom, &st))
		return;
	if (LOAD(vc->magic) != HM_VCLOCK_MAGIC)
		return;
	slots = HM_VCLOCK_SLOTS(vc);
	hw = LOAD(vc->hw);
	if (hw > HM_VSLOTS)
		hw = HM_VSLOTS;
	for (int tries = 0; tries < 16; tries++) {
		int64_t bdl = 0, dl;
		uint64_t bord = 0, ord;
		uint32_t seq, tid, wake, flags;
		int best = -1;
		int64_t held = 0;
		struct hm_sched_tid t;

		for (uint32_t i = 0; i < hw; i++) {
			uint32_t state = LOAD(slots[i].state);

			if (state == HM_VS_EXTERNAL) {
				INC(vc->external);
				return;
			}
			if (state != HM_VS_WAITING)
				continue;
			seq = LOAD(slots[i].seq);
			if (c->woken[i] == seq + 1)
				continue; /* woken for this wait already */
			held += !!(LOAD(slots[i].flags) & HM_VSF_SUPER);
			dl = LOAD(slots[i].deadline);
			ord = LOAD(slots[i].order);
			if (best < 0 || dl < bdl || (dl == bdl && ord < bord)) {
				best = (int)i;
				bdl = dl;
				bord = ord;
			}
		}
		/* Tasks blocked on the supervisor count as running, save those
		 * whose wait it published (and we have not woken): fewer, and
		 * the supervisor is still at work on the others (it asks us to
		 * look again when done). A thread the run signalled out of its
		 * wait may leave a slot behind for a moment: that only ever
		 * makes the run look busy longer, or idle as it then is. */
		if (held < st.nsuper)
			return;
		if (best < 0) {
			INC(vc->idle_nothing);
			return;
		}
		seq = LOAD(slots[best].seq);
		tid = LOAD(slots[best].tid);
		wake = LOAD(slots[best].wake);
		flags = LOAD(slots[best].flags);
		if (hmd_sched_tid(k->sched, dom, tid, &t) < 0) {
			/* Its thread is gone: the slot is free again. */
			uint32_t w = HM_VS_WAITING;

			__atomic_compare_exchange_n(&slots[best].state, &w, HM_VS_FREE, false,
						    __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
			c->woken[best] = 0;
			continue;
		}
		if (!still_idle(k, c, dom, activity))
			return;
		/* A futex wait the supervisor holds ends when its word changes,
		 * which only the supervisor sees, a moment later: ask it first
		 * (woken := seq, a wake of the slot), and move the clock once it
		 * has looked at the word after this idle moment (pad := seq, and
		 * it asks us to look again). Had the word changed, the waiter
		 * is running by then and the run is not idle. */
		if ((flags & HM_VSF_ASK) && LOAD(slots[best].pad) != seq) {
			if (LOAD(slots[best].woken) != seq) {
				STORE(slots[best].woken, seq);
				__atomic_fetch_add(&slots[best].futex, 1, __ATOMIC_RELEASE);
				syscall(SYS_futex, &slots[best].futex, FUTEX_WAKE, INT32_MAX, NULL, NULL, 0);
			}
			return;
		}
		if (flags & HM_VSF_SHORT)
			STORE(slots[best].woken, seq); /* a back-off: ends, the clock stays */
		else if (hm_vclock_raise(&vc->mono, bdl))
			INC(vc->advances);
		c->woken[best] = seq + 1;
		if (!(flags & HM_VSF_SHORT)) {
			c->tie_dl = bdl;
			c->tie_real = (int64_t)hm_now_ns();
		}
		if (wake == HM_VW_FUTEX) {
			__atomic_fetch_add(&slots[best].futex, 1, __ATOMIC_RELEASE);
			syscall(SYS_futex, &slots[best].futex, FUTEX_WAKE, INT32_MAX, NULL, NULL, 0);
		} else if (wake_signal(&t) < 0) {
			continue;
		}
		INC(vc->wakes);
		return;
	}
}

/*
 * The lag bound (docs/virtual-time.md, "Time always ends"): a wait that
 * began at real time b, with the run's clock at m_b, and has deadline d
 * fires, idle or not, once
 *     now - b                  >= K * (d - m_b)   (busy since it began), or
 *     now - max(b, last move)  >= K * (d - mono)  (busy since the clock moved),
 * K = lag_milli / 1000. The run was busy all that time: had it been idle,
 * the clock would have moved to the deadline. The run's clock does not move
 * for it: the wait is marked in its slot (lagged) and woken, and its thread
 * moves its own readings to its deadline and says so (in the page's lag log,
 * which hermetic enroll prints, and in its journal). No other thread's
 * readings change, so what the bound does stays with the waiter. m_b is the clock when we first saw the wait (every 50 ms:
 * at most that late, which only ever delays the bound). No wait younger
 * than HM_VLAG_FLOOR_NS fires (a moment's business is not a hang). Lock
 * held.
 */
/* A series of this slot's waits that the bound ended goes on: same
 * thread, and the run's clock has not moved since it began. */
static bool lag_series(const struct kseen *w, uint32_t tid, int64_t mono)
{
	return w->a_real > 0 && w->a_tid == tid && (w->a_mono == mono || w->a_mono0 == mono);
}

/* A series follows its thread, not the slot: enroll's supervisor takes the
 * first free slot from the thread's id on, so a thread of a busy Go program
 * whose slot another of its threads held a moment (its poller's wait) waits
 * in the next one. Its series there would begin anew and wait out the
 * floor again: a second more for a 100 ms socket deadline of net/http's
 * tests. So a new wait of the supervisor's takes the series its thread has
 * in another slot (lock held). */
static void lag_series_follow(struct kclock *c, uint32_t i, uint32_t tid, int64_t mono, uint32_t hw)
{
	struct kseen *w = &c->seen[i];

	for (uint32_t j = 0; !lag_series(w, tid, mono) && j < hw; j++)
		if (j != i && lag_series(&c->seen[j], tid, mono)) {
			w->a_tid = tid;
			w->a_mono = c->seen[j].a_mono;
			w->a_mono0 = c->seen[j].a_mono0;
			w->a_last = c->seen[j].a_last;
			w->a_real = c->seen[j].a_real;
			w->a_credit = c->seen[j].a_credit;
			c->seen[j].a_real = 0;
		}
	/* The last wait the bound ended was woken by its event first: the
	 * clock stayed, and the series gave the thread nothing for it. */
	if (lag_series(w, tid, mono) && w->a_mono != mono) {
		w->a_credit -= w->a_last;
		w->a_mono = mono;
		w->a_last = 0;
	}
}

/* When (real ns) the bound fires the wait: b + the floor at the earliest.
 * A thread whose waits the bound keeps ending (a parent polling a busy
 * child with growing sleeps, as subprocess.run's timeout does) is one
 * waiter that has been busy since its series began: its next wait fires
 * once the run has computed K times all the virtual time the series waited,
 * so that n waits of d end after K * n * d, not n * (K * d + the floor).
 * In doubles: deadlines may lie far away. */
static double lag_at(const struct kclock *c, int64_t b, const struct kseen *w, uint32_t tid,
		     int64_t dl, int64_t mono, uint64_t milli)
{
	int64_t since = c->t_move > b ? c->t_move : b;
	double k = (double)milli / 1000.0, base = (double)b;
	double a = (double)b + k * (double)(dl - w->mono), bb = (double)since + k * (double)(dl - mono);
	double t = a < bb ? a : bb;

	if (lag_series(w, tid, mono)) {
		double s = (double)w->a_real + k * (double)(w->a_credit + (dl - mono));

		if (s < t)
			t = s;
		base = (double)w->a_real;
	}
	return t > base + HM_VLAG_FLOOR_NS ? t : base + HM_VLAG_FLOOR_NS;
}

static bool lag_due(const struct kclock *c, int64_t now, int64_t b, const struct kseen *w,
		    uint32_t tid, int64_t dl, int64_t mono, uint64_t milli, int64_t *next)
{
	double at;

	/* Due: the clock is past its deadline. Waits due at the deadline an
	 * idle moment just woke a waiter at (a tie: three children's sleeps
	 * of one length) are woken one per idle moment, in the order of their
	 * keys (process()); the bound fired them all at its next tick, in the
	 * order the kernel then ran them (a Python parent saw its three
	 * children end in another order 1 run in 5 under one seed). So the
	 * bound takes such a wait only when the run has been busy for
	 * HM_VLAG_TIE_NS since that wake-up. Another due wait (the clock was
	 * moved past it otherwise: by the supervisor's bound, clock_settime)
	 * fires at once. */
	if (dl <= mono) {
		int64_t at_tie = c->tie_real + HM_VLAG_TIE_NS;

		if (dl > c->tie_dl || now >= at_tie)
			return true;
		if (at_tie < *next)
			*next = at_tie;
		return false;
	}
	if (b <= 0)
		return false;
	at = lag_at(c, b, w, tid, dl, mono, milli);
	if (at <= (double)now)
		return true;
	if (at < (double)*next)
		*next = (int64_t)at;
	return false;
}

/* The waiting slot that the bound fires first, or -1. */
static int lag_pick(struct kclock *c, int64_t now, uint64_t milli, uint32_t hw, int64_t *ret_dl,
		    int64_t *next)
{
	struct hm_vslot *slots = HM_VCLOCK_SLOTS(c->vc);
	int64_t mono = LOAD(c->vc->mono), bdl = 0;
	uint64_t bord = 0;
	int best = -1;

	for (uint32_t i = 0; i < hw; i++) {
		uint32_t seq;
		int64_t dl;
		uint64_t ord;

		if (LOAD(slots[i].state) != HM_VS_WAITING)
			continue;
		seq = LOAD(slots[i].seq);
		if (c->seen[i].seq != seq + 1) {
			c->seen[i].seq = seq + 1;
			c->seen[i].mono = mono;
			if (LOAD(slots[i].flags) & HM_VSF_SUPER)
				lag_series_follow(c, i, LOAD(slots[i].tid), mono, hw);
		}
		if (c->woken[i] == seq + 1)
			continue;
		dl = LOAD(slots[i].deadline);
		ord = LOAD(slots[i].order);
		if (dl == INT64_MAX ||
		    !lag_due(c, now, LOAD(slots[i].real_begin), &c->seen[i], LOAD(slots[i].tid), dl,
			     mono, milli, next))
			continue;
		if (best < 0 || dl < bdl || (dl == bdl && ord < bord)) {
			best = (int)i;
			bdl = dl;
			bord = ord;
		}
	}
	*ret_dl = bdl;
	return best;
}

/* The bound ended this wait: it begins a series or continues one. A wait
 * that enroll's supervisor does for a process without the shim (SUPER)
 * moves the run's clock to its deadline when the bound ends it (the
 * synthetic vDSO has no per-thread readings to move): the series goes on
 * from there, not from the clock it began at. Otherwise every such wait
 * began a series of its own and waited out the floor: a Go program's
 * system monitor, the only waiter of a busy run, moved its clock 10 ms per
 * half second of real time (a 100 ms socket deadline of net/http's tests
 * took 20 s, bare 0.1 s). Where the wait's event came before the
 * supervisor saw the bound's mark (Go's system monitor's futex wait, woken
 * as the bound fired it), the clock stays at a_mono0 and the series goes on
 * from there, less what that wait added (lag_series_follow): it began
 * anew, and waited out the floor again (2 of 8 runs of a Go program
 * streaming to itself until a 100 ms deadline, with waits fired at a poke). */
static void lag_series_add(struct kseen *w, const struct hm_vslot *s, int64_t dl, int64_t mono)
{
	uint32_t tid = LOAD(s->tid);

	if (!lag_series(w, tid, mono)) {
		w->a_tid = tid;
		w->a_real = LOAD(s->real_begin);
		w->a_credit = 0;
	}
	w->a_credit += dl - mono;
	w->a_last = dl - mono;
	w->a_mono0 = w->a_mono = mono;
	if (LOAD(s->flags) & HM_VSF_SUPER)
		w->a_mono = dl;
}

static void lag(struct hmd_keeper *k, uint32_t dom, int64_t now, bool poke)
{
	struct kclock *c = &k->clocks[dom];
	struct hm_vclock *vc = c->vc;
	struct hm_vslot *slots = HM_VCLOCK_SLOTS(vc);
	uint64_t milli;
	uint32_t hw;
	int64_t mono;

	if (!c->seen || hmd_clockpage_broken(vc) || LOAD(vc->magic) != HM_VCLOCK_MAGIC)
		return;
	mono = LOAD(vc->mono);
	if (mono != c->last_mono) {
		c->last_mono = mono;
		c->t_move = now;
	}
	milli = LOAD(vc->lag_milli);
	hw = LOAD(vc->hw);
	if (!milli)
		return;
	if (hw > HM_VSLOTS)
		hw = HM_VSLOTS;
	for (int fires = 0; fires < 64; fires++) {
		int64_t bdl;
		int best = lag_pick(c, now, milli, hw, &bdl, &k->lag_next);
		uint32_t seq;
		struct hm_sched_tid t;

		if (best < 0)
			return;
		seq = LOAD(slots[best].seq);
		c->woken[best] = seq + 1;
		if (hmd_sched_tid(k->sched, dom, LOAD(slots[best].tid), &t) < 0)
			continue; /* gone: gc() frees its slot */
		if (LOAD(slots[best].flags) & HM_VSF_SHORT) {
			STORE(slots[best].woken, seq); /* a back-off: due now, the clock stays */
		} else if (bdl > LOAD(vc->mono)) {
			/* The bound, not an idle moment: the run's clock stays
			 * where it is; the waiter's own readings go to its
			 * deadline (preload/vclock.c), and it says so. */
			STORE(slots[best].lagged, seq);
			INC(vc->lag_fires);
			if (poke)
				INC(vc->lag_prompt);
			lag_series_add(&c->seen[best], &slots[best], bdl, LOAD(vc->mono));
		}
		if (LOAD(slots[best].wake) == HM_VW_FUTEX) {
			__atomic_fetch_add(&slots[best].futex, 1, __ATOMIC_RELEASE);
			syscall(SYS_futex, &slots[best].futex, FUTEX_WAKE, INT32_MAX, NULL, NULL, 0);
		} else {
			wake_signal(&t);
		}
		INC(vc->wakes);
	}
}

/* Slots whose owner died without letting go (lock held). */
static void gc(struct hmd_keeper *k, uint32_t dom)
{
	struct kclock *c = &k->clocks[dom];
	struct hm_vslot *slots = HM_VCLOCK_SLOTS(c->vc);
	uint32_t hw = LOAD(c->vc->hw);
	struct hm_sched_tid t;

	if (hmd_clockpage_broken(c->vc))
		return;
	if (hw > HM_VSLOTS)
		hw = HM_VSLOTS;
	for (uint32_t i = 0; i < hw; i++) {
		uint32_t state = LOAD(slots[i].state);

		if (state == HM_VS_FREE || hmd_sched_tid(k->sched, dom, LOAD(slots[i].tid), &t) == 0)
			continue;
		if (__atomic_compare_exchange_n(&slots[i].state, &state, HM_VS_FREE, false,
						__ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			c->woken[i] = 0;
	}
}

static int on_quiet(void *ctx, void *data, size_t size)
{
	struct hmd_keeper *k = ctx;
	const struct hm_sched_quiet *q = data;

	if (size >= sizeof(*q) && q->dom < HM_SCHED_DOMAINS)
		process(k, q->dom);
	return 0;
}

/* The next firing of the bound, if it comes before the next 50 ms tick:
 * then a one-shot timer, so that a wait ends when its bound says, not up
 * to a tick later (lock held). */
static void lag_arm(struct hmd_keeper *k, int64_t now)
{
	struct itimerspec its = { 0 };
	int64_t at = k->lag_next;

	if (at == INT64_MAX || at >= now + TICK_NS)
		return;
	if (at <= now)
		at = now + 1;
	its.it_value.tv_sec = at / 1000000000LL;
	its.it_value.tv_nsec = at % 1000000000LL;
	/* A timer that cannot be armed leaves the wait to the 50 ms tick,
	 * which runs lag_tick too: later, never lost. */
	(void)timerfd_settime(k->lag_fd, TFD_TIMER_ABSTIME, &its, NULL);
}

/* The lag bound's own timer went off: every run's waits, now. */
static void lag_tick(struct hmd_keeper *k)
{
	int64_t now = (int64_t)hm_now_ns();

	k->lag_next = INT64_MAX;
	for (uint32_t dom = 0; dom < k->dom_hw; dom++)
		if (k->clocks[dom].used)
			lag(k, dom, now, false);
	lag_arm(k, now);
}

static void tick(struct hmd_keeper *k)
{
	int64_t now = (int64_t)hm_now_ns();
	bool do_gc = ++k->ticks % GC_TICKS == 0;

	k->lag_next = INT64_MAX;
	for (uint32_t dom = 0; dom < k->dom_hw; dom++) {
		struct kclock *c = &k->clocks[dom];

		if (!c->used)
			continue;
		if (!hmd_clockpage_broken(c->vc))
			STORE(c->vc->beat, now);
		process(k, dom);
		lag(k, dom, now, false);
		if (do_gc)
			gc(k, dom);
	}
	lag_arm(k, now);
}

/* Pokes: the runs whose page files were written (see the top): enroll's
 * supervisor published a wait. The run may be idle (process), or busy with
 * a wait whose bound is due already: the next of a series the bound keeps
 * ending (a busy Go program's system monitor, whose sleeps alone move its
 * run's clock), which then ends when its bound says, not up to a tick
 * later (lag; docs/virtual-time.md). */
static void poked(struct hmd_keeper *k)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	int64_t now = (int64_t)hm_now_ns();
	bool lagged = false;
	ssize_t n;

	while ((n = read(k->ino_fd, buf, sizeof(buf))) > 0)
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;

			for (uint32_t dom = 0; ev->len && dom < k->dom_hw; dom++) {
				const char *base;

				/* (the used test first: 4096 slots, most free) */
				if (!k->clocks[dom].used)
					continue;
				base = strrchr(k->clocks[dom].path, '/');
				if (base && !strcmp(base + 1, ev->name)) {
					process(k, dom);
					lag(k, dom, now, true);
					lagged = true;
				}
			}
			p += sizeof(*ev) + ev->len;
		}
	if (lagged)
		lag_arm(k, now);
}

static void *keeper_main(void *arg)
{
	struct hmd_keeper *k = arg;
	struct epoll_event ev[4];
	uint64_t v;

	for (;;) {
		int n = epoll_wait(k->epfd, ev, 4, -1);

		for (int i = 0; i < n; i++) {
			if (ev[i].data.u32 == 1)
				return NULL; /* stop */
			pthread_mutex_lock(&k->lock);
			if (ev[i].data.u32 == 2) {
				if (read(k->timer_fd, &v, sizeof(v)) > 0)
					tick(k);
			} else if (ev[i].data.u32 == 4) {
				if (read(k->lag_fd, &v, sizeof(v)) > 0)
					lag_tick(k);
			} else if (ev[i].data.u32 == 5) {
				poked(k);
			} else {
				ring_buffer__consume(k->rb);
			}
			pthread_mutex_unlock(&k->lock);
		}
	}
}

static int keeper_watch(struct hmd_keeper *k, int fd, uint32_t what)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = what };

	return epoll_ctl(k->epfd, EPOLL_CTL_ADD, fd, &ev);
}

int hmd_keeper_start(struct hmd_keeper **ret, struct hmd_sched *s, const char *runtime_dir)
{
	struct hmd_keeper *k = calloc(1, sizeof(*k));
	struct itimerspec its = { .it_interval = { 0, TICK_NS }, .it_value = { 0, TICK_NS } };
	int err;

	if (!k)
		return -ENOMEM;
	k->sched = s;
	k->epfd = k->stop_fd = k->timer_fd = k->lag_fd = k->ino_fd = k->dirfd = -1;
	k->lag_next = INT64_MAX;
	pthread_mutex_init(&k->lock, NULL);
	err = hmd_clockpage_init(runtime_dir, k->dir, sizeof(k->dir));
	if (err < 0)
		goto fail;
	k->dirfd = open(k->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (k->dirfd < 0) {
		err = -errno;
		goto fail;
	}
	k->rb = ring_buffer__new(hmd_sched_quiet_fd(s), on_quiet, k, NULL);
	k->epfd = epoll_create1(EPOLL_CLOEXEC);
	k->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	k->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	k->lag_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (!k->rb || k->epfd < 0 || k->stop_fd < 0 || k->timer_fd < 0 || k->lag_fd < 0) {
		err = -errno ? -errno : -ENOMEM;
		goto fail;
	}
	/* The tick and the four sources are what the keeper runs on: a keeper
	 * without one of them would leave runs' clocks standing, so each is
	 * checked. The inotify pokes are a speed-up only (the tick comes). */
	if (timerfd_settime(k->timer_fd, 0, &its, NULL) < 0 ||
	    keeper_watch(k, k->stop_fd, 1) < 0 || keeper_watch(k, k->timer_fd, 2) < 0 ||
	    keeper_watch(k, ring_buffer__epoll_fd(k->rb), 3) < 0 ||
	    keeper_watch(k, k->lag_fd, 4) < 0) {
		err = -errno;
		goto fail;
	}
	/* Pokes (see the top); without inotify the 50 ms tick still comes. */
	k->ino_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (k->ino_fd >= 0 && inotify_add_watch(k->ino_fd, k->dir, IN_MODIFY) >= 0)
		(void)keeper_watch(k, k->ino_fd, 5);
	/* Signals stay blocked in this thread (inherited from main): the main
	 * loop's signalfd takes them. */
	err = -pthread_create(&k->thread, NULL, keeper_main, k);
	if (err < 0)
		goto fail;
	*ret = k;
	return 0;
fail:
	if (k->rb)
		ring_buffer__free(k->rb);
	if (k->epfd >= 0)
		close(k->epfd);
	if (k->stop_fd >= 0)
		close(k->stop_fd);
	if (k->timer_fd >= 0)
		close(k->timer_fd);
	if (k->lag_fd >= 0)
		close(k->lag_fd);
	if (k->ino_fd >= 0)
		close(k->ino_fd);
	if (k->dirfd >= 0)
		close(k->dirfd);
	free(k);
	return err;
}

void hmd_keeper_stop(struct hmd_keeper *k, bool keep)
{
	uint64_t one = 1;

	if (!k)
		return;
	if (write(k->stop_fd, &one, sizeof(one)) == sizeof(one))
		pthread_join(k->thread, NULL);
	for (uint32_t dom = 0; dom < HM_SCHED_DOMAINS; dom++) {
		struct kclock *c = &k->clocks[dom];

		if (!c->used)
			continue;
		if (!keep) {
			hmd_keeper_remove(k, dom);
			continue;
		}
		/* The run goes on: its page stays (the next keeper maps it
		 * again), its domain stays counted in the pinned maps, and
		 * its processes keep the clock themselves meanwhile, once
		 * the heartbeat has stopped for long enough (preload/vclock.c). */
		hmd_clockpage_destroy(c->vc, NULL);
		free(c->woken);
		free(c->seen);
		memset(c, 0, sizeof(*c));
	}
	hmd_clockpage_fini(k->dir, keep);
	ring_buffer__free(k->rb);
	close(k->epfd);
	close(k->stop_fd);
	close(k->timer_fd);
	close(k->lag_fd);
	if (k->ino_fd >= 0)
		close(k->ino_fd);
	close(k->dirfd);
	free(k);
}

const char *hmd_keeper_dir(struct hmd_keeper *k)
{
	return k->dir;
}

int hmd_keeper_prepare(int dirfd, struct hmd_clock_prep *ret)
{
	struct hmd_clock_prep p = { .fd = -1 };
	uint64_t tag[2];
	int err;

	if (getrandom(tag, sizeof(tag), 0) != sizeof(tag))
		return errno ? -errno : -EIO;
	snprintf(p.tag, sizeof(p.tag), "%016" PRIx64 "%016" PRIx64, tag[0], tag[1]);
	snprintf(p.name, sizeof(p.name), "page-%s", p.tag);
	p.woken = calloc(HM_VSLOTS, sizeof(*p.woken));
	/* (without it, no lag bound for the run: lag() checks) */
	p.seen = calloc(HM_VSLOTS, sizeof(struct kseen));
	if (!p.woken) {
		free(p.seen);
		return -ENOMEM;
	}
	err = hmd_clockpage_make(dirfd, p.name, &p.vc, &p.fd);
	if (err < 0) {
		free(p.woken);
		free(p.seen);
		return err;
	}
	*ret = p;
	return 0;
}

void hmd_keeper_discard(int dirfd, struct hmd_clock_prep *p)
{
	hmd_clockpage_destroy(p->vc, NULL);
	(void)unlinkat(dirfd, p->name, 0); /* a page no run was given: ours alone */
	close(p->fd);
	free(p->woken);
	free(p->seen);
	memset(p, 0, sizeof(*p));
	p->fd = -1;
}

static void fill(struct kclock *c, uint64_t run_id, uint64_t cgid, struct hm_vclock *vc,
		 uint32_t *woken, void *seen, const char *path)
{
	c->used = true;
	c->cgid = cgid;
	c->run_id = run_id;
	c->vc = vc;
	c->woken = woken;
	c->seen = seen;
	c->last_mono = 0;
	c->t_move = (int64_t)hm_now_ns();
	c->tie_dl = c->tie_real = 0; /* (not the slot's last run's tie) */
	snprintf(c->path, sizeof(c->path), "%s", path);
}

int hmd_keeper_add(struct hmd_keeper *k, uint64_t run_id, uint64_t cgid, struct hmd_clock_prep *pool,
		   int pool_dirfd, uint32_t *ret_dom, char *ret_path, size_t path_size, int *ret_fd)
{
	struct hmd_clock_prep own, *p = pool;
	int from = pool ? pool_dirfd : k->dirfd;
	uint32_t dom;
	char name[96], path[256];
	int err;

	if (!p) {
		err = hmd_keeper_prepare(k->dirfd, &own);
		if (err < 0)
			return err;
		p = &own;
	}
	/* Its name for good: in the keeper's directory (the pokes are
	 * watched there), with the run's id, as a daemon after us finds it
	 * in the run's record. One rename: a page made ahead is no file of a
	 * run until now. */
	snprintf(name, sizeof(name), "run-%" PRIu64 "-%s", run_id, p->tag);
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", k->dir, name) >= sizeof(path) ||
	    (size_t)snprintf(ret_path, path_size, "%s", path) >= path_size) {
		err = -ENAMETOOLONG;
		goto fail;
	}
	if (renameat(from, p->name, k->dirfd, name) < 0) {
		err = -errno;
		goto fail;
	}
	snprintf(p->name, sizeof(p->name), "%s", name);
	from = k->dirfd;
	hmd_clockpage_begin(p->vc);
	pthread_mutex_lock(&k->lock);
	err = hmd_sched_add(k->sched, cgid, &dom);
	if (err == 0) {
		fill(&k->clocks[dom], run_id, cgid, p->vc, p->woken, p->seen, path);
		if (dom >= k->dom_hw)
			k->dom_hw = dom + 1;
	}
	pthread_mutex_unlock(&k->lock);
	if (err < 0)
		goto fail;
	*ret_dom = dom;
	*ret_fd = p->fd;
	return 0;
fail:
	hmd_keeper_discard(from, p);
	return err;
}

int hmd_keeper_adopt(struct hmd_keeper *k, uint64_t run_id, uint64_t cgid, uint32_t dom,
		     const char *path)
{
	struct hm_vclock *vc;
	uint32_t *woken;
	int err;

	if (dom >= HM_SCHED_DOMAINS || strlen(path) >= sizeof(k->clocks[0].path))
		return -EINVAL;
	woken = calloc(HM_VSLOTS, sizeof(*woken));
	if (!woken)
		return -ENOMEM;
	err = hmd_clockpage_open(path, &vc);
	if (err < 0) {
		free(woken);
		return err;
	}
	pthread_mutex_lock(&k->lock);
	err = k->clocks[dom].used ? -EBUSY : hmd_sched_adopt(k->sched, dom, cgid);
	if (err == 0) {
		/* Which waits the last keeper woke is not known: waking one
		 * again is harmless (its deadline has come; it re-checks). */
		fill(&k->clocks[dom], run_id, cgid, vc, woken,
		     calloc(HM_VSLOTS, sizeof(struct kseen)), path);
		if (dom >= k->dom_hw)
			k->dom_hw = dom + 1;
		/* The heartbeat resumes now: waiters that were keeping the
		 * clock themselves hand it back (preload/vclock.c). */
		STORE(vc->beat, (int64_t)hm_now_ns());
	}
	pthread_mutex_unlock(&k->lock);
	if (err < 0) {
		hmd_clockpage_destroy(vc, NULL);
		free(woken);
	}
	return err;
}

void hmd_keeper_idle(struct hmd_keeper *k)
{
	pthread_mutex_lock(&k->lock);
	hmd_sched_detach_idle(k->sched);
	pthread_mutex_unlock(&k->lock);
}

void hmd_keeper_remove(struct hmd_keeper *k, uint32_t dom)
{
	struct kclock *c;

	if (dom >= HM_SCHED_DOMAINS)
		return;
	pthread_mutex_lock(&k->lock);
	c = &k->clocks[dom];
	if (c->used) {
		hmd_sched_remove(k->sched, dom, c->cgid);
		hmd_clockpage_destroy(c->vc, c->path);
		free(c->woken);
		free(c->seen);
		memset(c, 0, sizeof(*c));
		while (k->dom_hw && !k->clocks[k->dom_hw - 1].used)
			k->dom_hw--;
	}
	pthread_mutex_unlock(&k->lock);
}

void hmd_keeper_stats(struct hmd_keeper *k, uint32_t dom, struct hmd_clock_stats *ret)
{
	struct kclock *c;

	memset(ret, 0, sizeof(*ret));
	if (dom >= HM_SCHED_DOMAINS)
		return;
	pthread_mutex_lock(&k->lock);
	c = &k->clocks[dom];
	if (c->used && !hmd_clockpage_broken(c->vc)) {
		ret->advances = LOAD(c->vc->advances);
		ret->wakes = LOAD(c->vc->wakes);
		ret->idle_nothing = LOAD(c->vc->idle_nothing);
		ret->external = LOAD(c->vc->external);
		ret->lag_fires = LOAD(c->vc->lag_fires);
		ret->mono = LOAD(c->vc->mono);
	}
	ret->broken = c->used && hmd_clockpage_broken(c->vc);
	pthread_mutex_unlock(&k->lock);
}
