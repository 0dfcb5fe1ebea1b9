/* SPDX-License-Identifier: MIT */
/* A private (0700) temporary directory of the CLI's own — the recording
 * spool, the replay streams — removed when done, or when hermetic exits
 * any other way, without ever following a symlink out of it. */
#ifndef HERMETIC_CLI_TMPDIR_H
#define HERMETIC_CLI_TMPDIR_H

#include <limits.h>
#include <stdbool.h>
#include <sys/stat.h>

struct cli_tmpdir {
	char path[PATH_MAX];
	char name[64];
	int parent_fd;
	struct stat st;
	bool made;
	bool keep; /* set to leave it in place (its contents are the only copy) */
};

/* Make $TMPDIR/<prefix>-XXXXXX (or /tmp), and register it for removal at
 * exit; dies with a message naming what (e.g. "a recording spool"). */
void cli_tmpdir_make(struct cli_tmpdir *t, const char *prefix, const char *what);

/* Remove it now (unless keep); safe to call more than once. */
void cli_tmpdir_remove(struct cli_tmpdir *t);

#endif
