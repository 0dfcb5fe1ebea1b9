/* The same as gostatic.go in C, linked statically with musl (musl-gcc -static):
 * clock_gettime, gettimeofday and time through the vDSO, getrandom, and the
 * 16 bytes AT_RANDOM points at (musl's stack canary; Go's hash seeds). */
#include <stdio.h>
#include <sys/auxv.h>
#include <time.h>
#include <sys/time.h>
#include <sys/random.h>
int main(void)
{
	struct timespec ts;
	struct timeval tv;
	unsigned char b[16];

	clock_gettime(CLOCK_REALTIME, &ts);
	gettimeofday(&tv, NULL);
	if (getrandom(b, sizeof(b), 0) != sizeof(b))
		return 2;
	printf("now %lld.%09ld\n", (long long)ts.tv_sec, ts.tv_nsec);
	printf("tv %lld\n", (long long)tv.tv_sec);
	printf("time %lld\n", (long long)time(NULL));
	printf("rand ");
	for (int i = 0; i < 16; i++)
		printf("%02x", b[i]);
	printf("\n");
	const unsigned char *r = (const unsigned char *)getauxval(AT_RANDOM);

	printf("atrandom ");
	for (int i = 0; r && i < 16; i++)
		printf("%02x", r[i]);
	printf("\n");
	return 0;
}
