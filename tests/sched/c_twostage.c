/* SCTBench's twostage: an update done in two critical sections that should
 * be one (stage one sets data1, stage two sets data2 = data1 + 1, each under
 * its own lock); a reader that takes the locks in turn finds data2 !=
 * data1 + 1 when it reads between the stages. The window is the writer's
 * unlock and next lock: a switch there, between two calls, shows it. */
#include <pthread.h>
#include <stdio.h>
#define ROUNDS 20000
#define READS 200
static pthread_mutex_t m1 = PTHREAD_MUTEX_INITIALIZER, m2 = PTHREAD_MUTEX_INITIALIZER;
static int data1, data2;
static volatile int bad;
static void *writer(void *arg)
{
	for (int i = 1; i <= ROUNDS; i++) {
		pthread_mutex_lock(&m1);
		data1 = i;
		pthread_mutex_unlock(&m1);
		pthread_mutex_lock(&m2);
		data2 = data1 + 1;
		pthread_mutex_unlock(&m2);
	}
	return arg;
}
static void *reader(void *arg)
{
	for (int k = 0; k < READS; k++) {
		int t1, t2;
		pthread_mutex_lock(&m1);
		t1 = data1;
		pthread_mutex_unlock(&m1);
		if (!t1)
			continue;
		pthread_mutex_lock(&m2);
		t2 = data2;
		pthread_mutex_unlock(&m2);
		if (t2 != t1 + 1)
			bad = 1;
	}
	return arg;
}
int main(void)
{
	pthread_t w, r;
	pthread_create(&w, NULL, writer, NULL);
	pthread_create(&r, NULL, reader, NULL);
	pthread_join(w, NULL);
	pthread_join(r, NULL);
	puts(bad ? "reader saw the two stages apart" : "reader saw whole updates");
	return bad;
}
