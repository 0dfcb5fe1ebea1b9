// SPDX-License-Identifier: MIT
/*
 * SIGURG is how the clock keeper wakes a thread whose deadline came while it
 * waits in a primitive the shim does not own (vclock.c). So, in every
 * process of a run with the virtual clock:
 *   - our handler is installed for SIGURG; a SIGURG carrying our magic
 *     (si_code SI_QUEUE, si_int HM_VWAKE_MAGIC) wakes the wait, any other
 *     goes to what the program asked for (SIGURG's default is to ignore it);
 *   - sigaction()/signal() on SIGURG record the program's wish and report it
 *     back, without replacing ours;
 *   - SIGURG is never blocked: it is taken out of every mask the program
 *     sets (sigprocmask, pthread_sigmask, sigsuspend, and the masks of
 *     ppoll/pselect/epoll_pwait), and out of the sets sigtimedwait and
 *     sigwaitinfo wait for, so that it cannot be swallowed. The program still
 *     sees SIGURG blocked when it asked (the per-thread bit below).
 * Why SIGURG: its default action is to ignore it, so a wake-up that reaches
 * a process without the shim (or one that raced with an exec) does nothing.
 */
#include <string.h>
#include "shim.h"

static struct sigaction app_urg; /* what the program asked for SIGURG */
static __thread bool app_blocked; /* the program blocked SIGURG here */

static void on_urg(int sig, siginfo_t *si, void *uc)
{
	int e = errno;
	struct sigaction a;

	if (si && si->si_code == SI_QUEUE && si->si_value.sival_int == HM_VWAKE_MAGIC) {
		hm_vw_on_wake();
		errno = e;
		return;
	}
	a = app_urg;
	errno = e;
	if (a.sa_flags & SA_SIGINFO) {
		if (a.sa_sigaction)
			a.sa_sigaction(sig, si, uc);
	} else if (a.sa_handler != SIG_DFL && a.sa_handler != SIG_IGN) {
		if (a.sa_flags & SA_RESETHAND)
			app_urg.sa_handler = SIG_DFL;
		a.sa_handler(sig);
	}
}

void hm_signals_init(void)
{
	struct sigaction sa, old;
	sigset_t urg;

	if (!hm.vc || !hm.real.sigaction)
		return;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_urg;
	sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	/* The program's disposition from before the shim (an exec keeps only
	 * "ignore"), then ours. */
	if (hm.real.sigaction(SIGURG, &sa, &old) == 0 && old.sa_handler == SIG_IGN)
		app_urg.sa_handler = SIG_IGN;
	/* posix_spawn attributes may have given us a mask with SIGURG in it. */
	sigemptyset(&urg);
	sigaddset(&urg, SIGURG);
	hm_sys6(SYS_rt_sigprocmask, SIG_UNBLOCK, (long)&urg, 0, 8, 0, 0);
}

/* A copy of set without SIGURG, when it holds it; else set itself. */
const sigset_t *hm_sig_strip(const sigset_t *set, sigset_t *buf)
{
	if (!hm.vc || !set || !sigismember(set, SIGURG))
		return set;
	*buf = *set;
	sigdelset(buf, SIGURG);
	return buf;
}

HM_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	hm_ready();
	if (sig != SIGURG || !hm.vc) {
		if (!hm.real.sigaction)
			return hm_sys_errno(-ENOSYS);
		return hm.real.sigaction(sig, act, old);
	}
	if (old)
		*old = app_urg;
	if (act)
		app_urg = *act;
	return 0;
}

HM_EXPORT int __sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	return sigaction(sig, act, old);
}

HM_EXPORT sighandler_t signal(int sig, sighandler_t h)
{
	struct sigaction a, old;

	hm_ready();
	if (sig != SIGURG || !hm.vc)
		return hm.real.signal(sig, h);
	memset(&a, 0, sizeof(a));
	a.sa_handler = h;
	a.sa_flags = SA_RESTART;
	sigaction(sig, &a, &old);
	return old.sa_handler;
}

HM_EXPORT sighandler_t bsd_signal(int sig, sighandler_t h)
{
	return signal(sig, h);
}

static int mask_call(int (*real)(int, const sigset_t *, sigset_t *), int how, const sigset_t *set,
		     sigset_t *old)
{
	sigset_t buf;
	bool was = app_blocked;
	int r;

	r = real(how, hm_sig_strip(set, &buf), old);
	if (r != 0 || !hm.vc)
		return r;
	if (old && was)
		sigaddset(old, SIGURG);
	if (set) {
		if (how == SIG_SETMASK)
			app_blocked = sigismember(set, SIGURG);
		else if (sigismember(set, SIGURG))
			app_blocked = how == SIG_BLOCK;
	}
	return r;
}

HM_EXPORT int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	hm_ready();
	return mask_call(hm.real.sigprocmask, how, set, old);
}

HM_EXPORT int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	hm_ready();
	return mask_call(hm.real.pthread_sigmask, how, set, old);
}

HM_EXPORT int sigsuspend(const sigset_t *mask)
{
	sigset_t buf;

	hm_ready();
	if (hm.clock)
		hm_clock_waited();
	return hm.real.sigsuspend(hm_sig_strip(mask, &buf));
}

HM_EXPORT int sigwaitinfo(const sigset_t *set, siginfo_t *info)
{
	sigset_t buf;

	hm_ready();
	if (hm.clock)
		hm_clock_waited();
	return hm.real.sigwaitinfo(hm_sig_strip(set, &buf), info);
}

HM_EXPORT int sigwait(const sigset_t *set, int *sig)
{
	sigset_t buf;

	hm_ready();
	if (hm.clock)
		hm_clock_waited();
	return hm.real.sigwait(hm_sig_strip(set, &buf), sig);
}
