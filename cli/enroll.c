// SPDX-License-Identifier: MIT
/*
 * hermetic enroll [OPTIONS] [--] CMD [ARGS...]
 *
 * Asks hermeticd for a run, starts CMD inside the run's cgroup before its
 * first instruction, forwards signals, waits until the cgroup is provably
 * empty, reports refusals and exits with CMD's status.
 */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <inttypes.h>
#include <linux/sched.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include "util.h"
#include "config.h"
#include "cli.h"
#include "isolate.h"
#include "enroll.h"
#include "phases.h"
#include "record.h"

#define KILL_WAIT_MS 5000
#define REAP_WAIT_MS 1000
#define CANCEL_WAIT_MS 100 /* for the daemon, once the run is cancelled */

/* The shim next to this binary (build tree), in ../lib/hermetic (installed
 * anywhere), or in the directory it was built for (HERMETIC_SHIMDIR, the
 * multiarch one of the Debian package). All are paths in the filesystem
 * this process sees: inside a container, the container's. */
int enroll_find_lib(const char *name, char *buf, size_t size)
{
	const char *rel[] = { "", "../lib/hermetic/", HERMETIC_SHIMDIR "/" };
	char exe[4096], *slash;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return -errno;
	exe[n] = 0;
	slash = strrchr(exe, '/');
	if (!slash)
		return -ENOENT;
	*slash = 0;
	for (size_t i = 0; i < ARRAY_SIZE(rel); i++) {
		char path[4096 + 256];

		snprintf(path, sizeof(path), "%s%s%s%s", rel[i][0] == '/' ? "" : exe,
			 rel[i][0] == '/' ? "" : "/", rel[i], name);
		if (access(path, R_OK) == 0 && realpath(path, buf) && strlen(buf) < size)
			return 0;
	}
	return -ENOENT;
}

static int find_shim(char *buf, size_t size)
{
	return enroll_find_lib("libhermetic-preload.so", buf, size);
}

static void export_env(struct enroll *e)
{
	char shim[4096], v[64];
	const char *old;
	int r;

	/* The seed is in the clock page (vclock.c), which /proc/PID/environ
	 * does not show to other processes of the user. */
	r = hm_config_export(&e->cfg, !e->clock.vc);
	if (r < 0)
		die(EXIT_INTERNAL, "Failed to set the environment: %s", strerror(-r));
	/* The run's real start, and the file-time shift that follows from it
	 * (or from the recorded run's start, for replay). */
	{
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		e->started_ns = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
	}
	snprintf(v, sizeof(v), "%" PRId64,
		 hm_fs_shift_s(e->fs_start_ns ? e->fs_start_ns : e->started_ns, e->cfg.now_ns));
	setenv(HM_ENV_FS_SHIFT, v, 1);
	if (e->no_daemon)
		snprintf(v, sizeof(v), "none");
	else
		snprintf(v, sizeof(v), "%" PRIu64, e->run.run_id);
	setenv(HM_ENV_RUN, v, 1);
	setenv(HM_ENV_LINEAGE, "1", 1);
	unsetenv(HM_ENV_IMAGE);
	/* --fs isolate: the password database's home follows HOME (passwd.c) */
	if (e->bnd.opt.fs == HM_FS_ISOLATE && (old = getenv("HOME")) && *old)
		setenv(HM_ENV_HOME, old, 1);
	else
		unsetenv(HM_ENV_HOME);
	if (e->clock.vc)
		setenv(HM_ENV_CLOCK_FD, e->clock.page_env, 1);
	else
		unsetenv(HM_ENV_CLOCK_FD);
	if (e->dns_allow[0])
		setenv(HM_ENV_DNS_ALLOW, e->dns_allow, 1);
	else
		unsetenv(HM_ENV_DNS_ALLOW);
	/* Record and replay directories come only from this run. */
	unsetenv(HM_ENV_RECORD);
	unsetenv(HM_ENV_REPLAY);
	unsetenv(HM_ENV_REPLAY_STRICT);
	unsetenv(HM_ENV_REPLAY_REPORT);
	if (e->rec)
		record_export_env(e);
	for (size_t i = 0; i < e->n_extra_env; i++)
		setenv(e->extra_env[i][0], e->extra_env[i][1], 1);
	if (find_shim(shim, sizeof(shim)) < 0) {
		if (e->cfg.clock_virtual || e->cfg.rng)
			die(EXIT_INTERNAL,
			    "cannot find libhermetic-preload.so next to %s, in ../lib/hermetic or\n"
			    "  in " HERMETIC_SHIMDIR "; reinstall hermetic, or pass --clock off\n"
			    "  --rng off to run without it",
			    program_name);
		return;
	}
	setenv(HM_ENV_PRELOAD, shim, 1);
	old = getenv("LD_PRELOAD");
	if (old && *old) {
		_cleanup_free_ char *both = NULL;

		if (asprintf(&both, "%s:%s", shim, old) < 0)
			die(EXIT_INTERNAL, "out of memory");
		setenv("LD_PRELOAD", both, 1);
	} else {
		setenv("LD_PRELOAD", shim, 1);
	}
}

