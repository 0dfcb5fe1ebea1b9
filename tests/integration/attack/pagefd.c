// SPDX-License-Identifier: MIT
/*
 * pagefd MODE CMD ARGS...: do something to the run's clock page descriptor
 * (HERMETIC_CLOCK_FD), then exec CMD. For tests/integration/trust_page.sh.
 *   range   close_range(3, ~0U, 0) through libc (the shim spares the page)
 *   raw     close the page's descriptor with a raw syscall (the shim cannot
 *           see it: CMD's processes must ask hermeticd for the page)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "rawsys.h"

int main(int argc, char **argv)
{
	const char *v = getenv("HERMETIC_CLOCK_FD");
	int fd = v ? atoi(v) : -1;

	if (argc < 3 || fd < 0) {
		fprintf(stderr, "usage: HERMETIC_CLOCK_FD=... pagefd range|raw CMD...\n");
		return 2;
	}
	if (!strcmp(argv[1], "range")) {
		if (close_range(3, ~0U, 0) < 0) {
			perror("close_range");
			return 1;
		}
	} else if (!strcmp(argv[1], "raw")) {
		long r = hm_sys(SYS_close, fd, 0, 0);

		if (r < 0) {
			fprintf(stderr, "raw close(%d): %s\n", fd, strerror((int)-r));
			return 1;
		}
	} else {
		return 2;
	}
	execvp(argv[2], argv + 2);
	perror(argv[2]);
	return 127;
}
