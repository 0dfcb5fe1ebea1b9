// SPDX-License-Identifier: MIT
/*
 * ns per call of the clock and entropy entry points the shim wraps, timed
 * with a raw clock_gettime syscall that no preload library can intercept,
 * on the thread's CPU clock: the time it ran, not the time other load on
 * the machine took it off its CPU.
 * Prints "name value" lines; shim-bench.sh runs it natively, under
 * libfaketime, under the shim and under the shim recording (HERMETIC_RECORD),
 * and tabulates. Usage: shim_bench [N [MIB_REPS]].
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <sys/time.h>

static int64_t raw_now(void)
{
	struct timespec ts;
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(SYS_clock_gettime), "D"(CLOCK_THREAD_CPUTIME_ID), "S"(&ts)
			 : "rcx", "r11", "memory");
	(void)ret;
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static volatile uint64_t sink;

#define BENCH(name, n, body)                                                                      \
	do {                                                                                       \
		int64_t t0 = raw_now();                                                            \
		for (long i = 0; i < (n); i++) {                                                   \
			body;                                                                      \
		}                                                                                  \
		printf("%s %.1f\n", name, (double)(raw_now() - t0) / (n));                         \
	} while (0)

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 5000000;
	struct timespec ts;
	struct timeval tv;
	unsigned char buf[16];
	size_t big = 1 << 20;
	unsigned char *mb = malloc(big);
	long reps = argc > 2 ? atol(argv[2]) : 200;

	BENCH("clock_gettime_realtime", n, clock_gettime(CLOCK_REALTIME, &ts); sink += ts.tv_nsec);
	BENCH("clock_gettime_monotonic", n, clock_gettime(CLOCK_MONOTONIC, &ts); sink += ts.tv_nsec);
	BENCH("gettimeofday", n, gettimeofday(&tv, NULL); sink += tv.tv_usec);
	BENCH("getrandom_16", n / 10, getrandom(buf, sizeof(buf), 0); sink += buf[3]);
	{
		int64_t t0 = raw_now();

		for (long i = 0; i < reps; i++) {
			size_t got = 0;

			while (got < big) {
				ssize_t r = getrandom(mb + got, big - got, 0);

				if (r <= 0)
					return 1;
				got += r;
			}
			sink += mb[7];
		}
		printf("getrandom_1MiB_MBps %.0f\n",
		       (double)reps * big / 1e6 / ((double)(raw_now() - t0) / 1e9));
	}
	return 0;
}
