// SPDX-License-Identifier: MIT
/*
 * Sleeps and timed waits on the run's clock (vclock.c; docs/virtual-time.md):
 * this file has the sleeps, poll.c the waits with relative timeouts
 * (poll, select, epoll, sigtimedwait), locks.c those with absolute deadlines
 * (condition variables, semaphores, mutexes, rwlocks, futexes).
 *
 * Every timed wait has a deadline on the run's virtual monotonic clock and
 * ends in one of two ways: what it waits for happens (however long that
 * takes in real time: the clock cannot move while any thread of the run is
 * runnable), or the whole run is idle, its deadline is the earliest, and the
 * keeper moves the clock there and wakes it (a timeout). A sleep is a wait
 * for nothing. Waits without a timeout are real, and the thread is simply
 * blocked. Waits on the real world (a socket to a peer outside the run) are
 * EXTERNAL: they keep real deadlines and hold the run's clock meanwhile.
 *
 * Signals interrupt these waits as the kernel would: sleeps, poll, select,
 * epoll, sigtimedwait and sem_*wait return EINTR (nanosleep with the
 * virtual time left); condition variables, mutexes and rwlocks keep waiting;
 * SA_RESTART does what the kernel does with these calls, which is to not
 * restart them. Our own SIGURG shows at most when it comes late (the wait
 * ended by its event just as the keeper woke it): then as an EINTR, which
 * these calls may return whenever a handler ran.
 *
 * Recording and replay (record.c): every sleep and every wait with a finite
 * timeout is one value of the thread's stream - its outcome (timed out or
 * not), its result and the virtual monotonic time after it. In replay a sleep
 * or a wait that timed out returns at once, as it did, and the clock jumps
 * where the recording's did, whatever the clock mode; a wait that saw an
 * event waits for one for real, up to its whole timeout (an EXTERNAL wait:
 * the run's clock waits with it). The JW macro (wait.h) wraps each wrapper's
 * virtual path (or the real call, clock off) in that.
 */
#include <string.h>
#include <linux/futex.h>
#include "wait.h"

/* ---- sleeps ---- */

/* Sleep until virtual monotonic time deadline: 0, or -EINTR with *left.
 * what: how HERMETIC_DEBUG=waits and the lag log name it. */
static int vsleep_what(int64_t deadline, int64_t *left, const char *what)
{
	struct hm_vwait w;
	int r;

	*left = 0;
	if (deadline <= mono_now()) {
		hm_sys(SYS_sched_yield, 0, 0, 0);
		hm_clock_waited();
		return 0;
	}
	if (!hm_vw_begin(&w, deadline, HM_VW_FUTEX, false, what)) {
		/* No slot in the page: sleep for real. */
		struct timespec ts = ns_to_ts(deadline - mono_now());

		r = (int)hm_sys(SYS_nanosleep, &ts, &ts, 0);
		hm_vc_cas_max(deadline);
		hm_clock_waited();
		return r < 0 ? r : 0;
	}
	r = hm_vw_sleep(&w);
	if (r < 0)
		*left = deadline - mono_now();
	hm_vw_end(&w);
	return r;
}

static int vsleep_until(int64_t deadline, int64_t *left)
{
	return vsleep_what(deadline, left, "sleep");
}

/*
 * A process start takes time (docs/virtual-time.md, "A process start takes
 * time"): a new image of the run, before its program runs, sleeps
 * HM_START_COST_NS on the run's clock, so that a parent's timer shorter
 * than a process start ends first, as it does bare. Not journalled: replay
 * serves the readings that include it. A signal's handler cannot have run
 * (an exec resets them), so an EINTR is a late wake-up of ours: sleep on.
 */
void hm_start_wait(void)
{
	int64_t until = hm_real_ns(CLOCK_MONOTONIC) + HM_START_REAL_MAX_NS;
	struct hm_vwait w;

	if (!hm_vw_begin(&w, mono_now() + HM_START_COST_NS, HM_VW_FUTEX, false, "start"))
		return;
	/* A process the keeper does not serve (one that left the run's cgroup
	 * and then exec'd) would wait for ever: past HM_START_REAL_MAX_NS of
	 * real time, beyond the lag bound's floor, it starts without its
	 * clock moving. */
	for (;;) {
		uint32_t v = __atomic_load_n(&w.s->futex, __ATOMIC_ACQUIRE);
		int64_t left = until - hm_real_ns(CLOCK_MONOTONIC);
		struct timespec ts;

		if (hm_vw_due(&w) || left <= 0)
			break;
		ts = ns_to_ts(left < HM_START_POLL_NS ? left : HM_START_POLL_NS);
		(void)hm_sys6(SYS_futex, (long)&w.s->futex, FUTEX_WAIT, v, (long)&ts, 0, 0);
	}
	hm_vw_end(&w);
}

void hm_serial_replay_wait(int64_t deadline)
{
	int64_t left;

	(void)vsleep_until(deadline, &left); /* EINTR: a handler ran; go on */
}

int hm_nanosleep_v(const struct timespec *req, struct timespec *rem)
{
	int64_t left;

	if (vsleep_until(mono_now() + ts_to_ns(req), &left) < 0) {
		if (rem)
			*rem = ns_to_ts(left > 0 ? left : 0);
		errno = EINTR;
		return -1;
	}
	if (rem)
		memset(rem, 0, sizeof(*rem));
	return 0;
}

