// SPDX-License-Identifier: MIT
/*
 * Waits with absolute deadlines on the run's clock: condition variables,
 * semaphores, timed mutexes and rwlocks, raw futexes through syscall(), and
 * C11's cnd_timedwait and mtx_timedlock (the rules: wait.c). glibc's loops
 * read the deadline again after every EINTR from hm_t.dl, which the keeper's
 * SIGURG zeroes when the deadline comes (vclock.c).
 */
#include <dlfcn.h>
#include <link.h>
#include <string.h>
#include <linux/futex.h>
#include "wait.h"

/* ---- absolute deadlines: condition variables, semaphores, mutexes ---- */

static clockid_t real_clock_for(clockid_t id)
{
	return id == CLOCK_MONOTONIC ? CLOCK_MONOTONIC : CLOCK_REALTIME;
}

static const char *abs_name(int kind);

enum abs_kind {
	ABS_COND, /* returns an error number; a timeout we cannot confirm is a spurious wake-up */
	ABS_LOCK, /* returns an error number (mutex, rwlock) */
	ABS_SEM, /* returns -1 and errno, EINTR on signals */
};

/*
 * Wait for a virtual absolute deadline abstime on clock id with a glibc
 * primitive that reads its (real) deadline from hm_t.dl, again after each
 * EINTR inside glibc's loops. CALL makes the call with &hm_t.dl.
 */
#define ABS_WAIT(kind, id, abstime, CALL)                                                         \
	({                                                                                         \
		struct hm_vwait w_;                                                                \
		clockid_t rid_ = real_clock_for(id);                                               \
		int r_, e_;                                                                        \
		if (!hm_vw_begin(&w_, hm_clock_to_mono((id), ts_to_ns(abstime)), HM_VW_SIGNAL,    \
				 replay_event(), abs_name(kind))) {                                \
			hm_t.dl = ns_to_ts(hm_real_ns(rid_) + hm_clock_to_mono((id), ts_to_ns(abstime)) - \
					   mono_now());                                            \
			r_ = (CALL);                                                               \
		} else {                                                                           \
			for (;;) {                                                                 \
				bool due_ = !hm_vw_arm_abs(&w_, rid_);                             \
				if (due_)                                                          \
					hm_t.dl.tv_sec = hm_t.dl.tv_nsec = 0; /* one try */        \
				r_ = (CALL);                                                       \
				e_ = (kind) == ABS_SEM && r_ < 0 ? errno : r_;                     \
				if (e_ == ETIMEDOUT) {                                             \
					if (due_ || hm_vw_due(&w_))                                \
						break;                                             \
					hm_vw_real_timeout(&w_);                                   \
					if (hm_vw_due(&w_))                                        \
						continue;                                          \
					if ((kind) == ABS_COND) {                                  \
						r_ = 0; /* a spurious wake-up */                   \
						break;                                             \
					}                                                          \
				} else if (e_ == EINTR && (kind) == ABS_SEM) {                     \
					int a_ = after_eintr(&w_);                                 \
					if (a_ < 0)                                                \
						break;                                             \
				} else {                                                           \
					break;                                                     \
				}                                                                  \
			}                                                                          \
			e_ = errno;                                                                \
			hm_vw_end(&w_);                                                            \
			errno = e_;                                                                \
		}                                                                                  \
		r_;                                                                                \
	})

static const char *abs_name(int kind)
{
	return kind == ABS_COND ? "condition" : kind == ABS_SEM ? "semaphore" : "lock";
}


/* An absolute wait: through the journal when recording or replaying. */
#define ABS_WAIT_JR(jkind, r, kind, id, abstime, CALL, REAL_CALL, TIMED_OUT, SET_TIMEDOUT)        \
	do {                                                                                       \
		if (likely(!hm.jr))                                                                \
			r = ABS_WAIT(kind, id, abstime, CALL);                                     \
		else                                                                               \
			JW(jkind, false, r, TIMED_OUT, SET_TIMEDOUT(r),                            \
			   ABS_WAIT(kind, id, abstime, CALL), REAL_CALL);                          \
	} while (0)

