// SPDX-License-Identifier: MIT
/*
 * File times. The kernel stamps files with real time, years after a virtual
 * "now"; make would see files from the future. So every time a stat-family
 * call reports is moved back onto the virtual timeline by one constant, and
 * every time a program sets (utime family) is moved forward by it:
 *
 *     virtual = real - shift          real = virtual + shift
 *     shift   = E - now               (whole seconds; lib/config.c)
 *
 * where now is the run's virtual start (HERMETIC_NOW, whole seconds) and E
 * the first 1 January 00:00 UTC more than a day after the run's real start.
 * The CLI computes the shift once (replay: from the recorded run's start)
 * and hands it to every process in HERMETIC_FS_SHIFT, so all of them agree
 * (a first process started without it computes it and passes it on).
 *
 * What that buys, all at once:
 *  - A constant shift is monotone and an exact bijection on nanoseconds:
 *    ordering and differences between files are exact (make rebuilds
 *    exactly what changed and never loops), and a time a program sets is read
 *    back unchanged (touch -d, cp -p, tar round-trip).
 *  - A file written at real time r appears at now - (E - r): before the
 *    virtual start for any run shorter than a day of real time, so make
 *    sees nothing the run wrote in its future. Files from before the run
 *    appear older still.
 *  - The shift depends on the real start only through its calendar year:
 *    two runs with one --now in one year show every file with the same time
 *    (across New Year they differ; a journal keeps its run's start, and
 *    replay uses it).
 *  - Python's bytecode caches record their source's mtime: pyc.c moves that
 *    field by the same shift where a run reads or writes one, so caches stay
 *    valid on both sides of the run and none is rewritten.
 *
 * Times before HM_FS_GUARD (early 1971) are left alone both ways: 0 and 1 are
 * "unknown" markers (reproducible builds, Nix), not times to shift.
 * UTIME_NOW and UTIME_OMIT pass through: "now" is the kernel's real now.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include "shim.h"
#include "config.h"

_Static_assert(sizeof(struct stat) == sizeof(struct stat64), "LP64: stat64 is stat");

#define HM_FS_GUARD (31536000LL * NSEC_PER_SEC)

void hm_fs_init_shift(void)
{
	const char *v = getenv(HM_ENV_FS_SHIFT), *end;
	char num[24];
	int64_t s;

	end = v ? hm_parse_dec_i64(v, &s) : NULL;
	if (!end || *end || s <= -INT64_MAX / NSEC_PER_SEC || s >= INT64_MAX / NSEC_PER_SEC) {
		/* Not from the CLI: this process decides, for all it starts. */
		s = hm_fs_shift_s(hm_real_ns(CLOCK_REALTIME), hm.now0);
		hm_fmt_i64(num, sizeof(num), s);
		hm_env_add(HM_ENV_FS_SHIFT, num);
	}
	hm.fs_shift = s * NSEC_PER_SEC;
	hm.pyc = hm.clock && hm.fs_shift != 0;
}

static inline void to_virtual(struct timespec *ts)
{
	int64_t ns = ts_to_ns(ts);

	if (ns >= HM_FS_GUARD)
		*ts = ns_to_ts(ns - hm.fs_shift);
}

static inline struct timespec to_real(struct timespec ts)
{
	int64_t ns;

	if (ts.tv_nsec == UTIME_NOW || ts.tv_nsec == UTIME_OMIT || ts.tv_nsec < 0 ||
	    ts.tv_nsec >= NSEC_PER_SEC)
		return ts;
	ns = ts_to_ns(&ts);
	return ns >= HM_FS_GUARD ? ns_to_ts(ns + hm.fs_shift) : ts;
}

static int fix_stat(int r, struct stat *st)
{
	if (r == 0 && hm.clock && st) {
		to_virtual(&st->st_atim);
		to_virtual(&st->st_mtim);
		to_virtual(&st->st_ctim);
	}
	return r;
}

static void fix_statx_ts(struct statx_timestamp *t)
{
	struct timespec ts = { t->tv_sec, t->tv_nsec };

	to_virtual(&ts);
	t->tv_sec = ts.tv_sec;
	t->tv_nsec = ts.tv_nsec;
}

void hm_fs_fix_statx(struct statx *stx)
{
	if (!hm.clock || !stx)
		return;
	if (stx->stx_mask & STATX_ATIME)
		fix_statx_ts(&stx->stx_atime);
	if (stx->stx_mask & STATX_MTIME)
		fix_statx_ts(&stx->stx_mtime);
	if (stx->stx_mask & STATX_CTIME)
		fix_statx_ts(&stx->stx_ctime);
	if (stx->stx_mask & STATX_BTIME)
		fix_statx_ts(&stx->stx_btime);
}

#define STAT_RAW(...) hm_sys_errno(hm_sys6(SYS_newfstatat, __VA_ARGS__, 0, 0))

HM_EXPORT int stat(const char *path, struct stat *st)
{
	if (unlikely(!hm_ready()))
		return STAT_RAW(AT_FDCWD, (long)path, (long)st, 0);
	return fix_stat(hm.real.stat(path, st), st);
}

HM_EXPORT int stat64(const char *path, struct stat64 *st)
{
	return stat(path, (struct stat *)st);
}

HM_EXPORT int lstat(const char *path, struct stat *st)
{
	if (unlikely(!hm_ready()))
		return STAT_RAW(AT_FDCWD, (long)path, (long)st, AT_SYMLINK_NOFOLLOW);
	return fix_stat(hm.real.lstat(path, st), st);
}

