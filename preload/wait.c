// SPDX-License-Identifier: MIT
/*
 * Sleeps and timed waits on the run's clock (vclock.c; docs/virtual-time.md).
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
 * the run's clock waits with it). The JW macro below wraps each wrapper's
 * virtual path (or the real call, clock off) in that.
 */
#include <string.h>
#include <linux/futex.h>
#include "shim.h"

#define SIGSETSIZE 8

/*
 * One wait through the journal: r = a timeout made by REPLAYED (the
 * recording timed out: no wait at all), else VIRTUAL (the virtual path: clock
 * virtual, or an event being replayed) or REAL (clock off). TIMED_OUT(r) says
 * whether r is a timeout; the result recorded is r, or -errno when r < 0.
 */
#define JW(kind, sleep, r, TIMED_OUT, REPLAYED, VIRTUAL, REAL)                                    \
	do {                                                                                       \
		struct hm_jw w_;                                                                   \
		if (hm_jw_begin(&w_, (kind), (sleep))) {                                           \
			REPLAYED;                                                                  \
		} else if (hm_jw_virtual(&w_)) {                                                   \
			r = (VIRTUAL);                                                             \
		} else {                                                                           \
			r = (REAL);                                                                \
		}                                                                                  \
		hm_jw_end(&w_, TIMED_OUT(r), (r) < 0 ? -(int64_t)errno : (int64_t)(r));            \
	} while (0)

/* A recorded sleep's result: 0, or -errno as -1 and errno. */
#define JW_SLEEP_RESULT(r)                                                                        \
	do {                                                                                       \
		if (w_.result < 0) {                                                               \
			errno = (int)-w_.result;                                                   \
			r = -1;                                                                    \
		} else {                                                                           \
			r = w_.result;                                                             \
		}                                                                                  \
	} while (0)

#define IS_ZERO(r) ((r) == 0)

static inline int64_t mono_now(void)
{
	return hm_clock_now(CLOCK_MONOTONIC);
}

/* Replaying a wait that saw an event: wait for it for real. */
static inline bool replay_event(void)
{
	return hm_t.jw_event;
}

/* After EINTR from a wait's real call: 0 = the deadline is due (our wake-up:
 * time out), -1 = return EINTR. A handler ran either way; when the deadline
 * is not due it may have been the program's (which must see EINTR to run,
 * as Python's signal handlers do), or a late wake-up of ours, after which
 * EINTR is what the kernel would say too: a handler was invoked. */
static int after_eintr(struct hm_vwait *w)
{
	return hm_vw_due(w) ? 0 : -1;
}

/* ---- sleeps ---- */

