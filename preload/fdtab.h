/* SPDX-License-Identifier: MIT */
/*
 * Tables indexed by descriptor number, without a fixed bound: a descriptor
 * the kernel hands out at 1030 or at the hard RLIMIT_NOFILE (up to
 * fs.nr_open) has its entry like descriptor 3.
 *
 * A table is HM_FDTAB_SEGS segments, allocated when an entry in them is
 * first set; segment k holds 2^k << SHIFT entries, for the indices
 * [(2^k - 1) << SHIFT, (2^(k+1) - 1) << SHIFT), so a lookup is a shift, a
 * count of leading zeros and one load, with no lock. Segments are mmap'd
 * with a raw syscall (the first one, when it fits, is the table's own
 * HM_FDTAB_FIRST bytes) and published with a compare-and-swap (the loser
 * unmaps its copy): async-signal-safe, so open/close/dup in a signal
 * handler may set entries; no malloc. They are never freed while the
 * process runs (a fork child inherits them; hm_fdtab_reset drops them
 * there when the table's contents do not carry over). A missing segment
 * reads as all zeros, so clearing an entry never allocates.
 *
 * The zero-initialised struct is an empty table. ELEM (bytes per entry) and
 * SHIFT are compile-time constants of each table, passed by its users.
 */
#ifndef HERMETIC_PRELOAD_FDTAB_H
#define HERMETIC_PRELOAD_FDTAB_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HM_FDTAB_SEGS 32
/* A first segment this small lives in the table itself (a bitmap's: 1024
 * descriptors), so that a process that opens a few files maps nothing. */
#define HM_FDTAB_FIRST 128

struct hm_fdtab {
	_Atomic(char *) seg[HM_FDTAB_SEGS];
	_Alignas(64) char first[HM_FDTAB_FIRST];
};

/* Map and publish segment k (2^k << shift entries of elem bytes). Returns
 * the segment in the table (ours or a racing thread's), NULL when out of
 * memory. */
char *hm_fdtab_grow(struct hm_fdtab *t, unsigned k, size_t elem, unsigned shift)
	__attribute__((visibility("hidden")));
/* Unmap every segment: the table is empty (a fork child's, single-threaded). */
void hm_fdtab_reset(struct hm_fdtab *t, size_t elem, unsigned shift)
	__attribute__((visibility("hidden")));

/* The entry for index i, or NULL when its segment does not exist and make
 * is false (or memory ran out). */
static inline void *hm_fdtab_at(struct hm_fdtab *t, unsigned i, size_t elem, unsigned shift,
				bool make)
{
	uint64_t q = ((uint64_t)i >> shift) + 1;
	unsigned k = 63 - __builtin_clzll(q);
	char *s;

	if (__builtin_expect(k >= HM_FDTAB_SEGS, 0))
		return NULL;
	s = atomic_load_explicit(&t->seg[k], memory_order_acquire);
	if (__builtin_expect(!s, 0)) {
		if (!make)
			return NULL;
		s = hm_fdtab_grow(t, k, elem, shift);
		if (!s)
			return NULL;
	}
	return s + ((uint64_t)i - (((1ULL << k) - 1) << shift)) * elem;
}

/* Sets of descriptors, one bit each, read and written from any thread:
 * tables of 64-bit words, the first segment 1024 descriptors. */
#define HM_FDBITS_SHIFT 4
static inline bool hm_fdbits_get(struct hm_fdtab *t, int fd)
{
	_Atomic uint64_t *w;

	if (fd < 0)
		return false;
	w = hm_fdtab_at(t, (unsigned)fd / 64, sizeof(*w), HM_FDBITS_SHIFT, false);
	return w && (atomic_load_explicit(w, memory_order_relaxed) >> (fd % 64)) & 1;
}
static inline void hm_fdbits_set(struct hm_fdtab *t, int fd, bool on)
{
	uint64_t bit;
	_Atomic uint64_t *w;

	if (fd < 0)
		return;
	bit = 1ULL << (fd % 64);
	w = hm_fdtab_at(t, (unsigned)fd / 64, sizeof(*w), HM_FDBITS_SHIFT, on);
	if (!w)
		return; /* clearing in a segment that does not exist, or no memory */
	if (on)
		atomic_fetch_or(w, bit);
	else if (atomic_load_explicit(w, memory_order_relaxed) & bit)
		atomic_fetch_and(w, ~bit);
}
static inline void hm_fdbits_reset(struct hm_fdtab *t)
{
	hm_fdtab_reset(t, sizeof(uint64_t), HM_FDBITS_SHIFT);
}

#endif
