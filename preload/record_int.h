// SPDX-License-Identifier: MIT
/* What recording (record.c) and replay's reports (replay_report.c) share. */
#ifndef HM_PRELOAD_RECORD_INT_H
#define HM_PRELOAD_RECORD_INT_H

#include <stdbool.h>
#include <stdint.h>
#include "shim.h"


#define REC_BUF (64 * 1024)
#define PATH_BUF 4096
#define DESC_MAX 96

enum { ST_NONE, ST_OPEN, ST_OFF }; /* recording: not yet opened, open, failed */
enum { RP_NONE, RP_OPEN, RP_MISSING, RP_BAD }; /* replay */
enum { DATA, TIMING }; /* replay cursors */
enum { UNGET_NONE, UNGET_RECORDED, UNGET_LIVE };

struct hm_jr_thread {
	struct hm_jr_thread *next;
	size_t size; /* of this mapping */
	int busy; /* the owner is appending (only the owner writes it) */
	uint32_t index;
	pid_t tid;
	uint32_t epoch; /* hm.sc_epoch its streams belong to (scope.c) */
	/* recording */
	uint8_t rec; /* ST_* */
	bool exec_ended; /* END(exec) written, cut it if the exec fails */
	int fd;
	uint64_t end_off;
	struct hm_jstream_enc enc;
	/* the last CLOCK_MONOTONIC reading put (hm_jr_unput_clock): where its
	 * bytes start and end in buf, the predictor it replaced, the count of
	 * records before it; armed until another record or a take-back */
	bool undo_armed;
	size_t undo_start, undo_end;
	uint64_t undo_last, undo_delta, undo_n;
	/* replay: the last question was a CLOCK_MONOTONIC reading, answered
	 * from the timing cursor (UNGET_RECORDED) or live (UNGET_LIVE); reset
	 * by every question (hm_jr_unget_clock) */
	uint8_t unget;
	/* replay */
	uint8_t rep; /* RP_* */
	bool diverged; /* non-strict: said so once */
	const char *bad_why; /* RP_BAD: why */
	void *map;
	size_t map_len;
	struct cursor {
		struct hm_jstream_dec dec;
		struct hm_jrec held; /* the next record of the class, looked at, not consumed */
		bool have_held;
		bool eof; /* the stream ran out without an END (cut short) */
	} cur[2]; /* DATA, TIMING */
	uint64_t asked; /* values asked for */
	uint64_t live; /* values answered live (non-strict) */
	uint8_t buf[]; /* REC_BUF bytes when recording */
};

/* ---- small string building, no stdio ---- */

struct sbuf {
	char *p;
	size_t n, cap;
};

static inline void sb_str(struct sbuf *b, const char *s)
{
	while (s && *s && b->n + 1 < b->cap)
		b->p[b->n++] = *s++;
	b->p[b->n] = 0;
}

static inline void sb_u64(struct sbuf *b, uint64_t v)
{
	char t[24];

	hm_fmt_u64(t, sizeof(t), v);
	sb_str(b, t);
}

static inline void sb_hex(struct sbuf *b, uint64_t v)
{
	static const char digits[] = "0123456789abcdef";
	char t[17];

	for (int i = 0; i < 16; i++)
		t[i] = digits[(v >> (4 * (15 - i))) & 15];
	t[16] = 0;
	sb_str(b, t);
}

/* replay_report.c */
void hm_jr_describe(struct sbuf *b, enum hm_jrec_type type, uint8_t call, int32_t id,
		    size_t len, int outcome) HM_HIDDEN;
void hm_jr_mismatch(struct hm_jr_thread *t, uint64_t callno, const char *asked,
		    const char *recorded) HM_HIDDEN;
void hm_jr_report_live(struct hm_jr_thread *t) HM_HIDDEN;

#endif
