// SPDX-License-Identifier: MIT
/*
 * Timers on the run's clock: alarm, setitimer(ITIMER_REAL), POSIX timers
 * (timer_create on the virtual clocks) and timerfd on the virtual clocks.
 *
 * Each process with an armed timer has one helper thread, started on first
 * use, that is an ordinary waiter of the run's clock (vclock.c): it sleeps
 * until its process's earliest expiry, so that expiry is one of the run's
 * deadlines and comes when, and only when, the run is idle and it is the
 * earliest - exactly like a sleep. Then it delivers what the kernel would:
 *   ITIMER_REAL / alarm   SIGALRM to the process
 *   SIGEV_SIGNAL          the signal to the process, si_code SI_TIMER,
 *                         si_timerid, si_overrun and si_value as the kernel sets
 *   SIGEV_THREAD_ID       the same, to that thread
 *   SIGEV_THREAD          a new thread running the notify function
 *   timerfd               the expiration count grows, and the descriptor (a
 *                         real timerfd that never fires on its own) is made
 *                         readable; read() returns the virtual count
 * and re-arms interval timers (missed periods are overruns, as in the kernel).
 * The helper blocks every signal, so a process-directed signal goes to the
 * program's threads as it would without us.
 *
 * The table is small and guarded by a spinlock taken with every signal
 * blocked, so that a signal handler may re-arm a timer (alarm() in a SIGALRM
 * handler is common) without deadlocking the thread it interrupted.
 *
 * Not inherited by fork (as in the kernel); ITIMER_REAL survives exec
 * through HERMETIC_ITIMER. CPU-time timers (ITIMER_VIRTUAL/PROF, CPU clock
 * ids) are real.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <linux/futex.h>
#include "shim.h"
#include "config.h"

#define HM_TIMERS 64
#define TIMERID_TAG 0x4854000000000001ULL /* odd and non-canonical: no real id */

enum { T_FREE, T_ITIMER, T_POSIX, T_TIMERFD };

struct vtimer {
	int kind;
	clockid_t clock;
	bool armed;
	int64_t expiry; /* virtual monotonic ns */
	int64_t interval;
	int overrun; /* of the last expiry delivered */
	uint64_t count; /* timerfd: expirations not read yet */
	struct sigevent sev;
	int fd; /* timerfd */
};

static struct {
	int lock;
	/* (tm.next starts at 0 = "none" only while no helper runs: see hm_timers_next) */
	struct vtimer t[HM_TIMERS]; /* [0] is ITIMER_REAL */
	bool helper;
	uint32_t kick; /* bumped when the table changes */
	int64_t next; /* earliest armed expiry, INT64_MAX: none (for self-keeping) */
	struct hm_vslot *helper_slot;
	struct hm_fdtab tfds; /* timerfds of ours, as a bitmap (fdtab.h) */
} tm;

static sigset_t lock_all(void)
{
	sigset_t all, old;

	sigfillset(&all);
	hm_sys6(SYS_rt_sigprocmask, SIG_SETMASK, (long)&all, (long)&old, 8, 0, 0);
	while (__atomic_exchange_n(&tm.lock, 1, __ATOMIC_ACQUIRE))
		hm_sys(SYS_sched_yield, 0, 0, 0);
	return old;
}

static void unlock_all(sigset_t old)
{
	__atomic_store_n(&tm.lock, 0, __ATOMIC_RELEASE);
	hm_sys6(SYS_rt_sigprocmask, SIG_SETMASK, (long)&old, 0, 8, 0, 0);
}

static int64_t now_mono(void)
{
	return hm_clock_now(CLOCK_MONOTONIC);
}

/* The earliest armed expiry (lock held). */
static void update_next(void)
{
	int64_t next = INT64_MAX;

	for (int i = 0; i < HM_TIMERS; i++)
		if (tm.t[i].kind != T_FREE && tm.t[i].armed && tm.t[i].expiry < next)
			next = tm.t[i].expiry;
	__atomic_store_n(&tm.next, next, __ATOMIC_RELEASE);
}

