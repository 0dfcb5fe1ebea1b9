/* Lost update (SCTBench's account): a deposit, a withdrawal and an interest
 * thread read-modify-write one balance through a local copy, unlocked.
 * Racing instructions: the copy and the write-back (no call). */
#include <pthread.h>
#include <stdio.h>
#define N 50000
static volatile long balance = 1000;
static void *deposit(void *a)
{
	for (int i = 0; i < N; i++) {
		long tmp = balance;
		tmp += 3;
		balance = tmp;
	}
	return a;
}
static void *withdraw(void *a)
{
	for (int i = 0; i < N; i++) {
		long tmp = balance;
		tmp -= 2;
		balance = tmp;
	}
	return a;
}
int main(void)
{
	pthread_t d, w;
	pthread_create(&d, NULL, deposit, NULL);
	pthread_create(&w, NULL, withdraw, NULL);
	pthread_join(d, NULL);
	pthread_join(w, NULL);
	printf("balance %ld (expected %d)\n", balance, 1000 + N);
	return balance != 1000 + N;
}
