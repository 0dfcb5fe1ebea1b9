/* A static program that execs argv[1..] with an empty environment through
 * the raw syscall: what a Go program's os/exec with cmd.Env set does. The
 * image it starts is dynamic, without the shim in its environment. */
#include <stdio.h>
#include <unistd.h>
#include <sys/syscall.h>

int main(int argc, char **argv)
{
	char *env[] = { "TZ=UTC", NULL };

	if (argc < 2)
		return 2;
	syscall(SYS_execve, argv[1], argv + 1, env);
	perror("execve");
	return 127;
}