/* Self-keeping (vclock.c): a timer of this process may be due before any
 * deadline in the page, while its helper is still on its way to it. */
int64_t hm_timers_next(void)
{
	return tm.helper ? __atomic_load_n(&tm.next, __ATOMIC_ACQUIRE) : INT64_MAX;
}


/* Tell the helper the table changed (lock held or not). */
static void kick(void)
{
	__atomic_fetch_add(&tm.kick, 1, __ATOMIC_RELEASE);
	if (tm.helper_slot) {
		__atomic_fetch_add(&tm.helper_slot->futex, 1, __ATOMIC_RELEASE);
		hm_sys6(SYS_futex, (long)&tm.helper_slot->futex, FUTEX_WAKE, 1, 0, 0, 0);
	}
	hm_sys6(SYS_futex, (long)&tm.kick, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, 1, 0, 0, 0);
}

/* ---- delivery (helper thread) ---- */

struct notify {
	void (*fn)(union sigval);
	union sigval v;
};

static void *notify_main(void *p)
{
	struct notify n = *(struct notify *)p;

	free(p);
	n.fn(n.v);
	return NULL;
}

static void deliver(struct vtimer *t, int idx)
{
	siginfo_t si;

	switch (t->kind) {
	case T_ITIMER:
		hm_sys(SYS_kill, hm.pid, SIGALRM, 0);
		return;
	case T_TIMERFD: {
		struct itimerspec now = { .it_value = { 0, 1 } };

		/* The descriptor becomes readable; read() reports our count. */
		hm.real.timerfd_settime(t->fd, 0, &now, NULL);
		return;
	}
	default:
		break;
	}
	if (t->sev.sigev_notify == SIGEV_NONE)
		return;
	if (t->sev.sigev_notify == SIGEV_THREAD) {
		pthread_t th;
		pthread_attr_t def, *attr = t->sev.sigev_notify_attributes;
		struct notify *n = malloc(sizeof(*n));

		if (!n || !t->sev.sigev_notify_function) {
			free(n);
			return;
		}
		n->fn = t->sev.sigev_notify_function;
		n->v = t->sev.sigev_value;
		if (!attr) {
			pthread_attr_init(&def);
			pthread_attr_setdetachstate(&def, PTHREAD_CREATE_DETACHED);
			attr = &def;
		}
		/* As glibc does: a new thread per expiry. It is the program's. */
		if (pthread_create(&th, attr, notify_main, n))
			free(n);
		if (attr == &def)
			pthread_attr_destroy(&def);
		return;
	}
	memset(&si, 0, sizeof(si));
	si.si_signo = t->sev.sigev_signo;
	si.si_code = SI_TIMER;
	si.si_timerid = idx;
	si.si_overrun = t->overrun;
	si.si_value = t->sev.sigev_value;
	if (t->sev.sigev_notify & SIGEV_THREAD_ID)
		hm_sys6(SYS_rt_tgsigqueueinfo, hm.pid, t->sev._sigev_un._tid, si.si_signo, (long)&si,
			0, 0);
	else
		hm_sys6(SYS_rt_sigqueueinfo, hm.pid, si.si_signo, (long)&si, 0, 0, 0);
}

/* Fire every armed timer that is due at now; the earliest left, or INT64_MAX. */
static int64_t fire(int64_t now)
{
	int64_t next = INT64_MAX;
	struct vtimer due[HM_TIMERS];
	int idx[HM_TIMERS], n = 0;
	sigset_t old = lock_all();

	for (int i = 0; i < HM_TIMERS; i++) {
		struct vtimer *t = &tm.t[i];

		if (t->kind == T_FREE || !t->armed)
			continue;
		if (t->expiry <= now) {
			int64_t k = 1;

			if (t->interval > 0) {
				k += (now - t->expiry) / t->interval;
				t->expiry += k * t->interval;
			} else {
				t->armed = false;
			}
			t->overrun = k - 1 > INT32_MAX ? INT32_MAX : (int)(k - 1);
			t->count += (uint64_t)k;
			due[n] = *t;
			idx[n++] = i;
		}
		if (t->armed && t->expiry < next)
			next = t->expiry;
	}
	__atomic_store_n(&tm.next, next, __ATOMIC_RELEASE);
	unlock_all(old);
	for (int i = 0; i < n; i++)
		deliver(&due[i], idx[i]);
	return next;
}

