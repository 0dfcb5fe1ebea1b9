/* Two processes over a pipe: a child reports "BEGIN" and "END" in two
 * writes while the parent writes its own line; the reader expects the
 * child's two lines together. Interleaving between the child's two
 * write() calls is the bug. */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
int main(void)
{
	int fd[2], st;
	char out[256] = {0};
	size_t got = 0;
	ssize_t n;
	if (pipe(fd) < 0)
		return 2;
	pid_t c = fork();
	if (c == 0) {
		close(fd[0]);
		if (write(fd[1], "child BEGIN\n", 12) != 12)
			_exit(2);
		for (volatile int k = 0; k < 2000; k++)
			;
		if (write(fd[1], "child END\n", 10) != 10)
			_exit(2);
		_exit(0);
	}
	for (volatile int k = 0; k < 20000; k++) /* the parent's own work */
		;
	if (write(fd[1], "parent\n", 7) != 7)
		return 2;
	close(fd[1]);
	while ((n = read(fd[0], out + got, sizeof(out) - 1 - got)) > 0)
		got += (size_t)n;
	waitpid(c, &st, 0);
	int split = strstr(out, "BEGIN\nparent\n") != NULL;
	printf("%s", out);
	return split;
}
