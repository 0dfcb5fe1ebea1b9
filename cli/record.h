/* SPDX-License-Identifier: MIT */
/*
 * enroll --record: the shim's per-thread streams land in a private spool;
 * when the run is over they are assembled, with the configuration, the
 * machine's fingerprint, the kernel's stream and the exit status, into one
 * journal (lib/journal.h) kept in DIR and in hermeticd's store.
 *
 * Also what replay shares with it: the kernel's view of a journal.
 */
#ifndef HERMETIC_CLI_RECORD_H
#define HERMETIC_CLI_RECORD_H

#include <stdint.h>
#include "journal.h"

struct enroll;

/* Before the run: the spool (0700, under $TMPDIR) and DIR. Dies on failure. */
void record_setup(struct enroll *e);
/* HERMETIC_RECORD for CMD. */
void record_export_env(struct enroll *e);
/* CMD's environment is final: take the machine's fingerprint. */
void record_before_spawn(struct enroll *e);
/* The run is over (cgroup empty), before RUN_END: fetch the kernel's stream
 * and, for a failed run or with --keep-passing, write the journal, index it
 * and hand it to the store. code is CMD's exit code. */
void record_finish(struct enroll *e, int code);
/* Remove the spool. */
void record_cleanup(struct enroll *e);

/* One process of a journal's kernel stream. */
struct kernel_proc {
	uint32_t pid;
	bool shim; /* its last image announced the shim */
	bool exec; /* it exec'd inside the run (or inherited an image that did) */
	char path[128];
	char comm[17];
	uint64_t getrandom, clock, random_reads, bytes;
};

/* The processes of a journal's kernel stream, in order of first sight.
 * Returns how many (*ret is malloc'ed, NULL when none) or -ENOMEM. */
ssize_t kernel_procs(const struct hm_journal *j, struct kernel_proc **ret);

#endif
