/* Waits on the run's clock in static musl C (static.sh): sleep(N) (20 by
 * default) and usleep(1500), measured on CLOCK_MONOTONIC. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	sleep(argc > 1 ? atoi(argv[1]) : 20);
	usleep(1500);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("slept %lld us\n",
	       ((b.tv_sec - a.tv_sec) * 1000000000LL + b.tv_nsec - a.tv_nsec) / 1000);
	return 0;
}