/* Sleep until virtual monotonic time deadline: 0, or -EINTR with *left. */
static int vsleep_until(int64_t deadline, int64_t *left)
{
	struct hm_vwait w;
	int r;

	*left = 0;
	if (deadline <= mono_now()) {
		hm_sys(SYS_sched_yield, 0, 0, 0);
		hm_clock_waited();
		return 0;
	}
	if (!hm_vw_begin(&w, deadline, HM_VW_FUTEX, false, "sleep")) {
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

static int nanosleep_v(const struct timespec *req, struct timespec *rem)
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
		return nanosleep_v(req, rem);
	JW(HM_JW_NANOSLEEP, true, r, IS_ZERO, ({
		   JW_SLEEP_RESULT(r);
		   if (rem)
			   memset(rem, 0, sizeof(*rem));
	   }),
	   nanosleep_v(req, rem), hm.real.nanosleep(req, rem));
	return r;
}

/* Returns an error number, as clock_nanosleep does. */
static int clock_nanosleep_v(clockid_t id, int flags, const struct timespec *req,
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
		return clock_nanosleep_v(id, flags, req, rem);
	/* returns an error number: the recorded result is that number */
	JW(HM_JW_CLOCK_NANOSLEEP, true, r, IS_ZERO, ({
		   r = (int)w_.result;
		   if (rem && !(flags & TIMER_ABSTIME))
			   memset(rem, 0, sizeof(*rem));
	   }),
	   clock_nanosleep_v(id, flags, req, rem), hm.real.clock_nanosleep(id, flags, req, rem));
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
		return nanosleep_v(&ts, NULL);
	JW(HM_JW_USLEEP, true, r, IS_ZERO, JW_SLEEP_RESULT(r), nanosleep_v(&ts, NULL),
	   hm.real.usleep(us));
	return r;
}

/* ---- relative timeouts: poll, select, epoll, sigtimedwait ---- */

/* Does the wait watch a descriptor of the real world (peers.c)? */
static bool fds_remote(const struct pollfd *fds, nfds_t n)
{
	for (nfds_t i = 0; i < n; i++)
		if (hm_fd_external(fds[i].fd))
			return true;
	return false;
}

static bool sets_remote(int nfds, const fd_set *r, const fd_set *w, const fd_set *e)
{
	for (int fd = 0; fd < nfds && fd < FD_SETSIZE; fd++)
		if (((r && FD_ISSET(fd, r)) || (w && FD_ISSET(fd, w)) || (e && FD_ISSET(fd, e))) &&
		    hm_fd_external(fd))
			return true;
	return false;
}

/*
 * A wait whose real call takes a relative timeout from hm_t.rel (raw
 * syscalls, so the kernel reads exactly the variable the SIGURG handler
 * zeroes). CALL makes the call and returns a result or -errno; TIMEOUT is its
 * result for "timed out", or RESTORE restores what a timed-out call changed.
 * Evaluates to the result, -errno on error or EINTR.
 */
#define REL_WAIT(w, CALL, TIMEOUT, RESTORE)                                                       \
	({                                                                                         \
		long r_;                                                                           \
		for (;;) {                                                                         \
			if (!hm_vw_arm_rel(w)) {                                                   \
				r_ = (TIMEOUT);                                                    \
				break;                                                             \
			}                                                                          \
			r_ = (CALL);                                                               \
			if (r_ == (TIMEOUT)) {                                                     \
				if (hm_vw_due(w))                                                  \
					break;                                                     \
				hm_vw_real_timeout(w);                                             \
			} else if (r_ == -EINTR) {                                                 \
				int a_ = after_eintr(w);                                           \
				if (a_ < 0)                                                        \
					break;                                                     \
				if (a_ == 0) {                                                     \
					r_ = (TIMEOUT);                                            \
					break;                                                     \
				}                                                                  \
			} else {                                                                   \
				break;                                                             \
			}                                                                          \
			RESTORE;                                                                   \
		}                                                                                  \
		r_;                                                                                \
	})

static int ppoll_v(struct pollfd *fds, nfds_t n, int64_t rel, const sigset_t *mask)
{
	struct hm_vwait w;
	sigset_t buf;
	long r;

	mask = hm_sig_strip(mask, &buf);
	if (!hm_vw_begin(&w, mono_now() + rel, HM_VW_SIGNAL, fds_remote(fds, n) || replay_event(),
			 "poll")) {
		struct timespec ts = ns_to_ts(rel);

		return hm_sys_errno(hm_sys6(SYS_ppoll, (long)fds, n, (long)&ts, (long)mask,
					    SIGSETSIZE, 0));
	}
	r = REL_WAIT(&w,
		     hm_sys6(SYS_ppoll, (long)fds, n, (long)&hm_t.rel, (long)mask, SIGSETSIZE, 0),
		     0, (void)0);
	if (r == 0)
		for (nfds_t i = 0; i < n; i++)
			fds[i].revents = 0;
	hm_vw_end(&w);
	return hm_sys_errno(r);
}

static void no_revents(struct pollfd *fds, nfds_t n)
{
	for (nfds_t i = 0; i < n; i++)
		fds[i].revents = 0;
}

HM_EXPORT int poll(struct pollfd *fds, nfds_t n, int timeout)
{
	int r;

	if (unlikely(!hm_ready())) {
		struct timespec ts = { timeout / 1000, (timeout % 1000) * 1000000 };

		return hm_sys_errno(
			hm_sys6(SYS_ppoll, (long)fds, n, timeout < 0 ? 0 : (long)&ts, 0, 8, 0));
	}
	if (!hm.clock_hook || timeout <= 0) {
		if (hm.clock && timeout < 0)
			hm_clock_waited();
		return hm.real.poll(fds, n, timeout);
	}
	if (likely(!hm.jr))
		return ppoll_v(fds, n, (int64_t)timeout * 1000000, NULL);
	JW(HM_JW_POLL, false, r, IS_ZERO, (no_revents(fds, n), r = 0),
	   ppoll_v(fds, n, (int64_t)timeout * 1000000, NULL), hm.real.poll(fds, n, timeout));
	return r;
}

HM_EXPORT int __poll_chk(struct pollfd *fds, nfds_t n, int timeout, size_t fdslen)
{
	return poll(fds, n, timeout);
}

HM_EXPORT int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *tmo,
		    const sigset_t *mask)
{
	sigset_t buf;
	int64_t rel;
	int r;

	if (unlikely(!hm_ready()))
		return hm_sys_errno(hm_sys6(SYS_ppoll, (long)fds, n, (long)tmo, (long)mask, 8, 0));
	if (!hm.clock_hook || !tmo || (rel = ts_to_ns(tmo)) <= 0) {
		if (hm.clock && !tmo)
			hm_clock_waited();
		return hm.real.ppoll(fds, n, tmo, hm_sig_strip(mask, &buf));
	}
	if (likely(!hm.jr))
		return ppoll_v(fds, n, rel, mask);
	JW(HM_JW_PPOLL, false, r, IS_ZERO, (no_revents(fds, n), r = 0), ppoll_v(fds, n, rel, mask),
	   hm.real.ppoll(fds, n, tmo, hm_sig_strip(mask, &buf)));
	return r;
}

