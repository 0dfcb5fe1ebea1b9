// SPDX-License-Identifier: MIT
/*
 * noshim CMD [ARGS...]: exec CMD with no HERMETIC_* variables and no
 * LD_PRELOAD. Built static (no shim in this process, so nothing puts them
 * back on the way to execve): what a process of a run does to get past a
 * client's own "already in a run" check and reach the daemon's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

int main(int argc, char **argv)
{
	char **out = environ, **in;

	if (argc < 2) {
		fprintf(stderr, "usage: noshim CMD [ARGS...]\n");
		return 2;
	}
	for (in = environ; *in; in++)
		if (strncmp(*in, "HERMETIC_", 9) && strncmp(*in, "LD_PRELOAD=", 11))
			*out++ = *in;
	*out = NULL;
	/* The daemon socket is the test's, not the default: keep it. */
	if (getenv("NOSHIM_SOCKET"))
		setenv("HERMETIC_SOCKET", getenv("NOSHIM_SOCKET"), 1);
	execv(argv[1], argv + 1);
	perror("noshim: exec");
	return 127;
}
