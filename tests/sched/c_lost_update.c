/* Lost update: two threads increment a shared counter, unlocked.
 * Racing instructions: the load and the store of counter++ (no call). */
#include <pthread.h>
#include <stdio.h>
#define N 200000
static volatile int counter;
static void *work(void *a)
{
	for (int i = 0; i < N; i++)
		counter++;
	return a;
}
int main(void)
{
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, work, NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("counter %d (expected %d)\n", counter, 2 * N);
	return counter != 2 * N;
}