HM_EXPORT int __ppoll_chk(struct pollfd *fds, nfds_t n, const struct timespec *tmo,
			  const sigset_t *mask, size_t fdslen)
{
	return ppoll(fds, n, tmo, mask);
}

/* select() clears its sets when it times out: keep them for another round. */
struct fd_sets {
	fd_set r, w, e;
};

static size_t set_bytes(int nfds)
{
	size_t n = nfds <= 0 ? 0 : ((size_t)nfds + 7) / 8;

	return n > sizeof(fd_set) ? sizeof(fd_set) : n;
}

static void sets_copy(fd_set *dr, fd_set *dw, fd_set *de, const fd_set *r, const fd_set *w,
		      const fd_set *e, int nfds)
{
	size_t n = set_bytes(nfds);

	if (dr && r)
		memcpy(dr, r, n);
	if (dw && w)
		memcpy(dw, w, n);
	if (de && e)
		memcpy(de, e, n);
}

static void sets_clear(int nfds, fd_set *r, fd_set *w, fd_set *e)
{
	struct fd_sets zero;

	memset(&zero, 0, sizeof(zero));
	sets_copy(r, w, e, &zero.r, &zero.w, &zero.e, nfds);
}

/* pselect6's last argument: the mask and its size. */
struct sigmask6 {
	const sigset_t *ss;
	size_t len;
};

static int pselect_v(int nfds, fd_set *r, fd_set *w, fd_set *e, int64_t rel, const sigset_t *mask)
{
	struct fd_sets saved;
	struct hm_vwait vw;
	struct sigmask6 sm;
	sigset_t buf;
	long ret;

	sm.ss = hm_sig_strip(mask, &buf);
	sm.len = SIGSETSIZE;
	if (!hm_vw_begin(&vw, mono_now() + rel, HM_VW_SIGNAL,
			 sets_remote(nfds, r, w, e) || replay_event(), "select")) {
		struct timespec ts = ns_to_ts(rel);

		return hm_sys_errno(hm_sys6(SYS_pselect6, nfds, (long)r, (long)w, (long)e, (long)&ts,
					    (long)&sm));
	}
	sets_copy(&saved.r, &saved.w, &saved.e, r, w, e, nfds);
	ret = REL_WAIT(&vw,
		       hm_sys6(SYS_pselect6, nfds, (long)r, (long)w, (long)e, (long)&hm_t.rel,
			       (long)&sm),
		       0, sets_copy(r, w, e, &saved.r, &saved.w, &saved.e, nfds));
	if (ret == 0)
		sets_clear(nfds, r, w, e);
	else if (ret == -EINTR)
		sets_copy(r, w, e, &saved.r, &saved.w, &saved.e, nfds);
	hm_vw_end(&vw);
	return hm_sys_errno(ret);
}

