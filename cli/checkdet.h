/* SPDX-License-Identifier: MIT */
/*
 * hermetic check-determinism, in three parts: checkdet.c runs the command
 * and compares the journals, checkdet_output.c compares stdout and says
 * the verdict, checkdet_pids.c reads the process and thread ids of a run
 * as the processes its journal names.
 */
#ifndef HERMETIC_CLI_CHECKDET_H
#define HERMETIC_CLI_CHECKDET_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include "journal.h"
#include "journal_diff.h"
#include "tmpdir.h"

#define CD_PIDLINES_MAX 64 /* stdout lines the note keeps (the rest counted) */
#define CD_PIDLINES_TEXT 8 /* of those, shown in text */

/* One run's ids named by their place in the run (checkdet_pids.c). */
struct cd_pids;

struct cd_run {
	int status; /* enroll's exit status */
	char out[PATH_MAX + 32], err[PATH_MAX + 32], report[PATH_MAX + 32], dir[PATH_MAX + 32];
	struct hm_journal *j;
	struct cd_pids *pids; /* made when a line of stdout needs it */
};

/* What two runs disagree on; found: any of it. */
struct cd_diff {
	unsigned other; /* the run compared with run 1 (0-based) */
	bool status, value, output;
	struct jdiff v;
	unsigned long line; /* stdout: the first line that differs, 1-based */
	char lines[2][512]; /* and each run's (or "(none: output ended)") */
};

/* A stdout line that differed only in the runs' own process ids, each
 * naming the same process of its run. */
struct cd_pidline {
	unsigned long line; /* 1-based */
	unsigned other; /* the run whose line it was compared with (0-based) */
	char names[256]; /* the processes, ", "-separated: "1.2, [~1]" */
};

struct checkdet {
	unsigned runs;
	bool json;
	char **pass, **cmd; /* enroll's options; CMD */
	size_t n_pass;
	uint64_t seed;
	bool seed_drawn;
	int64_t now_ns;
	struct run_tmpdir dir;
	struct cd_run *r;
	struct cd_pidline pidlines[CD_PIDLINES_MAX]; /* in order of line */
	size_t n_pidlines;
	unsigned long pidlines_total; /* lines, kept or not */
};

/* checkdet_output.c: stdout of run 1 and run k line by line; a line that
 * differs only in ids naming the same processes goes to c->pidlines. 0 when
 * they agree, 1 with d->line and d->lines set at the first line that
 * differs otherwise. */
int cd_diff_stdout(struct checkdet *c, unsigned k, struct cd_diff *d);
void cd_print_text(const struct checkdet *c, int found, const struct cd_diff *d);
void cd_print_json(const struct checkdet *c, int found, const struct cd_diff *d);

/*
 * checkdet_pids.c. The ids of j's run named by the process (or thread)
 * they were: a process with a thread stream by its identity (lineage key
 * for people), a thread by its image and index ("1.2 thread 3"), a process
 * without a stream by its place among the kernel stream's forks ("[~1.2.1]":
 * the first child of 1.2, "[~1]": the run's first process), which never
 * equals a stream's name. An id two processes had is no one's. Returns 0 or
 * -ENOMEM.
 */
int cd_pids_make(const struct hm_journal *j, struct cd_pids **ret);
void cd_pids_free(struct cd_pids *p);
/* Do lines a (of the run pa names) and b (pb) differ only in numbers that
 * are ids naming the same process in each run? 1 with their names in
 * names ("1.2, [~1]"), 0 when anything else differs (or nothing does). */
int cd_pids_same_line(const struct cd_pids *pa, const char *a, const struct cd_pids *pb, const char *b,
		      char *names, size_t size);

#endif
