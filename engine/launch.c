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
 * Only then is it confined (confine.c) and does it exec.
 *
 * The child shares enroll's memory until its exec (CLONE_VM, clone_vm.c,
 * where the build allows; else it is forked). What that asks, checked
 * again for every call the child makes from the clone to the exec
 * (child_exec and everything it calls):
 *  - no malloc and no stdio on the way to a successful exec: stack
 *    buffers, fixed arrays in the plans made before the clone, and system
 *    call wrappers only (adopt_self's answer on the stack, identity_child's
 *    join, confine_child, confine_landlock_apply's open/add_rule,
 *    supervise_child's seccomp and sendmsg, the file-time wait's ppoll,
 *    the PATH search's stat and execve). What allocates runs in
 *    launch_prepare, before the clone: mountinfo read with fopen
 *    (confine_prepare), the Landlock rules' opendir walk
 *    (confine_landlock_plan), the inherited sockets' /proc/self/fd
 *    (enroll_find_foreign_sockets), the filters built (supervise_prepare),
 *    the identity's files (launch_identity_prepare). A failure's message
 *    is a constant string and its report a raw write;
 *  - its descriptors, signal handlers and seccomp filters are its own (no
 *    CLONE_FILES, no CLONE_SIGHAND); it starts with every signal blocked
 *    and unblocks them only once every handler is back to the default
 *    (child_signals); it never returns into our frames (clone_vm.c);
 *  - ASLR's persona is set here, before the clone, for the child to
 *    inherit, and ours put back after it (persona_for_child), so that a
 *    refusal is enroll's to report and the child needs no stdio for it;
 *  - errno and the memory are shared while both run, so the two take
 *    turns: until the child's ready mark (LAUNCH_READY, after its last
 *    libc call) enroll makes only raw system calls and writes nothing the
 *    child reads (wait_ready); after it, the child makes only raw ones
 *    (exec_search, report, the file-time wait) while enroll answers the
 *    supervisor;
 *  - its stack is unmapped once it is past its exec or dead: at the error
 *    pipe's close, after launch_failed's reap, after a cancel's kill once
 *    it is seen dead (child_gone), or at run.c's reap.
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
#include "clone_vm.h"
#include "raw_syscall.h"

/* What the child reports on its error pipe before it gives up. */
enum { LAUNCH_EXEC = 1, LAUNCH_ADOPT = 2, LAUNCH_CONFINE = 3, LAUNCH_READY = 4 };
struct launch_err {
	int kind;
	int err;
	char msg[sizeof(((struct hm_error *)0)->msg)];
};

static struct sockaddr_un daemon_addr;

/* (a failed write: the parent sees a plain exit) */
static void report(int fd, int kind, int err, const char *msg)
{
	struct launch_err le = { .kind = kind, .err = err };

	for (size_t i = 0; msg && msg[i] && i < sizeof(le.msg) - 1; i++)
		le.msg[i] = msg[i];
	(void)raw_syscall(SYS_write, fd, &le, sizeof(le));
}