HM_EXPORT int select(int nfds, fd_set *r, fd_set *w, fd_set *e, struct timeval *tv)
{
	int64_t rel;
	int ret;

	if (unlikely(!hm_ready()))
		return hm_sys_errno(hm_sys6(SYS_select, nfds, (long)r, (long)w, (long)e, (long)tv, 0));
	if (!hm.clock_hook || !tv ||
	    (rel = (int64_t)tv->tv_sec * NSEC_PER_SEC + tv->tv_usec * 1000) <= 0) {
		if (hm.clock && !tv)
			hm_clock_waited();
		return hm.real.select(nfds, r, w, e, tv);
	}
	if (likely(!hm.jr)) {
		ret = pselect_v(nfds, r, w, e, rel, NULL);
	} else {
		JW(HM_JW_SELECT, false, ret, IS_ZERO, (sets_clear(nfds, r, w, e), ret = 0),
		   pselect_v(nfds, r, w, e, rel, NULL), hm.real.select(nfds, r, w, e, tv));
	}
	if (ret == 0)
		tv->tv_sec = tv->tv_usec = 0; /* Linux reports the time left */
	return ret;
}

HM_EXPORT int pselect(int nfds, fd_set *r, fd_set *w, fd_set *e, const struct timespec *tmo,
		      const sigset_t *mask)
{
	sigset_t buf;
	int64_t rel;
	int ret;

	if (unlikely(!hm_ready()) || !hm.clock_hook || !tmo || (rel = ts_to_ns(tmo)) <= 0) {
		if (hm.ready && hm.clock && !tmo)
			hm_clock_waited();
		if (!hm.real.pselect)
			return hm_sys_errno(hm_sys6(SYS_pselect6, nfds, (long)r, (long)w, (long)e,
						    (long)tmo, 0));
		return hm.real.pselect(nfds, r, w, e, tmo, hm_sig_strip(mask, &buf));
	}
	if (likely(!hm.jr))
		return pselect_v(nfds, r, w, e, rel, mask);
	JW(HM_JW_PSELECT, false, ret, IS_ZERO, (sets_clear(nfds, r, w, e), ret = 0),
	   pselect_v(nfds, r, w, e, rel, mask),
	   hm.real.pselect(nfds, r, w, e, tmo, hm_sig_strip(mask, &buf)));
	return ret;
}

/* epoll: epoll_pwait2 takes a timespec the handler can zero; before 5.11,
 * epoll_pwait's milliseconds (a wake-up racing with the call then waits for
 * the safety net). */
static long epoll_call(int epfd, struct epoll_event *ev, int max, const sigset_t *mask)
{
	static bool no_pwait2;
	long r;

	if (!no_pwait2) {
		r = hm_sys6(SYS_epoll_pwait2, epfd, (long)ev, max, (long)&hm_t.rel, (long)mask,
			    SIGSETSIZE);
		if (r != -ENOSYS)
			return r;
		no_pwait2 = true;
	}
	return hm_sys6(SYS_epoll_pwait, epfd, (long)ev, max,
		       (long)((ts_to_ns(&hm_t.rel) + 999999) / 1000000), (long)mask, SIGSETSIZE);
}

static int epoll_v(int epfd, struct epoll_event *ev, int max, int64_t rel, const sigset_t *mask)
{
	struct hm_vwait w;
	sigset_t buf;
	long r;

	mask = hm_sig_strip(mask, &buf);
	if (!hm_vw_begin(&w, mono_now() + rel, HM_VW_SIGNAL,
			 hm_epoll_external(epfd) || replay_event(), "epoll")) {
		hm_t.rel = ns_to_ts(rel);
		return hm_sys_errno(epoll_call(epfd, ev, max, mask));
	}
	r = REL_WAIT(&w, epoll_call(epfd, ev, max, mask), 0, (void)0);
	hm_vw_end(&w);
	return hm_sys_errno(r);
}

