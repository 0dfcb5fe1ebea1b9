// SPDX-License-Identifier: MIT
/*
 * Writes the shim sees besides write(2) and its vectored forms (pyc.c): a
 * file's time is then the run's time of that change (files.c, filetab.c).
 *
 * stdio writes through glibc's internal write, which no wrapper sees; so a
 * stream's file is looked at where its data reaches the kernel and the
 * program calls in: fflush and fclose (and fopen, whose "w" truncates).
 * A stream flushed at exit, or written by a static binary, is met by the
 * first stat after it instead (docs/file-times.md).
 */
#include <stdio.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include "shim.h"

FILE *hm_fs_fopened(FILE *f, const char *mode)
{
	int fd;

	if (!f || !hm.fs_since || !mode)
		return f;
	fd = fileno(f);
	hm_fsfd_set(fd, mode[0] != 'r' || strchr(mode, '+'));
	if (mode[0] == 'w' || mode[0] == 'a')
		hm_fs_wrote(fd, mode[0] == 'w');
	return f;
}

/* A stream's data reached the kernel: its file changed, if it did, now. */
static void flushed(FILE *f)
{
	int fd = fileno(f);

	if (fd >= 0 && hm_fsfd(fd))
		hm_fs_wrote(fd, false);
}

HM_EXPORT int fflush(FILE *f)
{
	int r;

	hm_ready();
	r = hm.real.fflush(f);
	if (r == 0 && f && hm.fs_since)
		flushed(f);
	return r;
}

HM_EXPORT int fclose(FILE *f)
{
	int fd;

	hm_ready();
	if (!f || !hm.fs_since)
		return hm.real.fclose(f);
	fd = fileno(f);
	if (fd >= 0 && hm_fsfd(fd) && hm.real.fflush(f) == 0)
		hm_fs_wrote(fd, false);
	if (fd >= 0)
		hm_fsfd_forget(fd);
	return hm.real.fclose(f);
}

HM_EXPORT int ftruncate(int fd, off_t len)
{
	int r;

	hm_ready();
	r = hm.real.ftruncate(fd, len);
	if (r == 0 && hm.fs_since)
		hm_fs_wrote(fd, true);
	return r;
}

HM_EXPORT int ftruncate64(int fd, off_t len)
{
	return ftruncate(fd, len);
}

HM_EXPORT int truncate(const char *path, off_t len)
{
	int r, fd;

	hm_ready();
	r = hm.real.truncate(path, len);
	if (r == 0 && hm.fs_since) {
		int e = errno;

		fd = hm_sys6(SYS_openat, AT_FDCWD, (long)path, O_PATH | O_CLOEXEC, 0, 0, 0);
		if (fd >= 0) {
			hm_fs_wrote(fd, true);
			hm_sys(SYS_close, fd, 0, 0);
		}
		errno = e;
	}
	return r;
}

HM_EXPORT int truncate64(const char *path, off_t len)
{
	return truncate(path, len);
}

HM_EXPORT ssize_t copy_file_range(int in, off_t *in_off, int out, off_t *out_off, size_t n,
				  unsigned flags)
{
	ssize_t r;

	hm_ready();
	r = hm.real.copy_file_range(in, in_off, out, out_off, n, flags);
	if (r > 0 && hm.fs_since)
		hm_fs_wrote(out, true);
	return r;
}
