/* A work queue's index race (work stealing without a CAS): two workers
 * take items by reading and bumping the head index; an item taken twice is
 * the bug. Racing instructions: the load of head and its store (no call). */
#include <pthread.h>
#include <stdio.h>
#define ITEMS 200000
static volatile int head;
static volatile unsigned char taken[ITEMS];
static volatile int twice;
static void *worker(void *a)
{
	for (;;) {
		int i = head;
		if (i >= ITEMS)
			break;
		head = i + 1;
		if (taken[i]++)
			twice = 1;
	}
	return a;
}
int main(void)
{
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("%s\n", twice ? "an item was taken twice" : "each item once");
	return twice;
}
