/* SCTBench's reorder: setter threads store a = 1 then b = -1 (and then both
 * back to 0); a checker that looks while they run asserts it sees (0, 0) or
 * (1, -1). Run side by side on two cores, a and b share a cache line and
 * the setter's two stores reach the checker together; seeing them disagree
 * needs the setter switched out between its two stores. Racing
 * instructions: the setters' two stores and the checker's two loads (no
 * call). */
#include <pthread.h>
#include <stdio.h>
#define SETTERS 3
#define ROUNDS 30000
#define LOOKS 200000
static volatile int a, b, bad, finished;
static void *setter(void *arg)
{
	for (int i = 0; i < ROUNDS; i++) {
		a = 1;
		b = -1;
		a = 0;
		b = 0;
	}
	__atomic_add_fetch(&finished, 1, __ATOMIC_SEQ_CST);
	return arg;
}
static void *checker(void *arg)
{
	for (int k = 0; k < LOOKS && finished < SETTERS; k++) {
		int x = a, y = b;
		if (!((x == 0 && y == 0) || (x == 1 && y == -1)))
			bad = 1;
	}
	return arg;
}
int main(void)
{
	pthread_t t[SETTERS + 1];
	for (int i = 0; i < SETTERS; i++)
		pthread_create(&t[i], NULL, setter, NULL);
	pthread_create(&t[SETTERS], NULL, checker, NULL);
	for (int i = 0; i <= SETTERS; i++)
		pthread_join(t[i], NULL);
	puts(bad ? "checker saw a and b disagree" : "checker saw a and b agree");
	return bad;
}
