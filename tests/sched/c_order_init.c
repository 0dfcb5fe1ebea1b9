/* Order violation: the main thread starts a worker and only then sets up
 * the table the worker reads (it "always" came first on the author's
 * machine). Racing instructions: the worker's load of table and main's
 * store to it, after a short computation (no call). */
#include <pthread.h>
#include <stdio.h>
static int cells[65536];
static int *volatile table;
static volatile int seen_null;
static void *worker(void *a)
{
	if (!table)
		seen_null = 1;
	return a;
}
int main(void)
{
	pthread_t t;
	pthread_create(&t, NULL, worker, NULL);
	for (int i = 0; i < 65536; i++) /* "fill the table" */
		cells[i] = i * 7;
	table = cells;
	pthread_join(t, NULL);
	printf("worker saw %s\n", seen_null ? "no table" : "the table");
	return seen_null;
}