static void *helper_main(void *unused)
{
	sigset_t all;

	sigfillset(&all);
	hm_sys6(SYS_rt_sigprocmask, SIG_SETMASK, (long)&all, 0, 8, 0, 0);
	/* Not one of the program's threads: no thread number of theirs (those
	 * key entropy streams); its place among the run's waiters comes after
	 * the program's threads. */
	hm_t.inited = true;
	hm_t.index = 0xffff0000u;
	hm_t.no_short = true;
	for (;;) {
		/* kick before the table: a timer armed after fire() read the
		 * table bumps kick past k, and the waits below see it. */
		uint32_t k = __atomic_load_n(&tm.kick, __ATOMIC_ACQUIRE);
		int64_t next = fire(now_mono());
		struct hm_vwait w;

		if (next == INT64_MAX) {
			/* Nothing armed: blocked until a timer is set. */
			hm_sys6(SYS_futex, (long)&tm.kick, FUTEX_WAIT | FUTEX_PRIVATE_FLAG, k, 0, 0, 0);
			continue;
		}
		if (!hm_vw_begin(&w, next, HM_VW_FUTEX, false, "timers")) {
			struct timespec ts = ns_to_ts(next - now_mono());

			hm_sys(SYS_nanosleep, &ts, NULL, 0);
			hm_vc_cas_max(next);
			continue;
		}
		tm.helper_slot = w.s;
		/* Until due, or the table changes (kick bumps the slot's word). */
		while (!hm_vw_due(&w) && __atomic_load_n(&tm.kick, __ATOMIC_ACQUIRE) == k) {
			uint32_t v = __atomic_load_n(&w.s->futex, __ATOMIC_ACQUIRE);
			struct timespec ts;
			long r;

			if (hm_vw_due(&w) || __atomic_load_n(&tm.kick, __ATOMIC_ACQUIRE) != k)
				break;
			ts = ns_to_ts(hm_vw_real_ns(&w));
			r = hm_sys6(SYS_futex, (long)&w.s->futex, FUTEX_WAIT, v, (long)&ts, 0, 0);
			if (r == -ETIMEDOUT)
				hm_vw_real_timeout(&w);
		}
		hm_vw_end(&w);
	}
	return NULL;
}

static int start_helper(void)
{
	pthread_attr_t a;
	pthread_t th;
	int r;

	if (__atomic_load_n(&tm.helper, __ATOMIC_ACQUIRE))
		return 0;
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&a, 64 * 1024);
	/* The real pthread_create: the helper takes no thread number of the
	 * program's (those key its entropy streams). */
	r = hm.real.pthread_create(&th, &a, helper_main, NULL);
	pthread_attr_destroy(&a);
	if (r == 0)
		__atomic_store_n(&tm.helper, true, __ATOMIC_RELEASE);
	return -r;
}

void hm_timers_fork_child(void)
{
	memset(tm.t, 0, sizeof(tm.t));
	tm.next = INT64_MAX;
	tm.helper = false;
	tm.helper_slot = NULL;
	tm.lock = 0;
	hm_fdbits_reset(&tm.tfds);
}

static bool virtual_timers(void)
{
	return hm_ready() && hm.active && hm.clock && hm.vc;
}

/* Arm (value > 0) or disarm timer t; returns what was left, for old values. */
static void arm(struct vtimer *t, int64_t expiry, int64_t value, int64_t interval)
{
	t->armed = value > 0;
	t->expiry = expiry;
	t->interval = interval > 0 ? interval : 0;
}

static int64_t left(const struct vtimer *t)
{
	int64_t l;

	if (!t->armed)
		return 0;
	l = t->expiry - now_mono();
	return l > 0 ? l : 1;
}

static struct timeval ns_to_tv(int64_t ns)
{
	struct timeval tv = { ns / NSEC_PER_SEC, ns % NSEC_PER_SEC / 1000 };

