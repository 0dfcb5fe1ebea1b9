// SPDX-License-Identifier: MIT
/*
 * The run's file-times table (docs/file-times.md): for each inode the run
 * wrote or saw change, the real times the kernel stamped on it and the
 * virtual time each one stands for. It lives in the run's clock page
 * (include/hermetic/vclock.h, HM_VCLOCK_FILES), so every shim process of
 * the run shares it, whoever started it and however (the page is opened by
 * name, as the clock is).
 *
 * A stamp is given the run's page time (mono + wall offset, no thread's
 * ticks) when a process of the run first meets it: right after its own
 * write (files.c calls in with HM_FT_WROTE, which also replaces a stamp the
 * kernel did not change because the write fell in the same tick), or in a
 * stat that finds a stamp the table does not know (a write by stdio, a
 * static binary or a program outside the run). Page time moves only while
 * the whole run is idle, so every process meeting one stamp before the run
 * next idles records the same value, whichever is first in real time: the
 * result does not depend on the race.
 *
 * Entries: open addressing on a 64-bit hash of (dev, ino), linear probing,
 * a small lock word each. A holder that dies inside its few instructions
 * leaves the lock set: a waiter takes it over after a bounded spin (the
 * entry then may hold a half-written pair, which only makes that file's
 * time wrong, never anything else). A full table answers "unknown" and
 * files.c falls back to the constant shift.
 */
#include <sched.h>
#include "shim.h"

_Static_assert(sizeof(struct hm_vfile) == 64, "one cache line per entry");
_Static_assert(sizeof(struct hm_vclock) <= HM_VCLOCK_HDR, "header fits its page");
_Static_assert((HM_VFILES & (HM_VFILES - 1)) == 0, "a power of two");

#define PROBES 64
#define SPINS (1 << 16)

static uint64_t key_of(uint64_t dev, uint64_t ino)
{
	uint64_t k = dev * 0x9e3779b97f4a7c15ULL ^ ino;

	/* splitmix64's finaliser: every input bit reaches every output bit */
	k = (k ^ (k >> 30)) * 0xbf58476d1ce4e5b9ULL;
	k = (k ^ (k >> 27)) * 0x94d049bb133111ebULL;
	k ^= k >> 31;
	return k ? k : 1;
}

static void lock(struct hm_vfile *f)
{
	uint32_t zero;

	for (int i = 0; i < SPINS; i++) {
		zero = 0;
		if (__atomic_compare_exchange_n(&f->lock, &zero, 1, false, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			return;
		if (i % 64 == 63)
			hm_sys(SYS_sched_yield, 0, 0, 0);
	}
	/* Its holder died inside: take it over (see above). */
	__atomic_store_n(&f->lock, 1, __ATOMIC_SEQ_CST);
}

static void unlock(struct hm_vfile *f)
{
	__atomic_store_n(&f->lock, 0, __ATOMIC_RELEASE);
}

/* The entry of (dev, ino), claimed if new (claim); NULL: the table is full,
 * or (!claim) it has none. */
static struct hm_vfile *entry(uint64_t dev, uint64_t ino, bool claim)
{
	struct hm_vfile *tab = HM_VCLOCK_FILES(hm.vc);
	uint64_t k = key_of(dev, ino), cur;

	for (uint64_t i = 0; i < PROBES; i++) {
		struct hm_vfile *f = &tab[(k + i) & (HM_VFILES - 1)];

		cur = __atomic_load_n(&f->key, __ATOMIC_ACQUIRE);
		if (cur == k)
			return f;
		if (cur)
			continue;
		if (!claim)
			return NULL;
		if (__atomic_compare_exchange_n(&f->key, &cur, k, false, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE) ||
		    cur == k)
			return f;
	}
	return NULL;
}

bool hm_ft_map(uint64_t dev, uint64_t ino, int64_t t[HM_FT_N], const int64_t set[HM_FT_N])
{
	struct hm_vfile *f = entry(dev, ino, true);
	int64_t now = hm_clock_page_wall();
	bool dirty;

	if (!f)
		return false;
	lock(f);
	dirty = f->dirty;
	for (int i = 0; i < HM_FT_N; i++) {
		if (t[i] == HM_FT_SKIP)
			continue;
		if (set[i] == HM_FT_SEEN && f->real[i] == t[i]) {
			t[i] = f->virt[i];
			continue;
		}
		if (set[i] == HM_FT_SEEN && dirty && i != HM_FT_A_INDEX) {
			/* the stamp of a write hm_ft_rewrote marked: its time */
			f->real[i] = t[i];
			t[i] = f->virt[i];
			f->dirty = 0;
			continue;
		}
		f->real[i] = t[i];
		f->virt[i] = set[i] == HM_FT_SEEN || set[i] == HM_FT_NOW ? now : set[i];
		t[i] = f->virt[i];
		if (i != HM_FT_A_INDEX)
			f->dirty = 0;
	}
	unlock(f);
	return true;
}

/* fd's inode was written again at page time now, and its last stamp was
 * recorded at now too (files.c): mark it so (true), or say the caller must
 * look (false: no entry, or its times are no longer now's, set by a
 * utimensat or another write at another time). */
bool hm_ft_rewrote(uint64_t dev, uint64_t ino, int64_t now)
{
	struct hm_vfile *f = entry(dev, ino, false);
	bool ok;

	if (!f)
		return false;
	lock(f);
	ok = f->virt[0] == now && f->virt[1] == now && f->real[0] && f->real[1];
	if (ok)
		f->dirty = 1;
	unlock(f);
	return ok;
}
