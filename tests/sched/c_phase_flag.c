/* A phase flag without a barrier: two workers fill the halves of a table,
 * the combiner waits only for worker 0's flag, because worker 0 has twice
 * the work and so "always finishes last". When worker 1 is held up, the
 * combiner reads its half unfilled. Racing instructions: worker 1's stores
 * and the combiner's loads after worker 0's flag (no call). */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#define HALF 4096
static volatile int table[2 * HALF];
static volatile int done0;
static void *worker(void *arg)
{
	int me = (int)(long)arg;
	for (int pass = 0; pass < (me ? 10 : 20); pass++)
		for (int i = 0; i < HALF; i++)
			table[me * HALF + i] = pass + 1;
	if (!me)
		done0 = 1;
	return arg;
}
static void *combiner(void *arg)
{
	long sum = 0;
	for (unsigned spin = 1; !done0; spin++)
		if (!(spin & 1023))
			sched_yield();
	for (int i = HALF; i < 2 * HALF; i++)
		sum += table[i] == 10;
	return (void *)(long)(sum != HALF);
}
int main(void)
{
	pthread_t w[2], c;
	void *bad;
	pthread_create(&c, NULL, combiner, NULL);
	for (long i = 0; i < 2; i++)
		pthread_create(&w[i], NULL, worker, (void *)i);
	pthread_join(c, &bad);
	for (int i = 0; i < 2; i++)
		pthread_join(w[i], NULL);
	puts(bad ? "the combiner read an unfinished half" : "the combiner read both halves");
	return bad != NULL;
}
