/* Reordered publication: the producer raises the ready flag before it has
 * written the data (the author's "harmless" reordering), the consumer
 * trusts the flag. Racing instructions: the stores of ready and data, and
 * the consumer's loads (no call). */
#include <pthread.h>
#include <stdio.h>
static volatile int ready, data, bad, stop;
static void *producer(void *a)
{
	for (int r = 1; r <= 20000; r++) {
		ready = r;
		for (volatile int k = 0; k < 3; k++)
			;
		data = r;
	}
	stop = 1;
	return a;
}
static void *consumer(void *a)
{
	while (!stop) {
		int r = ready;
		if (r && data < r - 1)
			bad = 1;
	}
	return a;
}
int main(void)
{
	pthread_t p, c;
	pthread_create(&c, NULL, consumer, NULL);
	pthread_create(&p, NULL, producer, NULL);
	pthread_join(p, NULL);
	pthread_join(c, NULL);
	printf("consumer %s\n", bad ? "read stale data" : "was fine");
	return bad;
}
