/* SCTBench's stack: a pusher and a popper share an array stack with an
 * unlocked top index; a pop that sees a slot not yet written (or one slot
 * popped twice) is the bug. Racing instructions: the index updates and
 * the slot accesses (no call). */
#include <pthread.h>
#include <stdio.h>
#define N 50000
static volatile int stack[2 * N + 8], top, bad, pushed_all;
static void *pusher(void *a)
{
	for (int i = 1; i <= N; i++) {
		int t = top;
		stack[t] = i;
		top = t + 1;
	}
	pushed_all = 1;
	return a;
}
static void *popper(void *a)
{
	int popped = 0;
	while (!pushed_all || top > 0) {
		int t = top;
		if (t > 0) {
			int v = stack[t - 1];
			stack[t - 1] = 0;
			top = t - 1;
			if (v == 0)
				bad = 1;
			popped++;
		}
	}
	if (popped != N)
		bad = 1;
	return a;
}
int main(void)
{
	pthread_t p, q;
	pthread_create(&q, NULL, popper, NULL);
	pthread_create(&p, NULL, pusher, NULL);
	pthread_join(p, NULL);
	pthread_join(q, NULL);
	printf("%s\n", bad ? "stack corrupted" : "stack fine");
	return bad;
}
