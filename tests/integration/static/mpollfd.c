/* Polls of the run's own descriptors in a static program, on the run's
 * clock (static.sh):
 *   ready    poll of a pipe a child writes after sleeping 2 s: 1 after 2000 ms,
 *            revents POLLIN;
 *   timeout  poll of a pipe nobody writes (and of a negative descriptor,
 *            ignored) for 3 s: 0 after 3000 ms;
 *   ppoll    ppoll of a pipe a child writes after 1 s, a 5 s timeout: 1
 *            after 1000 ms;
 *   now      poll of a pipe with data waiting: 1 after 0 ms.
 * Each line: the case, what it returned, the revents of the pipe, the
 * virtual time it took in ms. */
#define _GNU_SOURCE
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int64_t ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A child that writes a byte to fd after secs seconds. */
static pid_t writer(int fd, unsigned secs)
{
	pid_t pid = fork();

	if (pid == 0) {
		sleep(secs);
		if (write(fd, "x", 1) != 1)
			_exit(1);
		_exit(0);
	}
	return pid;
}

int main(void)
{
	struct timespec ts = { 5, 0 };
	struct pollfd a[2];
	int p[2], q[2];
	int64_t t0;
	char c;
	int r;

	if (pipe(p) < 0 || pipe(q) < 0)
		return 1;
	writer(p[1], 2);
	a[0] = (struct pollfd){ .fd = p[0], .events = POLLIN };
	t0 = ms();
	r = poll(a, 1, 5000);
	printf("ready %d %d %lld ms\n", r, a[0].revents, (long long)(ms() - t0));
	wait(NULL);
	if (read(p[0], &c, 1) != 1)
		return 1;
	a[0] = (struct pollfd){ .fd = -1, .events = POLLIN };
	a[1] = (struct pollfd){ .fd = q[0], .events = POLLIN };
	t0 = ms();
	r = poll(a, 2, 3000);
	printf("timeout %d %d %lld ms\n", r, a[1].revents, (long long)(ms() - t0));
	writer(p[1], 1);
	a[0] = (struct pollfd){ .fd = p[0], .events = POLLIN };
	t0 = ms();
	r = ppoll(a, 1, &ts, NULL);
	printf("ppoll %d %d %lld ms\n", r, a[0].revents, (long long)(ms() - t0));
	wait(NULL);
	t0 = ms();
	r = poll(a, 1, 5000);
	printf("now %d %d %lld ms\n", r, a[0].revents, (long long)(ms() - t0));
	return 0;
}
