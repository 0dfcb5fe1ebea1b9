/* SPDX-License-Identifier: MIT */
/* What enroll's option files share (enroll_opts.c, enroll_allow.c). */
#ifndef HERMETIC_CLI_ENROLL_OPTS_H
#define HERMETIC_CLI_ENROLL_OPTS_H

#include <stdio.h>

struct enroll;

/* "PREFIX: message", where help is, exit EXIT_USAGE. */
void bad_usage(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

/* One --allow spec, resolved into e's allow list and names (usage errors
 * die through bad_usage). */
void enroll_resolve_allow(struct enroll *e, const char *spec);

/* Record an option for the journal (enroll_opts.c). */
void enroll_add_opt(struct enroll *e, const char *name, const char *value);

/* enroll_identity.c: --identity and --dir-order into e (usage errors exit;
 * -ENOMEM); the report's "identity" object (the plan before the fork:
 * engine/launch_identity.c). */
int enroll_identity_option(struct enroll *e, const char *name, const char *arg);
struct json_object;
struct json_object *enroll_identity_json(const struct enroll *e);
/* hermetic status: where --identity's axes come from for a run started
 * here (here: confine_prepare's plan for such a run) */
struct confine;
struct json_object *enroll_identity_status_json(const struct confine *here);

/* enroll_usage.c: enroll --help, on f. */
void enroll_usage(FILE *f);

#endif
