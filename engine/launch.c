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
 * The child shares enroll's memory until its exec where the build allows
 * (CLONE_VM: clone_vm.c; else it is forked): launch_child.c says what that
 * asks of the child. Here, enroll's side of it:
 *  - ASLR's persona is set before the clone, for the child to inherit, and
 *    ours put back after it (persona_for_child), so that a refusal is
 *    enroll's to report and the child needs no stdio for it;
 *  - every signal is blocked across the clone (clone_vm_start);
 *  - errno and the memory are shared while both run, so the two take
 *    turns: until the child's ready mark (LAUNCH_READY, after its last
 *    libc call) enroll makes only raw system calls and writes nothing the
 *    child reads (wait_ready, and supervise_parent after it); after the
 *    mark the child makes only raw ones while enroll answers the
 *    supervisor (wait_exec);
 *  - the child's stack is unmapped once the child is past its exec or
 *    dead: at the error pipe's close, after launch_failed's reap, after a
 *    cancel's kill once it is seen dead (child_gone), or at run.c's reap.
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
#include "launch_child.h"

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

int enroll_launch_plan(struct enroll *e, struct eng_error *err)
{
	int r;

	/* Everything the child needs is computed before the fork: here what
	 * depends on the options and this process alone (mountinfo, the
	 * filter, Landlock's plan, the inherited sockets, none of which the
	 * daemon's answer changes: its descriptors come close-on-exec), the
	 * rest once the run exists (launch_prepare). */
	confine_prepare(&e->conf, !e->no_daemon && !e->unconfined,
			e->cfg.network == HM_NETWORK_BLOCK);
	if ((r = enroll_find_foreign_sockets(e, err)) < 0)
		return r;
	e->conf.raw_sockets = e->raw_sockets;
	if (e->conf.refuse[0])
		return eng_fail(err, EPERM, "cannot confine the run: %s", e->conf.refuse);
	e->launch_planned = true;
	return 0;
}

/* Before the fork: the confinement's plan (unless the verb made it while
 * the daemon made the run), what of it needs the run, the supervisor's. */
static int launch_prepare(struct enroll *e, struct eng_error *err)
{
	char vdso[4096];
	int r;

	if (!e->launch_planned && (r = enroll_launch_plan(e, err)) < 0)
		return r;
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
	/* Last, once neither filter changes before the fork: where both go
	 * in, one program (confine_merge.c: one compile, one run per system
	 * call); where the two cannot be proven one, two filters as before. */
	_Static_assert(CONFINE_MAX_MERGED_INSNS >= CONFINE_MAX_INSNS + SV_MAX_INSNS, "merged size");
	e->conf.merged = e->conf.on && e->sv.want &&
			 confine_merge(&e->conf.prog, &e->sv.prog, e->conf.merged_insns,
				       ARRAY_SIZE(e->conf.merged_insns), &e->conf.merged_prog) == 0;
	/* Each program that goes in, with a dispatch in front that the
	 * kernel's install walks in a dozen instructions per system call
	 * number instead of the whole chain (seccomp_fast.c): the child's
	 * seccomp() took 124 us, 80 with it. Where it does not fit, the
	 * program goes in as built. */
	if (e->conf.merged) {
		(void)seccomp_fast(&e->conf.merged_prog, ARRAY_SIZE(e->conf.merged_insns));
	} else {
		if (e->conf.on)
			(void)seccomp_fast(&e->conf.prog, ARRAY_SIZE(e->conf.insns));
		if (e->sv.want)
			(void)seccomp_fast(&e->sv.prog, ARRAY_SIZE(e->sv.insns));
	}
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
	struct launch_child a = { .e = e, .adopt = adopt, .err_fd = err_fd };
	long pid = -ENOSYS;

	if (adopt) {
		a.daemon.sun_family = AF_UNIX;
		snprintf(a.daemon.sun_path, sizeof(a.daemon.sun_path), "%s", client_socket_path());
	}
	if (e->child.stack.map)
		pid = clone_vm_start(&e->child.stack, cgroup_fd, launch_child_main, &a, sizeof(a));
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
		launch_child_exec(&a);
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
		run_clock_note_line(&e->clock); /* HERMETIC_DEBUG=phases */
		return 0;
	}
	return launch_failed(e, &le, err);
}
