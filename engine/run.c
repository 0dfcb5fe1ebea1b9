// SPDX-License-Identifier: MIT
/*
 * A run's life in the engine after its launch: wait while CMD runs, then
 * for its stragglers, killing or keeping them (run_wait); reap what is
 * left and tell whether the run is provably empty (run_settle); end it in
 * hermeticd (run_end). The verb sequences the steps (run.h), reports and
 * decides exit statuses; here nothing exits or prints: a failure is -errno
 * with err filled, a warning goes to eng_warn().
 */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <inttypes.h>
#include <sys/wait.h>
#include "util.h"
#include "config.h"
#include "engine.h"
#include "cli.h"
#include "enroll.h"
#include "phases.h"
#include "run.h"

#define KILL_WAIT_MS 5000
#define REAP_WAIT_MS 1000
#define CANCEL_WAIT_MS 100 /* for the daemon, once the run is cancelled */

/* A request about the run (RUN_KILL, RUN_END), answered HM_REP_OK; what
 * names it in a warning. Once the run is cancelled the daemon has
 * CANCEL_WAIT_MS to answer: one that does not (stopped, swamped) ends the
 * run when it sees the connection close, with the same hmd_runs_end as
 * RUN_END (daemon/server.c), and enroll hangs up rather than wait. */
static void run_request(struct enroll *e, uint16_t type, const void *req, uint32_t len,
			const char *what)
{
	struct pollfd p = { .fd = e->conn.sock, .events = POLLIN };
	const char *msg = NULL;
	int sent = client_send(&e->conn, type, req, len, -1);

	if (e->sig.cancel && e->conn.sock >= 0 && poll(&p, 1, CANCEL_WAIT_MS) == 0) {
		close(e->conn.sock);
		e->conn.sock = -1;
		return;
	}
	if (client_recv(&e->conn, sent, HM_REP_OK, NULL, 0, false, NULL, &msg) < 0)
		eng_warn("%s: %s", what, msg);
}

int run_status_code(int st)
{
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return EXIT_INTERNAL;
}

/* Reap what has exited (and take a tracee's stops, supervise.c); 0: some
 * child is left, running; -1: none is (ECHILD). */
static int reap(struct enroll *e)
{
	int st;
	pid_t p;

	while ((p = waitpid(-1, &st, WNOHANG | __WALL)) > 0) {
		if (supervise_stopped(&e->sv, p, st))
			continue; /* a tracee's stop (supervise.c) */
		if (p == e->child.pid) {
			e->child.status = st;
			e->child.done = true;
			/* (launch.c frees it sooner, where it can) */
			clone_vm_stack_free(&e->child.stack);
		}
	}
	return p;
}

/* Read cgroup.events through the descriptor poll watches: kernfs reports
 * POLLPRI from every change until that descriptor reads the file again, so
 * a change that is never read back would make each poll return at once.
 * Its line "populated N", matched at a line's start: 1 or 0; -errno when
 * the file cannot be read, -EBADMSG without such a line. An error is never
 * "empty": only 0 lets the run (and its root) go. */
static int events_populated(struct enroll *e)
{
	char buf[256];
	ssize_t n = pread(e->events_fd, buf, sizeof(buf) - 1, 0);

	if (n < 0)
		return -errno;
	buf[n] = 0;
	return hm_cgroup_events_populated(buf);
}

/* 1: the run has processes; 0: it has none; -errno: not known (not empty). */
static int run_populated(struct enroll *e)
{
	/* No cgroup: our children (orphans come back to us) are the run;
	 * reap those that exited until one is still running or none is left. */
	if (e->no_daemon)
		return reap(e) == 0;
	return events_populated(e);
}

/* Wait for an event: a signal (forwarded to CMD, or cancelling the run:
 * signals.c), the cgroup emptying, or timeout. -errno with err filled when
 * poll fails or --connections runs out of memory. */
