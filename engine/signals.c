// SPDX-License-Identifier: MIT
/*
 * The signals of a run (enroll, replay): SIGINT, SIGTERM, SIGHUP, SIGQUIT.
 *
 * A CI runner cancels a job with one of them whenever it likes: before the
 * daemon answered, while the run is confined, before CMD's exec, while CMD
 * runs. From the start of the run's set-up they are blocked and read from
 * one signalfd, which every wait of enroll watches (the daemon's answer to
 * RUN_CREATE, CMD's exec, the run's cgroup emptying, a daemon that went
 * away) and which enroll_run reads after each step of set-up, so none is
 * left pending behind a wait that does not look.
 *
 * What a signal means depends only on whether CMD runs:
 *  - while CMD runs it is CMD's: forwarded to it (a terminal's ^C, si_code
 *    SI_KERNEL, already reached the whole foreground process group), and
 *    enroll exits with CMD's status, 128+N when CMD dies of it;
 *  - at any other moment it cancels the run: a child not yet at its exec
 *    is killed, the rest of set-up is skipped, a wait for stragglers or for
 *    the daemon is cut short, and the run ends through the same unwind as
 *    any other (the cgroup emptied, RUN_END, the clock page and the
 *    boundary's root let go); enroll exits with 128+N.
 * A signal that whoever started hermetic had ignored (nohup's SIGHUP, a
 * background job's SIGINT) stays ignored, by enroll and by CMD.
 */
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include "util.h"
#include "engine.h"
#include "signals.h"
#include "raw_syscall.h"

static const int cancelling[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };

int run_signals_arm(struct run_signals *s, struct eng_error *err)
{
	struct sigaction sa;
	sigset_t mask;

	if (s->armed)
		return 0;
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD); /* wakes the waits when the child ends */
	for (size_t i = 0; i < ARRAY_SIZE(cancelling); i++) {
		if (sigaction(cancelling[i], NULL, &sa) < 0)
			return eng_fail(err, errno, "sigaction: %s", strerror(errno));
		if (sa.sa_handler != SIG_IGN)
			sigaddset(&mask, cancelling[i]);
	}
	if (sigprocmask(SIG_BLOCK, &mask, &s->oldmask) < 0)
		return eng_fail(err, errno, "sigprocmask: %s", strerror(errno));
	s->fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (s->fd < 0)
		return eng_fail(err, errno, "signalfd: %s", strerror(errno));
	s->cancel = 0;
	s->armed = true;
	return 0;
}

/* CMD runs: it reached its exec and has not exited. One that exited but is
 * not reaped yet (WNOWAIT leaves it to enroll's reap) no longer runs: a
 * signal then is not forwarded to a zombie but cancels. */
static bool cmd_running(const struct run_child *c)
{
	siginfo_t si = { 0 };

	if (!c->cmd_started || c->done)
		return false;
	return waitid(P_PID, (id_t)c->pid, &si, WEXITED | WNOHANG | WNOWAIT | __WALL) < 0 ||
	       si.si_pid != c->pid;
}

bool run_signals_take(struct run_signals *s, const struct run_child *c)
{
	struct signalfd_siginfo si;

	if (!s->armed)
		return false;
	/* A raw read (errno untouched, as the rest is on this path while no
	 * signal came and CMD has not started): launch.c calls this while
	 * enroll's child still runs libc code on enroll's memory, errno
	 * included (clone_vm.c), and the read ends with EAGAIN every time. */
	while (raw_syscall(SYS_read, s->fd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGCHLD)
			continue;
		if (!s->cancel && cmd_running(c)) {
			/* CMD's to handle; enroll waits for it as ever. */
			if (si.ssi_code != SI_KERNEL)
				(void)kill(c->pid, (int)si.ssi_signo);
			continue;
		}
		if (!s->cancel)
			s->cancel = (int)si.ssi_signo;
	}
	/* A child between its birth and CMD's exec goes at once (SIGKILL: it
	 * may be in the daemon's adoption or the supervisor's answer, and a
	 * signal it inherited as ignored would not end it). It is ours and
	 * not reaped, so the pid is still the child's. */
	if (s->cancel && c->pid > 0 && !c->cmd_started && !c->done)
		(void)kill(c->pid, SIGKILL);
	return s->cancel != 0;
}

int run_signals_wait(struct run_signals *s, const struct run_child *c, int fd, short events,
		     int timeout_ms)
{
	uint64_t deadline = timeout_ms >= 0 ? hm_now_ns() + (uint64_t)timeout_ms * 1000000ULL : 0;

	for (;;) {
		struct pollfd p[2] = {
			{ .fd = s->armed ? s->fd : -1, .events = POLLIN },
			{ .fd = fd, .events = events },
		};
		int ms = -1;

		if (run_signals_take(s, c))
			return -ECANCELED;
		if (timeout_ms >= 0) {
			uint64_t now = hm_now_ns();

			if (now >= deadline)
				return 0;
			ms = (int)((deadline - now + 999999) / 1000000);
		}
		if (poll(p, 2, ms) < 0 && errno != EINTR)
			return -errno;
		if (p[1].revents)
			return 1;
	}
}
