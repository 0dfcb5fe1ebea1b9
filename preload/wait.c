// SPDX-License-Identifier: MIT
/*
 * Sleeps and timed waits.
 *
 * A sleep advances the calling thread's virtual clocks by its duration (or
 * up to its absolute deadline) and returns at once. A timed wait waits for
 * real for at most HM_WAIT_GRACE_NS; if it times out for real, the virtual
 * clocks jump to its deadline and it reports a timeout. If it returns for any
 * other reason (an event, a signal, a spurious wake-up), virtual time does not
 * move: how long the event took in real time is not something a deterministic
 * run can observe. Infinite waits stay real. Absolute deadlines are virtual
 * times on the clock the wait uses.
 *
 * One exception: while the process has a child that is still running, a
 * sleep or timed wait also waits for real, up to its own duration, in slices
 * (HM_CHILD_SLICE_NS), until the child exits or the wait is satisfied. Virtual
 * time still moves by exactly the requested amount. Without it, a program
 * that waits for a real process with a timeout - subprocess.run(timeout=),
 * Process.waitFor(timeout), "start a server, sleep 1, connect" - would see
 * its timeout expire in microseconds while the child is still working. Such a
 * program races a real process against time, so how many times it polls is
 * not deterministic; everything else stays so.
 *
 * The same holds while the process has a socket connected to the real
 * network (an --allow'ed host, or any under --network off; see net.c): a
 * server out there answers in real time, so a 5 s timeout waits up to 5 s.
 *
 * Recording and replay (record.c): every sleep and every wait with a finite
 * timeout is one value of the thread's stream - its outcome (timed out or
 * not), its result and the virtual monotonic time after it. In replay a sleep
 * or a wait that timed out returns at once, as it did, and the clock jumps
 * where the recording's did, whatever the clock mode; a wait that saw an
 * event waits for one for real, up to its whole timeout. The JW macro below
 * wraps each wrapper's virtual path (or the real call, clock off) in that.
 */
#include <string.h>
#include "shim.h"

/* Real relative timeout for a virtual one: at most the grace. */
static inline int64_t grace(int64_t rel)
{
	return rel < HM_WAIT_GRACE_NS ? rel : HM_WAIT_GRACE_NS;
}

static inline int grace_ms(int ms)
{
	int g = HM_WAIT_GRACE_NS / 1000000;

	return ms < g ? ms : g;
}

static void sched_yield_raw(void)
{
	hm_sys(SYS_sched_yield, 0, 0, 0);
}

/* Does this process have a child that has not exited yet? (Exited but
 * unreaped children do not count: whoever reaps them is about to run.) */
static bool child_running(void)
{
	siginfo_t si;

	si.si_pid = 0;
	return hm_sys6(SYS_waitid, P_ALL, 0, (long)&si, WEXITED | WNOHANG | WNOWAIT, 0, 0) == 0 &&
	       si.si_pid == 0;
}

static int64_t real_mono(void)
{
	return hm_real_ns(CLOCK_MONOTONIC);
}

/*
 * A wait that started at real time t0 for rel ns has timed out for real:
 * how long to wait for real next, because a child is still running or a
 * socket to the real network is open (0: stop, take the timeout as reached).
 */
static int64_t more_real(int64_t t0, int64_t rel)
{
	int64_t done = real_mono() - t0;

	if (done >= rel || !(hm_t.jw_event || hm_remote_open() || child_running()))
		return 0;
	return rel - done < HM_CHILD_SLICE_NS ? rel - done : HM_CHILD_SLICE_NS;
}

static int ms_ceil(int64_t ns)
{
	return (ns + 999999) / 1000000;
}

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

/* A sleep of ns: real while a child runs, then the virtual clocks move. */
static void virtual_sleep(int64_t ns)
{
	if (ns > 0 && child_running()) {
		int64_t t0 = real_mono(), next = ns < HM_CHILD_SLICE_NS ? ns : HM_CHILD_SLICE_NS;

		do {
			struct timespec ts = ns_to_ts(next);

			hm_sys(SYS_nanosleep, &ts, NULL, 0);
		} while ((next = more_real(t0, ns)));
	} else {
		sched_yield_raw();
	}
	hm_clock_advance(ns);
}

