/* SPDX-License-Identifier: MIT */
/* The hermetic CLI: one file per verb, dispatched from main.c. */
#ifndef HERMETIC_CLI_H
#define HERMETIC_CLI_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include "proto.h"
#include "config.h"

/* Exit codes of hermetic itself (a command's own status passes through). */
#define EXIT_USAGE 2 /* bad option or argument */
#define EXIT_DATAERR 65 /* a journal is malformed, truncated or too new */
#define EXIT_NOINPUT 66 /* a journal cannot be opened or fetched */
#define EXIT_NODAEMON 69 /* hermeticd cannot be reached */
#define EXIT_INTERNAL 70 /* hermetic or hermeticd failed */
#define EXIT_NESTED 77 /* enroll from inside a run */
#define EXIT_REPLAY HM_EXIT_REPLAY /* 87: strict replay, a value the journal lacks */
#define EXIT_CANNOT_EXEC 126
#define EXIT_NOT_FOUND 127

extern const char *program_name;

void die(int code, const char *fmt, ...) __attribute__((noreturn, format(printf, 2, 3)));
/* A failure of hermetic's own, returned up to the verb instead of dying
 * where it happened (enroll: the verb writes its --report line, then
 * exits): the exit status (above), the --report reason when it is not the
 * status's own (NULL), and the message. */
struct cli_fail {
	int status;
	const char *reason;
	char msg[2048];
};
/* Fill f and return -1: `return cli_fail(f, EXIT_INTERNAL, "%s", err.msg);`. */
int cli_fail(struct cli_fail *f, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* "hermetic: MSG" on stderr and exit with f's status. */
void cli_fail_exit(const struct cli_fail *f) __attribute__((noreturn));
void warnx_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* asprintf, or die: out of memory */
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* args[(*n)++] = s, keeping room for the NULL of an argv of max; dies
 * (EXIT_DATAERR) when a journal asks for more (replay rebuilds its run) */
void push_arg(char **args, size_t *n, size_t max, char *s);

/* A getopt_long (opterr = 0) error of verb ("hermetic status"): "unknown
 * option 'X'" or "option needs a value: 'X'", and where help is; returns
 * EXIT_USAGE. shortopts is the optstring getopt was given. */
int cli_bad_option(const char *verb, const char *shortopts, char **argv);
/* "VERB: <message>", then "Try 'VERB --help'.", and exit EXIT_USAGE. */
void cli_vusage_error(const char *verb, const char *fmt, va_list ap)
	__attribute__((noreturn, format(printf, 2, 0)));
/* The one of names[n] within two edits of word ("enrol": "enroll"), or NULL. */
const char *cli_near_miss(const char *word, const char *const *names, size_t n);

/* client.c: talking to hermeticd (the transport: engine/client.h) */
struct hm_client;
/* Connect or die with EXIT_NODAEMON and a message saying what to do. */
int cli_connect(void);
/* The same, returning -1 with f filled (EXIT_NODAEMON, or EXIT_USAGE for a
 * socket path too long) instead of dying. */
int cli_connect_fail(struct cli_fail *f);
/* client_call, or die (EXIT_INTERNAL) when the transport failed: returns
 * the payload length, or the daemon's HM_REP_ERROR as -err with *ret_msg
 * its message. */
ssize_t cli_call(struct hm_client *c, uint16_t type, const void *req, uint32_t len, int send_fd,
		 uint16_t expect, void *rep, size_t rep_size, bool exact, int *ret_fd,
		 const char **ret_msg);

int cmd_enroll(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_journals(int argc, char **argv);
/* journals show: the journal's scopes (journals_scopes.c) */
struct hm_journal;
struct json_object;
void journals_scopes_text(const struct hm_journal *j);
struct json_object *journals_scopes_json(const struct hm_journal *j);
int cmd_replay(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_hunt(int argc, char **argv); /* hunt.c */
int cmd_check_determinism(int argc, char **argv); /* checkdet.c */
/* report.c: a Markdown table cell's text (pipes escaped, HTML specials as
 * entities) and code span, on stdout. */
void report_md_text(const char *s);
void report_md_code(const char *s);
/* hunt_markdown.c: a hunt's --report FILE (its first line a hunt header),
 * and 'report --markdown' of hunt reports: one hunt's summary. */
bool hunt_is_report(const char *path);
int hunt_markdown(int n, char **paths);

#endif
