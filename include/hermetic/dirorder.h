/* SPDX-License-Identifier: MIT */
/*
 * --dir-order seeded: the one order the shim (preload/dirorder.c, readdir)
 * and the supervisor (engine/supervise_dirorder.c, a static or Go
 * binary's getdents64) give a directory's names, so a C and a Go program
 * list one directory alike under one seed: by a hash of each name keyed by
 * the run's key (FNV-1a, then a 64-bit finaliser), the name breaking ties.
 */
#ifndef HERMETIC_DIRORDER_H
#define HERMETIC_DIRORDER_H

#include <stdint.h>
#include <string.h>

static inline uint64_t hm_dirorder_hash(const char *s, uint64_t key)
{
	uint64_t h = 0xcbf29ce484222325ULL ^ key;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return h;
}

/* <0, 0, >0 as a comes before b: seeded (key) or by name (seeded false). */
static inline int hm_dirorder_cmp(const char *a, const char *b, int seeded, uint64_t key)
{
	if (seeded) {
		uint64_t ha = hm_dirorder_hash(a, key), hb = hm_dirorder_hash(b, key);

		if (ha != hb)
			return ha < hb ? -1 : 1;
	}
	return strcmp(a, b);
}

#endif