/* Ask for the run. -ECANCELED: a signal came before the daemon answered
 * (enroll_signals.c); the connection closes unanswered and the daemon ends
 * what it made for it, as it ends every closed connection's runs. */
static int create_run(struct enroll *e)
{
	struct {
		struct hm_run_create c;
		struct hm_allow a[HM_RUN_MAX_ALLOW];
		struct hm_allow_name names[HM_RUN_MAX_NAMES];
	} req = {};
	size_t len;
	const char *msg = NULL;
	int fds[HM_MSG_MAX_FDS];
	ssize_t n;
	int sent;

	req.c.flags = 0;
	if (e->cfg.network == HM_NETWORK_BLOCK || e->cfg.network == HM_NETWORK_AUDIT)
		req.c.flags |= HM_RUN_NET_ENFORCE;
	if (e->cfg.network == HM_NETWORK_AUDIT)
		req.c.flags |= HM_RUN_NET_AUDIT;
	if (e->cfg.loopback)
		req.c.flags |= HM_RUN_NET_LOOPBACK;
	if (e->cfg.unix_sockets)
		req.c.flags |= HM_RUN_NET_UNIX;
	if (e->record)
		req.c.flags |= HM_RUN_RECORD;
	if (e->unconfined)
		req.c.flags |= HM_RUN_UNCONFINED;
	if (e->cfg.clock_virtual)
		req.c.flags |= HM_RUN_CLOCK;
	if (e->connlog_path)
		req.c.flags |= HM_RUN_CONNLOG;
	/* A journal keeps the kernel's whole view, as it always has. */
	if (e->audit_syscalls || e->record)
		req.c.flags |= HM_RUN_AUDIT_SYSCALLS;
	req.c.n_allow = e->n_allow;
	memcpy(req.a, e->allow, e->n_allow * sizeof(struct hm_allow));
	/* The names follow the allow entries that are there, in the payload. */
	len = sizeof(req.c) + e->n_allow * sizeof(struct hm_allow);
	memcpy((char *)&req + len, e->names, e->n_names * sizeof(struct hm_allow_name));
	len += e->n_names * sizeof(struct hm_allow_name);
	snprintf(req.c.label, sizeof(req.c.label), "%s", e->argv[0]);
	e->sock = cli_connect();
	sent = cli_send_req(e->sock, HM_REQ_RUN_CREATE, &req, len, -1);
	if (enroll_signals_wait(e, e->sock, POLLIN, -1) == -ECANCELED) {
		close(e->sock);
		e->sock = -1;
		return -ECANCELED;
	}
	n = cli_recv_rep(e->sock, sent, HM_REP_RUN, &e->run, sizeof(e->run), true, fds, &msg);
	if (n == -EPERM)
		die(EXIT_NESTED, "cannot enroll: %s", msg);
	e->fail_reason = "refused";
	if (n < 0)
		die(EXIT_INTERNAL, "hermeticd refused the run: %s", msg);
	e->fail_reason = NULL;
	e->cgroup_fd = fds[0];
	e->clock.page_fd = fds[1]; /* HM_RUN_CLOCK: the clock page (engine/vclock.c) */
	if (e->cgroup_fd < 0)
		die(EXIT_INTERNAL, "hermeticd sent no cgroup descriptor");
	e->run.cgroup_path[sizeof(e->run.cgroup_path) - 1] = 0;
	e->events_fd = openat(e->cgroup_fd, "cgroup.events", O_RDONLY | O_CLOEXEC);
	if (e->events_fd < 0)
		die(EXIT_INTERNAL, "Failed to open '%s/cgroup.events': %s", e->run.cgroup_path,
		    strerror(errno));
	return 0;
}

