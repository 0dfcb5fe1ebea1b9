/* Two processes over a file: each adds to a counter kept in a file by
 * read, add, write (no lock); an update is lost when the other process
 * writes between one's read and write. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#define N 2000
static int bump(int fd)
{
	char buf[32] = {0};
	if (pread(fd, buf, sizeof(buf) - 1, 0) < 0)
		return -1;
	int n = atoi(buf) + 1;
	int len = snprintf(buf, sizeof(buf), "%-12d\n", n);
	return pwrite(fd, buf, len, 0) == len ? 0 : -1;
}
int main(void)
{
	char path[] = "/tmp/schedcorpus.XXXXXX";
	int fd = mkstemp(path), st;
	char buf[32] = {0};
	if (fd < 0)
		return 2;
	unlink(path);
	if (write(fd, "0           \n", 13) != 13)
		return 2;
	pid_t p = fork();
	for (int i = 0; i < N; i++)
		if (bump(fd) < 0)
			return 2;
	if (p == 0)
		_exit(0);
	waitpid(p, &st, 0);
	if (pread(fd, buf, sizeof(buf) - 1, 0) < 0)
		return 2;
	printf("counter %d (expected %d)\n", atoi(buf), 2 * N);
	return atoi(buf) != 2 * N;
}
