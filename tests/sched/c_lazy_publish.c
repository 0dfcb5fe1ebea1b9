/* Lazy initialisation read before its publication is complete: the first
 * user of each slot allocates its object and publishes the pointer before
 * it fills the object in (the store of the pointer was moved up "because
 * nobody reads it yet"); another user walking the same slots reads the
 * published object's still-empty field. Racing instructions: the store of
 * the pointer and of the field, the reader's loads (no call). */
#include <pthread.h>
#include <stdio.h>
#define SLOTS 50000
struct obj {
	volatile int ready_value;
};
static struct obj pool[SLOTS];
static struct obj *volatile slot[SLOTS];
static volatile int bad;
static void *user(void *arg)
{
	for (int i = 0; i < SLOTS; i++) {
		struct obj *o = slot[i];
		if (!o) {
			o = &pool[i];
			slot[i] = o; /* published ... */
			o->ready_value = i + 1; /* ... before it is initialised */
		} else if (o->ready_value != i + 1) {
			bad = 1;
		}
	}
	return arg;
}
int main(void)
{
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, user, NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	puts(bad ? "a user read an object before its initialisation" : "every object read whole");
	return bad;
}
