// SPDX-License-Identifier: MIT
/*
 * What the run's seccomp filter must refuse, tried with raw syscalls from
 * a statically linked program (no shim, no libc wrapper in the way):
 *
 *   kbackstop packet IFACE DSTMAC MARK   AF_PACKET: one raw frame to DSTMAC
 *   kbackstop inetpacket IFACE DSTMAC MARK  the same through AF_INET SOCK_PACKET
 *   kbackstop vsock                      socket(AF_VSOCK) and close: never
 *                                        connects, never sends
 *   kbackstop clock                      set the clock with invalid values
 *                                        only (the kernel answers EINVAL
 *                                        without setting anything; the
 *                                        filter answers EPERM); adjtimex and
 *                                        clock_adjtime with modes 0 (reads)
 *   kbackstop clock32                    the same through int 0x80 (i386), and
 *                                        getpid there (does the ABI work?).
 *                                        No stime: it has no invalid value.
 *   kbackstop uring                      io_uring_setup
 *   kbackstop socket32                   socket(AF_PACKET) and socketcall
 *                                        through int 0x80, closed at once
 *   kbackstop gate32                     is the i386 gate open here? A child
 *                                        does int 0x80 getpid: "i386 gate
 *                                        open (probe: ...)", "i386 gate
 *                                        closed (probe: ...)" (killed by
 *                                        SIGSEGV: no gate, the kernel's
 *                                        general protection fault; SIGSYS
 *                                        or ENOSYS: a filter refuses the
 *                                        architecture) or "i386 gate unknown
 *                                        (probe: ...)"
 *   kbackstop noi386 kill|enosys CMD...  CMD under a seccomp filter that
 *                                        refuses the i386 architecture (kills
 *                                        the process, or answers ENOSYS):
 *                                        a closed gate, simulated
 *
 * Each prints "NAME ok" (the call succeeded) or "NAME ERRNO" (its errno
 * name), one per line.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <sys/socket.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timex.h>
#include <sys/wait.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/if_packet.h>
#include <linux/seccomp.h>
#include <linux/if_ether.h>
#include <linux/io_uring.h>

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif

static void say(const char *name, long r)
{
	if (r >= 0)
		printf("%s ok\n", name);
	else
		printf("%s %s\n", name, strerrorname_np(errno));
	fflush(stdout);
}

/* i386 syscalls from a 64-bit process: int 0x80 takes eax, ebx, ecx, edx. */
static long sys32(long nr, long a, long b, long c)
{
	long r;

	__asm__ volatile("int $0x80" : "=a"(r) : "a"(nr), "b"(a), "c"(b), "d"(c) : "memory");
	if (r < 0 && r > -4096) {
		errno = -r;
		return -1;
	}
	return r;
}

/*
 * The i386 gate, probed in a child: where the kernel has no int 0x80 entry
 * (a 64-bit kernel without IA32 emulation, or ia32_emulation=0, or a
 * hypervisor that does not pass it) the instruction raises a general
 * protection fault and the child dies of SIGSEGV before any system call.
 */
static int gate32(void)
{
	pid_t pid;
	int st;

	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		printf("i386 gate unknown (probe: fork %s)\n", strerrorname_np(errno));
		return 1;
	}
	if (pid == 0) {
		struct rlimit nocore = { 0, 0 };
		long r;

		(void)setrlimit(RLIMIT_CORE, &nocore); /* the expected fault leaves no core */
		r = sys32(20 /* i386 getpid */, 0, 0, 0);
		if (r == getpid())
			printf("i386 gate open (probe: int 0x80 getpid answered the child's pid %ld)\n", r);
		else if (r < 0 && errno == ENOSYS)
			printf("i386 gate closed (probe: int 0x80 getpid answered ENOSYS)\n");
		else
			printf("i386 gate unknown (probe: int 0x80 getpid answered %ld, errno %s; the child is %d)\n",
			       r, r < 0 ? strerrorname_np(errno) : "none", (int)getpid());
		fflush(stdout);
		_exit(0);
	}
	if (waitpid(pid, &st, 0) != pid) {
		printf("i386 gate unknown (probe: waitpid %s)\n", strerrorname_np(errno));
		return 1;
	}
	if (WIFSIGNALED(st) && (WTERMSIG(st) == SIGSEGV || WTERMSIG(st) == SIGSYS))
		printf("i386 gate closed (probe: SIG%s: a child doing int 0x80 getpid was killed by it%s)\n",
		       sigabbrev_np(WTERMSIG(st)),
		       WTERMSIG(st) == SIGSEGV ? ", the kernel's general protection fault" :
						 ", a seccomp filter refuses the architecture");
	else if (WIFSIGNALED(st))
		printf("i386 gate unknown (probe: the child was killed by SIG%s)\n", sigabbrev_np(WTERMSIG(st)));
	else if (WEXITSTATUS(st) != 0)
		printf("i386 gate unknown (probe: the child exited %d)\n", WEXITSTATUS(st));
	return 0;
}

/* CMD under a filter refusing every i386 system call: the closed gate of a
 * machine without one, simulated where the gate is open. */
static int noi386(const char *how, char **cmd)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_I386, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, !strcmp(how, "kill") ? SECCOMP_RET_KILL_PROCESS :
								  SECCOMP_RET_ERRNO | ENOSYS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

	if (strcmp(how, "kill") && strcmp(how, "enosys"))
		return 2;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0) {
		printf("noi386: %s\n", strerrorname_np(errno));
		return 1;
	}
	execvp(cmd[0], cmd);
	printf("noi386: exec %s: %s\n", cmd[0], strerrorname_np(errno));
	return 1;
}

