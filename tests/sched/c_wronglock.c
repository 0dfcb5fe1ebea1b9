/* SCTBench's wronglock: two threads guard one counter with different
 * mutexes (a refactoring split the lock); updates are lost. The racing
 * instructions are inside each critical section (between lock calls). */
#include <pthread.h>
#include <stdio.h>
#define N 20000
static pthread_mutex_t m1 = PTHREAD_MUTEX_INITIALIZER, m2 = PTHREAD_MUTEX_INITIALIZER;
static volatile int count;
static void *inc(void *a)
{
	pthread_mutex_t *m = a;
	for (int i = 0; i < N; i++) {
		pthread_mutex_lock(m);
		int c = count;
		for (volatile int k = 0; k < 5; k++)
			;
		count = c + 1;
		pthread_mutex_unlock(m);
	}
	return NULL;
}
int main(void)
{
	pthread_t p, q;
	pthread_create(&p, NULL, inc, &m1);
	pthread_create(&q, NULL, inc, &m2);
	pthread_join(p, NULL);
	pthread_join(q, NULL);
	printf("count %d (expected %d)\n", count, 2 * N);
	return count != 2 * N;
}
