// SPDX-License-Identifier: MIT
/*
 * Output in an order that only scheduling decides (--sched serial,
 * tests/integration/sched_serial.sh): five threads meet at a barrier three
 * times and each writes a line after each meeting; who writes first after
 * a barrier opens is the schedule's choice. Two runs of one serial seed
 * print the same; the kernel's own schedule varies.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define N 5
static pthread_barrier_t bar;

static void *worker(void *arg)
{
	long id = (long)arg;
	char line[32];

	for (int r = 0; r < 3; r++) {
		pthread_barrier_wait(&bar);
		snprintf(line, sizeof(line), "t%ld r%d\n", id, r);
		if (write(1, line, strlen(line)) < 0)
			return NULL;
	}
	return NULL;
}

int main(void)
{
	pthread_t t[N];

	pthread_barrier_init(&bar, NULL, N);
	for (long i = 0; i < N; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)i))
			return 2;
	for (int i = 0; i < N; i++)
		pthread_join(t[i], NULL);
	return 0;
}
