/* Deadlock (lock-order inversion) with a timeout: two threads take two
 * locks in opposite orders; a thread that cannot get its second lock
 * within 300 ms reports the deadlock (exit 1) rather than hang. The race:
 * a switch between one thread's two lock calls. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>
static pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER, b = PTHREAD_MUTEX_INITIALIZER;
static volatile int deadlock, shared;
static void lock2(pthread_mutex_t *first, pthread_mutex_t *second)
{
	struct timespec ts;
	pthread_mutex_lock(first);
	for (volatile int k = 0; k < 200; k++)
		;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += 300000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	if (pthread_mutex_timedlock(second, &ts) == ETIMEDOUT) {
		deadlock = 1;
	} else {
		shared++;
		pthread_mutex_unlock(second);
	}
	pthread_mutex_unlock(first);
}
static void *t1(void *x)
{
	for (int i = 0; i < 2000 && !deadlock; i++)
		lock2(&a, &b);
	return x;
}
static void *t2(void *x)
{
	for (int i = 0; i < 2000 && !deadlock; i++)
		lock2(&b, &a);
	return x;
}
int main(void)
{
	pthread_t p, q;
	pthread_create(&p, NULL, t1, NULL);
	pthread_create(&q, NULL, t2, NULL);
	pthread_join(p, NULL);
	pthread_join(q, NULL);
	printf("%s\n", deadlock ? "deadlock (timed out)" : "no deadlock");
	return deadlock;
}
