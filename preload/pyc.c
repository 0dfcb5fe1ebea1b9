// SPDX-License-Identifier: MIT
/*
 * Python's bytecode caches under shifted file times (files.c).
 *
 * A timestamp .pyc (PEP 552: magic, flags 0, source mtime, source size) is
 * valid when its mtime field equals int(st_mtime) & 0xFFFFFFFF of the source
 * as Python sees it, through stat: shifted, inside a run. So the field is
 * translated wherever a run's process reads or writes it. On disk a .pyc
 * always holds the real mtime - what a bare Python writes and checks - and
 * inside the run Python reads the virtual one. Caches that existed before
 * the run stay valid and are never rewritten; caches a run writes are valid
 * outside it.
 *
 * A descriptor is a cache's when it was opened on a path ending in ".pyc"
 * or ".pyc.<digits>" (the temporary file importlib renames over the cache);
 * those are remembered in a bitmap like the random devices' (entropy.c
 * calls in here from its open, close, dup and read wrappers). A read or
 * write that covers bytes 8..11 of such a file, when bytes 0..7 are a
 * Python 3.7+ magic and flags 0, has those four bytes translated: a read in
 * the caller's buffer, a write through a copy of them in one writev, so that
 * the write stays one call. A write is translated when it carries the whole
 * field and the bytes before it are in the same write or can be read back
 * (importlib and py_compile write a cache in one call). Hash-based caches
 * (flags != 0) and other files pass through untouched.
 */
#include <fcntl.h>
#include <string.h>
#include <sys/uio.h>
#include "shim.h"

#define FIELD 8 /* offset of the source mtime in the header */
#define HDR 12 /* magic, flags, mtime */
#define IOV_COPY 64 /* writev with more buffers than this passes through */

/* "*.pyc" or "*.pyc.<digits>". */
bool hm_pyc_path(const char *path)
{
	size_t n = strlen(path);
	const char *p = path + n;

	while (p > path && p[-1] >= '0' && p[-1] <= '9')
		p--;
	if (p != path + n) {
		if (p == path || p[-1] != '.')
			return false;
		n = p - 1 - path;
	}
	return n >= 4 && !memcmp(path + n - 4, ".pyc", 4);
}

/* Python 3.7+ magic ("NN\r\n", magic number 3390 and up) and flags 0. */
static bool timestamp_header(const uint8_t h[HDR])
{
	unsigned magic = h[0] | h[1] << 8;

	return h[2] == '\r' && h[3] == '\n' && magic >= 3390 && magic < 10000 && !h[4] && !h[5] &&
	       !h[6] && !h[7];
}

/* Move the mtime field by delta seconds, modulo 2^32 as Python stores it. */
static void move_field(uint8_t f[4], int64_t delta)
{
	uint32_t v = (uint32_t)f[0] | (uint32_t)f[1] << 8 | (uint32_t)f[2] << 16 |
		     (uint32_t)f[3] << 24;

	v += (uint32_t)delta;
	for (int i = 0; i < 4; i++)
		f[i] = v >> (8 * i);
}

static int64_t shift_s(void)
{
	return hm.fs_shift / NSEC_PER_SEC;
}

/* Byte at file position pos among n bytes of iov written/read at off. */
static bool iov_byte(const struct iovec *iov, int cnt, off_t off, size_t n, off_t pos,
		     uint8_t **ret)
{
	if (pos < off || pos >= off + (off_t)n)
		return false;
	pos -= off;
	for (int i = 0; i < cnt; i++) {
		if (pos < (off_t)iov[i].iov_len) {
			*ret = (uint8_t *)iov[i].iov_base + pos;
			return true;
		}
		pos -= iov[i].iov_len;
	}
	return false;
}

static bool touches_field(off_t off, size_t n)
{
	return n && off < HDR && off + (off_t)n > FIELD;
}

static off_t file_pos(int fd)
{
	return hm_sys(SYS_lseek, fd, 0, SEEK_CUR);
}

static void after_read(int fd, const struct iovec *iov, int cnt, off_t off, ssize_t n)
{
	uint8_t h[HDR], *b;

	if (n <= 0 || off < 0 || !touches_field(off, n))
		return;
	/* The header as the file holds it: in the buffer, or read again. */
	for (int i = 0; i < HDR; i++) {
		if (iov_byte(iov, cnt, off, n, i, &b)) {
			h[i] = *b;
		} else if (hm_sys6(SYS_pread64, fd, (long)h, HDR, 0, 0, 0) != HDR) {
			return;
		} else {
			break; /* all of it, from the file */
		}
	}
	if (!timestamp_header(h))
		return;
	move_field(h + FIELD, -shift_s());
	for (int i = FIELD; i < HDR; i++)
		if (iov_byte(iov, cnt, off, n, i, &b))
			*b = h[i];
}

/*
 * For a write of n bytes of iov at off: the iovec to write instead, in out
 * (IOV_COPY + 2 entries; field holds the bytes it points to) with its count, or 0 to write iov as it is. The
 * header must be known in full: bytes before off from the file, the rest
 * from this write.
 */
