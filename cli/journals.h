// SPDX-License-Identifier: MIT
/* What the journals command's files share (cli/journals*.c). */
#ifndef HM_CLI_JOURNALS_H
#define HM_CLI_JOURNALS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <json-c/json.h>
#include "journal.h"

#ifndef EXIT_DATAERR
#define EXIT_DATAERR 65 /* sysexits EX_DATAERR: the journal is malformed */
#endif
#ifndef EXIT_NOINPUT
#define EXIT_NOINPUT 66 /* sysexits EX_NOINPUT: the journal cannot be opened */
#endif
#define EXIT_CANTCREAT 73 /* sysexits EX_CANTCREAT: fetch cannot write its output */

/* One process: the streams of one process id (its images and their
 * threads), contiguous in the journal's tree order. */
struct proc {
	const char *lineage;
	uint64_t id, parent; /* process, and the image that created it */
	size_t first, n; /* range in j->streams */
	uint64_t threads; /* streams: threads of all its images */
	uint64_t gens; /* images: the last image's gen + 1 */
	uint64_t clock, entropy, entropy_bytes, wait, timed_out, lag, ext;
	const struct hm_jstream_summary *last_main; /* thread 0 of the last image */
};

bool jl_is_id(const char *s);
uint64_t jl_parse_id(const char *s);
uint8_t *jl_fetch_bytes(uint64_t id, size_t *ret_len);
const char *jl_fmt_ns(uint64_t ns, char *buf, size_t size);
const char *jl_fmt_time(int64_t ns, char *buf, size_t size);
const char *jl_fmt_bytes(uint64_t n, char *buf, size_t size);
void jl_put_shell_word(const char *s);
void jl_put_safe(const char *s);
const char *jl_end_name(const struct hm_jstream_summary *s);
size_t jl_group_procs(const struct hm_journal *j, struct proc *p);
json_object *jl_jstr(const char *s);
json_object *jl_jhex(uint64_t v);
const char *jl_proc_images(const struct hm_journal *j, const struct proc *p, char *buf,
			       size_t size);
const char *jl_clock_name(int32_t id);
const char *jl_fmt_reading(int32_t id, int64_t ns, char *buf, size_t size);
void jl_hex(const uint8_t *p, size_t n, char *out);
const char *jl_end_reason_name(uint64_t reason);
json_object *jl_show_records(const struct hm_journal_stream *st, bool json);
int jl_journals_show(int argc, char **argv); /* journals_show.c */
int jl_journals_list(int argc, char **argv); /* journals_list.c */
/* journals_json.c: show --json, the journal and its processes p[0..np) */
void jl_show_json(const char *path, size_t fsize, const struct hm_journal *j, struct proc *p,
		  size_t np, bool records);
/* An error reply of a store request: dies, the exit code saying what kind. */
void jl_store_die(int err, const char *msg, const char *what) __attribute__((noreturn));

#endif