/* In the child: ask the daemon to move us into run_id. */
static int adopt_self(uint64_t run_id, const char **ret_msg)
{
	char buf[HM_MSG_MAX]; /* on the child's own stack (clone_vm.c) */
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

/* dir/file (or ./file for an empty dir) into buf, as execvp names it: 0,
 * or -ENAMETOOLONG. */
static int join_path(char *buf, size_t size, const char *dir, size_t len, const char *file)
{
	size_t f = strlen(file);

	if (!len) {
		dir = ".";
		len = 1;
	}
	if (len + 1 + f + 1 > size)
		return -ENAMETOOLONG;
	memcpy(buf, dir, len);
	buf[len] = '/';
	memcpy(buf + len + 1, file, f + 1);
	return 0;
}

/* execve(path), and, as execvp does, /bin/sh path ARGS when the kernel
 * knows no format for it (ENOEXEC: a script without #!). The new argv is
 * on the stack, which clone_vm_stack_alloc sized for it. -errno. */
static long exec_one(const char *path, char *const argv[])
{
	long r = raw_syscall(SYS_execve, path, argv, environ);
	size_t n = 0;

	if (r != -ENOEXEC)
		return r;
	while (argv[n])
		n++;
	{
		const char *sh[n + 3];

		sh[0] = "/bin/sh";
		sh[1] = path;
		for (size_t i = 1; i < n; i++)
			sh[i + 1] = argv[i];
		sh[n ? n + 1 : 2] = NULL;
		return raw_syscall(SYS_execve, "/bin/sh", sh, environ);
	}
}

/* Whether path is a regular file we may execute (raw stat and access). */
static bool executable(const char *path)
{
	struct stat st;

	return raw_syscall4(SYS_newfstatat, AT_FDCWD, path, &st, 0) == 0 && S_ISREG(st.st_mode) &&
	       raw_syscall(SYS_access, path, X_OK, 0) == 0;
}

/*
 * execvp(file, argv), with the search of PATH made by stat first: each
 * execve that fails on an entry of PATH without the file would be one more
 * stop in the supervisor (supervise.c sees every execve), ten on a machine
 * whose PATH starts with ten user directories. The file found is executed
 * as execvp would (a script without #! still runs under /bin/sh); found
 * nowhere, or its exec failing, execvp's own search follows, for the errno
 * it always gave (EACCES if any entry gave it, else the last "not here").
 * Raw system calls and stack buffers only (clone_vm.c: enroll answers the
 * supervisor meanwhile, and errno is shared). -errno.
 */
static long exec_search(const char *file, char *const argv[])
{
	const char *path = getenv("PATH"), *p, *end;
	char buf[PATH_MAX];
	bool eacces = false;
	long r = -ENOENT;

	if (!*file)
		return -ENOENT;
	if (strchr(file, '/'))
		return exec_one(file, argv);
	if (!path)
		path = "/bin:/usr/bin"; /* glibc's confstr(_CS_PATH), as execvp */
	for (p = path;; p = end + 1) {
		end = strchrnul(p, ':');
		if (join_path(buf, sizeof(buf), p, (size_t)(end - p), file) == 0 && executable(buf)) {
			(void)exec_one(buf, argv);
			break; /* what it says, execvp's search says too */
		}
		if (!*end)
			break;
	}
	for (p = path;; p = end + 1) {
		end = strchrnul(p, ':');
		if (join_path(buf, sizeof(buf), p, (size_t)(end - p), file) == 0) {
			r = exec_one(buf, argv);
			switch (-r) {
			case EACCES:
				eacces = true;
				break;
			case ENOENT:
			case ESTALE:
			case ENOTDIR:
			case ENODEV:
			case ETIMEDOUT:
				break;
			default:
				return r;
			}
		}
		if (!*end)
			break;
	}
	return eacces ? -EACCES : r;
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

/* The kernel's struct sigaction (x86_64's layout; raw rt_sigaction). */
struct kernel_sigaction {
	void (*handler)(int);
	unsigned long flags;
	void (*restorer)(void);
	uint64_t mask;
};

/* First thing in the child: every handler of enroll's back to the default
 * (one would run on memory the child shares with enroll: clone_vm.c), and
 * SIGPIPE too (enroll ignores it; CMD gets the default, as ever); only then
 * CMD's mask. Until here all are blocked (clone_vm_start; a forked child
 * may run one of enroll's handlers before this, on its own copy). Raw
 * calls: glibc's sigaction refuses its own two signals (32, 33), whose
 * handlers go as well, as posix_spawn's child resets them. -errno. */
static long child_signals(const sigset_t *mask)
{
	const struct kernel_sigaction dfl = { .handler = SIG_DFL };

	for (int sig = 1; sig <= 64; sig++) {
		struct kernel_sigaction cur;
		long r;

		if (sig == SIGKILL || sig == SIGSTOP)
			continue;
		if ((r = raw_syscall4(SYS_rt_sigaction, sig, NULL, &cur, 8)) < 0)
			return r;
		if (cur.handler == SIG_DFL || (cur.handler == SIG_IGN && sig != SIGPIPE))
			continue; /* an ignored signal stays ignored in CMD (signals.c) */
		if ((r = raw_syscall4(SYS_rt_sigaction, sig, &dfl, NULL, 8)) < 0)
			return r;
	}
	return raw_syscall4(SYS_rt_sigprocmask, SIG_SETMASK, mask, NULL, 8);
}

/* In the child, from the clone (or fork) to CMD's exec: the calls the
 * head of this file lists, no others. Up to the ready mark, errno-setting
 * wrappers (enroll is quiet: wait_ready); after it, raw calls only. */
static void __attribute__((noreturn)) child_exec(struct enroll *e, bool adopt, int err_fd)
{
	const char *msg;
	long err;

	if ((err = child_signals(&e->sig.oldmask)) < 0) {
		report(err_fd, LAUNCH_EXEC, (int)-err, NULL);
		_exit(EXIT_INTERNAL);
	}
	if (adopt && (err = adopt_self(e->run.run_id, &msg)) < 0) {
		report(err_fd, LAUNCH_ADOPT, (int)-err, msg);
		_exit(EXIT_INTERNAL);
	}
	if (e->sched.mode == HM_SCHED_SERIAL && (err = wait_serial()) < 0) {
		report(err_fd, LAUNCH_CONFINE, (int)-err, "wait for hermeticd's --sched serial priority");
		_exit(EXIT_INTERNAL);
	}
	/* No network socket made outside the run crosses into it unasked. */
	if ((err = enroll_drop_foreign_sockets(e)) < 0) {
		report(err_fd, LAUNCH_CONFINE, (int)-err, "put /dev/null over an inherited socket");
		_exit(EXIT_INTERNAL);
	}
	/* The machine it is told of (--identity), while it may still mount. */
	if ((err = identity_child(&e->ident, &msg)) < 0) {
		report(err_fd, LAUNCH_CONFINE, (int)-err, msg);
		_exit(EXIT_INTERNAL);
	}
	/* In the run now: its kernel backstop before the first instruction. */
	if ((err = confine_child(&e->conf, &msg)) < 0) {
		report(err_fd, LAUNCH_CONFINE, (int)-err, msg);
		_exit(EXIT_INTERNAL);
	}
	/* The clock page is CMD's to inherit (HERMETIC_CLOCK_FD). */
	if (e->clock.page_fd >= 0 && (err = raw_syscall(SYS_fcntl, e->clock.page_fd, F_SETFD, 0)) < 0) {
		report(err_fd, LAUNCH_EXEC, (int)-err, NULL);
		_exit(EXIT_INTERNAL);
	}
	/* Then the supervisor's filter (supervise.c), also inherited by all. */
	if ((err = supervise_child(&e->sv)) < 0) {
		report(err_fd, LAUNCH_CONFINE, (int)-err, "pass the supervisor its listener");
		_exit(EXIT_INTERNAL);
	}
	/* (ASLR's persona came with the clone: persona_for_child.) The ready
	 * mark: from here on raw calls only, and enroll may answer the
	 * supervisor with libc's. */
	report(err_fd, LAUNCH_READY, 0, NULL);
	/* The last step: no file stamp of the command may fall on the
	 * before-the-run side of the line (engine/vclock.c). */
	run_clock_wait_files(&e->clock);
	err = exec_search(e->bnd.exec_file, e->argv);
	report(err_fd, LAUNCH_EXEC, (int)-err, NULL);
	_exit(err == -ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_EXEC);
}

/* What the CLONE_VM child gets on its own stack (clone_vm_start copies
 * it there). */
struct child_arg {
	struct enroll *e;
	bool adopt;
	int err_fd;
};

static int child_main(void *p)
{
	const struct child_arg *a = p;

	child_exec(a->e, a->adopt, a->err_fd);
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

/* For tests (HERMETIC_TEST_HEAP_RO, clone_vm.h): the heap read-only while
 * the child runs libc code on it. */
static struct clone_vm_heap test_heap;
static bool test_heap_ro;

/* Until the child's ready mark (its libc calls done), its failure or its
 * end: it runs on our memory, errno included, so this side makes raw
 * system calls only (run_signals_take's read too) and writes nothing the
 * child reads (supervise_parent waits for the mark). 1 at the mark, 0
 * with what read() of the pipe returned in *ret_n otherwise, -ECANCELED
 * when a signal cancelled the run first (the child is killed: signals.c),
 * -errno when ppoll fails. */
static int wait_ready(struct enroll *e, int fd, struct launch_err *le, ssize_t *ret_n)
{
	for (;;) {
		struct pollfd p[2] = {
			{ .fd = fd, .events = POLLIN },
			{ .fd = e->sig.fd, .events = POLLIN },
		};
		long r;

		if (run_signals_take(&e->sig, &e->child))
			return -ECANCELED;
		r = raw_syscall6(SYS_ppoll, (long)p, 2, 0, 0, 0, 0);
		if (r == -EINTR)
			continue;
		if (r < 0)
			return (int)r;
		if (!p[0].revents)
			continue;
		*ret_n = raw_syscall(SYS_read, fd, le, sizeof(*le));
		if (*ret_n == -EINTR)
			continue;
		return *ret_n == sizeof(*le) && le->kind == LAUNCH_READY;
	}
}

/* After the ready mark, until CMD runs (the error pipe closes at its exec)
 * or reports a failure: meanwhile the supervisor's listener (sent before
 * the mark) is taken and its first exec is answered (it waits for us).
 * The child makes raw calls only now. Returns as wait_ready, but for 1. */
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

/* Both waits: the ready mark, then the exec. Whatever ends the first, the
 * heap is writable again and the supervisor's end of its socket ours to
 * close (the child has sent the listener, or will not). */
static int wait_child(struct enroll *e, int fd, struct launch_err *le, ssize_t *ret_n)
{
	int r = wait_ready(e, fd, le, ret_n);

	if (test_heap_ro)
		(void)clone_vm_heap_protect(&test_heap, false);
	supervise_parent(&e->sv);
	if (r == 1)
		r = wait_exec(e, fd, le, ret_n);
	return r;
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

/* ASLR off for CMD (--aslr off, the default), before the first exec and
 * inherited by the whole tree: programs mix addresses into their random
 * state. Set on enroll, for the child to inherit at the clone, and
 * enroll's own put back right after it (persona_restore): only an exec
 * reads ADDR_NO_RANDOMIZE, enroll execs nothing in between, and its own
 * addresses were fixed at its start. So a refusal is enroll's to report,
 * and the child needs no stdio for it. The persona to put back, or -1. */
static int persona_for_child(const struct enroll *e)
{
	int old;

	if (e->cfg.aslr)
		return -1;
	old = personality(0xffffffff);
	if (old < 0 || personality(ADDR_NO_RANDOMIZE) < 0) {
		/* A container's seccomp profile may refuse it (Docker's and
		 * podman's default allow only a few personalities): the run
		 * goes on, and says what it lost. */
		eng_warn("address space randomisation stays on (personality: %s, as a container's "
			 "seccomp profile refuses it): programs that mix addresses into their "
			 "random state may differ between runs",
			 strerror(errno));
		return -1;
	}
	return old;
}

static void persona_restore(int old)
{
	/* (it was ours a moment ago: a refusal now is not expected, but a
	 * later child of enroll's would start without ASLR) */
	if (old >= 0 && personality((unsigned long)old) < 0)
		eng_warn("enroll's own persona could not be put back (personality: %s): what it "
			 "starts later starts without address space randomisation",
			 strerror(errno));
}

/* One child: started with CLONE_VM on its own stack where built
 * (clone_vm.c), else forked; born in the run's cgroup when cgroup_fd >= 0
 * (clone3), else to be adopted when adopt. The pid, or -errno. */
static long start_child(struct enroll *e, int cgroup_fd, bool adopt, int err_fd)
{
	const struct child_arg a = { .e = e, .adopt = adopt, .err_fd = err_fd };
	long pid = -ENOSYS;

	if (e->child.stack.map)
		pid = clone_vm_start(&e->child.stack, cgroup_fd, child_main, &a, sizeof(a));
	if (pid != -ENOSYS)
		return pid;
	if (cgroup_fd >= 0) {
		struct clone_args args = {
			.flags = CLONE_INTO_CGROUP,
			.exit_signal = SIGCHLD,
			.cgroup = (uint64_t)cgroup_fd,
		};

		pid = syscall(SYS_clone3, &args, sizeof(args));
	} else {
		pid = fork();
	}
	if (pid == 0)
		child_exec(e, adopt, err_fd);
	return pid < 0 ? -errno : pid;
}

/* The child's stack where it shares our memory: 512 KiB, and room for the
 * argv exec_one gives /bin/sh (posix_spawn sizes its stack by argv too). */
static int child_stack(struct enroll *e, struct eng_error *err)
{
	size_t argc = 0;
	int r;

	if (!clone_vm_built())
		return 0;
	while (e->argv[argc])
		argc++;
	if ((r = clone_vm_stack_alloc(&e->child.stack, (argc + 3) * sizeof(char *))) < 0)
		return eng_fail(err, -r, "cannot map the command's stack: %s", strerror(-r));
	if (test_heap_ro) {
		if ((r = clone_vm_heap_find(&test_heap)) < 0)
			return eng_fail(err, -r, "HERMETIC_TEST_HEAP_RO: no [heap]: %s", strerror(-r));
		eng_warn("test: the heap is read-only from the clone to the child's ready mark");
	}
	return 0;
}

/* The child, in the run's cgroup (clone3) or adopted into it: it writes
 * to err_fd its ready mark, and more only if it fails before CMD's exec. */
static int launch_fork(struct enroll *e, int err_fd, struct eng_error *err)
{
	long pid = -1;
	int r, old;

	if ((r = child_stack(e, err)) < 0)
		return r;
	old = persona_for_child(e);
	if (test_heap_ro && (r = (int)clone_vm_heap_protect(&test_heap, true)) < 0)
		return eng_fail(err, -r, "HERMETIC_TEST_HEAP_RO: mprotect: %s", strerror(-r));
	if (!e->no_daemon) {
		/* Preferred: the child is born inside the run's cgroup. This needs
		 * write access to cgroup.procs of the common ancestor (root), and
		 * both cgroups inside our cgroup namespace: in a container the
		 * run's cgroup is outside it (ENOENT), and the daemon adopts us. */
		pid = start_child(e, e->cgroup_fd, false, err_fd);
		if (pid < 0 && pid != -EACCES && pid != -EPERM && pid != -ENOSYS && pid != -EBUSY &&
		    pid != -ENOENT) {
			persona_restore(old);
			return eng_fail(err, (int)-pid, "clone3 into '%s': %s", e->run.cgroup_path,
					strerror((int)-pid));
		}
	}
	if (pid < 0) {
		/* Otherwise the child asks to be adopted before it execs, so it
		 * never runs a command unenrolled. */
		const char *path = client_socket_path();

		daemon_addr.sun_family = AF_UNIX;
		snprintf(daemon_addr.sun_path, sizeof(daemon_addr.sun_path), "%s", path);
		pid = start_child(e, -1, !e->no_daemon, err_fd);
	}
	persona_restore(old);
	if (pid < 0)
		return eng_fail(err, (int)-pid, "fork: %s", strerror((int)-pid));
	e->child.pid = (pid_t)pid;
	return 0;
}

/* What the child reported before it gave up; e->child.exec_err for CMD's
 * own exec. */
static int launch_failed(struct enroll *e, const struct launch_err *le, struct eng_error *err)
{
	(void)waitpid(e->child.pid, NULL, 0);
	clone_vm_stack_free(&e->child.stack); /* reaped: off its stack */
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

/* A cancelled set-up: the child is killed (signals.c); once it is seen
 * dead (WNOWAIT: enroll_run reaps it, for its status) it runs on its stack
 * no more, nor on anything else of ours. */
static void child_gone(struct enroll *e)
{
	siginfo_t si;

	if (!e->child.stack.map)
		return;
	while (waitid(P_PID, (id_t)e->child.pid, &si, WEXITED | WNOWAIT | __WALL) < 0)
		if (errno != EINTR)
			return; /* (not ours to wait for: run.c's reap frees it) */
	clone_vm_stack_free(&e->child.stack);
}

int enroll_launch(struct enroll *e, struct eng_error *err)
{
	struct launch_err le;
	int errp[2], r;
	ssize_t n = 0;

	e->child.exec_err = 0;
	test_heap_ro = getenv("HERMETIC_TEST_HEAP_RO") && clone_vm_built();
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
		if (test_heap_ro)
			(void)clone_vm_heap_protect(&test_heap, false);
		clone_vm_stack_free(&e->child.stack); /* no child */
		close(errp[0]);
		return r;
	}
	/* (until wait_ready's end: raw calls, or calls that cannot fail) */
	if (e->inh.null_fd >= 0)
		close(e->inh.null_fd);
	cli_phase("fork");
	r = wait_child(e, errp[0], &le, &n);
	close(errp[0]);
	if (r == -ECANCELED) {
		child_gone(e);
		return 0; /* the child is killed; enroll_run reaps it */
	}
	if (r < 0)
		return eng_fail(err, -r, "poll: %s", strerror(-r));
	if (e->sv.want && e->sv.off_why[0])
		eng_warn("processes without the shim (static binaries, Go) are not covered in full:\n"
			 "  %s", e->sv.off_why);
	if (n != sizeof(le)) {
		/* CMD runs: the pipe closed at its exec, after the kernel had
		 * moved the child to CMD's memory (or at its death) */
		clone_vm_stack_free(&e->child.stack);
		e->child.cmd_started = true;
		return 0;
	}
	return launch_failed(e, &le, err);
}
