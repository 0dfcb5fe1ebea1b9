/* Order violation / lost wake-up: the waiter tests the flag outside the
 * mutex and then waits; a signal sent between the test and the wait is
 * lost, and the waiter times out after 300 ms (exit 1). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static volatile int ready, lost;
static void *waiter(void *a)
{
	if (!ready) {
		struct timespec ts;
		for (volatile int k = 0; k < 300; k++) /* "prepare to wait" */
			;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 300000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_mutex_lock(&m);
		if (pthread_cond_timedwait(&cv, &m, &ts) == ETIMEDOUT)
			lost = 1;
		pthread_mutex_unlock(&m);
	}
	return a;
}
static void *signaller(void *a)
{
	for (volatile int k = 0; k < 2000; k++) /* "work" */
		;
	pthread_mutex_lock(&m);
	ready = 1;
	pthread_cond_signal(&cv);
	pthread_mutex_unlock(&m);
	return a;
}
int main(void)
{
	pthread_t w, s;
	pthread_create(&w, NULL, waiter, NULL);
	pthread_create(&s, NULL, signaller, NULL);
	pthread_join(w, NULL);
	pthread_join(s, NULL);
	printf("%s\n", lost ? "wake-up lost" : "woken");
	return lost;
}
