/* SPDX-License-Identifier: MIT */
/* Inside the journal codec (journal.c, journal_parse.c, journal_read.c). */
#ifndef HERMETIC_JOURNAL_INT_H
#define HERMETIC_JOURNAL_INT_H

#include <stdbool.h>
#include <stdint.h>
#include "journal.h"

#define HEADER_SIZE 16
#define SEC_HEADER_SIZE 8
#define END_SIZE 8
#define DEFAULT_LEVEL 3
#define MAX_LEVEL 19 /* levels above use windows larger than readers accept */

/* Config flag bits. */
#define CF_SEED_SET 0x01
#define CF_CLOCK_VIRTUAL 0x02
#define CF_RNG 0x04
#define CF_ASLR 0x08
#define CF_LOOPBACK 0x10
#define CF_UNIX 0x20
#define CF_KNOWN 0x3f

struct sec_info {
	uint16_t type;
	uint16_t flags;
	const char *name;
};
/* A section type this version knows, or NULL. */
const struct sec_info *hm_journal_sec_info(uint16_t type);
uint32_t hm_journal_crc32c(uint32_t crc, const void *data, size_t n);
/* A scope section's fields as a reader accepts them. */
bool hm_journal_scope_ok(const struct hm_journal_scope *sc);
/* Format a message into err (if any); return code. */
int hm_journal_fail_msg(char *err, size_t errlen, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Parse a decompressed payload; takes ownership of it whatever happens. */
int hm_journal_parse_owned(uint8_t *payload, size_t len, struct hm_journal **ret, char *err,
			   size_t errlen);

#endif
