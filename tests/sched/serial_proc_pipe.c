// SPDX-License-Identifier: MIT
/*
 * An order violation between two processes over a pipe (--sched serial,
 * tests/integration/sched_serial.sh): the parent forks a writer of "open"
 * and then a writer of "data", and reads the pipe assuming "open" comes
 * first because its writer was forked first. Which child runs first while
 * the parent waits is the schedule's choice at a blocking point. Exits 1
 * when the bug shows.
 */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static pid_t writer(int fd, const char *msg)
{
	pid_t pid = fork();

	if (pid == 0) {
		ssize_t n = write(fd, msg, strlen(msg));

		_exit(n == (ssize_t)strlen(msg) ? 0 : 2);
	}
	return pid;
}

int main(void)
{
	int p[2];
	char buf[64] = "";
	size_t used = 0;
	ssize_t n;

	if (pipe(p) < 0 || writer(p[1], "open\n") < 0 || writer(p[1], "data\n") < 0)
		return 2;
	close(p[1]);
	while (used < sizeof(buf) - 1 && (n = read(p[0], buf + used, sizeof(buf) - 1 - used)) > 0)
		used += (size_t)n;
	while (wait(NULL) > 0)
		;
	fputs(buf, stdout);
	return strcmp(buf, "open\ndata\n") ? 1 : 0;
}
