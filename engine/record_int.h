/* SPDX-License-Identifier: MIT */
/* What record.c and record_index.c share: one recording's state. */
#ifndef HERMETIC_CLI_RECORD_INT_H
#define HERMETIC_CLI_RECORD_INT_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include "journal.h"
#include "tmpdir.h"
#include "hermetic/trace.h"

#define INDEX_NAME "index.json"

struct enroll;

struct record {
	struct run_tmpdir spool; /* spool.keep: no journal could be kept anywhere */
	char dir[PATH_MAX]; /* DIR, absolute; "" without one */
	char cwd[PATH_MAX]; /* enroll's working directory: the git commit */
	struct hm_journal_fingerprint fp;
	bool have_fp;
	/* the kernel's stream */
	int kfd;
	bool kstream_asked; /* record_prepare */
	struct hm_kstream_hdr khdr;
	const uint8_t *krec;
	size_t kmap_len;
	void *kmap;
	/* assembly */
	int code;
	uint64_t streams, cut_bytes, cut_streams, bad_streams;
};

/* The command as one line, for lists and indexes ("ls -l"-style quoting
 * is not needed). */
void record_command_line(const struct enroll *e, char *buf, size_t size);

/* record_streams.c: the run's kernel stream from hermeticd, mapped into
 * the recording (a warning, and none, when it cannot be had). */
void record_fetch_kstream(struct enroll *e);

#endif
