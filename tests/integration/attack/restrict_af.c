// SPDX-License-Identifier: MIT
/*
 * restrict_af FAMILIES -- CMD [ARGS...]: run CMD with socket() of any
 * address family but FAMILIES (a comma-separated list of unix, netlink,
 * inet, inet6) failing with EAFNOSUPPORT: what systemd's
 * RestrictAddressFamilies= does (a seccomp filter on socket()'s first
 * argument), without systemd. Used to run hermeticd as hermeticd.service
 * would on a kernel that needs sock_diag for its peer check.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#if defined(__x86_64__)
#define ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define ARCH AUDIT_ARCH_AARCH64
#else
#error "restrict_af: add this architecture's AUDIT_ARCH"
#endif

static int family(const char *s)
{
	if (!strcmp(s, "unix"))
		return AF_UNIX;
	if (!strcmp(s, "netlink"))
		return AF_NETLINK;
	if (!strcmp(s, "inet"))
		return AF_INET;
	if (!strcmp(s, "inet6"))
		return AF_INET6;
	return -1;
}

int main(int argc, char **argv)
{
	struct sock_filter f[32];
	int fams[8], n = 0, k = 0;
	char *list, *tok, *save;

	if (argc < 4 || strcmp(argv[2], "--")) {
		fprintf(stderr, "usage: restrict_af unix[,netlink,...] -- CMD [ARGS...]\n");
		return 2;
	}
	list = strdup(argv[1]);
	for (tok = strtok_r(list, ",", &save); tok && n < 8; tok = strtok_r(NULL, ",", &save))
		if ((fams[n++] = family(tok)) < 0) {
			fprintf(stderr, "restrict_af: unknown family '%s'\n", tok);
			return 2;
		}
	/* Another architecture's calls pass (the test runs native binaries). */
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					      offsetof(struct seccomp_data, arch));
	f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH, 1, 0);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					      offsetof(struct seccomp_data, nr));
	f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_socket, 1, 0);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					      offsetof(struct seccomp_data, args[0]));
	for (int i = 0; i < n; i++)
		/* Equal: jump to the ALLOW after the remaining checks and the ERRNO. */
		f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, fams[i],
						      n - i, 0);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EAFNOSUPPORT);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);

	struct sock_fprog prog = { .len = k, .filter = f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0) {
		perror("restrict_af: seccomp");
		return 1;
	}
	execvp(argv[3], argv + 3);
	perror("restrict_af: exec");
	return 127;
}