HM_EXPORT int epoll_wait(int epfd, struct epoll_event *ev, int max, int timeout)
{
	int r;

	if (unlikely(!hm_ready()))
		return hm_sys_errno(hm_sys6(SYS_epoll_pwait, epfd, (long)ev, max, timeout, 0, 8));
	if (!hm.clock_hook || timeout <= 0) {
		if (hm.clock && timeout < 0)
			hm_clock_waited();
		return hm.real.epoll_wait(epfd, ev, max, timeout);
	}
	if (likely(!hm.jr))
		return epoll_v(epfd, ev, max, (int64_t)timeout * 1000000, NULL);
	JW(HM_JW_EPOLL_WAIT, false, r, IS_ZERO, r = 0,
	   epoll_v(epfd, ev, max, (int64_t)timeout * 1000000, NULL),
	   hm.real.epoll_wait(epfd, ev, max, timeout));
	return r;
}

HM_EXPORT int epoll_pwait(int epfd, struct epoll_event *ev, int max, int timeout,
			  const sigset_t *mask)
{
	sigset_t buf;
	int r;

	if (unlikely(!hm_ready()))
		return hm_sys_errno(hm_sys6(SYS_epoll_pwait, epfd, (long)ev, max, timeout, (long)mask, 8));
	if (!hm.clock_hook || timeout <= 0) {
		if (hm.clock && timeout < 0)
			hm_clock_waited();
		return hm.real.epoll_pwait(epfd, ev, max, timeout, hm_sig_strip(mask, &buf));
	}
	if (likely(!hm.jr))
		return epoll_v(epfd, ev, max, (int64_t)timeout * 1000000, mask);
	JW(HM_JW_EPOLL_PWAIT, false, r, IS_ZERO, r = 0,
	   epoll_v(epfd, ev, max, (int64_t)timeout * 1000000, mask),
	   hm.real.epoll_pwait(epfd, ev, max, timeout, hm_sig_strip(mask, &buf)));
	return r;
}

HM_EXPORT int epoll_pwait2(int epfd, struct epoll_event *ev, int max, const struct timespec *tmo,
			   const sigset_t *mask)
{
	sigset_t buf;
	int64_t rel;
	int r;

	if (unlikely(!hm_ready()))
		return hm_sys_errno(hm_sys6(SYS_epoll_pwait2, epfd, (long)ev, max, (long)tmo, (long)mask, 8));
	if (!hm.clock_hook || !tmo || (rel = ts_to_ns(tmo)) <= 0) {
		if (hm.clock && !tmo)
			hm_clock_waited();
		return hm.real.epoll_pwait2(epfd, ev, max, tmo, hm_sig_strip(mask, &buf));
	}
	if (likely(!hm.jr))
		return epoll_v(epfd, ev, max, rel, mask);
	JW(HM_JW_EPOLL_PWAIT2, false, r, IS_ZERO, r = 0, epoll_v(epfd, ev, max, rel, mask),
	   hm.real.epoll_pwait2(epfd, ev, max, tmo, hm_sig_strip(mask, &buf)));
	return r;
}

static int sigtimedwait_v(const sigset_t *set, siginfo_t *info, int64_t rel)
{
	struct hm_vwait w;
	sigset_t buf;
	long r;

	set = hm_sig_strip(set, &buf);
	if (!hm_vw_begin(&w, mono_now() + rel, HM_VW_SIGNAL, replay_event(), "sigtimedwait")) {
		struct timespec ts = ns_to_ts(rel);

		return hm_sys_errno(hm_sys6(SYS_rt_sigtimedwait, (long)set, (long)info, (long)&ts,
					    SIGSETSIZE, 0, 0));
	}
	r = REL_WAIT(&w,
		     hm_sys6(SYS_rt_sigtimedwait, (long)set, (long)info, (long)&hm_t.rel,
			     SIGSETSIZE, 0, 0),
		     -EAGAIN, (void)0);
	hm_vw_end(&w);
	return hm_sys_errno(r);
}

#define EAGAIN_TIMEDOUT(r) ((r) < 0 && errno == EAGAIN)

