// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for every parser of journal bytes. The first input byte
 * picks what the rest is fed to:
 *   0  hm_journal_read: a journal file (zstd frame)
 *   1  hm_journal_parse: a decompressed payload, as is
 *   2  hm_journal_parse: sections, framed by a valid header and an end
 *      section with the right count and CRC-32C, so that mutations get past
 *      the integrity check into the section parsers
 *   3  hm_jstream_scan and the record decoder: one thread stream
 * A parsed journal is then walked completely (strings, streams, records).
 *
 * Build and run: tests/fuzz/run.sh [SECONDS]
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "journal.h"
#include "jstream.h"

#define CAP (16u << 20) /* decompression cap while fuzzing */

static uint32_t crc32c(uint32_t crc, const uint8_t *p, size_t n)
{
	crc = ~crc;
	while (n--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = crc & 1 ? (crc >> 1) ^ 0x82f63b78u : crc >> 1;
	}
	return ~crc;
}

static volatile size_t sink;

static void walk_stream(const uint8_t *p, size_t len)
{
	struct hm_jstream_dec d;
	struct hm_jrec r;
	int k;

	if (hm_jstream_dec_init(&d, p, len) < 0) {
		if (!d.why)
			abort();
		return;
	}
	sink += strlen(d.hdr.lineage) + strlen(d.hdr.exe);
	while ((k = hm_jstream_next(&d, &r)) > 0) {
		/* Every pointer a record hands out lies inside the input. */
		if (r.type == HM_JREC_ENTROPY &&
		    (r.entropy.bytes < p || r.entropy.bytes + r.entropy.len > p + len))
			abort();
		if (r.type == HM_JREC_EXT && (r.ext.bytes < p || r.ext.bytes + r.ext.len > p + len))
			abort();
		if (r.type == HM_JREC_ENTROPY && r.entropy.len)
			sink += r.entropy.bytes[r.entropy.len - 1];
		sink += strlen(hm_jrec_call_name(r.type, r.call));
	}
	if (k < 0 && !d.why)
		abort();
}

static void walk_journal(const struct hm_journal *j)
{
	for (size_t i = 0; i < j->config.argc; i++)
		sink += strlen(j->config.argv[i]);
	if (j->config.argv && j->config.argv[j->config.argc])
		abort();
	for (size_t i = 0; i < j->config.n_opts; i++)
		sink += strlen(j->config.opts[i].key) + strlen(j->config.opts[i].value);
	for (size_t i = 0; i < j->fingerprint.n_fields; i++)
		sink += strlen(j->fingerprint.fields[i].key) +
			strlen(j->fingerprint.fields[i].value);
	for (size_t i = 0; i < j->fingerprint.n_env; i++)
		sink += strlen(j->fingerprint.env[i].key) +
			(j->fingerprint.env[i].value ? strlen(j->fingerprint.env[i].value) : 0);
	for (size_t i = 0; i < j->n_streams; i++) {
		const struct hm_journal_stream *s = &j->streams[i];

		walk_stream(s->data, s->len);
		if (hm_journal_find_stream(j, s->sum.hdr.image, s->sum.hdr.thread) == NULL)
			abort();
	}
	for (size_t i = 0; i < j->n_kernel; i++)
		if (j->kernel[i].n_records)
			sink += j->kernel[i].records[(size_t)j->kernel[i].n_records *
							     j->kernel[i].record_size -
						     1];
	sink += (size_t)j->kernel_events + (size_t)j->kernel_dropped;
}

static void check(int r, const char *err, struct hm_journal *j)
{
	if (r == 0) {
		walk_journal(j);
		hm_journal_free(j);
	} else if (!err[0]) {
		abort(); /* every refusal says why */
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hm_journal *j = NULL;
	struct hm_jstream_summary sum;
	const char *why = NULL;
	char err[256] = "";
	uint8_t *buf;
	size_t n, off, count;
	uint32_t crc;
	int r;

	if (size < 1)
		return 0;
	n = size - 1;
	switch (data[0] & 3) {
	case 0:
		r = hm_journal_read(data + 1, n, CAP, &j, err, sizeof(err));
		check(r, err, j);
		break;
	case 1:
		r = hm_journal_parse(data + 1, n, &j, err, sizeof(err));
		check(r, err, j);
		break;
	case 2:
		/* header (minor from the input's second byte), sections, end. */
		buf = malloc(16 + n + 16);
		if (!buf)
			return 0;
		memcpy(buf, HM_JOURNAL_MAGIC, 8);
		buf[8] = HM_JOURNAL_MAJOR;
		buf[9] = 0;
		buf[10] = n ? data[1] & 1 : 0; /* minor 0 or 1: both rule sets */
		buf[11] = 0;
		memset(buf + 12, 0, 4);
		memcpy(buf + 16, data + 1, n);
		for (off = 16, count = 0; off + 8 <= 16 + n; count++) {
			uint32_t len = buf[off + 4] | buf[off + 5] << 8 | buf[off + 6] << 16 |
				       (uint32_t)buf[off + 7] << 24;

			if (len > 16 + n - off - 8)
				break;
			off += 8 + len;
		}
		crc = crc32c(0, buf, 16 + n);
		memcpy(buf + 16 + n, "\xff\xff\x01\x00\x08\x00\x00\x00", 8);
		memcpy(buf + 16 + n + 8, &(uint32_t){ (uint32_t)count }, 4);
		memcpy(buf + 16 + n + 12, &crc, 4);
		r = hm_journal_parse(buf, 16 + n + 16, &j, err, sizeof(err));
		check(r, err, j);
		free(buf);
		break;
	case 3:
		r = hm_jstream_scan(data + 1, n, &sum, &why);
		if ((r < 0 && !why) || sum.valid_len > n)
			abort();
		walk_stream(data + 1, n);
		break;
	}
	return 0;
}
