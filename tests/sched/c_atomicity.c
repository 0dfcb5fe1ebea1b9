/* Atomicity violation: a logger thread reads a two-field position (x, y)
 * that the mover updates in two steps; it must always see x == y.
 * Racing instructions: the mover's two stores and the reader's two loads
 * (no call). */
#include <pthread.h>
#include <stdio.h>
static volatile int x, y, done, torn;
static void *mover(void *a)
{
	for (int i = 1; i <= 200000; i++) {
		x = i;
		y = i;
	}
	done = 1;
	return a;
}
static void *reader(void *a)
{
	for (int k = 0; k < 200000 && !done; k++) {
		int xx = x, yy = y;
		if (xx != yy)
			torn = 1;
	}
	return a;
}
int main(void)
{
	pthread_t m, r;
	pthread_create(&m, NULL, mover, NULL);
	pthread_create(&r, NULL, reader, NULL);
	pthread_join(m, NULL);
	pthread_join(r, NULL);
	printf("reader %s\n", torn ? "saw a torn position" : "saw whole positions");
	return torn;
}
