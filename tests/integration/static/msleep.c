/* Waits on the run's clock in static musl C (static.sh): sleep(20) and
 * usleep(1500), measured on CLOCK_MONOTONIC. */
#include <stdio.h>
#include <time.h>
#include <unistd.h>

int main(void)
{
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	sleep(20);
	usleep(1500);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("slept %lld us\n",
	       ((b.tv_sec - a.tv_sec) * 1000000000LL + b.tv_nsec - a.tv_nsec) / 1000);
	return 0;
}
