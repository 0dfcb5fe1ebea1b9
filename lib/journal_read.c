// SPDX-License-Identifier: MIT
/*
 * The journal codec, reading files: exactly one complete zstd frame, its
 * window and its content capped before and while decompressing, then the
 * payload parser (journal_parse.c).
 */
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <zstd.h>
#include "journal.h"
#include "util.h"
#include "journal_int.h"

/* --- reading: bounded decompression --------------------------------------------- */

static int decompress(const uint8_t *src, size_t len, size_t max, uint8_t **ret, size_t *ret_len,
		      char *err, size_t errlen)
{
	static const uint8_t zmagic[4] = { 0x28, 0xb5, 0x2f, 0xfd };
	unsigned long long csize;
	ZSTD_DCtx *dctx = NULL;
	ZSTD_inBuffer in = { src, len, 0 };
	ZSTD_outBuffer out = {};
	size_t limit = max + 1, cap, zr = 1;
	uint8_t *buf = NULL;
	int r;

	if (len < 4 || memcmp(src, zmagic, 4)) {
		if (len >= 8 && !memcmp(src, HM_JOURNAL_MAGIC, 8))
			return hm_journal_fail_msg(
				err, errlen, -EBADMSG,
				"not compressed: a bare journal payload, not a journal file");
		return hm_journal_fail_msg(err, errlen, -EBADMSG,
				"not a hermetic journal (no zstd frame at the start)");
	}
	csize = ZSTD_getFrameContentSize(src, len);
	if (csize == ZSTD_CONTENTSIZE_ERROR)
		return hm_journal_fail_msg(err, errlen, -EBADMSG, "corrupted journal: bad zstd frame header");
	if (csize != ZSTD_CONTENTSIZE_UNKNOWN && csize > max)
		return hm_journal_fail_msg(
			err, errlen, -EFBIG,
			"journal claims %llu bytes uncompressed, more than the limit of %zu", csize,
			max);
	/* Start from what the input can plausibly hold, not from what the
	 * frame claims, and grow by doubling up to the limit. */
	cap = len < limit / 8 ? len * 8 + 65536 : limit;
	if (csize != ZSTD_CONTENTSIZE_UNKNOWN && csize + 1 < cap)
		cap = (size_t)csize + 1;
	if (cap > limit)
		cap = limit;
	dctx = ZSTD_createDCtx();
	buf = malloc(cap);
	if (!dctx || !buf) {
		r = hm_journal_fail_msg(err, errlen, -ENOMEM, "out of memory");
		goto out;
	}
	/* A hostile frame header must not make us allocate a huge window. */
	if (ZSTD_isError(
		    ZSTD_DCtx_setParameter(dctx, ZSTD_d_windowLogMax, HM_JOURNAL_WINDOW_LOG_MAX))) {
		r = hm_journal_fail_msg(err, errlen, -EIO, "zstd refused the window limit");
		goto out;
	}
	out = (ZSTD_outBuffer){ buf, cap, 0 };
	for (;;) {
		if (out.pos == out.size) {
			uint8_t *p;

			if (cap >= limit) {
				r = hm_journal_fail_msg(
					err, errlen, -EFBIG,
					"journal decompresses to more than the limit of %zu bytes",
					max);
				goto out;
			}
			cap = cap > limit / 2 ? limit : cap * 2;
			p = realloc(buf, cap);
			if (!p) {
				r = hm_journal_fail_msg(err, errlen, -ENOMEM, "out of memory");
				goto out;
			}
			buf = p;
			out.dst = buf;
			out.size = cap;
		}
		if (in.pos == in.size && zr == 0)
			break;
		zr = ZSTD_decompressStream(dctx, &out, &in);
		if (ZSTD_isError(zr)) {
			r = hm_journal_fail_msg(err, errlen, -EBADMSG, "corrupted journal: zstd: %s",
				     ZSTD_getErrorName(zr));
			goto out;
		}
		if (in.pos == in.size && zr != 0 && out.pos < out.size) {
			r = hm_journal_fail_msg(err, errlen, -EBADMSG,
				     "truncated journal: the zstd frame is incomplete");
			goto out;
		}
	}
	if (out.pos > max) {
		r = hm_journal_fail_msg(err, errlen, -EFBIG,
			     "journal decompresses to more than the limit of %zu bytes", max);
		goto out;
	}
	*ret = steal_pointer(&buf);
	*ret_len = out.pos;
	r = 0;
out:
	free(buf);
	ZSTD_freeDCtx(dctx);
	return r;
}

int hm_journal_read(const void *data, size_t len, size_t max_size, struct hm_journal **ret,
		    char *err, size_t errlen)
{
	_cleanup_free_ uint8_t *payload = NULL;
	size_t plen = 0;
	int r;

	if (!max_size)
		max_size = HM_JOURNAL_MAX_SIZE;
	if (!data && len)
		return hm_journal_fail_msg(err, errlen, -EINVAL, "no data");
	r = decompress(data, len, max_size, &payload, &plen, err, errlen);
	if (r < 0)
		return r;
	return hm_journal_parse_owned(steal_pointer(&payload), plen, ret, err, errlen);
}

int hm_journal_read_file(const char *path, size_t max_size, struct hm_journal **ret, char *err,
			 size_t errlen)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ uint8_t *data = NULL;
	struct stat st;
	size_t n = 0;

	if (!max_size)
		max_size = HM_JOURNAL_MAX_SIZE;
	/* O_NONBLOCK: a FIFO given as a journal must not hang the open. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return hm_journal_fail_msg(err, errlen, -errno, "%s", strerror(errno));
	if (fstat(fd, &st) < 0)
		return hm_journal_fail_msg(err, errlen, -errno, "%s", strerror(errno));
	if (!S_ISREG(st.st_mode))
		return hm_journal_fail_msg(err, errlen, -EINVAL, "not a regular file");
	if ((uint64_t)st.st_size > max_size)
		return hm_journal_fail_msg(err, errlen, -EFBIG, "file is larger than the limit of %zu bytes",
				max_size);
	data = malloc(st.st_size ? (size_t)st.st_size : 1);
	if (!data)
		return hm_journal_fail_msg(err, errlen, -ENOMEM, "out of memory");
	while (n < (size_t)st.st_size) {
		ssize_t k = read(fd, data + n, (size_t)st.st_size - n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return hm_journal_fail_msg(err, errlen, -errno, "%s", strerror(errno));
		if (k == 0)
			break;
		n += (size_t)k;
	}
	return hm_journal_read(data, n, max_size, ret, err, errlen);
}
