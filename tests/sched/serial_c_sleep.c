// SPDX-License-Identifier: MIT
/*
 * A lost update between blocking points (--sched serial, tests/integration/
 * sched_serial.sh): the updater reads the balance, sleeps (a blocking call
 * between the check and the act), and writes what it read plus its amount;
 * the depositor adds its own with no blocking call. If the updater reads
 * before the depositor runs, the deposit is lost. Which thread runs first
 * once main waits is the schedule's choice at a blocking point: under
 * --sched serial, the seed's. Exits 1 when the bug shows.
 */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static long balance = 100;

static void *updater(void *arg)
{
	long v = balance;

	(void)arg;
	usleep(1000);
	balance = v + 10;
	return NULL;
}

static void *depositor(void *arg)
{
	(void)arg;
	balance += 1;
	return NULL;
}

int main(void)
{
	pthread_t a, b;

	if (pthread_create(&a, NULL, updater, NULL) || pthread_create(&b, NULL, depositor, NULL))
		return 2;
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("balance %ld\n", balance);
	return balance == 111 ? 0 : 1;
}