HM_EXPORT int lstat64(const char *path, struct stat64 *st)
{
	return lstat(path, (struct stat *)st);
}

HM_EXPORT int fstat(int fd, struct stat *st)
{
	if (unlikely(!hm_ready()))
		return hm_sys_errno(hm_sys(SYS_fstat, fd, st, 0));
	return fix_stat(hm.real.fstat(fd, st), st);
}

HM_EXPORT int fstat64(int fd, struct stat64 *st)
{
	return fstat(fd, (struct stat *)st);
}

HM_EXPORT int fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
	if (unlikely(!hm_ready()))
		return STAT_RAW(dirfd, (long)path, (long)st, flags);
	return fix_stat(hm.real.fstatat(dirfd, path, st, flags), st);
}

HM_EXPORT int fstatat64(int dirfd, const char *path, struct stat64 *st, int flags)
{
	return fstatat(dirfd, path, (struct stat *)st, flags);
}

/* The pre-2.33 entry points, still exported by glibc 2.36 for old binaries. */
HM_EXPORT int __xstat(int ver, const char *path, struct stat *st)
{
	hm_ready();
	return fix_stat(hm.real.__xstat(ver, path, st), st);
}

HM_EXPORT int __xstat64(int ver, const char *path, struct stat *st)
{
	return __xstat(ver, path, st);
}

HM_EXPORT int __lxstat(int ver, const char *path, struct stat *st)
{
	hm_ready();
	return fix_stat(hm.real.__lxstat(ver, path, st), st);
}

HM_EXPORT int __lxstat64(int ver, const char *path, struct stat *st)
{
	return __lxstat(ver, path, st);
}

HM_EXPORT int __fxstat(int ver, int fd, struct stat *st)
{
	hm_ready();
	return fix_stat(hm.real.__fxstat(ver, fd, st), st);
}

HM_EXPORT int __fxstat64(int ver, int fd, struct stat *st)
{
	return __fxstat(ver, fd, st);
}

HM_EXPORT int __fxstatat(int ver, int dirfd, const char *path, struct stat *st, int flags)
{
	hm_ready();
	return fix_stat(hm.real.__fxstatat(ver, dirfd, path, st, flags), st);
}

HM_EXPORT int __fxstatat64(int ver, int dirfd, const char *path, struct stat *st, int flags)
{
	return __fxstatat(ver, dirfd, path, st, flags);
}

HM_EXPORT int statx(int dirfd, const char *path, int flags, unsigned mask, struct statx *stx)
{
	int r;

	if (unlikely(!hm_ready()))
		return hm_sys_errno(hm_sys6(SYS_statx, dirfd, (long)path, flags, mask, (long)stx, 0));
	r = hm.real.statx(dirfd, path, flags, mask, stx);
	if (r == 0)
		hm_fs_fix_statx(stx);
	return r;
}

/* ---- setting times ---- */

HM_EXPORT int utimensat(int dirfd, const char *path, const struct timespec t[2], int flags)
{
	struct timespec r[2];

	hm_ready();
	if (!hm.clock || !t)
		return hm.real.utimensat(dirfd, path, t, flags);
	r[0] = to_real(t[0]);
	r[1] = to_real(t[1]);
	return hm.real.utimensat(dirfd, path, r, flags);
}

HM_EXPORT int futimens(int fd, const struct timespec t[2])
{
	struct timespec r[2];

	hm_ready();
	if (!hm.clock || !t)
		return hm.real.futimens(fd, t);
	r[0] = to_real(t[0]);
	r[1] = to_real(t[1]);
	return hm.real.futimens(fd, r);
}

static void tv_to_ts(const struct timeval tv[2], struct timespec ts[2])
{
	for (int i = 0; i < 2; i++) {
		ts[i].tv_sec = tv[i].tv_sec;
		ts[i].tv_nsec = tv[i].tv_usec * 1000;
	}
}

HM_EXPORT int utime(const char *path, const struct utimbuf *b)
{
	struct timespec ts[2];

	hm_ready();
	if (!hm.clock || !b)
		return hm.real.utime(path, b);
	ts[0] = (struct timespec){ b->actime, 0 };
	ts[1] = (struct timespec){ b->modtime, 0 };
	return utimensat(AT_FDCWD, path, ts, 0);
}

HM_EXPORT int utimes(const char *path, const struct timeval tv[2])
{
	struct timespec ts[2];

	hm_ready();
	if (!hm.clock || !tv)
		return hm.real.utimes(path, tv);
	tv_to_ts(tv, ts);
	return utimensat(AT_FDCWD, path, ts, 0);
}

HM_EXPORT int lutimes(const char *path, const struct timeval tv[2])
{
	struct timespec ts[2];

	hm_ready();
	if (!hm.clock || !tv)
		return hm.real.lutimes(path, tv);
	tv_to_ts(tv, ts);
	return utimensat(AT_FDCWD, path, ts, AT_SYMLINK_NOFOLLOW);
}

HM_EXPORT int futimes(int fd, const struct timeval tv[2])
{
	struct timespec ts[2];

	hm_ready();
	if (!hm.clock || !tv)
		return hm.real.futimes(fd, tv);
	tv_to_ts(tv, ts);
	return futimens(fd, ts);
}

HM_EXPORT int futimesat(int dirfd, const char *path, const struct timeval tv[2])
{
	struct timespec ts[2];

	hm_ready();
	if (!hm.clock || !tv)
		return hm.real.futimesat(dirfd, path, tv);
	tv_to_ts(tv, ts);
	return path ? utimensat(dirfd, path, ts, 0) : futimens(dirfd, ts);
}
