/* Check-then-act: two sellers take items while stock > 0; the check and
 * the decrement are not atomic, so an item is sold twice or a sale lost.
 * Racing instructions: the test of stock and its decrement (no call). */
#include <pthread.h>
#include <stdio.h>
#define STOCK 200000
static volatile int stock = STOCK;
static int sold[2];
static void *sell(void *a)
{
	int me = (int)(long)a;
	while (stock > 0) {
		int s = stock;
		stock = s - 1;
		sold[me]++;
	}
	return a;
}
int main(void)
{
	pthread_t t[2];
	for (long i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, sell, (void *)i);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("sold %d (stock was %d)\n", sold[0] + sold[1], STOCK);
	return sold[0] + sold[1] != STOCK;
}
