/* Order violation in a token ring: three threads take one turn each, in
 * order, appending to a log. The holder hands the token on (under the ring's lock, waking the
 * waiters) and only then advances the log's position, outside the lock
 * ("nobody else touches pos until it is their turn"); the next holder, if
 * it runs at once, appends at the same place and an entry is lost. The
 * window is the holder's unlock and its store of pos: a switch there (to
 * the woken thread) shows it. */
#include <pthread.h>
#include <stdio.h>
#define THREADS 3
#define TURNS 1
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int token;
static volatile int pos;
static volatile int entries[THREADS * TURNS];
static void *member(void *arg)
{
	int me = (int)(long)arg;
	for (int t = 0; t < TURNS; t++) {
		pthread_mutex_lock(&m);
		while (token != me)
			pthread_cond_wait(&cv, &m);
		int p = pos;
		entries[p] = me + 1;
		token = (me + 1) % THREADS;
		pthread_cond_broadcast(&cv);
		pthread_mutex_unlock(&m); /* passed on ... */
		pos = p + 1; /* ... before the position moves */
	}
	return arg;
}
int main(void)
{
	pthread_t t[THREADS];
	for (long i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, member, (void *)i);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	puts(pos != THREADS * TURNS ? "an entry of the log was lost" : "every entry logged");
	return pos != THREADS * TURNS;
}
