/* Check-then-act on lazy initialisation (unlocked double-checked init):
 * two threads may both find the instance missing and both build it.
 * Racing instructions: the test of inst and its store, around the
 * constructor's loop (no call). */
#include <pthread.h>
#include <stdio.h>
struct obj { int v[65536]; };
static struct obj pool[2];
static struct obj *volatile inst;
static volatile int built;
static struct obj *get(int me)
{
	if (!inst) {
		struct obj *o = &pool[me];
		for (int i = 0; i < 65536; i++)
			o->v[i] = i;
		built++;
		inst = o;
	}
	return inst;
}
static void *user(void *a)
{
	(void)get((int)(long)a);
	return a;
}
int main(void)
{
	pthread_t t[2];
	for (long i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, user, (void *)i);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("built %d time(s)\n", built);
	return built != 1;
}
