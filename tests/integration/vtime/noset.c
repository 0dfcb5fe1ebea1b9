/* Run a command unable to set the host's clock: a seccomp filter refuses
 * clock_settime, settimeofday, clock_adjtime and adjtimex with EPERM. The
 * settime tests run under it, so that a shim that let the call through
 * could not move this machine's clock. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#define DENY(nr) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), \
		 BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM)

int main(int argc, char **argv)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		DENY(SYS_clock_settime), DENY(SYS_settimeofday), DENY(SYS_clock_adjtime),
		DENY(SYS_adjtimex),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

	if (argc < 2 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) {
		perror("noset");
		return 126;
	}
	execvp(argv[1], argv + 1);
	perror("noset: exec");
	return 127;
}