static bool valid_abstime(const struct timespec *t)
{
	return t && t->tv_nsec >= 0 && t->tv_nsec < NSEC_PER_SEC;
}

/* glibc keeps a condition variable's clock in bit 1 of __wrefs (nptl's
 * pthread_cond_common.c): 0 = CLOCK_REALTIME, 1 = CLOCK_MONOTONIC. */
static clockid_t cond_clock(const pthread_cond_t *c)
{
	return (c->__data.__wrefs >> 1) & 1 ? CLOCK_MONOTONIC : CLOCK_REALTIME;
}

static bool wait_clock_ok(clockid_t id)
{
	return id == CLOCK_REALTIME || id == CLOCK_MONOTONIC;
}

/*
 * CPython's GIL. A thread that wants the GIL waits on the GIL's condition
 * variable for the switch interval (5 ms), and when that times out it asks
 * the holder to let go: that is how computing threads take turns, and how a
 * thread busy-polling a flag another thread sets ever sees it. The interval
 * is the interpreter's scheduling, not the program's time: on the run's
 * clock it would never elapse while the holder computes (the run is not
 * idle), so the turns would never come. So a timed wait on a condition
 * variable inside _PyRuntime (CPython 3.11 keeps the GIL there) waits for
 * the same length of real time, moves no clock and is not journalled.
 */
static struct {
	uintptr_t start, end; /* _PyRuntime, once found */
	unsigned misses; /* calls since we last looked for it */
} gil;

static bool gil_cond(const pthread_cond_t *c)
{
	uintptr_t a = (uintptr_t)c;

	if (!gil.start && gil.misses++ % 1024 == 0) {
		void *sym = dlsym(RTLD_DEFAULT, "_PyRuntime");
		Dl_info info;
		const ElfW(Sym) *es = NULL;

		if (sym && dladdr1(sym, &info, (void **)&es, RTLD_DL_SYMENT) && es && es->st_size) {
			gil.end = (uintptr_t)sym + es->st_size;
			__atomic_store_n(&gil.start, (uintptr_t)sym, __ATOMIC_RELEASE);
		}
	}
	return gil.start && a >= gil.start && a < gil.end;
}

/* The GIL's wait, for real: the same length as the virtual deadline is away.
 * The reading its deadline was computed from was the interpreter's, not the
 * program's: it counts for nothing (clock.c's hm_clock_unread). */
static int gil_wait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t id,
		    const struct timespec *abstime)
{
	int64_t left = hm_clock_to_mono(id, ts_to_ns(abstime)) - mono_now();
	clockid_t rid = id == CLOCK_MONOTONIC ? CLOCK_MONOTONIC : CLOCK_REALTIME;
	struct timespec dl = ns_to_ts(hm_real_ns(rid) + (left > 0 ? left : 0));

	hm_clock_unread();

	return hm.real.pthread_cond_clockwait ? hm.real.pthread_cond_clockwait(c, m, rid, &dl)
					       : hm.real.pthread_cond_timedwait(c, m, &dl);
}

HM_EXPORT int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m,
				     const struct timespec *abstime)
{
	int r;

	hm_ready();
	if (!hm.clock_hook || !valid_abstime(abstime))
		return hm.real.pthread_cond_timedwait(c, m, abstime);
	if (hm.clock && gil_cond(c))
		return gil_wait(c, m, cond_clock(c), abstime);
	ABS_WAIT_JR(HM_JW_COND_TIMEDWAIT, r, ABS_COND, cond_clock(c), abstime,
		    hm.real.pthread_cond_timedwait(c, m, &hm_t.dl),
		    hm.real.pthread_cond_timedwait(c, m, abstime), ERRNUM_TIMEDOUT,
		    ERRNUM_SET_TIMEDOUT);
	return r;
}

