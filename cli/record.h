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
#include "audit.h"

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

/* The audit (lib/audit.h) of a journal's kernel stream, as the daemon saw
 * the run. a->procs is malloc'ed: free it. Returns 0 or -ENOMEM. */
int journal_audit(const struct hm_journal *j, struct hm_audit_acc *a);

#endif