static int before_write(int fd, const struct iovec *iov, int cnt, off_t off,
			struct iovec *out, uint8_t field[4])
{
	uint8_t h[HDR], f[HDR], *b;
	bool have_file = false;
	size_t n = 0;
	int k = 0;
	off_t pos = 0, lo, hi;

	for (int i = 0; i < cnt; i++)
		n += iov[i].iov_len;
	if (off < 0 || !touches_field(off, n) || cnt > IOV_COPY)
		return 0;
	for (int i = 0; i < HDR; i++) {
		if (iov_byte(iov, cnt, off, n, i, &b)) {
			h[i] = *b;
			continue;
		}
		if (i >= off)
			return 0; /* past this write's end: not known yet */
		if (!have_file && hm_sys6(SYS_pread64, fd, (long)f, off, 0, 0, 0) != off)
			return 0;
		have_file = true;
		h[i] = f[i];
	}
	if (!timestamp_header(h))
		return 0;
	move_field(h + FIELD, shift_s());
	memcpy(field, h + FIELD, 4);
	/* Split the buffers around [lo, hi), the part of the field written here. */
	lo = off > FIELD ? off : FIELD;
	hi = off + (off_t)n < HDR ? off + (off_t)n : HDR;
	pos = off;
	for (int i = 0; i < cnt; i++) {
		off_t s = pos, e = pos + (off_t)iov[i].iov_len;
		uint8_t *base = iov[i].iov_base;

		pos = e;
		if (e <= lo || s >= hi) {
			out[k++] = iov[i];
			continue;
		}
		if (s < lo)
			out[k++] = (struct iovec){ base, lo - s };
		if (s <= lo) /* the first buffer that reaches the field */
			out[k++] = (struct iovec){ field + (lo - FIELD), hi - lo };
		if (e > hi)
			out[k++] = (struct iovec){ base + (hi - s), e - hi };
	}
	return k;
}

/* ---- reads (called from entropy.c's wrappers) and writes ---- */

/* Where a read of r > 0 bytes at the file position began: the position it
 * left, less r (asked only after a read that returned bytes: the read at the
 * end of the file that Python makes after each cache costs nothing). */
static off_t read_began(int fd, ssize_t r)
{
	off_t end = r > 0 ? file_pos(fd) : -1;

	return end < r ? -1 : end - r;
}

ssize_t hm_pyc_read(int fd, void *buf, size_t n, off_t off)
{
	struct iovec iov = { buf, n };
	ssize_t r = off < 0 ? hm.real.read(fd, buf, n) : hm.real.pread64(fd, buf, n, off);
	int e = errno;

	after_read(fd, &iov, 1, off < 0 ? read_began(fd, r) : off, r);
	errno = e;
	return r;
}

ssize_t hm_pyc_readv(int fd, const struct iovec *iov, int cnt)
{
	ssize_t r = hm.real.readv(fd, iov, cnt);
	int e = errno;

	after_read(fd, iov, cnt, read_began(fd, r), r);
	errno = e;
	return r;
}

/* off < 0: at the file position. */
static ssize_t pyc_writev(int fd, const struct iovec *iov, int cnt, off_t off)
{
	struct iovec out[IOV_COPY + 2];
	uint8_t field[4];
	int k = before_write(fd, iov, cnt, off < 0 ? file_pos(fd) : off, out, field);

	if (k) {
		iov = out;
		cnt = k;
	}
	if (off < 0)
		return hm.real.writev(fd, iov, cnt);
	return hm_sys_errno(hm_sys6(SYS_pwritev, fd, (long)iov, cnt, off, 0, 0));
}

HM_EXPORT ssize_t write(int fd, const void *buf, size_t n)
{
	struct iovec iov = { (void *)buf, n };
	ssize_t r;

	if (unlikely(!hm_ready()))
		return hm_sys_errno(hm_sys(SYS_write, fd, buf, n));
	if (likely(!hm_pycfd(fd)))
		r = hm.real.write(fd, buf, n);
	else
		r = pyc_writev(fd, &iov, 1, -1);
	hm_fs_after_write(fd, r);
	return r;
}

HM_EXPORT ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
	struct iovec iov = { (void *)buf, n };
	ssize_t r;

	hm_ready();
	if (likely(!hm_pycfd(fd)) || off < 0)
		r = hm.real.pwrite(fd, buf, n, off);
	else
		r = pyc_writev(fd, &iov, 1, off);
	hm_fs_after_write(fd, r);
	return r;
}

HM_EXPORT ssize_t pwrite64(int fd, const void *buf, size_t n, off_t off)
{
	return pwrite(fd, buf, n, off);
}

HM_EXPORT ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
	ssize_t r;

	hm_ready();
	if (likely(!hm_pycfd(fd)))
		r = hm.real.writev(fd, iov, cnt);
	else
		r = pyc_writev(fd, iov, cnt, -1);
	hm_fs_after_write(fd, r);
	return r;
}