HM_EXPORT int pthread_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t id,
				     const struct timespec *abstime)
{
	int r;

	hm_ready();
	if (!hm.clock_hook || !valid_abstime(abstime) || !wait_clock_ok(id))
		return hm.real.pthread_cond_clockwait(c, m, id, abstime);
	if (hm.clock && gil_cond(c))
		return gil_wait(c, m, id, abstime);
	ABS_WAIT_JR(HM_JW_COND_CLOCKWAIT, r, ABS_COND, id, abstime,
		    hm.real.pthread_cond_clockwait(c, m, real_clock_for(id), &hm_t.dl),
		    hm.real.pthread_cond_clockwait(c, m, id, abstime), ERRNUM_TIMEDOUT,
		    ERRNUM_SET_TIMEDOUT);
	return r;
}

/*
 * The eight waits that differ only in their object, their journal code and
 * how they say "timed out": each of the two macros below makes one exported
 * wrapper, with a deadline on CLOCK_REALTIME (fn(obj, abstime)) or on the
 * clock the caller names (fn(obj, id, abstime)). Every one passes through
 * unchanged when the clock is not hooked or the deadline is invalid.
 */
#define TIMED_WAIT_BODY(fn, jw, kind, id, clock_ok, REAL_ARGS, DL_ARGS, TIMEDOUT, SET_TIMEDOUT)   \
	int r;                                                                                     \
                                                                                                   \
	hm_ready();                                                                                \
	if (!hm.clock_hook || !valid_abstime(abstime) || !(clock_ok))                              \
		return hm.real.fn REAL_ARGS;                                                       \
	ABS_WAIT_JR(jw, r, kind, id, abstime, hm.real.fn DL_ARGS, hm.real.fn REAL_ARGS, TIMEDOUT,  \
		    SET_TIMEDOUT);                                                                 \
	return r;