static int wait_events(struct enroll *e, int timeout_ms, struct eng_error *err)
{
	struct pollfd pfd[4 + 16] = {
		{ .fd = e->sig.fd, .events = POLLIN },
		{ .fd = e->no_daemon ? -1 : e->events_fd, .events = POLLPRI },
		{ .fd = enroll_daemon_pollfd(e), .events = POLLIN },
		{ .fd = supervise_listener_fd(&e->sv), .events = POLLIN },
	};
	/* the epoll sets of supervised processes' pending waits */
	int npfd = 4 + supervise_wait_pollfds(&e->sv, pfd + 4, 16);
	bool was_done = e->child.done;

	/* Before sleeping: exits and tracee stops whose SIGCHLD an earlier
	 * wait already read from the signalfd (wait_exec reads every signal,
	 * and a supervised command stops at its exec meanwhile) would
	 * otherwise wake nothing, and a tracee would wait for us for ever. */
	(void)reap(e);
	if (e->child.done != was_done)
		return 0;
	if (poll(pfd, npfd,
		 supervise_wait_timeout(&e->sv, enroll_daemon_timeout(e, connlog_timeout(e, timeout_ms)))) <
		    0 &&
	    errno != EINTR)
		return eng_fail(err, errno, "poll: %s", strerror(errno));
	supervise_wait_tick(&e->sv);
	if (connlog_tick(e) < 0)
		return eng_fail(err, ENOMEM, "out of memory");
	if (pfd[3].revents & POLLIN)
		supervise_notify(&e->sv);
	else if (pfd[3].revents)
		supervise_gone(&e->sv); /* no process has the filter any more */
	if (pfd[1].revents)
		(void)events_populated(e); /* acknowledge the change */
	/* The daemon went away (or is back): the run goes on either way. */
	if (pfd[2].revents)
		enroll_daemon_event(e, pfd[2].revents);
	enroll_daemon_retry(e);
	(void)run_signals_take(&e->sig, &e->child);
	(void)reap(e);
	return 0;
}

/* Name what outlived CMD in list (the first 8) and, with kill_them, kill
 * it; returns how many processes there were. */
static int stragglers(struct enroll *e, bool kill_them, char *list, size_t size)
{
	char buf[8192], path[64], *save, *tok;
	int n = 0;

	list[0] = 0;
	if (e->no_daemon) {
		/* Our remaining children (the run's orphans were reparented to us). */
		snprintf(path, sizeof(path), "/proc/%d/task/%d/children", getpid(), getpid());
		if (hm_read_file_at(AT_FDCWD, path, buf, sizeof(buf)) < 0)
			buf[0] = 0;
	} else if (hm_read_file_at(e->cgroup_fd, "cgroup.procs", buf, sizeof(buf)) < 0) {
		buf[0] = 0;
	}
	for (tok = strtok_r(buf, "\n ", &save); tok; tok = strtok_r(NULL, "\n ", &save)) {
		char comm[64] = "?";
		size_t used = strlen(list);

		snprintf(path, sizeof(path), "/proc/%s/comm", tok);
		if (hm_read_file_at(AT_FDCWD, path, comm, sizeof(comm)) > 0)
			comm[strcspn(comm, "\n")] = 0;
		if (n < 8 && used + 100 < size)
			snprintf(list + used, size - used, "%s%s (%s)", n ? ", " : "", tok, comm);
		else if (n == 8 && used + 8 < size)
			snprintf(list + used, size - used, ", ...");
		if (kill_them && e->no_daemon)
			kill(atoi(tok), SIGKILL);
		n++;
	}
	if (kill_them && !e->no_daemon) {
		struct hm_run_ref ref = { .run_id = e->run.run_id };

		run_request(e, HM_REQ_RUN_KILL, &ref, sizeof(ref), "hermeticd");
	}
	return n;
}


/* The run's cgroup is empty, but a process leaves its cgroup in do_exit
 * before it becomes a zombie: those reparented to us may not be waitable
 * yet. Reap them all (nothing else of ours is left once the run is
 * empty), so that none of the run's pids outlives enroll, within a bound:
 * a process in do_exit is gone in microseconds. */
static void reap_dying(struct enroll *e)
{
	uint64_t deadline = hm_now_ns() + REAP_WAIT_MS * 1000000ULL;
	struct pollfd pfd = { .fd = e->sig.fd, .events = POLLIN };

	while (reap(e) == 0 && hm_now_ns() < deadline) /* -1: none left */
		if (poll(&pfd, 1, 10) > 0)
			(void)run_signals_take(&e->sig, &e->child);
}