	return tv;
}

static int64_t tv_to_ns(const struct timeval *tv)
{
	return (int64_t)tv->tv_sec * NSEC_PER_SEC + (int64_t)tv->tv_usec * 1000;
}

/* ---- alarm, setitimer ---- */

static int itimer_set(int64_t value, int64_t interval, int64_t *ret_left, int64_t *ret_iv)
{
	struct vtimer *t = &tm.t[0];
	sigset_t old;
	int r = value > 0 ? start_helper() : 0;

	if (r < 0)
		return r;
	old = lock_all();
	t->kind = T_ITIMER;
	if (ret_left)
		*ret_left = left(t);
	if (ret_iv)
		*ret_iv = t->armed ? t->interval : 0;
	arm(t, now_mono() + value, value, interval);
	update_next();
	unlock_all(old);
	kick();
	return 0;
}

HM_EXPORT unsigned alarm(unsigned s)
{
	int64_t l = 0;

	if (!virtual_timers())
		return hm.real.alarm(s);
	if (itimer_set((int64_t)s * NSEC_PER_SEC, 0, &l, NULL) < 0)
		return hm.real.alarm(s);
	/* the seconds left, rounded as the kernel rounds (up from .5) */
	return (unsigned)((l + NSEC_PER_SEC / 2) / NSEC_PER_SEC) + (l > 0 && l < NSEC_PER_SEC / 2);
}

HM_EXPORT int setitimer(__itimer_which_t which, const struct itimerval *nv, struct itimerval *ov)
{
	int64_t l = 0, iv = 0;
	int r;

	if (which != ITIMER_REAL || !virtual_timers())
		return hm.real.setitimer(which, nv, ov);
	if (!nv || nv->it_value.tv_usec < 0 || nv->it_value.tv_usec >= 1000000 ||
	    nv->it_interval.tv_usec < 0 || nv->it_interval.tv_usec >= 1000000) {
		errno = nv ? EINVAL : EFAULT;
		return -1;
	}
	r = itimer_set(tv_to_ns(&nv->it_value), tv_to_ns(&nv->it_interval), &l, &iv);
	if (r < 0) {
		errno = -r;
		return -1;
	}
	if (ov) {
		ov->it_value = ns_to_tv(l);
		ov->it_interval = ns_to_tv(iv);
	}
	return 0;
}

HM_EXPORT int getitimer(__itimer_which_t which, struct itimerval *cv)
{
	sigset_t old;

	if (which != ITIMER_REAL || !virtual_timers())
		return hm.real.getitimer(which, cv);
	old = lock_all();
	cv->it_value = ns_to_tv(left(&tm.t[0]));
	cv->it_interval = ns_to_tv(tm.t[0].armed ? tm.t[0].interval : 0);
	unlock_all(old);
	return 0;
}

/* ---- POSIX timers ---- */

static bool vclock_id(clockid_t id)
{
	return id == CLOCK_REALTIME || id == CLOCK_MONOTONIC || id == CLOCK_BOOTTIME ||
	       id == CLOCK_REALTIME_ALARM || id == CLOCK_BOOTTIME_ALARM;
}

static int timer_index(timer_t id)
{
	uint64_t v = (uint64_t)(uintptr_t)id;

	if ((v & ~0x7feULL) != TIMERID_TAG)
		return -1;
	v = (v >> 1) & 0x3ff;
	return v > 0 && v < HM_TIMERS && tm.t[v].kind == T_POSIX ? (int)v : -1;
}

static int alloc_timer(int kind)
{
	for (int i = 1; i < HM_TIMERS; i++)
		if (tm.t[i].kind == T_FREE) {
			memset(&tm.t[i], 0, sizeof(tm.t[i]));
			tm.t[i].kind = kind;
			return i;
		}
	return -1;
}