#define REALTIME_WAIT(fn, type, jw, kind, conv)                                                   \
	HM_EXPORT int fn(type *o, const struct timespec *abstime)                                 \
	{                                                                                          \
		TIMED_WAIT_BODY(fn, jw, kind, CLOCK_REALTIME, true, (o, abstime),                  \
				(o, &hm_t.dl), conv##_TIMEDOUT, conv##_SET_TIMEDOUT)               \
	}

#define CLOCK_WAIT(fn, type, jw, kind, conv)                                                      \
	HM_EXPORT int fn(type *o, clockid_t id, const struct timespec *abstime)                   \
	{                                                                                          \
		TIMED_WAIT_BODY(fn, jw, kind, id, wait_clock_ok(id), (o, id, abstime),             \
				(o, real_clock_for(id), &hm_t.dl), conv##_TIMEDOUT,                \
				conv##_SET_TIMEDOUT)                                               \
	}

/* conv: ERRNUM (the call returns an error number) or ERRNO (-1 and errno) */
REALTIME_WAIT(pthread_mutex_timedlock, pthread_mutex_t, HM_JW_MUTEX_TIMEDLOCK, ABS_LOCK, ERRNUM)
CLOCK_WAIT(pthread_mutex_clocklock, pthread_mutex_t, HM_JW_MUTEX_CLOCKLOCK, ABS_LOCK, ERRNUM)
REALTIME_WAIT(sem_timedwait, sem_t, HM_JW_SEM_TIMEDWAIT, ABS_SEM, ERRNO)
CLOCK_WAIT(sem_clockwait, sem_t, HM_JW_SEM_CLOCKWAIT, ABS_SEM, ERRNO)
REALTIME_WAIT(pthread_rwlock_timedrdlock, pthread_rwlock_t, HM_JW_OTHER, ABS_LOCK, ERRNUM)
REALTIME_WAIT(pthread_rwlock_timedwrlock, pthread_rwlock_t, HM_JW_OTHER, ABS_LOCK, ERRNUM)
CLOCK_WAIT(pthread_rwlock_clockrdlock, pthread_rwlock_t, HM_JW_OTHER, ABS_LOCK, ERRNUM)
CLOCK_WAIT(pthread_rwlock_clockwrlock, pthread_rwlock_t, HM_JW_OTHER, ABS_LOCK, ERRNUM)

/*
 * futex(2) through syscall() (Rust's std, and others that wait on futexes
 * directly): FUTEX_WAIT has a relative timeout, FUTEX_WAIT_BITSET an absolute
 * one on CLOCK_MONOTONIC (CLOCK_REALTIME with FUTEX_CLOCK_REALTIME). Both
 * become FUTEX_WAIT_BITSET on the real monotonic clock with hm_t.dl. Other
 * operations pass through.
 */
static long futex_v(uint32_t *uaddr, int op, uint32_t val, int64_t deadline, uint32_t *uaddr2,
		    uint32_t bits)
{
	struct hm_vwait w;
	int wop = FUTEX_WAIT_BITSET | (op & FUTEX_PRIVATE_FLAG);
	long r;

	if (!hm_vw_begin(&w, deadline, HM_VW_SIGNAL, replay_event(), "futex")) {
		hm_t.dl = ns_to_ts(hm_real_ns(CLOCK_MONOTONIC) + deadline - mono_now());
		return hm_sys6(SYS_futex, (long)uaddr, wop, val, (long)&hm_t.dl, (long)uaddr2, bits);
	}
	for (;;) {
		bool due = !hm_vw_arm_abs(&w, CLOCK_MONOTONIC);

		if (due) {
			r = -ETIMEDOUT;
			break;
		}
		r = hm_sys6(SYS_futex, (long)uaddr, wop, val, (long)&hm_t.dl, (long)uaddr2, bits);
		if (r == -ETIMEDOUT) {
			if (hm_vw_due(&w))
				break;
			hm_vw_real_timeout(&w);
		} else if (r == -EINTR) {
			int a = after_eintr(&w);

			if (a <= 0) {
				if (a == 0)
					r = -ETIMEDOUT;
				break;
			}
		} else {
			break;
		}
	}
	hm_vw_end(&w);
	return r;
}

long hm_futex_wait(uint32_t *uaddr, int op, uint32_t val, const struct timespec *tmo,
		   uint32_t *uaddr2, uint32_t val3)
{
	int cmd = op & FUTEX_CMD_MASK;
	int64_t deadline;
	uint32_t bits = val3;
	long r;

	if (cmd == FUTEX_WAIT) {
		deadline = mono_now() + ts_to_ns(tmo);
		bits = FUTEX_BITSET_MATCH_ANY;
	} else if (cmd == FUTEX_WAIT_BITSET) {
		deadline = hm_clock_to_mono(op & FUTEX_CLOCK_REALTIME ? CLOCK_REALTIME : CLOCK_MONOTONIC,
					    ts_to_ns(tmo));
	} else {
		return hm_sys_errno(hm_sys6(SYS_futex, (long)uaddr, op, val, (long)tmo, (long)uaddr2,
					    val3));
	}
	if (likely(!hm.jr))
		return hm_sys_errno(futex_v(uaddr, op, val, deadline, uaddr2, bits));
	JW(HM_JW_OTHER, false, r, ERRNO_TIMEDOUT, ERRNO_SET_TIMEDOUT(r),
	   hm_sys_errno(futex_v(uaddr, op, val, deadline, uaddr2, bits)),
	   hm_sys_errno(hm_sys6(SYS_futex, (long)uaddr, op, val, (long)tmo, (long)uaddr2, val3)));
	return r;
}

/* ---- C11 threads: glibc implements them on the pthread objects, calling
 * its internal entry points, so they are wrapped here in their own right. */

HM_EXPORT int cnd_timedwait(cnd_t *c, mtx_t *m, const struct timespec *abstime)
{
	int r;

	hm_ready();
	if (!hm.clock_hook || !valid_abstime(abstime))
		return hm.real.cnd_timedwait(c, m, abstime);
	r = pthread_cond_timedwait((pthread_cond_t *)c, (pthread_mutex_t *)m, abstime);
	return r == 0 ? thrd_success : r == ETIMEDOUT ? thrd_timedout : thrd_error;
}

HM_EXPORT int mtx_timedlock(mtx_t *m, const struct timespec *abstime)
{
	int r;

	hm_ready();
	if (!hm.clock_hook || !valid_abstime(abstime))
		return hm.real.mtx_timedlock(m, abstime);
	r = pthread_mutex_timedlock((pthread_mutex_t *)m, abstime);
	return r == 0 ? thrd_success : r == ETIMEDOUT ? thrd_timedout : thrd_error;
}
