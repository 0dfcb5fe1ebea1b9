// SPDX-License-Identifier: MIT
/* The shim's per-descriptor tables (preload/fdtab.h): no fixed bound, set
 * and read back across segment edges, clearing never allocates, racing
 * threads growing one segment agree, reset empties. */
#include <limits.h>
#include <pthread.h>
#include "../../preload/fdtab.c"
#include "test.h"

struct ent {
	int v;
	char pad[48];
};
#define ESHIFT 10

static struct ent *ent(struct hm_fdtab *t, int fd, bool make)
{
	return hm_fdtab_at(t, (unsigned)fd, sizeof(struct ent), ESHIFT, make);
}

static struct hm_fdtab race;
static void *racer(void *arg)
{
	for (int fd = 5000 + (int)(long)arg; fd < 9000; fd += 4)
		hm_fdbits_set(&race, fd, true);
	return NULL;
}

static int segments(struct hm_fdtab *t)
{
	int n = 0;

	for (int k = 0; k < HM_FDTAB_SEGS; k++)
		n += atomic_load(&t->seg[k]) != NULL;
	return n;
}

int main(void)
{
	static const int fds[] = { 0, 1, 63, 64, 1023, 1024, 1030, 3071, 3072, 19999, 1 << 20,
				   INT_MAX - 1, INT_MAX };
	struct hm_fdtab bits = { 0 }, tab = { 0 };
	bool ok = true, neigh = true;
	pthread_t th[4];

	CHECK("empty table: nothing set", !hm_fdbits_get(&bits, 1030) && !ent(&tab, 1030, false));
	hm_fdbits_set(&bits, 1030, false);
	hm_fdbits_set(&bits, -1, true);
	CHECK("clearing or a negative descriptor allocates nothing", segments(&bits) == 0);
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		struct ent *e = ent(&tab, fds[i], true);

		hm_fdbits_set(&bits, fds[i], true);
		if (!e || !hm_fdbits_get(&bits, fds[i]))
			ok = false;
		else
			e->v = (int)((unsigned)fds[i] + 1);
	}
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		struct ent *e = ent(&tab, fds[i], false);

		ok &= e && e->v == (int)((unsigned)fds[i] + 1);
		if (fds[i] > 1 && fds[i] - 1 != fds[i - 1])
			neigh &= !hm_fdbits_get(&bits, fds[i] - 1);
		if (fds[i] < INT_MAX && (i + 1 == sizeof(fds) / sizeof(fds[0]) || fds[i] + 1 != fds[i + 1]))
			neigh &= !hm_fdbits_get(&bits, fds[i] + 1);
	}
	CHECK("bits and entries at 0..INT_MAX read back as set, across segment edges", ok);
	CHECK("their neighbours stay clear", neigh);
	CHECK("consecutive descriptors across an edge have distinct entries",
	      ent(&tab, 1023, false) != ent(&tab, 1024, true) && ent(&tab, 3071, false) != ent(&tab, 3072, false));
	hm_fdbits_set(&bits, 1030, false);
	CHECK("a bit clears", !hm_fdbits_get(&bits, 1030) && hm_fdbits_get(&bits, 1024));
	for (long i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, racer, (void *)i);
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	ok = true;
	for (int fd = 5000; fd < 9000; fd++)
		ok &= hm_fdbits_get(&race, fd);
	CHECK("four threads growing the same segments: every bit set is seen", ok);
	hm_fdbits_reset(&bits);
	CHECK("reset: empty, no segment left", !hm_fdbits_get(&bits, 0) && !hm_fdbits_get(&bits, 1 << 20) &&
						       segments(&bits) == 0);
	T_EXIT();
}