HM_EXPORT int sigtimedwait(const sigset_t *set, siginfo_t *info, const struct timespec *tmo)
{
	sigset_t buf;
	int64_t rel;
	int r;

	if (unlikely(!hm_ready()) || !hm.clock_hook || !tmo || (rel = ts_to_ns(tmo)) <= 0)
		return hm.real.sigtimedwait(hm_ready() ? hm_sig_strip(set, &buf) : set, info, tmo);
	if (likely(!hm.jr))
		return sigtimedwait_v(set, info, rel);
	JW(HM_JW_OTHER, false, r, EAGAIN_TIMEDOUT, (errno = EAGAIN, r = -1),
	   sigtimedwait_v(set, info, rel), hm.real.sigtimedwait(hm_sig_strip(set, &buf), info, tmo));
	return r;
}

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

#define ERRNUM_TIMEDOUT(r) ((r) == ETIMEDOUT) /* pthread_*: an error number */
#define ERRNO_TIMEDOUT(r) ((r) < 0 && errno == ETIMEDOUT) /* sem_*: -1 and errno */
#define ERRNUM_SET_TIMEDOUT(r) (r = ETIMEDOUT)
#define ERRNO_SET_TIMEDOUT(r) (errno = ETIMEDOUT, r = -1)

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

HM_EXPORT int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m,
				     const struct timespec *abstime)
{
	int r;

	hm_ready();
	if (!hm.clock_hook || !valid_abstime(abstime))
		return hm.real.pthread_cond_timedwait(c, m, abstime);
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
	ABS_WAIT_JR(HM_JW_COND_CLOCKWAIT, r, ABS_COND, id, abstime,
		    hm.real.pthread_cond_clockwait(c, m, real_clock_for(id), &hm_t.dl),
		    hm.real.pthread_cond_clockwait(c, m, id, abstime), ERRNUM_TIMEDOUT,
		    ERRNUM_SET_TIMEDOUT);
	return r;
}

HM_EXPORT int pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *abstime)
{
	int r;

	hm_ready();
	if (!hm.clock_hook || !valid_abstime(abstime))
		return hm.real.pthread_mutex_timedlock(m, abstime);
	ABS_WAIT_JR(HM_JW_MUTEX_TIMEDLOCK, r, ABS_LOCK, CLOCK_REALTIME, abstime,
		    hm.real.pthread_mutex_timedlock(m, &hm_t.dl),
		    hm.real.pthread_mutex_timedlock(m, abstime), ERRNUM_TIMEDOUT,
		    ERRNUM_SET_TIMEDOUT);
	return r;
}

HM_EXPORT int pthread_mutex_clocklock(pthread_mutex_t *m, clockid_t id,
				      const struct timespec *abstime)
{
	int r;

	hm_ready();
	if (!hm.clock_hook || !valid_abstime(abstime) || !wait_clock_ok(id))
		return hm.real.pthread_mutex_clocklock(m, id, abstime);
	ABS_WAIT_JR(HM_JW_MUTEX_CLOCKLOCK, r, ABS_LOCK, id, abstime,
		    hm.real.pthread_mutex_clocklock(m, real_clock_for(id), &hm_t.dl),
		    hm.real.pthread_mutex_clocklock(m, id, abstime), ERRNUM_TIMEDOUT,
		    ERRNUM_SET_TIMEDOUT);
	return r;
}

HM_EXPORT int sem_timedwait(sem_t *s, const struct timespec *abstime)
{
	int r;

	hm_ready();
	if (!hm.clock_hook || !valid_abstime(abstime))
		return hm.real.sem_timedwait(s, abstime);
	ABS_WAIT_JR(HM_JW_SEM_TIMEDWAIT, r, ABS_SEM, CLOCK_REALTIME, abstime,
		    hm.real.sem_timedwait(s, &hm_t.dl), hm.real.sem_timedwait(s, abstime),
		    ERRNO_TIMEDOUT, ERRNO_SET_TIMEDOUT);
	return r;
}

HM_EXPORT int sem_clockwait(sem_t *s, clockid_t id, const struct timespec *abstime)
{
	int r;

	hm_ready();
	if (!hm.clock_hook || !valid_abstime(abstime) || !wait_clock_ok(id))
		return hm.real.sem_clockwait(s, id, abstime);
	ABS_WAIT_JR(HM_JW_SEM_CLOCKWAIT, r, ABS_SEM, id, abstime,
		    hm.real.sem_clockwait(s, real_clock_for(id), &hm_t.dl),
		    hm.real.sem_clockwait(s, id, abstime), ERRNO_TIMEDOUT, ERRNO_SET_TIMEDOUT);
	return r;
}