HM_EXPORT int nanosleep(const struct timespec *req, struct timespec *rem)
{
	int r;

	if (unlikely(!hm_ready()))
		return hm_sys_errno(hm_sys(SYS_nanosleep, req, rem, 0));
	if (!hm.clock_hook)
		return hm.real.nanosleep(req, rem);
	if (!req || req->tv_nsec < 0 || req->tv_nsec >= NSEC_PER_SEC || req->tv_sec < 0) {
		errno = req ? EINVAL : EFAULT;
		return -1;
	}
	if (likely(!hm.jr))
		return hm_nanosleep_v(req, rem);
	JW(HM_JW_NANOSLEEP, true, r, IS_ZERO, ({
		   JW_SLEEP_RESULT(r);
		   if (rem)
			   memset(rem, 0, sizeof(*rem));
	   }),
	   hm_nanosleep_v(req, rem), hm.real.nanosleep(req, rem));
	return r;
}

/* Returns an error number, as clock_nanosleep does. */
static int clock_hm_nanosleep_v(clockid_t id, int flags, const struct timespec *req,
			     struct timespec *rem)
{
	int64_t dl = flags & TIMER_ABSTIME ? hm_clock_to_mono(id, ts_to_ns(req))
					   : mono_now() + ts_to_ns(req);
	int64_t left;

	if (vsleep_until(dl, &left) < 0) {
		if (rem && !(flags & TIMER_ABSTIME))
			*rem = ns_to_ts(left > 0 ? left : 0);
		return EINTR;
	}
	if (rem && !(flags & TIMER_ABSTIME))
		memset(rem, 0, sizeof(*rem));
	return 0;
}

HM_EXPORT int clock_nanosleep(clockid_t id, int flags, const struct timespec *req,
			      struct timespec *rem)
{
	int r;

	if (unlikely(!hm_ready()))
		return -hm_sys6(SYS_clock_nanosleep, id, flags, (long)req, (long)rem, 0, 0);
	if (!hm.clock_hook || !hm_clock_virtual_id(id) || id == CLOCK_THREAD_CPUTIME_ID ||
	    id == CLOCK_PROCESS_CPUTIME_ID)
		return hm.real.clock_nanosleep(id, flags, req, rem);
	if (!req || req->tv_nsec < 0 || req->tv_nsec >= NSEC_PER_SEC)
		return req ? EINVAL : EFAULT;
	if (likely(!hm.jr))
		return clock_hm_nanosleep_v(id, flags, req, rem);
	/* returns an error number: the recorded result is that number */
	JW(HM_JW_CLOCK_NANOSLEEP, true, r, IS_ZERO, ({
		   r = (int)w_.result;
		   if (rem && !(flags & TIMER_ABSTIME))
			   memset(rem, 0, sizeof(*rem));
	   }),
	   clock_hm_nanosleep_v(id, flags, req, rem), hm.real.clock_nanosleep(id, flags, req, rem));
	return r;
}

/* sleep(): the seconds left when a signal interrupted it. */
static unsigned sleep_v(unsigned s)
{
	int64_t left;

	if (vsleep_until(mono_now() + (int64_t)s * NSEC_PER_SEC, &left) < 0)
		return (unsigned)((left + NSEC_PER_SEC - 1) / NSEC_PER_SEC);
	return 0;
}

HM_EXPORT unsigned sleep(unsigned s)
{
	int r;

	if (unlikely(!hm_ready()) || !hm.clock_hook) {
		struct timespec ts = { s, 0 };

		return nanosleep(&ts, &ts) ? (unsigned)ts.tv_sec : 0;
	}
	if (likely(!hm.jr))
		return sleep_v(s);
	/* returns the seconds left */
	JW(HM_JW_SLEEP, true, r, IS_ZERO, r = (int)w_.result, (int)sleep_v(s),
	   (int)hm.real.sleep(s));
	return (unsigned)r;
}

HM_EXPORT int usleep(useconds_t us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };
	int r;

	if (unlikely(!hm_ready()) || !hm.clock_hook)
		return nanosleep(&ts, NULL);
	if (likely(!hm.jr))
		return hm_nanosleep_v(&ts, NULL);
	JW(HM_JW_USLEEP, true, r, IS_ZERO, JW_SLEEP_RESULT(r), hm_nanosleep_v(&ts, NULL),
	   hm.real.usleep(us));
	return r;
}

/* ---- C11 threads ---- */

HM_EXPORT int thrd_sleep(const struct timespec *dur, struct timespec *rem)
{
	int r;

	if (unlikely(!hm_ready()) || !hm.clock_hook)
		return hm.real.thrd_sleep(dur, rem);
	if (!dur || dur->tv_nsec < 0 || dur->tv_nsec >= NSEC_PER_SEC || dur->tv_sec < 0)
		return -2;
	if (likely(!hm.jr))
		return hm_nanosleep_v(dur, rem);
	/* returns 0, -1 (interrupted) or another negative value */
	JW(HM_JW_OTHER, true, r, IS_ZERO, ({
		   r = (int)w_.result;
		   if (rem)
			   memset(rem, 0, sizeof(*rem));
	   }),
	   hm_nanosleep_v(dur, rem), hm.real.thrd_sleep(dur, rem));
	return r;
}
