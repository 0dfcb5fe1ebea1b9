// SPDX-License-Identifier: MIT
/*
 * Starting CMD inside the run before its first instruction.
 *
 * Root: clone3(CLONE_INTO_CGROUP) with the run's directory fd; the child is
 * born in the run. Others cannot (migrating needs write access to the
 * common ancestor's cgroup.procs): the child asks hermeticd to adopt it,
 * on a connection of its own, so that the daemon knows it by the kernel's
 * pidfd of that connection and not by anything we say (daemon/serve_run.c
 * checks it is our child, in no run, and that the run is ours and empty).
 * Only then is it confined (confine.c) and does it exec. Between fork and
 * exec the child makes only async-signal-safe calls.
 */
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/personality.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <linux/sched.h>
#include <linux/capability.h>
#include "util.h"
#include "cli.h"
#include "enroll.h"
#include "supervise.h"
#include "phases.h"
#include "run.h"
#include "identity.h"
#include "launch_identity.h"

/* What the child reports on its error pipe before it gives up. */
enum { LAUNCH_EXEC = 1, LAUNCH_ADOPT = 2, LAUNCH_CONFINE = 3 };
struct launch_err {
	int kind;
	int err;
	char msg[sizeof(((struct hm_error *)0)->msg)];
};

static struct sockaddr_un daemon_addr;

static void report(int fd, int kind, int err, const char *msg)
{
	struct launch_err le = { .kind = kind, .err = err };

	for (size_t i = 0; msg && msg[i] && i < sizeof(le.msg) - 1; i++)
		le.msg[i] = msg[i];
	if (write(fd, &le, sizeof(le)) < 0) {
		/* the parent will see a plain exit */
	}
}

/* In the child: ask the daemon to move us into run_id. */
static int adopt_self(uint64_t run_id, const char **ret_msg)
{
	static char buf[HM_MSG_MAX];
	struct hm_run_ref ref = { .run_id = run_id };
	struct hm_hdr *h;
	ssize_t n;
	int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0), err;

	*ret_msg = NULL;
	if (s < 0)
		return -errno;
	if (connect(s, (struct sockaddr *)&daemon_addr, sizeof(daemon_addr)) < 0 ||
	    (err = hm_send(s, HM_REQ_RUN_ADOPT, 1, &ref, sizeof(ref), -1)) < 0) {
		err = -errno;
		close(s);
		return err;
	}
	n = hm_recv(s, buf, sizeof(buf), &h, NULL);
	close(s);
	if (n < 0)
		return n;
	if (h->type == HM_REP_ERROR && (size_t)n == sizeof(struct hm_error)) {
		struct hm_error *e = (struct hm_error *)(h + 1);

		e->msg[sizeof(e->msg) - 1] = 0;
		*ret_msg = e->msg;
		return e->err > 0 ? -e->err : -EPROTO;
	}
	return h->type == HM_REP_OK ? 0 : -EPROTO;
}

/*
 * execvp(file, argv), with the search of PATH made by stat first: each
 * execve that fails on an entry of PATH without the file would be one more
 * stop in the supervisor (supervise.c sees every execve), ten on a machine
 * whose PATH starts with ten user directories. The file found is handed to
 * execvp with its directory, so what execvp does with it is unchanged (a
 * script without #! still runs under /bin/sh); found nowhere, execvp
 * searches as before and fails with the errno it always gave.
 */
static void exec_searched(const char *file, char *const argv[])
{
	const char *path = getenv("PATH"), *p, *end;
	char buf[PATH_MAX];
	struct stat st;

	if (!*file || strchr(file, '/') || !path)
		goto plain;
	for (p = path;; p = end + 1) {
		size_t len;
		int n;

		end = strchrnul(p, ':');
		len = (size_t)(end - p);
		n = len ? snprintf(buf, sizeof(buf), "%.*s/%s", (int)len, p, file)
			: snprintf(buf, sizeof(buf), "./%s", file);
		if (n > 0 && (size_t)n < sizeof(buf) && stat(buf, &st) == 0 && S_ISREG(st.st_mode) &&
		    access(buf, X_OK) == 0) {
			execvp(buf, argv);
			goto plain; /* what it says, execvp's search says too */
		}
		if (!*end)
			break;
	}
plain:
	execvp(file, argv);
}

/* --sched serial: wait until hermeticd has put this process on the run's
 * CPU at the top serial priority (daemon/chaos.c adopts a new task within a
 * tick), so that no instruction of CMD runs outside the serial schedule.
 * Only async-signal-safe calls; at most 2 s of real time. */