HM_EXPORT int pthread_rwlock_timedrdlock(pthread_rwlock_t *l, const struct timespec *abstime)
{
	int r;

	hm_ready();
	if (!hm.clock_hook || !valid_abstime(abstime))
		return hm.real.pthread_rwlock_timedrdlock(l, abstime);
	ABS_WAIT_JR(HM_JW_OTHER, r, ABS_LOCK, CLOCK_REALTIME, abstime,
		    hm.real.pthread_rwlock_timedrdlock(l, &hm_t.dl),
		    hm.real.pthread_rwlock_timedrdlock(l, abstime), ERRNUM_TIMEDOUT,
		    ERRNUM_SET_TIMEDOUT);
	return r;
}

HM_EXPORT int pthread_rwlock_timedwrlock(pthread_rwlock_t *l, const struct timespec *abstime)
{
	int r;

	hm_ready();
	if (!hm.clock_hook || !valid_abstime(abstime))
		return hm.real.pthread_rwlock_timedwrlock(l, abstime);
	ABS_WAIT_JR(HM_JW_OTHER, r, ABS_LOCK, CLOCK_REALTIME, abstime,
		    hm.real.pthread_rwlock_timedwrlock(l, &hm_t.dl),
		    hm.real.pthread_rwlock_timedwrlock(l, abstime), ERRNUM_TIMEDOUT,
		    ERRNUM_SET_TIMEDOUT);
	return r;
}

HM_EXPORT int pthread_rwlock_clockrdlock(pthread_rwlock_t *l, clockid_t id,
					 const struct timespec *abstime)
{
	int r;

	hm_ready();
	if (!hm.clock_hook || !valid_abstime(abstime) || !wait_clock_ok(id))
		return hm.real.pthread_rwlock_clockrdlock(l, id, abstime);
	ABS_WAIT_JR(HM_JW_OTHER, r, ABS_LOCK, id, abstime,
		    hm.real.pthread_rwlock_clockrdlock(l, real_clock_for(id), &hm_t.dl),
		    hm.real.pthread_rwlock_clockrdlock(l, id, abstime), ERRNUM_TIMEDOUT,
		    ERRNUM_SET_TIMEDOUT);
	return r;
}

HM_EXPORT int pthread_rwlock_clockwrlock(pthread_rwlock_t *l, clockid_t id,
					 const struct timespec *abstime)
{
	int r;

	hm_ready();
	if (!hm.clock_hook || !valid_abstime(abstime) || !wait_clock_ok(id))
		return hm.real.pthread_rwlock_clockwrlock(l, id, abstime);
	ABS_WAIT_JR(HM_JW_OTHER, r, ABS_LOCK, id, abstime,
		    hm.real.pthread_rwlock_clockwrlock(l, real_clock_for(id), &hm_t.dl),
		    hm.real.pthread_rwlock_clockwrlock(l, id, abstime), ERRNUM_TIMEDOUT,
		    ERRNUM_SET_TIMEDOUT);
	return r;
}

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

HM_EXPORT int thrd_sleep(const struct timespec *dur, struct timespec *rem)
{
	int r;

	if (unlikely(!hm_ready()) || !hm.clock_hook)
		return hm.real.thrd_sleep(dur, rem);
	if (!dur || dur->tv_nsec < 0 || dur->tv_nsec >= NSEC_PER_SEC || dur->tv_sec < 0)
		return -2;
	if (likely(!hm.jr))
		return nanosleep_v(dur, rem);
	/* returns 0, -1 (interrupted) or another negative value */
	JW(HM_JW_OTHER, true, r, IS_ZERO, ({
		   r = (int)w_.result;
		   if (rem)
			   memset(rem, 0, sizeof(*rem));
	   }),
	   nanosleep_v(dur, rem), hm.real.thrd_sleep(dur, rem));
	return r;
}

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
