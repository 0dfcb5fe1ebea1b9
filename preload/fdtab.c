// SPDX-License-Identifier: MIT
/*
 * Growing the descriptor tables of fdtab.h: one anonymous mapping per
 * segment (MAP_NORESERVE: pages are committed when an entry is written), by
 * raw syscalls (no malloc, no interposed mmap; safe in a signal
 * handler and in a vfork child, whose mappings are its parent's).
 */
#include <sys/mman.h>
#include "shim.h"

static size_t seg_bytes(unsigned k, size_t elem, unsigned shift)
{
	return ((size_t)1 << k << shift) * elem;
}

char *hm_fdtab_grow(struct hm_fdtab *t, unsigned k, size_t elem, unsigned shift)
{
	size_t len = seg_bytes(k, elem, shift);
	char *expect = NULL;
	long p;
	int e = errno;

	if (k == 0 && len <= sizeof(t->first)) {
		/* All zeros while unpublished: reset clears it when it
		 * unpublishes it (a single-threaded fork child). */
		if (!atomic_compare_exchange_strong_explicit(&t->seg[0], &expect, t->first,
							     memory_order_acq_rel,
							     memory_order_acquire))
			return expect;
		return t->first;
	}
	p = hm_sys6(SYS_mmap, 0, (long)len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p < 0 && p > -4096) {
		errno = e;
		return atomic_load_explicit(&t->seg[k], memory_order_acquire);
	}
	if (!atomic_compare_exchange_strong_explicit(&t->seg[k], &expect, (char *)p,
						     memory_order_acq_rel, memory_order_acquire)) {
		hm_sys(SYS_munmap, p, len, 0); /* another thread published first */
		errno = e;
		return expect;
	}
	errno = e;
	return (char *)p;
}

void hm_fdtab_reset(struct hm_fdtab *t, size_t elem, unsigned shift)
{
	for (unsigned k = 0; k < HM_FDTAB_SEGS; k++) {
		char *s = atomic_exchange(&t->seg[k], NULL);

		if (s == t->first)
			memset(t->first, 0, sizeof(t->first));
		else if (s)
			hm_sys(SYS_munmap, s, seg_bytes(k, elem, shift), 0);
	}
}
