/* Prints the clock and the seeded stream before, inside and after scopes
 * named on the command line; "+N" sleeps N seconds, "!CMD" after a name runs
 * CMD with system() inside that scope. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/random.h>
#include "hermetic/hermetic.h"

static void show(const char *tag)
{
	struct timespec r, m;
	unsigned char b[8];

	clock_gettime(CLOCK_REALTIME, &r);
	clock_gettime(CLOCK_MONOTONIC, &m);
	getrandom(b, sizeof(b), 0);
	printf("%s wall %lld.%09ld mono %lld.%09ld rnd ", tag, (long long)r.tv_sec, r.tv_nsec,
	       (long long)m.tv_sec, m.tv_nsec);
	for (size_t i = 0; i < sizeof(b); i++)
		printf("%02x", b[i]);
	printf(" seed %llu\n", (unsigned long long)hermetic_seed());
	fflush(stdout);
}

int main(int argc, char **argv)
{
	show("before");
	for (int i = 1; i < argc; i++) {
		if (argv[i][0] == '+') {
			sleep(atoi(argv[i] + 1));
			show("slept");
		} else {
			int k = hermetic_scope_enter(argv[i], NULL, NULL);

			if (k < 0) {
				printf("enter %s: %s\n", argv[i], strerror(-k));
				return 1;
			}
			show(argv[i]);
			sleep(2);
			show(argv[i]);
			while (i + 1 < argc && argv[i + 1][0] == '!')
				if (system(argv[++i] + 1) != 0)
					return 1;
			hermetic_scope_leave(HERMETIC_SCOPE_PASSED);
			show("after");
		}
	}
	printf("leave outside: %s\n", strerror(-hermetic_scope_leave(HERMETIC_SCOPE_PASSED)));
	return 0;
}
