/* SPDX-License-Identifier: MIT */
/*
 * Two journals of one command under one seed and one start, compared value
 * by value (hermetic check-determinism). Streams are matched by scope,
 * image and thread index (lib/lineage.h: ids derived from the lineage, never
 * the real pid), records by their index in the stream.
 */
#ifndef HERMETIC_CLI_JOURNAL_DIFF_H
#define HERMETIC_CLI_JOURNAL_DIFF_H

#include <stdbool.h>
#include <stdint.h>
#include "journal.h"

/* The first value two journals disagree on. */
struct jdiff {
	char scope[512]; /* the scope's name, "" outside scopes */
	char lineage[HM_LINEAGE_MAX]; /* the process's lineage key */
	char exe[HM_EXE_MAX]; /* what its image runs */
	uint32_t thread; /* thread index within the image */
	uint64_t index; /* call number, 1-based (0: the whole stream) */
	char kind[96]; /* "entropy bytes", "clock reading", "wait outcome", ... */
	char saw[2][640]; /* what each journal holds there */
};

/* Compare a and b. Returns 0 when every compared value is equal, 1 with
 * *ret naming the first that differs (in a's tree order of streams, then
 * call number; then streams only b has), or -EBADMSG (a stream that does
 * not decode: hm_journal_read validated it, so never expected). */
int jdiff_compare(const struct hm_journal *a, const struct hm_journal *b, struct jdiff *ret);

/* The values j holds: clock readings, entropy draws and wait outcomes. */
uint64_t jdiff_values(const struct hm_journal *j);

/* How far the run's virtual clock got: the largest wall-clock reading past
 * the start (--now), or monotonic reading or wait time past the monotonic
 * clock's start (each scope's own starts inside scopes). 0 without any. */
uint64_t jdiff_virtual_ns(const struct hm_journal *j);

#endif
