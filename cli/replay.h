/* SPDX-License-Identifier: MIT */
/*
 * What replay takes from a journal and what it asks first (replay_policy.c):
 *
 * - The network: a journal never opens more than the replay's own command
 *   line does. Its --network off, --allow and --no-daemon are taken only
 *   when the replay says so itself (the same options) or --journal-policy
 *   accepts the journal's; what narrows (--no-loopback, --no-unix) is kept.
 * - Ownership: a journal that is not in the ledger of the journals this
 *   user recorded on this machine (trust.h) is shown (command, network,
 *   options) and run only after a "y" on a terminal, or with --yes.
 */
#ifndef HERMETIC_CLI_REPLAY_H
#define HERMETIC_CLI_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include "journal.h"
#include "proto.h"
#include "tmpdir.h"

#define EXIT_FOREIGN 79 /* a journal not yours, not confirmed (no terminal, no --yes, or "n") */

struct enroll;

struct replay_policy {
	bool yes; /* --yes */
	bool journal_policy; /* --journal-policy */
	const char *network; /* --network, NULL: not given (block) */
	bool no_daemon; /* --no-daemon */
	const char *allow[HM_RUN_MAX_ALLOW]; /* --allow, as given */
	size_t n_allow;
	char dropped[1024]; /* the journal's options not taken, for the note */
};

/* If argv[*i] is one of the policy's options, take it (and its value) and
 * return true; dies with EXIT_USAGE on a bad value. */
bool replay_policy_option(struct replay_policy *p, int argc, char **argv, int *i);

/* The journal's keys that the policy decides on (not pushed as recorded). */
bool replay_policy_key(const char *key);

/* Push the run's network options (enroll's syntax) for journal config c
 * onto args[*n..max). */
void replay_policy_push(struct replay_policy *p, const struct hm_journal_config *c, char **args,
			size_t *n, size_t max);

/* Before anything runs: a journal that is not ours (bytes as parsed) is
 * shown and run only if confirmed; dies with EXIT_FOREIGN otherwise. Says
 * which of the journal's options were not taken. */
void replay_policy_confirm(struct replay_policy *p, const char *source, const struct hm_journal *j,
			   const void *bytes, size_t len, const struct enroll *e);

/* One replay: the journal, the options, the private directory. */
struct replay {
	const char *source; /* the file or store id as given */
	struct hm_journal *j;
	unsigned char *bytes; /* the journal's file as parsed (its digest says whose it is) */
	size_t len;
	struct replay_policy pol;
	bool strict;
	const char *scope; /* --scope NAME */
	const char *sched; /* --sched VALUE: instead of the journal's */
	int32_t chosen; /* its occurrence in the journal (j->scopes), -1 none */
	struct run_tmpdir dir; /* private: streams/ and report */
	char streams[PATH_MAX + 16];
	char report[PATH_MAX + 16];
};

/* replay_load.c: the journal src names (a file, or a store id), its bytes
 * in rp->bytes; dies with EXIT_NOINPUT or EXIT_DATAERR. */
struct hm_journal *replay_load(struct replay *rp, const char *src);

/* replay_report.c: after CMD ended, what the shim reported (mismatches,
 * live values) on stderr; the exit status the replay ends with. */
int replay_read_report(struct replay *rp, int code);

/* replay_warn.c: before CMD starts, one line on stderr for each thing
 * that makes the replay less than faithful (dies only out of memory). */
void replay_warn_unfaithful(const struct hm_journal *j);

#endif
