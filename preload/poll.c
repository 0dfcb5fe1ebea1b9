// SPDX-License-Identifier: MIT
/*
 * Waits with relative timeouts on the run's clock: poll, ppoll, select,
 * pselect, epoll_wait/pwait/pwait2, sigtimedwait (the rules: wait.c). Their
 * real calls are raw syscalls taking the timeout from hm_t.rel, the variable
 * the keeper's SIGURG zeroes when the deadline comes (vclock.c).
 */
#include <string.h>
#include "wait.h"

/* ---- relative timeouts: poll, select, epoll, sigtimedwait ---- */

/* Does the wait watch a descriptor of the real world (peers.c)? */
static bool fds_remote(const struct pollfd *fds, nfds_t n)
{
	for (nfds_t i = 0; i < n; i++)
		if (hm_fd_external(fds[i].fd))
			return true;
	return false;
}

/* Bit fd of a set as the kernel reads it: nfds bits, beyond FD_SETSIZE too
 * (a program may pass larger sets; FD_ISSET would stop at 1024). */
static inline bool set_has(const fd_set *s, int fd)
{
	const unsigned long *w = (const unsigned long *)s;
	const unsigned bits = 8 * sizeof(unsigned long);

	return s && (w[fd / bits] >> (fd % bits)) & 1;
}

/* Past FD_SETSIZE, no further than the highest descriptor peers.c has met:
 * the kernel reads no bit past its descriptor table either, and a program
 * that passes select(getdtablesize(), ...) with 1024-bit sets must not
 * have the bytes after them taken for descriptors. */
static bool sets_remote(int nfds, const fd_set *r, const fd_set *w, const fd_set *e)
{
	int high = hm_fd_high();

	if (nfds > FD_SETSIZE && nfds > high)
		nfds = high > FD_SETSIZE ? high : FD_SETSIZE;
	for (int fd = 0; fd < nfds; fd++)
		if ((set_has(r, fd) || set_has(w, fd) || set_has(e, fd)) && hm_fd_external(fd))
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

/* A poll with a zero timeout that found nothing: the thread polls the world
 * in a loop and waits for the clock to show that time passed (CPython's
 * multiprocessing.connection.wait(timeout=0) loops until "deadline - now"
 * is negative). A real poll takes time, so this one does too: the thread's
 * readings tick from the next one on, as after HM_TICK_AFTER reads
 * (clock.c). With --tick 0 nothing changes: the loop spins to --spin-limit. */
static int zero_poll(int r, bool zero)
{
	if (r == 0 && zero && hm.clock)
		hm_clock_spun();
	return r;
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
		return zero_poll(hm.real.poll(fds, n, timeout), timeout == 0);
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
		return zero_poll(hm.real.ppoll(fds, n, tmo, hm_sig_strip(mask, &buf)), tmo);
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
		return zero_poll(hm.real.select(nfds, r, w, e, tv), tv);
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
		return zero_poll(hm.real.pselect(nfds, r, w, e, tmo, hm_sig_strip(mask, &buf)),
				 hm.ready && tmo);
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
		return zero_poll(hm.real.epoll_wait(epfd, ev, max, timeout), timeout == 0);
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
		return zero_poll(hm.real.epoll_pwait(epfd, ev, max, timeout, hm_sig_strip(mask, &buf)),
				 timeout == 0);
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
		return zero_poll(hm.real.epoll_pwait2(epfd, ev, max, tmo, hm_sig_strip(mask, &buf)),
				 tmo);
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