/* A request about the run (RUN_KILL, RUN_END), answered HM_REP_OK; what
 * names it in a warning. Once the run is cancelled the daemon has
 * CANCEL_WAIT_MS to answer: one that does not (stopped, swamped) ends the
 * run when it sees the connection close, with the same hmd_runs_end as
 * RUN_END (daemon/server.c), and enroll hangs up rather than wait. */
static void run_request(struct enroll *e, uint16_t type, const void *req, uint32_t len,
			const char *what)
{
	struct pollfd p = { .fd = e->sock, .events = POLLIN };
	const char *msg = NULL;
	int sent = cli_send_req(e->sock, type, req, len, -1);

	if (e->sig.cancel && e->sock >= 0 && poll(&p, 1, CANCEL_WAIT_MS) == 0) {
		close(e->sock);
		e->sock = -1;
		return;
	}
	if (cli_recv_rep(e->sock, sent, HM_REP_OK, NULL, 0, false, NULL, &msg) < 0)
		warnx_("%s: %s", what, msg);
}

static int status_code(int st)
{
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return EXIT_INTERNAL;
}

/* Reap every child that has exited (we are a subreaper: orphans of the
 * run come back to us). */
/* Reap what has exited (and take a tracee's stops, supervise.c); 0: some
 * child is left, running; -1: none is (ECHILD). */