/* The stragglers, once the grace period is over: with keep, named and left
 * running (returns whether any still runs); else killed and waited for. */
static int stragglers_end(struct enroll *e, bool keep, struct eng_error *err)
{
	uint64_t deadline;
	char list[1024];
	int n, r;

	if (keep) {
		/* --stragglers keep: they run on, and so does their root. */
		n = stragglers(e, false, list, sizeof(list));
		if (run_populated(e) == 0)
			return 0;
		eng_warn("left %d process%s running that outlived the command by %.1fs "
			 "(--stragglers keep): %s",
			 n, n == 1 ? "" : "es", e->grace_ns / 1e9, list);
		return 1;
	}
	n = stragglers(e, true, list, sizeof(list));
	if (n && e->sig.cancel)
		eng_warn("killed %d process%s of the cancelled run: %s", n, n == 1 ? "" : "es", list);
	else if (n)
		eng_warn("killed %d straggler%s that outlived the command by %.1fs: %s", n,
			 n == 1 ? "" : "s", e->grace_ns / 1e9, list);
	e->end.killed = n;
	deadline = hm_now_ns() + (e->sig.cancel ? CANCEL_WAIT_MS : KILL_WAIT_MS) * 1000000ULL;
	while (run_populated(e) != 0 && hm_now_ns() < deadline)
		if ((r = wait_events(e, 50, err)) < 0)
			return r;
	if (run_populated(e) > 0)
		eng_warn("processes of run %" PRIu64 " survived SIGKILL; hermeticd removes the "
			 "run when they are gone",
			 e->run.run_id);
	return 0;
}

int run_wait(struct enroll *e, struct eng_error *err)
{
	uint64_t deadline;
	bool keep;
	int r, kept = 0;

	while (e->child.pid > 0 && !e->child.done)
		if ((r = wait_events(e, -1, err)) < 0)
			return r;
	cli_phase("command");
	deadline = hm_now_ns() + e->grace_ns;
	/* (a run whose state cannot be read is waited for, and killed, as a
	 * full one: only 0 is empty) */
	while (!e->sig.cancel && run_populated(e) != 0 && hm_now_ns() < deadline)
		if ((r = wait_events(e, (int)((deadline - hm_now_ns()) / 1000000 + 1), err)) < 0)
			return r;
	/* A cancelled run keeps nothing running. */
	keep = e->bnd.opt.stragglers == HM_STRAGGLERS_KEEP && !e->sig.cancel;
	if (run_populated(e) != 0 && (kept = stragglers_end(e, keep, err)) < 0)
		return kept;
	cli_phase("settle");
	return kept;
}

bool run_settle(struct enroll *e, bool have_run, bool kept)
{
	bool empty = true;
	int populated;

	(void)reap(e);
	/* Only a provably empty run lets its root go. */
	if (have_run) {
		populated = kept ? 1 : run_populated(e);
		if (populated < 0)
			eng_warn("cannot tell whether run %" PRIu64 " is empty (its cgroup.events: %s): "
				 "taken as not empty",
				 e->run.run_id, strerror(-populated));
		empty = populated == 0;
	}
	if (empty)
		reap_dying(e);
	if (e->sv.prepared)
		supervise_finish(&e->sv);
	cli_phase("reap");
	e->end.wall_ns = e->started_mono ? hm_now_ns() - e->started_mono : 0;
	return empty;
}

void run_end(struct enroll *e, bool daemon, bool have_run, bool kept)
{
	struct hm_run_end end = { .run_id = e->run.run_id, .flags = kept ? HM_END_KEEP : 0 };
	const char *msg = NULL;

	/* (a daemon that went away since is waited for and asked again) */
	if (daemon && !e->daemon.given_up &&
	    enroll_daemon_call(e, HM_REQ_RUN_END, &end, sizeof(end), HM_REP_OK, NULL, 0, false,
			       NULL, &msg) < 0)
		eng_warn("hermeticd could not end the run: %s", msg);
	else if (!daemon && have_run && e->sig.cancel && e->conn.sock >= 0)
		run_request(e, HM_REQ_RUN_END, &end, sizeof(end), "hermeticd could not end the run");
	cli_phase("end");
}
