// SPDX-License-Identifier: MIT
/*
 * enroll's child, from its clone (or fork, launch.c) to CMD's exec: its
 * signals, the daemon's adoption, --sched serial's wait, the inherited
 * sockets, the identity, the confinement, the supervisor's filter, the
 * file-time wait, the PATH search and the exec.
 *
 * It shares enroll's memory until its exec (CLONE_VM, clone_vm.c,
 * where the build allows; else it is forked). What that asks, checked
 * again for every call the child makes from the clone to the exec
 * (launch_child_exec and everything it calls):
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
 *  - ASLR's persona is set by enroll before the clone, for the child to
 *    inherit (launch.c, persona_for_child), so that a refusal is enroll's
 *    to report and the child needs no stdio for it;
 *  - errno and the memory are shared while both run, so the two take
 *    turns: until the child's ready mark (LAUNCH_READY, after its last
 *    libc call) enroll makes only raw system calls and writes nothing the
 *    child reads (launch.c, wait_ready); after it, the child makes only raw ones
 *    (exec_search, report, the file-time wait) while enroll answers the
 *    supervisor;
 *  - its stack is unmapped by enroll once it is past its exec or dead
 *    (launch.c).
 */
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include "util.h"
#include "cli.h"
#include "enroll.h"
#include "supervise.h"
#include "identity.h"
#include "raw_syscall.h"
#include "launch_child.h"

/* (a failed write: the parent sees a plain exit) */
static void report(int fd, int kind, int err, const char *msg)
{
	struct launch_err le = { .kind = kind, .err = err };

	for (size_t i = 0; msg && msg[i] && i < sizeof(le.msg) - 1; i++)
		le.msg[i] = msg[i];
	(void)raw_syscall(SYS_write, fd, &le, sizeof(le));
}

/* In the child: ask the daemon to move us into run_id. */
static int adopt_self(const struct sockaddr_un *daemon, uint64_t run_id, const char **ret_msg)
{
	char buf[HM_MSG_MAX]; /* on the child's own stack (clone_vm.c) */
	struct hm_run_ref ref = { .run_id = run_id };
	struct hm_hdr *h;
	ssize_t n;
	int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0), err;

	*ret_msg = NULL;
	if (s < 0)
		return -errno;
	if (connect(s, (const struct sockaddr *)daemon, sizeof(*daemon)) < 0 ||
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
void launch_child_exec(const struct launch_child *a)
{
	struct enroll *e = a->e;
	int err_fd = a->err_fd;
	const char *msg;
	long err;

	if ((err = child_signals(&e->sig.oldmask)) < 0) {
		report(err_fd, LAUNCH_EXEC, (int)-err, NULL);
		_exit(EXIT_INTERNAL);
	}
	if (a->adopt && (err = adopt_self(&a->daemon, e->run.run_id, &msg)) < 0) {
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
	/* Then the supervisor's filter (supervise.c), also inherited by all:
	 * with the confinement's as one program where they were merged. */
	if ((err = supervise_child(&e->sv, e->conf.merged ? &e->conf.merged_prog : NULL)) < 0) {
		report(err_fd, LAUNCH_CONFINE, (int)-err, "pass the supervisor its listener");
		_exit(EXIT_INTERNAL);
	}
	/* The merged program did not go in (the run goes unsupervised, as
	 * when the supervisor's filter alone fails): the confinement's still
	 * must, alone, before CMD's first instruction. */
	if (e->conf.merged && err == 0 && (err = confine_install_filter(&e->conf, &msg)) < 0) {
		report(err_fd, LAUNCH_CONFINE, (int)-err, msg);
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

int launch_child_main(void *arg)
{
	launch_child_exec(arg);
}