HM_EXPORT int timer_create(clockid_t clock, struct sigevent *sev, timer_t *id)
{
	sigset_t old;
	int i, r;

	if (!virtual_timers() || !vclock_id(clock))
		return hm.real.timer_create(clock, sev, id);
	if (sev && sev->sigev_notify != SIGEV_NONE && sev->sigev_notify != SIGEV_SIGNAL &&
	    sev->sigev_notify != SIGEV_THREAD && sev->sigev_notify != SIGEV_THREAD_ID) {
		errno = EINVAL;
		return -1;
	}
	if ((r = start_helper()) < 0) {
		errno = -r;
		return -1;
	}
	old = lock_all();
	i = alloc_timer(T_POSIX);
	if (i > 0) {
		tm.t[i].clock = clock;
		if (sev) {
			tm.t[i].sev = *sev;
		} else {
			tm.t[i].sev.sigev_notify = SIGEV_SIGNAL;
			tm.t[i].sev.sigev_signo = SIGALRM;
			tm.t[i].sev.sigev_value.sival_int = i;
		}
	}
	unlock_all(old);
	if (i < 0) {
		errno = EAGAIN;
		return -1;
	}
	*id = (timer_t)(uintptr_t)(TIMERID_TAG | ((uint64_t)i << 1));
	return 0;
}

/* A timer's absolute expiry from its it_value on its clock. */
static int64_t expiry_of(clockid_t clock, int flags, const struct timespec *v)
{
	if (flags & TIMER_ABSTIME)
		return hm_clock_to_mono(clock, ts_to_ns(v));
	return now_mono() + ts_to_ns(v);
}

static bool valid_its(const struct itimerspec *v)
{
	return v && v->it_value.tv_nsec >= 0 && v->it_value.tv_nsec < NSEC_PER_SEC &&
	       v->it_interval.tv_nsec >= 0 && v->it_interval.tv_nsec < NSEC_PER_SEC &&
	       v->it_value.tv_sec >= 0 && v->it_interval.tv_sec >= 0;
}

static void settime_locked(struct vtimer *t, int flags, const struct itimerspec *nv,
			   struct itimerspec *ov)
{
	if (ov) {
		ov->it_value = ns_to_ts(left(t));
		ov->it_interval = ns_to_ts(t->armed ? t->interval : 0);
	}
	arm(t, expiry_of(t->clock, flags, &nv->it_value), ts_to_ns(&nv->it_value),
	    ts_to_ns(&nv->it_interval));
}

HM_EXPORT int timer_settime(timer_t id, int flags, const struct itimerspec *nv,
			    struct itimerspec *ov)
{
	sigset_t old;
	int i;

	if (!virtual_timers() || (i = timer_index(id)) < 0)
		return hm.real.timer_settime(id, flags, nv, ov);
	if (!valid_its(nv)) {
		errno = EINVAL;
		return -1;
	}
	old = lock_all();
	settime_locked(&tm.t[i], flags, nv, ov);
	update_next();
	unlock_all(old);
	kick();
	return 0;
}

HM_EXPORT int timer_gettime(timer_t id, struct itimerspec *cv)
{
	sigset_t old;
	int i;

	if (!virtual_timers() || (i = timer_index(id)) < 0)
		return hm.real.timer_gettime(id, cv);
	old = lock_all();
	cv->it_value = ns_to_ts(left(&tm.t[i]));
	cv->it_interval = ns_to_ts(tm.t[i].armed ? tm.t[i].interval : 0);
	unlock_all(old);
	return 0;
}

HM_EXPORT int timer_getoverrun(timer_t id)
{
	int i;

	if (!virtual_timers() || (i = timer_index(id)) < 0)
		return hm.real.timer_getoverrun(id);
	return tm.t[i].overrun;
}

HM_EXPORT int timer_delete(timer_t id)
{
	sigset_t old;
	int i;

	if (!virtual_timers() || (i = timer_index(id)) < 0)
		return hm.real.timer_delete(id);
	old = lock_all();
	tm.t[i].kind = T_FREE;
	tm.t[i].armed = false;
	unlock_all(old);
	kick();
	return 0;
}

/* ---- timerfd ---- */

static int tfd_index(int fd)
{
	if (!hm_fdbits_get(&tm.tfds, fd))
		return -1;
	for (int i = 1; i < HM_TIMERS; i++)
		if (tm.t[i].kind == T_TIMERFD && tm.t[i].fd == fd)
			return i;
	return -1;
}

