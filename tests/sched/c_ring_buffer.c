/* A bounded queue's index race: the producer of a single-producer,
 * single-consumer ring buffer advances tail before it stores the item
 * ("the consumer is never that fast"); the consumer, seeing the new tail,
 * takes the slot's old item. Racing instructions: the producer's store of
 * tail then of the slot, the consumer's loads of tail and the slot (no
 * call). Both sides yield every 1024 spins when the ring is full or empty. */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#define CAP 64
#define ITEMS 100000
static volatile int ring[CAP];
static volatile unsigned head, tail;
static volatile int bad;
static void *producer(void *arg)
{
	for (int v = 1; v <= ITEMS; v++) {
		unsigned t = tail;
		for (unsigned spin = 1; t - head == CAP; spin++)
			if (!(spin & 1023))
				sched_yield();
		tail = t + 1; /* the index first ... */
		ring[t % CAP] = v; /* ... then the item */
	}
	return arg;
}
static void *consumer(void *arg)
{
	for (int want = 1; want <= ITEMS; want++) {
		unsigned h = head;
		for (unsigned spin = 1; h == tail; spin++)
			if (!(spin & 1023))
				sched_yield();
		if (ring[h % CAP] != want)
			bad = 1;
		head = h + 1;
	}
	return arg;
}
int main(void)
{
	pthread_t p, c;
	pthread_create(&c, NULL, consumer, NULL);
	pthread_create(&p, NULL, producer, NULL);
	pthread_join(p, NULL);
	pthread_join(c, NULL);
	puts(bad ? "the consumer took a stale item" : "every item taken in order");
	return bad;
}