static int wait_serial(void)
{
	struct timespec now, until, ms = { 0, 1000000 };

	if (clock_gettime(CLOCK_MONOTONIC, &until) < 0)
		return -errno;
	until.tv_sec += 2;
	for (;;) {
		int pol = sched_getscheduler(0);

		if (pol >= 0 && (pol & ~SCHED_RESET_ON_FORK) == SCHED_FIFO)
			return 0;
		if (clock_gettime(CLOCK_MONOTONIC, &now) < 0)
			return -errno;
		if (now.tv_sec > until.tv_sec ||
		    (now.tv_sec == until.tv_sec && now.tv_nsec >= until.tv_nsec))
			return -ETIMEDOUT;
		(void)nanosleep(&ms, NULL);
	}
}

static void __attribute__((noreturn)) child_exec(struct enroll *e, const sigset_t *oldmask,
						  bool adopt, int err_fd)
{
	const char *msg;
	int err;

	sigprocmask(SIG_SETMASK, oldmask, NULL);
	signal(SIGPIPE, SIG_DFL);
	if (adopt && (err = adopt_self(e->run.run_id, &msg)) < 0) {
		report(err_fd, LAUNCH_ADOPT, -err, msg);
		_exit(EXIT_INTERNAL);
	}
	if (e->sched.mode == HM_SCHED_SERIAL && (err = wait_serial()) < 0) {
		report(err_fd, LAUNCH_CONFINE, -err, "wait for hermeticd's --sched serial priority");
		_exit(EXIT_INTERNAL);
	}
	/* No network socket made outside the run crosses into it unasked. */
	if ((err = enroll_drop_foreign_sockets(e)) < 0) {
		report(err_fd, LAUNCH_CONFINE, -err, "put /dev/null over an inherited socket");
		_exit(EXIT_INTERNAL);
	}
	/* The machine it is told of (--identity), while it may still mount. */
	if ((err = identity_child(&e->ident, &msg)) < 0) {
		report(err_fd, LAUNCH_CONFINE, -err, msg);
		_exit(EXIT_INTERNAL);
	}
	/* In the run now: its kernel backstop before the first instruction. */
	if ((err = confine_child(&e->conf, &msg)) < 0) {
		report(err_fd, LAUNCH_CONFINE, -err, msg);
		_exit(EXIT_INTERNAL);
	}
	/* The clock page is CMD's to inherit (HERMETIC_CLOCK_FD). */
	if (e->clock.page_fd >= 0 && fcntl(e->clock.page_fd, F_SETFD, 0) < 0) {
		report(err_fd, LAUNCH_EXEC, errno, NULL);
		_exit(EXIT_INTERNAL);
	}
	/* Then the supervisor's filter (supervise.c), also inherited by all. */
	if ((err = supervise_child(&e->sv)) < 0) {
		report(err_fd, LAUNCH_CONFINE, -err, "pass the supervisor its listener");
		_exit(EXIT_INTERNAL);
	}
	/* ASLR off before the first exec, inherited by the whole tree:
	 * programs mix addresses into their random state. */
	if (!e->cfg.aslr && personality(ADDR_NO_RANDOMIZE) < 0)
		/* A container's seccomp profile may refuse it (Docker's and
		 * podman's default allow only a few personalities): the run
		 * goes on, and says what it lost. */
		eng_warn("address space randomisation stays on (personality: %s, as a container's "
			 "seccomp profile refuses it): programs that mix addresses into their "
			 "random state may differ between runs",
			 strerror(errno));
	/* The last step: no file stamp of the command may fall on the
	 * before-the-run side of the line (engine/vclock.c). */
	run_clock_wait_files(&e->clock);
	exec_searched(e->bnd.exec_file, e->argv);
	err = errno;
	report(err_fd, LAUNCH_EXEC, err, NULL);
	_exit(err == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_EXEC);
}

/* Where hermeticd keeps the clock pages: the directory of our page's file,
 * as this (outside) mount namespace names it. */