bool hm_timerfd(int fd)
{
	return hm_fdbits_get(&tm.tfds, fd);
}

HM_EXPORT int timerfd_create(int clock, int flags)
{
	sigset_t old;
	int fd, i, r;

	if (!virtual_timers() || !vclock_id(clock))
		return hm.real.timerfd_create(clock, flags);
	/* A real timerfd that only we arm: pollable, readable, closable. */
	fd = hm.real.timerfd_create(CLOCK_MONOTONIC, flags);
	if (fd < 0)
		return fd;
	if ((r = start_helper()) < 0)
		return fd; /* no helper: a real timer on the real clock */
	old = lock_all();
	i = alloc_timer(T_TIMERFD);
	if (i > 0) {
		tm.t[i].clock = clock;
		tm.t[i].fd = fd;
		hm_fdbits_set(&tm.tfds, fd, true);
		if (!hm_fdbits_get(&tm.tfds, fd))
			tm.t[i].kind = T_FREE; /* no memory for the table: a real timer */
	}
	unlock_all(old);
	return fd;
}

HM_EXPORT int timerfd_settime(int fd, int flags, const struct itimerspec *nv,
			      struct itimerspec *ov)
{
	struct itimerspec off = { 0 };
	sigset_t old;
	int i;

	if (!virtual_timers() || (i = tfd_index(fd)) < 0)
		return hm.real.timerfd_settime(fd, flags, nv, ov);
	if (!valid_its(nv)) {
		errno = EINVAL;
		return -1;
	}
	old = lock_all();
	settime_locked(&tm.t[i], flags & TFD_TIMER_ABSTIME ? TIMER_ABSTIME : 0, nv, ov);
	tm.t[i].count = 0;
	update_next();
	unlock_all(old);
	/* Setting a timerfd clears what had expired. */
	hm.real.timerfd_settime(fd, 0, &off, NULL);
	kick();
	return 0;
}

HM_EXPORT int timerfd_gettime(int fd, struct itimerspec *cv)
{
	sigset_t old;
	int i;

	if (!virtual_timers() || (i = tfd_index(fd)) < 0)
		return hm.real.timerfd_gettime(fd, cv);
	old = lock_all();
	cv->it_value = ns_to_ts(left(&tm.t[i]));
	cv->it_interval = ns_to_ts(tm.t[i].armed ? tm.t[i].interval : 0);
	unlock_all(old);
	return 0;
}

/* read() of a timerfd of ours (entropy.c's read calls here): the virtual
 * expiration count, after the real descriptor said there is one. */
ssize_t hm_timerfd_read(int fd, void *buf, size_t len)
{
	for (;;) {
		uint64_t real, count = 0;
		sigset_t old;
		ssize_t n;
		int i;

		if (len < sizeof(uint64_t)) {
			errno = EINVAL;
			return -1;
		}
		/* Blocks (unless O_NONBLOCK) until the helper makes it readable. */
		n = hm_sys_errno(hm_sys(SYS_read, fd, &real, sizeof(real)));
		if (n < 0)
			return n;
		old = lock_all();
		i = tfd_index(fd);
		if (i > 0) {
			count = tm.t[i].count;
			tm.t[i].count = 0;
		}
		unlock_all(old);
		if (i < 0) {
			memcpy(buf, &real, sizeof(real));
			return sizeof(real);
		}
		if (count) {
			memcpy(buf, &count, sizeof(count));
			return sizeof(count);
		}
		/* a stale real expiry (the timer was reset meanwhile): wait on */
	}
}

void hm_timerfd_closed(int fd)
{
	sigset_t old;
	int i;

	if (!hm_timerfd(fd))
		return;
	old = lock_all();
	i = tfd_index(fd);
	if (i > 0) {
		tm.t[i].kind = T_FREE;
		tm.t[i].armed = false;
	}
	hm_fdbits_set(&tm.tfds, fd, false);
	unlock_all(old);
	kick();
}