static int mac(const char *s, unsigned char out[6])
{
	return sscanf(s, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &out[0], &out[1], &out[2], &out[3],
		      &out[4], &out[5]) == 6 ? 0 : -1;
}

static void frame(const char *name, int family, int type, int proto, char **argv)
{
	unsigned char buf[128] = { 0 }, dst[6];
	struct sockaddr_ll sa = { .sll_family = AF_PACKET, .sll_halen = 6 };
	long s = syscall(SYS_socket, family, type, proto);
	size_t n;

	say(name, s);
	if (s < 0)
		return;
	if (mac(argv[3], dst) < 0) {
		printf("bad mac\n");
		exit(2);
	}
	sa.sll_ifindex = if_nametoindex(argv[2]);
	memcpy(sa.sll_addr, dst, 6);
	memcpy(buf, dst, 6); /* source left zero: the test host only counts */
	buf[12] = 0x88, buf[13] = 0xb5; /* a local experimental ethertype */
	n = 14 + snprintf((char *)buf + 14, sizeof(buf) - 14, "%s", argv[4]);
	if (n < 60)
		n = 60;
	if (family == AF_PACKET)
		say("send", syscall(SYS_sendto, s, buf, n, 0, &sa, sizeof(sa)));
	else {
		/* SOCK_PACKET names the device in a sockaddr of its own. */
		struct sockaddr spkt = { .sa_family = AF_INET };

		snprintf(spkt.sa_data, sizeof(spkt.sa_data), "%s", argv[2]);
		say("send", syscall(SYS_sendto, s, buf, n, 0, &spkt, sizeof(spkt)));
	}
	close(s);
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	if (!strcmp(argv[1], "packet") && argc == 5) {
		frame("socket(AF_PACKET)", AF_PACKET, SOCK_RAW, htons(ETH_P_ALL), argv);
	} else if (!strcmp(argv[1], "inetpacket") && argc == 5) {
		frame("socket(AF_INET,SOCK_PACKET)", AF_INET, SOCK_PACKET, htons(ETH_P_ALL), argv);
	} else if (!strcmp(argv[1], "vsock")) {
		long s = syscall(SYS_socket, AF_VSOCK, SOCK_STREAM, 0);

		say("socket(AF_VSOCK)", s);
		if (s >= 0)
			close(s); /* never connect, never send */
	} else if (!strcmp(argv[1], "clock")) {
		/* Invalid on purpose: the kernel checks them before anything else
		 * (EINVAL); only the filter answers EPERM. */
		struct timespec bad = { .tv_sec = 0, .tv_nsec = 2000000000 };
		struct timeval badtv = { .tv_sec = 0, .tv_usec = 2000000 };
		struct timex tx = { .modes = 0 }; /* 0: read only */

		say("clock_settime", syscall(SYS_clock_settime, CLOCK_REALTIME, &bad));
		say("settimeofday", syscall(SYS_settimeofday, &badtv, NULL));
		say("adjtimex", syscall(SYS_adjtimex, &tx));
		say("clock_adjtime", syscall(SYS_clock_adjtime, CLOCK_REALTIME, &tx));
		/* The hardware clock's ioctl, on /dev/null: the kernel says ENOTTY,
		 * the filter (which looks at the request only) EPERM. */
		{
			int tm[9] = { 0, 0, 0, 1, 13 /* month 13: invalid */, 100 };
			long fd = syscall(SYS_openat, AT_FDCWD, "/dev/null", O_RDONLY);

			say("ioctl(RTC_SET_TIME)", syscall(SYS_ioctl, fd, 0x4024700a, tm));
			close(fd);
		}
	} else if (!strcmp(argv[1], "clock32")) {
		/* i386: clock_settime is 264 and takes a 32-bit timespec. */
		static int bad32[2] = { 0, 2000000000 };
		static int badtv32[2] = { 0, 2000000 };

		say("i386 clock_settime", sys32(264, CLOCK_REALTIME, (long)bad32, 0));
		say("i386 settimeofday", sys32(79, (long)badtv32, 0, 0));
		say("i386 getpid", sys32(20, 0, 0, 0));
	} else if (!strcmp(argv[1], "socket32")) {
		static int args[3] = { AF_PACKET, SOCK_RAW, 0 }; /* i386 longs */
		long s = sys32(359, AF_PACKET, SOCK_RAW, 0);

		say("i386 socket(AF_PACKET)", s);
		if (s >= 0)
			close(s);
		s = sys32(102, 1 /* SYS_SOCKET */, (long)args, 0);
		say("i386 socketcall(SOCKET, AF_PACKET)", s);
		if (s >= 0)
			close(s);
	} else if (!strcmp(argv[1], "gate32")) {
		return gate32();
	} else if (!strcmp(argv[1], "noi386") && argc >= 4) {
		return noi386(argv[2], argv + 3);
	} else if (!strcmp(argv[1], "uring")) {
		struct io_uring_params p = { 0 };
		long fd = syscall(425 /* io_uring_setup */, 1, &p);

		say("io_uring_setup", fd);
		if (fd >= 0)
			close(fd);
	} else {
		return 2;
	}
	return 0;
}
