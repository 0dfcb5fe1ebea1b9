// SPDX-License-Identifier: MIT
/*
 * Opening a library on first use (cli/lazy_libs.h): dlopen by SONAME, each
 * function by dlsym, and a sentence naming what is missing. Pure of exits
 * and printing; cli/lazy_libs.c decides what a failure does.
 * Trust: the SONAME is the build's and the search the loader's own
 * (LD_LIBRARY_PATH, the cache, the system directories), exactly as at
 * start-up when the library was linked; hermetic is not set-uid.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "lazy_libs.h"

int lazy_lib_open(struct lazy_lib *l)
{
	const char *e;
	void *h;
	size_t i;

	/* RTLD_NOW: a library that cannot bind its own symbols fails here,
	 * not at some later call; RTLD_LOCAL: its symbols stay out of the
	 * global scope, where they would meet hermetic's trampolines of the
	 * same names. Never closed: the pointers live as long as the process. */
	h = dlopen(l->soname, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		e = dlerror();
		snprintf(l->why, sizeof(l->why), "cannot load %s, which %s needs: %s", l->soname,
			 l->needed_for, e ? e : "unknown error");
		return -ENOENT;
	}
	for (i = 0; i < l->n; i++) {
		(void)dlerror();
		l->slot[i] = dlsym(h, l->names[i]);
		if (!l->slot[i]) {
			e = dlerror();
			snprintf(l->why, sizeof(l->why), "cannot load %s, which %s needs: no function %s (%s)",
				 l->soname, l->needed_for, l->names[i], e ? e : "null symbol");
			memset(l->slot, 0, l->n * sizeof(*l->slot));
			/* The handle stays open: harmless, and dlclose could run
			 * the library's destructors on a half-made state. */
			return -ENOENT;
		}
	}
	return 0;
}