static int hide_clock_dir(struct enroll *e, struct eng_error *err)
{
	char link[64], path[sizeof(e->conf.hide)];
	ssize_t n;
	char *slash;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", e->clock.page_fd);
	n = readlink(link, path, sizeof(path) - 1);
	if (n <= 0 || (size_t)n >= sizeof(path) - 1)
		return eng_fail(err, n < 0 ? errno : ENAMETOOLONG,
				"cannot confine the run: where is its clock page? (%s)",
				n < 0 ? strerror(errno) : "path too long");
	path[n] = 0;
	slash = strrchr(path, '/');
	if (path[0] != '/' || !slash || slash == path || strstr(path, " (deleted)"))
		return eng_fail(err, EINVAL, "cannot confine the run: its clock page is at '%s'",
				path);
	*slash = 0;
	snprintf(e->conf.hide, sizeof(e->conf.hide), "%s", path);
	return 0;
}

/* The supervisor needs no_new_privs (which --confine gives a non-root run)
 * or root's CAP_SYS_ADMIN for its filter, and a listener that outlives
 * every process of the run (not so with --stragglers keep). */
static bool supervise_wanted(struct enroll *e)
{
	if (e->no_supervise || (!e->cfg.clock_virtual && !e->cfg.rng))
		return false;
	if (e->bnd.opt.stragglers == HM_STRAGGLERS_KEEP) {
		eng_warn("--stragglers keep: processes without the shim (static binaries, Go) get\n"
			 "  the real clock and entropy in this run (docs/static.md)");
		return false;
	}
	if (geteuid() != 0 && (e->unconfined || e->no_daemon)) {
		eng_warn("processes without the shim (static binaries, Go) get the real clock and\n"
			 "  entropy: the supervisor needs no_new_privs, which %s leaves off",
			 e->unconfined ? "--confine off" : "--no-daemon");
		return false;
	}
	return true;
}

/* Until CMD runs (the error pipe closes at its exec) or reports a failure:
 * meanwhile the supervisor's listener arrives and its first exec is
 * answered (it waits for us). 0 with what read() of the pipe returned in
 * *ret_n, -ECANCELED when a signal cancelled the run first (the child is
 * killed: signals.c), -errno when poll fails. */