/* ---- sleeps ---- */

static int nanosleep_v(const struct timespec *req, struct timespec *rem)
{
	virtual_sleep(ts_to_ns(req));
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

static int clock_nanosleep_v(clockid_t id, int flags, const struct timespec *req,
			     struct timespec *rem)
{
	int64_t d = ts_to_ns(req);

	if (flags & TIMER_ABSTIME)
		d -= hm_clock_now(id);
	else if (rem)
		memset(rem, 0, sizeof(*rem));
	virtual_sleep(d);
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

HM_EXPORT unsigned sleep(unsigned s)
{
	int r;

	if (unlikely(!hm_ready()) || !hm.clock_hook) {
		struct timespec ts = { s, 0 };

		return nanosleep(&ts, NULL) ? s : 0;
	}
	if (likely(!hm.jr)) {
		virtual_sleep((int64_t)s * NSEC_PER_SEC);
		return 0;
	}
	/* returns the seconds left */
	JW(HM_JW_SLEEP, true, r, IS_ZERO, r = (int)w_.result,
	   ({
		   virtual_sleep((int64_t)s * NSEC_PER_SEC);
		   0;
	   }),
	   (int)hm.real.sleep(s));
	return (unsigned)r;
}

HM_EXPORT int usleep(useconds_t us)
{
	int r;

	if (unlikely(!hm_ready()) || !hm.clock_hook) {
		struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

		return nanosleep(&ts, NULL);
	}
	if (likely(!hm.jr)) {
		virtual_sleep((int64_t)us * 1000);
		return 0;
	}
	JW(HM_JW_USLEEP, true, r, IS_ZERO, JW_SLEEP_RESULT(r),
	   ({
		   virtual_sleep((int64_t)us * 1000);
		   0;
	   }),
	   hm.real.usleep(us));
	return r;
}

/* ---- relative timeouts: poll, select, epoll ---- */

/* After a real wait of at most the grace: r == 0 means it timed out. */
static inline void after_rel(int r, int64_t rel_ns)
{
	if (r == 0)
		hm_clock_advance(rel_ns);
	else
		hm_clock_waited();
}

static void no_revents(struct pollfd *fds, nfds_t n)
{
	for (nfds_t i = 0; i < n; i++)
		fds[i].revents = 0;
}

static int poll_v(struct pollfd *fds, nfds_t n, int timeout)
{
	int64_t t0, more;
	int r;

	t0 = real_mono();
	r = hm.real.poll(fds, n, grace_ms(timeout));
	while (r == 0 && (more = more_real(t0, (int64_t)timeout * 1000000)))
		r = hm.real.poll(fds, n, ms_ceil(more));
	after_rel(r, (int64_t)timeout * 1000000);
	return r;
}

HM_EXPORT int poll(struct pollfd *fds, nfds_t n, int timeout)
{
	int r;

	if (unlikely(!hm_ready()))
		return hm_sys_errno(hm_sys6(SYS_ppoll, (long)fds, n,
					    timeout < 0 ? 0 : (long)&(struct timespec){ timeout / 1000, (timeout % 1000) * 1000000 },
					    0, 8, 0));
	if (!hm.clock_hook || timeout <= 0) {
		if (hm.clock && timeout < 0)
			hm_clock_waited();
		return hm.real.poll(fds, n, timeout);
	}
	if (likely(!hm.jr))
		return poll_v(fds, n, timeout);
	JW(HM_JW_POLL, false, r, IS_ZERO, (no_revents(fds, n), r = 0), poll_v(fds, n, timeout),
	   hm.real.poll(fds, n, timeout));
	return r;
}

HM_EXPORT int __poll_chk(struct pollfd *fds, nfds_t n, int timeout, size_t fdslen)
{
	return poll(fds, n, timeout);
}

static int ppoll_v(struct pollfd *fds, nfds_t n, int64_t rel, const sigset_t *mask)
{
	struct timespec g;
	int64_t t0, more;
	int r;

	t0 = real_mono();
	g = ns_to_ts(grace(rel));
	r = hm.real.ppoll(fds, n, &g, mask);
	while (r == 0 && (more = more_real(t0, rel))) {
		g = ns_to_ts(more);
		r = hm.real.ppoll(fds, n, &g, mask);
	}
	after_rel(r, rel);
	return r;
}

HM_EXPORT int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *tmo,
		    const sigset_t *mask)
{
	int64_t rel;
	int r;

	if (unlikely(!hm_ready()))
		return hm_sys_errno(hm_sys6(SYS_ppoll, (long)fds, n, (long)tmo, (long)mask, 8, 0));
	if (!hm.clock_hook || !tmo || (rel = ts_to_ns(tmo)) <= 0) {
		if (hm.clock && !tmo)
			hm_clock_waited();
		return hm.real.ppoll(fds, n, tmo, mask);
	}
	if (likely(!hm.jr))
		return ppoll_v(fds, n, rel, mask);
	JW(HM_JW_PPOLL, false, r, IS_ZERO, (no_revents(fds, n), r = 0), ppoll_v(fds, n, rel, mask),
	   hm.real.ppoll(fds, n, tmo, mask));
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

static void sets_save(struct fd_sets *s, int nfds, fd_set *r, fd_set *w, fd_set *e)
{
	size_t n = nfds <= 0 ? 0 : ((size_t)nfds + 7) / 8;

	if (n > sizeof(fd_set))
		n = sizeof(fd_set);
	if (r)
		memcpy(&s->r, r, n);
	if (w)
		memcpy(&s->w, w, n);
	if (e)
		memcpy(&s->e, e, n);
}

static void sets_restore(struct fd_sets *s, int nfds, fd_set *r, fd_set *w, fd_set *e)
{
	size_t n = nfds <= 0 ? 0 : ((size_t)nfds + 7) / 8;

	if (n > sizeof(fd_set))
		n = sizeof(fd_set);
	if (r)
		memcpy(r, &s->r, n);
	if (w)
		memcpy(w, &s->w, n);
	if (e)
		memcpy(e, &s->e, n);
}

static void sets_clear(int nfds, fd_set *r, fd_set *w, fd_set *e)
{
	struct fd_sets zero;

	memset(&zero, 0, sizeof(zero));
	sets_restore(&zero, nfds, r, w, e);
}

static int select_v(int nfds, fd_set *r, fd_set *w, fd_set *e, struct timeval *tv, int64_t rel)
{
	struct fd_sets saved;
	struct timeval g;
	int64_t t0, more;
	int ret;

	t0 = real_mono();
	sets_save(&saved, nfds, r, w, e);
	g.tv_sec = 0;
	g.tv_usec = grace(rel) / 1000;
	ret = hm.real.select(nfds, r, w, e, &g);
	while (ret == 0 && (more = more_real(t0, rel))) {
		sets_restore(&saved, nfds, r, w, e);
		g.tv_sec = more / NSEC_PER_SEC;
		g.tv_usec = more % NSEC_PER_SEC / 1000 + 1;
		ret = hm.real.select(nfds, r, w, e, &g);
	}
	after_rel(ret, rel);
	if (ret == 0)
		tv->tv_sec = tv->tv_usec = 0; /* Linux reports the time left */
	return ret;
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
	if (likely(!hm.jr))
		return select_v(nfds, r, w, e, tv, rel);
	JW(HM_JW_SELECT, false, ret, IS_ZERO,
	   (sets_clear(nfds, r, w, e), tv->tv_sec = tv->tv_usec = 0, ret = 0),
	   select_v(nfds, r, w, e, tv, rel), hm.real.select(nfds, r, w, e, tv));
	return ret;
}

static int pselect_v(int nfds, fd_set *r, fd_set *w, fd_set *e, int64_t rel,
		     const sigset_t *mask)
{
	struct fd_sets saved;
	struct timespec g;
	int64_t t0, more;
	int ret;

	t0 = real_mono();
	sets_save(&saved, nfds, r, w, e);
	g = ns_to_ts(grace(rel));
	ret = hm.real.pselect(nfds, r, w, e, &g, mask);
	while (ret == 0 && (more = more_real(t0, rel))) {
		sets_restore(&saved, nfds, r, w, e);
		g = ns_to_ts(more);
		ret = hm.real.pselect(nfds, r, w, e, &g, mask);
	}
	after_rel(ret, rel);
	return ret;
}

HM_EXPORT int pselect(int nfds, fd_set *r, fd_set *w, fd_set *e, const struct timespec *tmo,
		      const sigset_t *mask)
{
	int64_t rel;
	int ret;

	if (unlikely(!hm_ready()) || !hm.clock_hook || !tmo || (rel = ts_to_ns(tmo)) <= 0) {
		if (hm.ready && hm.clock && !tmo)
			hm_clock_waited();
		if (!hm.real.pselect)
			return hm_sys_errno(hm_sys6(SYS_pselect6, nfds, (long)r, (long)w, (long)e,
						    (long)tmo, 0));
		return hm.real.pselect(nfds, r, w, e, tmo, mask);
	}
	if (likely(!hm.jr))
		return pselect_v(nfds, r, w, e, rel, mask);
	JW(HM_JW_PSELECT, false, ret, IS_ZERO, (sets_clear(nfds, r, w, e), ret = 0),
	   pselect_v(nfds, r, w, e, rel, mask), hm.real.pselect(nfds, r, w, e, tmo, mask));
	return ret;
}

static int epoll_pwait_v(int epfd, struct epoll_event *ev, int max, int timeout,
			 const sigset_t *mask)
{
	int64_t t0, more;
	int r;

	t0 = real_mono();
	r = hm.real.epoll_pwait(epfd, ev, max, grace_ms(timeout), mask);
	while (r == 0 && (more = more_real(t0, (int64_t)timeout * 1000000)))
		r = hm.real.epoll_pwait(epfd, ev, max, ms_ceil(more), mask);
	after_rel(r, (int64_t)timeout * 1000000);
	return r;
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
		return epoll_pwait_v(epfd, ev, max, timeout, NULL);
	JW(HM_JW_EPOLL_WAIT, false, r, IS_ZERO, r = 0, epoll_pwait_v(epfd, ev, max, timeout, NULL),
	   hm.real.epoll_wait(epfd, ev, max, timeout));
	return r;
}

HM_EXPORT int epoll_pwait(int epfd, struct epoll_event *ev, int max, int timeout,
			  const sigset_t *mask)
{
	int r;

	if (unlikely(!hm_ready()))
		return hm_sys_errno(hm_sys6(SYS_epoll_pwait, epfd, (long)ev, max, timeout, (long)mask, 8));
	if (!hm.clock_hook || timeout <= 0) {
		if (hm.clock && timeout < 0)
			hm_clock_waited();
		return hm.real.epoll_pwait(epfd, ev, max, timeout, mask);
	}
	if (likely(!hm.jr))
		return epoll_pwait_v(epfd, ev, max, timeout, mask);
	JW(HM_JW_EPOLL_PWAIT, false, r, IS_ZERO, r = 0, epoll_pwait_v(epfd, ev, max, timeout, mask),
	   hm.real.epoll_pwait(epfd, ev, max, timeout, mask));
	return r;
}

static int epoll_pwait2_v(int epfd, struct epoll_event *ev, int max, int64_t rel,
			  const sigset_t *mask)
{
	struct timespec g;
	int64_t t0, more;
	int r;

	t0 = real_mono();
	g = ns_to_ts(grace(rel));
	r = hm.real.epoll_pwait2(epfd, ev, max, &g, mask);
	while (r == 0 && (more = more_real(t0, rel))) {
		g = ns_to_ts(more);
		r = hm.real.epoll_pwait2(epfd, ev, max, &g, mask);
	}
	after_rel(r, rel);
	return r;
}

HM_EXPORT int epoll_pwait2(int epfd, struct epoll_event *ev, int max, const struct timespec *tmo,
			   const sigset_t *mask)
{
	int64_t rel;
	int r;

	if (unlikely(!hm_ready()))
		return hm_sys_errno(hm_sys6(SYS_epoll_pwait2, epfd, (long)ev, max, (long)tmo, (long)mask, 8));
	if (!hm.clock_hook || !tmo || (rel = ts_to_ns(tmo)) <= 0) {
		if (hm.clock && !tmo)
			hm_clock_waited();
		return hm.real.epoll_pwait2(epfd, ev, max, tmo, mask);
	}
	if (likely(!hm.jr))
		return epoll_pwait2_v(epfd, ev, max, rel, mask);
	JW(HM_JW_EPOLL_PWAIT2, false, r, IS_ZERO, r = 0, epoll_pwait2_v(epfd, ev, max, rel, mask),
	   hm.real.epoll_pwait2(epfd, ev, max, tmo, mask));
	return r;
}

/* ---- absolute deadlines: condition variables, semaphores, mutexes ---- */

static clockid_t real_clock_for(clockid_t id)
{
	return id == CLOCK_MONOTONIC ? CLOCK_MONOTONIC : CLOCK_REALTIME;
}

/*
 * Turn a virtual absolute deadline on clock id into a real one at most the
 * grace away; *ret_rel is how far the virtual deadline is (<= 0: already
 * passed, then the real deadline is now and the call only polls).
 */
static struct timespec real_deadline(clockid_t id, const struct timespec *abstime, int64_t *ret_rel)
{
	int64_t rel = ts_to_ns(abstime) - hm_clock_now(id);

	*ret_rel = rel;
	return ns_to_ts(hm_real_ns(real_clock_for(id)) + (rel > 0 ? grace(rel) : 0));
}

/*
 * Run CALL (an expression using the struct timespec dl) against a virtual
 * absolute deadline on clock ID: first for at most the grace, then, while
 * TIMED_OUT(r) and a child is still running, slice by slice up to the full
 * wait; finally the virtual clocks move to the deadline if it timed out.
 */
#define ABS_WAIT(r, id, abstime, CALL, TIMED_OUT)                                                 \
	do {                                                                                       \
		int64_t rel_, t0_ = real_mono(), more_;                                            \
		struct timespec dl = real_deadline((id), (abstime), &rel_);                        \
		int e_;                                                                            \
		r = (CALL);                                                                        \
		while (rel_ > 0 && TIMED_OUT(r) && (more_ = more_real(t0_, rel_))) {               \
			dl = ns_to_ts(hm_real_ns(real_clock_for(id)) + more_);                     \
			r = (CALL);                                                                \
		}                                                                                  \
		e_ = errno;                                                                        \
		if (TIMED_OUT(r))                                                                  \
			hm_clock_advance(rel_);                                                    \
		else                                                                               \
			hm_clock_waited();                                                         \
		errno = e_;                                                                        \
	} while (0)

#define ERRNUM_TIMEDOUT(r) ((r) == ETIMEDOUT) /* pthread_*: an error number */
#define ERRNO_TIMEDOUT(r) ((r) < 0 && errno == ETIMEDOUT) /* sem_*: -1 and errno */
#define ERRNUM_SET_TIMEDOUT(r) (r = ETIMEDOUT)
#define ERRNO_SET_TIMEDOUT(r) (errno = ETIMEDOUT, r = -1)

/* ABS_WAIT through the journal (JW); REAL_CALL is the call with clock off. */
#define JW_ABS(kind, r, id, abstime, CALL, REAL_CALL, TIMED_OUT, SET_TIMEDOUT)                    \
	JW(kind, false, r, TIMED_OUT, SET_TIMEDOUT(r), ({                                          \
		   int rv_;                                                                        \
		   ABS_WAIT(rv_, id, abstime, CALL, TIMED_OUT);                                    \
		   rv_;                                                                            \
	   }),                                                                                     \
	   REAL_CALL)

/* An absolute wait: the journal's way when recording or replaying, else ABS_WAIT. */
#define ABS_WAIT_JR(kind, r, id, abstime, CALL, REAL_CALL, TIMED_OUT, SET_TIMEDOUT)               \
	do {                                                                                       \
		if (likely(!hm.jr))                                                                \
			ABS_WAIT(r, id, abstime, CALL, TIMED_OUT);                                 \
		else                                                                               \
			JW_ABS(kind, r, id, abstime, CALL, REAL_CALL, TIMED_OUT, SET_TIMEDOUT);    \
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
	ABS_WAIT_JR(HM_JW_COND_TIMEDWAIT, r, cond_clock(c), abstime,
		    hm.real.pthread_cond_timedwait(c, m, &dl),
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
	ABS_WAIT_JR(HM_JW_COND_CLOCKWAIT, r, id, abstime,
		    hm.real.pthread_cond_clockwait(c, m, id, &dl),
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
	ABS_WAIT_JR(HM_JW_MUTEX_TIMEDLOCK, r, CLOCK_REALTIME, abstime,
		    hm.real.pthread_mutex_timedlock(m, &dl), hm.real.pthread_mutex_timedlock(m, abstime),
		    ERRNUM_TIMEDOUT, ERRNUM_SET_TIMEDOUT);
	return r;
}

HM_EXPORT int pthread_mutex_clocklock(pthread_mutex_t *m, clockid_t id,
				      const struct timespec *abstime)
{
	int r;

	hm_ready();
	if (!hm.clock_hook || !valid_abstime(abstime) || !wait_clock_ok(id))
		return hm.real.pthread_mutex_clocklock(m, id, abstime);
	ABS_WAIT_JR(HM_JW_MUTEX_CLOCKLOCK, r, id, abstime, hm.real.pthread_mutex_clocklock(m, id, &dl),
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
	ABS_WAIT_JR(HM_JW_SEM_TIMEDWAIT, r, CLOCK_REALTIME, abstime, hm.real.sem_timedwait(s, &dl),
		    hm.real.sem_timedwait(s, abstime), ERRNO_TIMEDOUT, ERRNO_SET_TIMEDOUT);
	return r;
}

HM_EXPORT int sem_clockwait(sem_t *s, clockid_t id, const struct timespec *abstime)
{
	int r;

	hm_ready();
	if (!hm.clock_hook || !valid_abstime(abstime) || !wait_clock_ok(id))
		return hm.real.sem_clockwait(s, id, abstime);
	ABS_WAIT_JR(HM_JW_SEM_CLOCKWAIT, r, id, abstime, hm.real.sem_clockwait(s, id, &dl),
		    hm.real.sem_clockwait(s, id, abstime), ERRNO_TIMEDOUT, ERRNO_SET_TIMEDOUT);
	return r;
}

/*
 * futex(2) through syscall() (Rust's std, and others that wait on futexes
 * directly): FUTEX_WAIT has a relative timeout, FUTEX_WAIT_BITSET an absolute
 * one on CLOCK_MONOTONIC (CLOCK_REALTIME with FUTEX_CLOCK_REALTIME). Other
 * operations pass through.
 */
#include <linux/futex.h>

long hm_futex_wait(uint32_t *uaddr, int op, uint32_t val, const struct timespec *tmo,
		   uint32_t *uaddr2, uint32_t val3)
{
	int cmd = op & FUTEX_CMD_MASK;
	clockid_t id = op & FUTEX_CLOCK_REALTIME ? CLOCK_REALTIME : CLOCK_MONOTONIC;
	int op0 = op;
	uint32_t val30 = val3;
	struct timespec abs;
	long r;

	if (cmd == FUTEX_WAIT) {
		/* relative: the same wait as an absolute one on the monotonic clock */
		abs = ns_to_ts(hm_clock_now(CLOCK_MONOTONIC) + ts_to_ns(tmo));
		id = CLOCK_MONOTONIC;
		op = (op & ~FUTEX_CMD_MASK & ~FUTEX_CLOCK_REALTIME) | FUTEX_WAIT_BITSET;
		val3 = FUTEX_BITSET_MATCH_ANY;
	} else if (cmd == FUTEX_WAIT_BITSET) {
		abs = *tmo;
	} else {
		return hm_sys_errno(hm_sys6(SYS_futex, (long)uaddr, op, val, (long)tmo, (long)uaddr2,
					    val3));
	}
	if (id == CLOCK_REALTIME)
		op |= FUTEX_CLOCK_REALTIME;
	/* (clock off, recording: the call as it came) */
	ABS_WAIT_JR(HM_JW_OTHER, r, id, &abs,
		    hm_sys_errno(hm_sys6(SYS_futex, (long)uaddr, op, val, (long)&dl, (long)uaddr2, val3)),
		    hm_sys_errno(hm_sys6(SYS_futex, (long)uaddr, op0, val, (long)tmo, (long)uaddr2,
					 val30)),
		    ERRNO_TIMEDOUT, ERRNO_SET_TIMEDOUT);
	return r;
}

/* ---- the rest of the family: rwlocks, C11 threads, sigtimedwait ---- */

HM_EXPORT int pthread_rwlock_timedrdlock(pthread_rwlock_t *l, const struct timespec *abstime)
{
	int r;

	hm_ready();
	if (!hm.clock_hook || !valid_abstime(abstime))
		return hm.real.pthread_rwlock_timedrdlock(l, abstime);
	ABS_WAIT_JR(HM_JW_OTHER, r, CLOCK_REALTIME, abstime, hm.real.pthread_rwlock_timedrdlock(l, &dl),
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
	ABS_WAIT_JR(HM_JW_OTHER, r, CLOCK_REALTIME, abstime, hm.real.pthread_rwlock_timedwrlock(l, &dl),
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
	ABS_WAIT_JR(HM_JW_OTHER, r, id, abstime, hm.real.pthread_rwlock_clockrdlock(l, id, &dl),
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
	ABS_WAIT_JR(HM_JW_OTHER, r, id, abstime, hm.real.pthread_rwlock_clockwrlock(l, id, &dl),
		    hm.real.pthread_rwlock_clockwrlock(l, id, abstime), ERRNUM_TIMEDOUT,
		    ERRNUM_SET_TIMEDOUT);
	return r;
}

/* C11 threads: glibc implements them on the pthread objects, calling its
 * internal entry points, so they are wrapped here in their own right. */
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

static int sigtimedwait_v(const sigset_t *set, siginfo_t *info, int64_t rel)
{
	struct timespec g;
	int64_t t0, more;
	int r;

	t0 = real_mono();
	g = ns_to_ts(grace(rel));
	r = hm.real.sigtimedwait(set, info, &g);
	while (r < 0 && errno == EAGAIN && (more = more_real(t0, rel))) {
		g = ns_to_ts(more);
		r = hm.real.sigtimedwait(set, info, &g);
	}
	if (r < 0 && errno == EAGAIN) {
		hm_clock_advance(rel);
		errno = EAGAIN;
	} else {
		hm_clock_waited();
	}
	return r;
}

#define EAGAIN_TIMEDOUT(r) ((r) < 0 && errno == EAGAIN)

HM_EXPORT int sigtimedwait(const sigset_t *set, siginfo_t *info, const struct timespec *tmo)
{
	int64_t rel;
	int r;

	if (unlikely(!hm_ready()) || !hm.clock_hook || !tmo || (rel = ts_to_ns(tmo)) <= 0)
		return hm.real.sigtimedwait(set, info, tmo);
	if (likely(!hm.jr))
		return sigtimedwait_v(set, info, rel);
	JW(HM_JW_OTHER, false, r, EAGAIN_TIMEDOUT, (errno = EAGAIN, r = -1),
	   sigtimedwait_v(set, info, rel), hm.real.sigtimedwait(set, info, tmo));
	return r;
}
