/* SPDX-License-Identifier: MIT */
/*
 * enroll --record: the shim's per-thread streams land in a private spool;
 * when the run is over they are assembled, with the configuration, the
 * machine's fingerprint, the kernel's stream and the exit status, into one
 * journal (lib/journal.h) kept in DIR and in hermeticd's store.
 *
 * Also what replay shares with it: the kernel's view of a journal.
 */
#ifndef HERMETIC_ENGINE_RECORD_H
#define HERMETIC_ENGINE_RECORD_H

#include <stdint.h>
#include "journal.h"
#include "audit.h"
#include "engine.h"

struct enroll;

/* Before the run: the spool (0700, under $TMPDIR) and DIR; -errno. */
int record_setup(struct enroll *e, struct eng_error *err);
/* HERMETIC_RECORD for CMD. */
void record_export_env(struct enroll *e);
/* CMD's environment is final: take the machine's fingerprint (-ENOMEM). */
int record_before_spawn(struct enroll *e, struct eng_error *err);
/* The run is over (cgroup empty), before RUN_END: fetch the kernel's
 * stream when a journal is to be written (a failed run, --keep-passing).
 * Apart from record_finish so that a restart of the daemon while it is
 * read is known to the note the journal carries. */
void record_prepare(struct enroll *e, int code);
/* Then, for a failed run or with --keep-passing, write the journal, index
 * it and hand it to the store. code is CMD's exit code. */
void record_finish(struct enroll *e, int code);
/* Remove the spool. */
void record_cleanup(struct enroll *e);

/* Inside record.c and record_scopes.c: */
const char *record_spool(const struct enroll *e);
const char *record_dir(const struct enroll *e); /* DIR, absolute, or "" */
/* The stream files of one spool directory (dfd is taken) as stream sections. */
int record_write_dir(struct enroll *e, struct hm_journal_writer *w, int dfd);
/* The spool's scope directories as scope sections with their streams:
 * every one, or only the scope whose directory is only and its continuations. */
int record_write_scopes(struct enroll *e, struct hm_journal_writer *w, const char *only);
/* DIR/index.json gets the journal name (of a scope's, with its name). */
int record_index_update(struct enroll *e, const char *name, const char *scope);
/* --journal-per-scope: a journal in DIR for each scope left failed, written
 * with fill(w, e, its directory). Returns how many were kept, or -errno. */
typedef int (*record_fill_scope_fn)(struct hm_journal_writer *w, struct enroll *e,
				    const char *dir);
int record_scope_journals(struct enroll *e, record_fill_scope_fn fill);

/* Each record of a journal's kernel stream (include/hermetic/trace.h), in
 * the journal's order, as one event: fn(event, userdata). Chunks of records
 * smaller than an event (not this hermetic's) are skipped. A nonzero return
 * of fn ends the walk and is returned; 0 when every record was seen. */
typedef int (*journal_kernel_fn)(const struct hm_trace_event *ev, void *userdata);
int journal_kernel_each(const struct hm_journal *j, journal_kernel_fn fn, void *userdata);

/* The audit (lib/audit.h) of a journal's kernel stream, as the daemon saw
 * the run. a->procs is malloc'ed: free it. Returns 0 or -ENOMEM. */
int journal_audit(const struct hm_journal *j, struct hm_audit_acc *a);

#endif