static int wait_exec(struct enroll *e, int fd, struct launch_err *le, ssize_t *ret_n)
{
	for (;;) {
		struct pollfd p[4] = {
			{ .fd = fd, .events = POLLIN },
			{ .fd = supervise_sock_fd(&e->sv), .events = POLLIN },
			{ .fd = supervise_listener_fd(&e->sv), .events = POLLIN },
			{ .fd = e->sig.fd, .events = POLLIN },
		};

		if (run_signals_take(&e->sig, &e->child))
			return -ECANCELED;
		if (poll(p, 4, -1) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (p[1].revents) {
			cli_phase("child-confined");
			supervise_recv_listener(&e->sv);
		}
		if (p[2].revents & POLLIN) {
			cli_phase("to-exec");
			supervise_notify(&e->sv);
			cli_phase("exec-answered");
		} else if (p[2].revents) {
			supervise_gone(&e->sv);
		}
		if (p[0].revents) {
			*ret_n = read(fd, le, sizeof(*le));
			return 0;
		}
	}
}

/* Before the fork: the confinement's plan, the sockets CMD must not
 * inherit, the supervisor's. */
static int launch_prepare(struct enroll *e, struct eng_error *err)
{
	char vdso[4096];
	int r;

	/* Everything the child needs is computed here, before the fork. */
	confine_prepare(&e->conf, !e->no_daemon && !e->unconfined,
			e->cfg.network == HM_NETWORK_BLOCK);
	if ((r = enroll_find_foreign_sockets(e, err)) < 0)
		return r;
	e->conf.raw_sockets = e->raw_sockets;
	if (e->conf.refuse[0])
		return eng_fail(err, EPERM, "cannot confine the run: %s", e->conf.refuse);
	if (e->conf.on && e->conf.root && !e->no_daemon && e->cfg.clock_virtual &&
	    (r = hide_clock_dir(e, err)) < 0)
		return r;
	if ((r = launch_identity_prepare(e, err)) < 0)
		return r;
	cli_phase("confine-prep");
	/* Waits are virtual where hermeticd's keeper moves the clock, unless
	 * --supervise clock keeps them real (docs/static.md). */
	r = supervise_prepare(&e->sv, supervise_wanted(e), e->cfg.seed, e->cfg.clock_virtual,
			      e->cfg.rng, e->clock.page_fd,
			      enroll_find_lib("libhermetic-vdso.so", vdso, sizeof(vdso)) == 0 ? vdso
											     : NULL,
			      e->clock.vc, !e->supervise_nowaits && !e->no_daemon, e->cfg.tick_ns, err);
	if (r < 0)
		return r;
	launch_identity_supervise(e);
	cli_phase("supervise-prep");
	return 0;
}

/* The child, in the run's cgroup (clone3) or adopted into it (fork): it
 * writes to err_fd only if it fails before CMD's exec. */
static int launch_fork(struct enroll *e, int err_fd, struct eng_error *err)
{
	const sigset_t *oldmask = &e->sig.oldmask;

	if (!e->no_daemon) {
		/* Preferred: the child is born inside the run's cgroup. This needs
		 * write access to cgroup.procs of the common ancestor (root), and
		 * both cgroups inside our cgroup namespace: in a container the
		 * run's cgroup is outside it (ENOENT), and the daemon adopts us. */
		struct clone_args args = {
			.flags = CLONE_INTO_CGROUP,
			.exit_signal = SIGCHLD,
			.cgroup = (uint64_t)e->cgroup_fd,
		};
		long pid = syscall(SYS_clone3, &args, sizeof(args));

		if (pid == 0)
			child_exec(e, oldmask, false, err_fd);
		if (pid > 0)
			e->child.pid = pid;
		else if (errno != EACCES && errno != EPERM && errno != ENOSYS && errno != EBUSY &&
			 errno != ENOENT)
			return eng_fail(err, errno, "clone3 into '%s': %s", e->run.cgroup_path,
					strerror(errno));
	}
	if (e->child.pid < 0) {
		/* Otherwise the child asks to be adopted before it execs, so it
		 * never runs a command unenrolled. */
		const char *path = client_socket_path();

		daemon_addr.sun_family = AF_UNIX;
		snprintf(daemon_addr.sun_path, sizeof(daemon_addr.sun_path), "%s", path);
		e->child.pid = fork();
		if (e->child.pid < 0)
			return eng_fail(err, errno, "fork: %s", strerror(errno));
		if (e->child.pid == 0)
			child_exec(e, oldmask, !e->no_daemon, err_fd);
	}
	return 0;
}

/* What the child reported before it gave up; e->child.exec_err for CMD's
 * own exec. */
static int launch_failed(struct enroll *e, const struct launch_err *le, struct eng_error *err)
{
	(void)waitpid(e->child.pid, NULL, 0);
	if (le->kind == LAUNCH_ADOPT)
		return eng_fail(err, le->err, "hermeticd could not move the command into the run: %s",
				le->msg[0] ? le->msg : strerror(le->err));
	if (le->kind == LAUNCH_CONFINE)
		return eng_fail(
			err, le->err,
			"cannot confine the run (%s: %s); '--confine off' runs it without the\n"
			"  kernel's backstop (packet sockets, the host clock, leaving the cgroup,\n"
			"  processes outside the run)",
			le->msg, strerror(le->err));
	e->child.exec_err = le->err ? le->err : ENOEXEC;
	return eng_fail(err, e->child.exec_err, "%s: %s", e->argv[0], strerror(le->err));
}

int enroll_launch(struct enroll *e, struct eng_error *err)
{
	struct launch_err le;
	int errp[2], r;
	ssize_t n = 0;

	e->child.exec_err = 0;
	if ((r = launch_prepare(e, err)) < 0)
		return r;
	e->child.pid = -1;
	if (run_signals_take(&e->sig, &e->child))
		return 0; /* cancelled: no child */
	if (pipe2(errp, O_CLOEXEC) < 0)
		return eng_fail(err, errno, "pipe: %s", strerror(errno));
	r = launch_fork(e, errp[1], err);
	close(errp[1]);
	if (r < 0) {
		close(errp[0]);
		return r;
	}
	if (e->inh.null_fd >= 0)
		close(e->inh.null_fd);
	cli_phase("fork");
	supervise_parent(&e->sv);
	r = wait_exec(e, errp[0], &le, &n);
	close(errp[0]);
	if (r == -ECANCELED)
		return 0; /* the child is killed; enroll_run reaps it */
	if (r < 0)
		return eng_fail(err, -r, "poll: %s", strerror(-r));
	if (e->sv.want && e->sv.off_why[0])
		eng_warn("processes without the shim (static binaries, Go) are not covered in full:\n"
			 "  %s", e->sv.off_why);
	if (n != sizeof(le)) {
		e->child.cmd_started = true; /* CMD runs: the pipe closed at its exec */
		run_clock_note_line(&e->clock); /* HERMETIC_DEBUG=phases */
		return 0;
	}
	return launch_failed(e, &le, err);
}
