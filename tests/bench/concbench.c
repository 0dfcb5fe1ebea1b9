/* concbench: start N commands at once and time each one's start and end.
 *
 *   concbench N HOLD DEADLINE_S ERRDIR -- CMD... [:: CMD...]...
 *
 * Run i executes command i % (number of commands). Every run gets fd 3, the
 * write end of a pipe of its own: the command writes one byte there when it
 * starts (tests/bench/ready.c does that). With HOLD=1 it also gets fd 4, the
 * read end of a second pipe, which the command reads until EOF: concbench
 * closes the write ends once every run has started (or DEADLINE_S passed),
 * so that all N are alive at the same time; just before, it runs the shell
 * command in $CONCBENCH_AT_PEAK, if set, and prints its first line of output
 * as "at_peak ...". stdout goes to /dev/null, stderr
 * to ERRDIR/<i>.err. All times are CLOCK_MONOTONIC in this process, outside
 * any run.
 *
 * Prints one line per figure, "key value...": start and total latency (ms:
 * p50 p99 max), failures (exit status not 0, or no start byte), the most
 * runs alive at once, the wall time of the whole batch, and the first
 * failure's stderr file.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

struct run {
	pid_t pid;
	int ready_fd, hold_fd, pidfd;
	double t0, t_ready, t_end;
	int status, done;
};

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* pct V N P: the P-th percentile of the sorted V (nearest rank). */
static double pct(const double *v, int n, int p)
{
	int k = (n * p + 99) / 100;

	return n ? v[k > 0 ? k - 1 : 0] : 0;
}

static void show(const char *key, double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp);
	printf("%s %d %.1f %.1f %.1f\n", key, n, pct(v, n, 50), pct(v, n, 99), n ? v[n - 1] : 0);
}

