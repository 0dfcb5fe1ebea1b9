// SPDX-License-Identifier: MIT
/*
 * Libraries the hermetic binary loads on first use (cli/lazy_libs.c):
 * json-c, zstd and zlib are not linked into it, so a run that needs none of
 * them (most `enroll`s) does not pay the dynamic loader for them at start.
 * Trust: the SONAMEs are the build's (build/sonames.h), looked up by the
 * loader's usual search, as at start-up.
 */
#ifndef HERMETIC_CLI_LAZY_LIBS_H
#define HERMETIC_CLI_LAZY_LIBS_H

#include <stddef.h>

/* One library: what to open and which functions to resolve into slot[]. */
struct lazy_lib {
	const char *soname; /* "libjson-c.so.5" */
	const char *needed_for; /* "JSON", for the message when it is missing */
	const char *const *names; /* n function names */
	void **slot; /* n function pointers, filled by lazy_lib_open */
	size_t n;
	char why[256]; /* set when lazy_lib_open fails */
};

/* dlopen l->soname (RTLD_NOW | RTLD_LOCAL) and dlsym each of l->names into
 * l->slot: 0, or -ENOENT when the library cannot be loaded or a function is
 * missing from it, with l->why naming the library (and the function) and
 * the loader's reason; l->slot is then all NULL. */
int lazy_lib_open(struct lazy_lib *l);

/* Load the library now (once per process; the functions' first call would
 * otherwise): NULL, or the sentence saying which library is missing and
 * why, for a verb that would rather fail before it starts anything than
 * die at the library's first use (which is what the functions do). */
enum lazy_which { LAZY_JSONC, LAZY_ZSTD, LAZY_ZLIB };
const char *lazy_load(enum lazy_which which);

#endif
