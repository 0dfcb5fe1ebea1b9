/* Timed futex waits of a static program on the run's clock (static.sh):
 *   rt    FUTEX_WAIT_BITSET on CLOCK_REALTIME, absolute 3 s after the run's
 *         wall clock now, nobody wakes it: ETIMEDOUT, and the wall clock
 *         says 3 s later;
 *   mono  the same on CLOCK_MONOTONIC;
 *   rel   FUTEX_WAIT with a relative 3 s timeout;
 *   wake  FUTEX_WAIT with a 20 s timeout, woken by a thread that sleeps
 *         1 s, changes the word and calls FUTEX_WAKE: woken (0) after 1 s;
 *   cond  pthread_cond_timedwait 5 s ahead on CLOCK_REALTIME: ETIMEDOUT.
 * Each line: the case, the outcome, the virtual time it took in ms. */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* <linux/futex.h> is not in musl-gcc's path */
#define FUTEX_WAIT_PRIVATE 128
#define FUTEX_WAKE_PRIVATE 129
#define FUTEX_WAIT_BITSET 9
#define FUTEX_PRIVATE_FLAG 128
#define FUTEX_CLOCK_REALTIME 256

static uint32_t word;

static int64_t ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static long fx(int op, uint32_t val, const struct timespec *ts, uint32_t mask)
{
	return syscall(SYS_futex, &word, op, val, ts, NULL, mask);
}

static void *waker(void *arg)
{
	(void)arg;
	sleep(1);
	__atomic_store_n(&word, 1, __ATOMIC_SEQ_CST);
	fx(FUTEX_WAKE_PRIVATE, 1, NULL, 0);
	return NULL;
}

static void report(const char *what, long r, int64_t t0, clockid_t c)
{
	printf("%s %s %lld ms\n", what, r == 0 ? "woken" : errno == ETIMEDOUT ? "timeout" : strerror(errno),
	       (long long)((ns(c) - t0) / 1000000));
}

int main(void)
{
	struct timespec ts;
	int64_t t0;
	long r;

	t0 = ns(CLOCK_REALTIME);
	ts = (struct timespec){ .tv_sec = (t0 + 3000000000LL) / 1000000000LL,
				.tv_nsec = (t0 + 3000000000LL) % 1000000000LL };
	r = fx(FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME, 0, &ts, ~0u);
	report("rt", r, t0, CLOCK_REALTIME);

	t0 = ns(CLOCK_MONOTONIC);
	ts = (struct timespec){ .tv_sec = (t0 + 3000000000LL) / 1000000000LL,
				.tv_nsec = (t0 + 3000000000LL) % 1000000000LL };
	r = fx(FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, 0, &ts, ~0u);
	report("mono", r, t0, CLOCK_MONOTONIC);

	t0 = ns(CLOCK_MONOTONIC);
	ts = (struct timespec){ .tv_sec = 3 };
	r = fx(FUTEX_WAIT_PRIVATE, 0, &ts, 0);
	report("rel", r, t0, CLOCK_MONOTONIC);

	pthread_t th;
	t0 = ns(CLOCK_MONOTONIC);
	pthread_create(&th, NULL, waker, NULL);
	ts = (struct timespec){ .tv_sec = 20 };
	do
		r = fx(FUTEX_WAIT_PRIVATE, 0, &ts, 0);
	while (r < 0 && errno == EINTR);
	report("wake", r, t0, CLOCK_MONOTONIC);
	pthread_join(th, NULL);

	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t c = PTHREAD_COND_INITIALIZER;
	t0 = ns(CLOCK_REALTIME);
	ts = (struct timespec){ .tv_sec = (t0 + 5000000000LL) / 1000000000LL,
				.tv_nsec = (t0 + 5000000000LL) % 1000000000LL };
	pthread_mutex_lock(&m);
	r = pthread_cond_timedwait(&c, &m, &ts);
	pthread_mutex_unlock(&m);
	errno = r;
	report("cond", r ? -1 : 0, t0, CLOCK_REALTIME);
	return 0;
}