static int reap(struct enroll *e)
{
	int st;
	pid_t p;

	while ((p = waitpid(-1, &st, WNOHANG | __WALL)) > 0) {
		if (supervise_stopped(&e->sv, p, st))
			continue; /* a tracee's stop (supervise.c) */
		if (p == e->child) {
			e->child_status = st;
			e->child_done = true;
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
 * enroll_signals.c), the cgroup emptying, or timeout. */
static void wait_events(struct enroll *e, int timeout_ms)
{
	struct pollfd pfd[4 + 16] = {
		{ .fd = e->sig.fd, .events = POLLIN },
		{ .fd = e->no_daemon ? -1 : e->events_fd, .events = POLLPRI },
		{ .fd = enroll_daemon_pollfd(e), .events = POLLIN },
		{ .fd = supervise_listener_fd(&e->sv), .events = POLLIN },
	};
	/* the epoll sets of supervised processes' pending waits */
	int npfd = 4 + supervise_wait_pollfds(&e->sv, pfd + 4, 16);
	bool was_done = e->child_done;

	/* Before sleeping: exits and tracee stops whose SIGCHLD an earlier
	 * wait already read from the signalfd (wait_exec reads every signal,
	 * and a supervised command stops at its exec meanwhile) would
	 * otherwise wake nothing, and a tracee would wait for us for ever. */
	(void)reap(e);
	if (e->child_done != was_done)
		return;
	if (poll(pfd, npfd,
		 supervise_wait_timeout(&e->sv, enroll_daemon_timeout(e, connlog_timeout(e, timeout_ms)))) <
		    0 &&
	    errno != EINTR)
		die(EXIT_INTERNAL, "poll: %s", strerror(errno));
	supervise_wait_tick(&e->sv);
	connlog_tick(e);
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
	(void)enroll_signals_take(e);
	reap(e);
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
			(void)enroll_signals_take(e);
}

int enroll_status_code(int st)
{
	return status_code(st);
}

/* Set-up, step by step until CMD runs. A signal that cancels the run
 * (enroll_signals.c) is seen in the waits inside the steps and read after
 * them; what is left of set-up is then skipped, and the run ends as any
 * other does. */
static void run_start(struct enroll *e)
{
	struct eng_error err;

	if (enroll_signals_take(e))
		return;
	if (e->no_daemon)
		warnx_("--no-daemon: running shim-only; the kernel does NOT refuse this run's\n"
		       "  network traffic, and static binaries and raw syscalls are not seen");
	else if (create_run(e) < 0)
		return;
	else
		enroll_sched_start(e);
	cli_phase("create");
	/* From here on the run exists: a daemon that goes away must not take
	 * this process (and the command's exit status) with it. */
	cli_soft_errors = true;
	if (run_clock_setup(&e->clock, e->no_daemon || !e->cfg.clock_virtual, &e->cfg, &err) < 0)
		die(EXIT_INTERNAL, "%s", err.msg);
	if (boundary_setup(&e->bnd, e->argv, &err) < 0)
		die(err.code == EINVAL ? EXIT_USAGE : EXIT_INTERNAL, "%s", err.msg);
	export_env(e);
	enroll_print_boundary(e);
	cli_phase("setup");
	if (!e->cfg.seed_set && !e->quiet_seed) {
		char now[64];

		hm_format_time(e->cfg.now_ns, now, sizeof(now));
		warnx_("seed %" PRIu64 ", now %s from %s (pass --seed %" PRIu64 " to repeat)",
		       e->cfg.seed, now, now_source_name(e->now_src), e->cfg.seed);
	}
	if (enroll_signals_take(e))
		return;
	if (boundary_enter(&e->bnd, &err) < 0)
		die(EXIT_INTERNAL, "%s", err.msg);
	if (e->rec)
		record_before_spawn(e);
	if (e->before_spawn)
		e->before_spawn(e, e->userdata);
	e->started_mono = hm_now_ns();
	enroll_launch(e);
	e->bnd.started = e->child > 0;
	boundary_leave(&e->bnd);
	cli_phase("launch");
}

/* Until CMD ends, then until the run's cgroup is empty: its stragglers get
 * the grace period (a cancelling signal cuts it short), then are killed
 * or, with --stragglers keep, left running. Returns whether they were. */
static bool run_wait(struct enroll *e)
{
	bool keep, kept = false;
	uint64_t deadline;
	char list[1024];

	while (e->child > 0 && !e->child_done)
		wait_events(e, -1);
	cli_phase("command");
	deadline = hm_now_ns() + e->grace_ns;
	/* (a run whose state cannot be read is waited for, and killed, as a
	 * full one: only 0 is empty) */
	while (!e->sig.cancel && run_populated(e) != 0 && hm_now_ns() < deadline)
		wait_events(e, (int)((deadline - hm_now_ns()) / 1000000 + 1));
	/* A cancelled run keeps nothing running. */
	keep = e->bnd.opt.stragglers == HM_STRAGGLERS_KEEP && !e->sig.cancel;
	if (run_populated(e) != 0 && keep) {
		/* --stragglers keep: they run on, and so does their root. */
		int n = stragglers(e, false, list, sizeof(list));

		kept = run_populated(e) != 0;
		if (kept)
			warnx_("left %d process%s running that outlived the command by %.1fs "
			       "(--stragglers keep): %s",
			       n, n == 1 ? "" : "es", e->grace_ns / 1e9, list);
	} else if (run_populated(e) != 0) {
		int n = stragglers(e, true, list, sizeof(list));

		if (n && e->sig.cancel)
			warnx_("killed %d process%s of the cancelled run: %s", n, n == 1 ? "" : "es",
			       list);
		else if (n)
			warnx_("killed %d straggler%s that outlived the command by %.1fs: %s", n,
			       n == 1 ? "" : "s", e->grace_ns / 1e9, list);
		e->killed = n;
		deadline = hm_now_ns() +
			   (e->sig.cancel ? CANCEL_WAIT_MS : KILL_WAIT_MS) * 1000000ULL;
		while (run_populated(e) != 0 && hm_now_ns() < deadline)
			wait_events(e, 50);
		if (run_populated(e) > 0)
			warnx_("processes of run %" PRIu64 " survived SIGKILL; hermeticd removes the "
			       "run when they are gone",
			       e->run.run_id);
	}
	cli_phase("settle");
	return kept;
}

/* The run is over: the daemon's report of it, its journal, its clock page,
 * its end in the daemon. A cancelled run reports nothing and keeps no
 * journal: it only ends. */
static void run_report(struct enroll *e, int code, bool have_run, bool kept)
{
	/* A daemon that went away during the run: wait for the next one. */
	bool daemon = have_run && !e->sig.cancel && enroll_daemon_wait(e);
	struct enroll_opt note = { 0 };

	if (daemon) {
		enroll_print_refusals(e);
		enroll_fetch_audit(e);
		enroll_print_audit(e);
	}
	cli_phase("audit");
	connlog_finish(e, daemon);
	run_clock_read_dns(&e->clock);
	if (e->rec && !e->sig.cancel)
		record_prepare(e, code);
	enroll_daemon_note(e, &note);
	/* The journal goes to the store before the run ends; it carries the
	 * restart as a note among its options. */
	if (e->rec && !e->sig.cancel) {
		bool noted = note.name && e->n_opts < ENROLL_MAX_OPTS;

		if (noted)
			e->opts[e->n_opts++] = note;
		record_finish(e, code);
		if (noted)
			e->n_opts--; /* not an option to repeat */
	}
	if (note.name && e->daemon_restarted)
		warnx_("note: %s (the run was without a daemon for %.1f s; its network stayed "
		       "refused)",
		       e->restart_note, e->daemon_away_ns / 1e9);
	else if (note.name)
		warnx_("note: %s", e->restart_note);
	run_clock_read_lag(&e->clock, &e->cfg);
	/* Done with the page: let it go before the run ends, so that the
	 * last reference to its file (and the kernel's truncation of its
	 * pages) is not ours to wait for. */
	run_clock_finish(&e->clock, &e->cfg);
	cli_phase("journal+clock");
	struct hm_run_end end = { .run_id = e->run.run_id, .flags = kept ? HM_END_KEEP : 0 };
	const char *msg = NULL;

	/* (a daemon that went away since is waited for and asked again) */
	if (daemon && !e->daemon_given_up &&
	    enroll_daemon_call(e, HM_REQ_RUN_END, &end, sizeof(end), HM_REP_OK, NULL, 0, false,
			       NULL, &msg) < 0)
		warnx_("hermeticd could not end the run: %s", msg);
	else if (!daemon && have_run && e->sig.cancel && e->sock >= 0)
		run_request(e, HM_REQ_RUN_END, &end, sizeof(end), "hermeticd could not end the run");
	cli_phase("end");
}

/* What enroll says last about a run that failed or was cancelled. */
static void run_verdict(struct enroll *e, int code)
{
	if (e->sig.cancel)
		warnx_("run cancelled by SIG%s %s; exit status %d", sigabbrev_np(e->sig.cancel),
		       e->cmd_started ? "after the command ended" : "before the command started",
		       code);
	else if (e->quiet_repro)
		return;
	else if (code == EXIT_NESTED && e->clock.nested_refused)
		warnx_("command exited with status %d: a hermetic enroll inside the run refused to\n"
		       "  start (a run holds no other run; run its command directly)",
		       code);
	else if (code != 0)
		warnx_("command exited with status %d; reproduce with:\n  %s", code,
		       e->repro ? e->repro : "(out of memory)");
}

int enroll_run(struct enroll *e)
{
	const char *inside = getenv(HM_ENV_RUN);
	bool kept = false, empty = true, have_run;
	int code, populated;

	if (inside && *inside)
		run_clock_mark_nested();
	if (inside && *inside)
		die(EXIT_NESTED,
		    "cannot enroll: this process is already inside hermetic run %s (one run's\n"
		    "  processes belong to one policy; run the command directly)",
		    inside);
	e->sock = e->cgroup_fd = e->events_fd = -1;
	e->child = -1;
	enroll_signals_arm(e);
	run_clock_init(&e->clock);
	enroll_json_open(e);
	connlog_open(e);
	if (e->record)
		record_setup(e);
	/* Orphans of the run (daemonized grandchildren) are reparented to us,
	 * so we reap them and can name them. */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
		die(EXIT_INTERNAL, "prctl(PR_SET_CHILD_SUBREAPER): %s", strerror(errno));
	(void)signal(SIGPIPE, SIG_IGN);

	run_start(e);
	/* A run cancelled before the daemon answered has nothing to end. */
	have_run = e->no_daemon || e->cgroup_fd >= 0;
	if (have_run)
		kept = run_wait(e);
	code = e->sig.cancel ? 128 + e->sig.cancel : status_code(e->child_status);
	reap(e);
	/* Only a provably empty run lets its root go. */
	if (have_run) {
		populated = kept ? 1 : run_populated(e);
		if (populated < 0)
			warnx_("cannot tell whether run %" PRIu64 " is empty (its cgroup.events: %s): "
			       "taken as not empty",
			       e->run.run_id, strerror(-populated));
		empty = populated == 0;
	}
	if (empty)
		reap_dying(e);
	if (e->sv.prepared)
		supervise_finish(&e->sv);
	cli_phase("reap");
	e->wall_ns = e->started_mono ? hm_now_ns() - e->started_mono : 0;
	run_report(e, code, have_run, kept);
	boundary_finish(&e->bnd, empty);
	if (e->rec)
		record_cleanup(e);
	cli_phase("teardown");
	enroll_build_repro(e);
	run_verdict(e, code);
	enroll_json_write(e, code);
	cli_phases_print();
	return code;
}

int cmd_enroll(int argc, char **argv)
{
	static struct enroll e;

	program_name = "hermetic";
	run_clock_mark_start(); /* the file-time line B, first (engine/vclock.c) */
	cli_phase(NULL);
	enroll_parse(&e, argc, argv, "hermetic enroll");
	cli_phase("parse");
	return enroll_run(&e);
}
