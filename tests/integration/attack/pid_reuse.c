// SPDX-License-Identifier: MIT
/*
 * "Pid reuse" ways out of a run (issue 10), run as a run's command:
 *
 *   pid_reuse inside HOST PORT
 *     A process of the run connects to the daemon, forks, and exits; its
 *     child, holding the connection, asks for a run with the network off
 *     (the daemon used to skip its "already inside a run" check when the
 *     connector's /proc entry was gone). Then, as a control, a live
 *     connector inside the run asks the same.
 *   pid_reuse helper FILE              (outside any run)
 *     Creates a run with the network off, writes "RUN_ID PID" to FILE,
 *     hands its connection to a child that keeps it, and exits.
 *   pid_reuse reuse FILE HOST PORT     (inside a run)
 *     Forks until a child gets the dead helper's pid; that child's child
 *     asks to be adopted into the helper's run (the daemon used to check
 *     "PPid == the connection's pid" by number), then tries the test host.
 *
 * Lines: "create: ERR errno msg | OK run ID", "reuse: got pid P after N
 * forks | not reached", "adopt: ERR errno msg | OK", "connect: REFUSED
 * errno | CONNECTED". "CONNECTED" means the attack worked.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include "proto.h"

static char buf[HM_MSG_MAX];

static int dial(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", getenv("HERMETIC_SOCKET"));
	if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		printf("connect to hermeticd: %s\n", strerror(errno));
		exit(2);
	}
	return s;
}

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

static uint64_t create(int s, const char *what)
{
	struct hm_run_create c = { .flags = 0 }; /* network off */
	struct hm_run *r;

	snprintf(c.label, sizeof(c.label), "pid_reuse");
	if (call(s, what, HM_REQ_RUN_CREATE, &c, sizeof(c), (void **)&r) != HM_REP_RUN)
		return 0;
	printf("%s: OK run %llu\n", what, (unsigned long long)r->run_id);
	return r->run_id;
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

/* A raw fork: the shim's fork wrapper (lineage keys) is not needed here. */
static pid_t raw_fork(void)
{
	return syscall(SYS_clone, SIGCHLD, 0, NULL, NULL, 0);
}

/* Fork until a child has pid `want`; that child runs fn and exits. */
static void reuse(pid_t want, void (*fn)(void *), void *arg)
{
	for (long n = 1; n <= 200000; n++) {
		pid_t p = raw_fork();

		if (p == 0) {
			if (syscall(SYS_getpid) == want) {
				printf("reuse: got pid %d after %ld forks\n", (int)want, n);
				fn(arg);
			}
			_exit(0);
		}
		if (p < 0) {
			printf("reuse: fork: %s\n", strerror(errno));
			return;
		}
		waitpid(p, NULL, 0);
		if (p == want)
			return;
	}
	printf("reuse: not reached\n");
}

struct adopt_arg {
	uint64_t run_id;
	const char *host;
	int port;
};

/* In the process with the reused pid: its child asks to be adopted. */
static void adopt_child(void *p)
{
	struct adopt_arg *a = p;
	pid_t g = raw_fork();

	if (g == 0) {
		struct hm_run_ref ref = { a->run_id };
		int s = dial();

		if (call(s, "adopt", HM_REQ_RUN_ADOPT, &ref, sizeof(ref), NULL) == HM_REP_OK)
			printf("adopt: OK\n");
		try_host(a->host, a->port);
		_exit(0);
	}
	waitpid(g, NULL, 0);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc == 4 && !strcmp(argv[1], "inside")) {
		int pipefd[2];
		pid_t c0;

		if (pipe(pipefd) < 0)
			return 2;
		c0 = raw_fork();
		if (c0 == 0) {
			pid_t me = syscall(SYS_getpid);
			int s = dial();

			if (raw_fork() == 0) {
				char b;

				/* Wait until the connector is gone and reaped. */
				close(pipefd[1]);
				if (read(pipefd[0], &b, 1) != 1)
					_exit(1);
				uint64_t id = create(s, "create");
				if (id) {
					struct adopt_arg a = { id, argv[2], atoi(argv[3]) };

					reuse(me, adopt_child, &a);
				}
				_exit(0);
			}
			_exit(0); /* the connector exits at once */
		}
		waitpid(c0, NULL, 0);
		if (write(pipefd[1], "g", 1) != 1)
			return 2;
		close(pipefd[1]);
		while (wait(NULL) > 0)
			;
		/* The control: a live connector inside the run. */
		int s = dial();
		create(s, "create-live");
		try_host(argv[2], atoi(argv[3]));
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "helper")) {
		int s = dial();
		uint64_t id = create(s, "helper-create");
		FILE *f;

		if (!id)
			return 1;
		if (raw_fork() == 0) {
			/* Keep the connection (and so the run) open. */
			pause();
			_exit(0);
		}
		f = fopen(argv[2], "w");
		if (!f) {
			printf("helper: %s: %s\n", argv[2], strerror(errno));
			return 1;
		}
		fprintf(f, "%llu %d\n", (unsigned long long)id, (int)getpid());
		fclose(f);
		return 0;
	}
	if (argc == 5 && !strcmp(argv[1], "reuse")) {
		unsigned long long id;
		int pid;
		FILE *f = fopen(argv[2], "r");

		if (!f || fscanf(f, "%llu %d", &id, &pid) != 2)
			return 2;
		fclose(f);
		struct adopt_arg a = { id, argv[3], atoi(argv[4]) };
		reuse(pid, adopt_child, &a);
		return 0;
	}
	return 2;
}