int main(int argc, char **argv)
{
	if (argc < 7 || strcmp(argv[5], "--")) {
		fprintf(stderr, "usage: concbench N HOLD DEADLINE_S ERRDIR -- CMD... [:: CMD...]\n");
		return 2;
	}
	int n = atoi(argv[1]), hold = atoi(argv[2]), ncmd = 0;
	double deadline = atof(argv[3]) * 1e3;
	const char *errdir = argv[4];
	char **cmds[16];

	cmds[ncmd++] = argv + 6;
	for (int i = 6; i < argc; i++)
		if (!strcmp(argv[i], "::") && ncmd < 16) {
			argv[i] = NULL;
			cmds[ncmd++] = argv + i + 1;
		}
	/* Keep fds 3 and 4 taken, so that no pipe lands on them and dup2 onto
	 * itself would leave O_CLOEXEC set. */
	while (fcntl(4, F_GETFD) < 0 && open("/dev/null", O_RDONLY | O_CLOEXEC) >= 0)
		;
	struct run *r = calloc(n, sizeof(*r));
	struct pollfd *pf = calloc(2 * (size_t)n, sizeof(*pf));
	if (!r || !pf)
		return 2;

	double start = now_ms();
	for (int i = 0; i < n; i++) {
		int rp[2], hp[2] = { -1, -1 };
		char err[4096];
		posix_spawn_file_actions_t fa;

		r[i].ready_fd = r[i].hold_fd = r[i].pidfd = -1;
		if (pipe2(rp, O_CLOEXEC) < 0 || (hold && pipe2(hp, O_CLOEXEC) < 0)) {
			perror("concbench: pipe");
			return 2;
		}
		snprintf(err, sizeof(err), "%s/%d.err", errdir, i);
		posix_spawn_file_actions_init(&fa);
		posix_spawn_file_actions_adddup2(&fa, rp[1], 3);
		if (hold)
			posix_spawn_file_actions_adddup2(&fa, hp[0], 4);
		posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
		posix_spawn_file_actions_addopen(&fa, 2, err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		r[i].t0 = now_ms();
		int e = posix_spawnp(&r[i].pid, cmds[i % ncmd][0], &fa, NULL, cmds[i % ncmd], environ);
		posix_spawn_file_actions_destroy(&fa);
		close(rp[1]);
		if (hold)
			close(hp[0]);
		if (e) {
			fprintf(stderr, "concbench: spawn %s: %s\n", cmds[i % ncmd][0], strerror(e));
			r[i].done = 1;
			r[i].status = -1;
			close(rp[0]);
			if (hold)
				close(hp[1]);
			continue;
		}
		r[i].ready_fd = rp[0];
		r[i].hold_fd = hp[1];
		r[i].pidfd = (int)syscall(SYS_pidfd_open, r[i].pid, 0);
		if (r[i].pidfd < 0) {
			perror("concbench: pidfd_open");
			return 2;
		}
	}

	int left = 0, alive = 0, peak = 0, released = !hold;
	for (int i = 0; i < n; i++)
		left += !r[i].done;
	while (left > 0) {
		int m = 0, started = 0, ended = 0;

		for (int i = 0; i < n; i++) {
			started += r[i].t_ready > 0;
			ended += r[i].done;
			if (r[i].ready_fd >= 0)
				pf[m++] = (struct pollfd){ .fd = r[i].ready_fd, .events = POLLIN };
			if (r[i].pidfd >= 0)
				pf[m++] = (struct pollfd){ .fd = r[i].pidfd, .events = POLLIN };
		}
		/* Release the held runs once all have started, the rest ended. */
		if (!released && (started + ended >= n || now_ms() - start > deadline)) {
			const char *hook = getenv("CONCBENCH_AT_PEAK");
			char line[256] = "";
			FILE *f;

			if (hook && (f = popen(hook, "r"))) {
				if (!fgets(line, sizeof(line), f))
					line[0] = 0;
				pclose(f);
				line[strcspn(line, "\n")] = 0;
				printf("at_peak %s\n", line[0] ? line : "-");
			}
			for (int i = 0; i < n; i++)
				if (r[i].hold_fd >= 0) {
					close(r[i].hold_fd);
					r[i].hold_fd = -1;
				}
			released = 1;
		}
		if (poll(pf, m, 100) < 0 && errno != EINTR) {
			perror("concbench: poll");
			return 2;
		}
		for (int i = 0; i < n; i++) {
			char c;

			if (r[i].ready_fd >= 0) {
				struct pollfd q = { .fd = r[i].ready_fd, .events = POLLIN };
				if (poll(&q, 1, 0) > 0) {
					if (read(r[i].ready_fd, &c, 1) == 1 && !r[i].t_ready) {
						r[i].t_ready = now_ms();
						alive++;
					}
					close(r[i].ready_fd);
					r[i].ready_fd = -1;
				}
			}
			if (r[i].pidfd >= 0) {
				struct pollfd q = { .fd = r[i].pidfd, .events = POLLIN };
				if (poll(&q, 1, 0) > 0 && waitpid(r[i].pid, &r[i].status, WNOHANG) == r[i].pid) {
					r[i].t_end = now_ms();
					r[i].done = 1;
					close(r[i].pidfd);
					r[i].pidfd = -1;
					if (r[i].hold_fd >= 0) {
						close(r[i].hold_fd);
						r[i].hold_fd = -1;
					}
					if (r[i].t_ready)
						alive--;
					left--;
				}
			}
		}
		if (alive > peak)
			peak = alive;
	}
	double wall = now_ms() - start;

	double *st = calloc(n, sizeof(double)), *tot = calloc(n, sizeof(double));
	int ns = 0, nt = 0, fails = 0, first = -1;
	for (int i = 0; i < n; i++) {
		int ok = r[i].t_ready > 0 && r[i].status == 0;
		if (r[i].t_ready > 0)
			st[ns++] = r[i].t_ready - r[i].t0;
		if (ok)
			tot[nt++] = r[i].t_end - r[i].t0;
		if (!ok) {
			fails++;
			if (first < 0)
				first = i;
		}
	}
	show("start", st, ns);
	show("total", tot, nt);
	printf("failures %d\n", fails);
	printf("peak %d\n", peak);
	printf("wall %.0f\n", wall);
	if (first >= 0)
		printf("first_failure %s/%d.err status %d\n", errdir, first, r[first].status);
	return 0;
}
