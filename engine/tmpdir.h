/* SPDX-License-Identifier: MIT */
/* A private (0700) temporary directory of hermetic's own — the recording
 * spool, the replay streams — removed when done, or when hermetic exits
 * any other way, without ever following a symlink out of it. */
#ifndef HERMETIC_ENGINE_TMPDIR_H
#define HERMETIC_ENGINE_TMPDIR_H

#include <limits.h>
#include <stdbool.h>
#include <sys/stat.h>
#include "engine.h"

struct run_tmpdir {
	char path[PATH_MAX];
	char name[64];
	int parent_fd;
	struct stat st;
	bool made;
	bool keep; /* set to leave it in place (its contents are the only copy) */
};

/* Make $TMPDIR/<prefix>-XXXXXX (or /tmp), and register it for removal at
 * exit. 0, or -errno with a reason in err naming what (e.g. "a recording
 * spool"). */
int run_tmpdir_make(struct run_tmpdir *t, const char *prefix, const char *what,
		    struct eng_error *err);

/* Remove it now (unless keep); safe to call more than once. */
void run_tmpdir_remove(struct run_tmpdir *t);

#endif
