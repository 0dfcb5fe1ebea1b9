// SPDX-License-Identifier: MIT
/*
 * File times (docs/file-times.md). The kernel stamps files with real time,
 * years after a virtual "now"; make would see files from the future. A stamp
 * is one of two kinds, told apart by the run's real start B (fs_since, set
 * by the CLI in the clock page, engine/vclock.c):
 *
 *  - At most B: from before the run. Moved back by one constant,
 *        virtual = real - shift,  shift = E - now  (whole seconds; lib/config.c)
 *    where now is the run's virtual start and E the first 1 January 00:00
 *    UTC more than a day after the run's real start. The CLI computes the
 *    shift once (replay: from the recorded run's start) and hands it to every
 *    process in HERMETIC_FS_SHIFT. Monotone and an exact bijection: make sees
 *    the kernel's order, and a time set to before the run reads back exactly.
 *    Every such file appears more than a day before the virtual start.
 *  - After B: the run caused it. The run's table (filetab.c) says what
 *    virtual time it stands for: the run's page time when a process of the
 *    run first met it, right after its own write (pyc.c, fwrites.c,
 *    hm_fs_wrote) or in the first stat that finds it. Deterministic (page
 *    time moves only when the whole run is idle), fresh by the run's clock,
 *    never ahead of any thread's reading.
 *
 * Setting times: a time that maps to before B is stored shifted; one after
 * is recorded in the table for the stamp the kernel stores (at most the real
 * now: nothing the run sets is in the real future outside it). UTIME_NOW
 * stores the real now and records the virtual now.
 *
 * Python's bytecode caches record their source's mtime: pyc.c moves that
 * field by the shift where a run reads or writes one, so caches stay valid
 * on both sides of the run and none is rewritten.
 *
 * Times before HM_FS_GUARD (early 1971) are left alone both ways: 0 and 1 are
 * "unknown" markers (reproducible builds, Nix), not times to shift.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include "shim.h"
#include "config.h"

_Static_assert(sizeof(struct stat) == sizeof(struct stat64), "LP64: stat64 is stat");

#define HM_FS_GUARD (31536000LL * NSEC_PER_SEC)

enum { FT_M, FT_C, FT_A, FT_B, FT_ALL };

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
	/* The run's line between stamps from before it and stamps it caused
	 * (engine/vclock.c); without one, every time is shifted. */
	if (hm.clock && hm.vc)
		hm.fs_since = __atomic_load_n(&hm.vc->files_since, __ATOMIC_ACQUIRE);
}

/* A real time stamped during the run: the table says what it stands for. */
static inline bool in_run(int64_t ns)
{
	return hm.fs_since && ns > hm.fs_since;
}

static inline int64_t shifted(int64_t ns)
{
	return ns >= HM_FS_GUARD ? ns - hm.fs_shift : ns;
}

/*
 * t: the real mtime, ctime, atime, btime in ns (HM_FT_SKIP: absent), made
 * virtual. set: what to record for mtime, ctime, atime (NULL: observe).
 * Times from before the run are shifted; times stamped during it are what
 * the table says, learnt now if new; without the table, shifted as well.
 */
static void fix_times(uint64_t dev, uint64_t ino, int64_t t[FT_ALL], const int64_t *set)
{
	static const int64_t seen[HM_FT_N] = { HM_FT_SEEN, HM_FT_SEEN, HM_FT_SEEN };
	int64_t r[HM_FT_N], orig[HM_FT_N], lo = INT64_MAX;
	bool any = false, mapped;

	for (int i = 0; i < HM_FT_N; i++) {
		orig[i] = r[i] = HM_FT_SKIP;
		if (t[i] == HM_FT_SKIP)
			continue;
		if (likely(!in_run(t[i]))) {
			t[i] = shifted(t[i]);
			continue;
		}
		orig[i] = r[i] = t[i];
		any |= i != FT_A;
	}
	if (likely(!any)) {
		/* Not changed in the run. A read in it may have moved the atime
		 * (relatime): that is no change worth an entry, and shows as the
		 * last modification. */
		if (orig[FT_A] != HM_FT_SKIP)
			t[FT_A] = t[FT_M] != HM_FT_SKIP ? t[FT_M] : shifted(orig[FT_A]);
		if (t[FT_B] != HM_FT_SKIP)
			t[FT_B] = shifted(t[FT_B]);
		return;
	}
	mapped = hm_ft_map(dev, ino, r, set ? set : seen);
	for (int i = 0; i < HM_FT_N; i++) {
		if (orig[i] == HM_FT_SKIP)
			continue;
		t[i] = mapped ? r[i] : shifted(orig[i]);
		lo = t[i] < lo ? t[i] : lo;
	}
	/* Birth during the run: the time of the field stamped with it, else the
	 * earliest the run has seen of the file. */
	if (t[FT_B] == HM_FT_SKIP || !in_run(t[FT_B]))
		t[FT_B] = t[FT_B] == HM_FT_SKIP ? t[FT_B] : shifted(t[FT_B]);
	else if (!mapped || lo == INT64_MAX)
		t[FT_B] = shifted(t[FT_B]);
	else {
		int64_t b = lo;

		for (int i = 0; i < HM_FT_N; i++)
			if (orig[i] == t[FT_B])
				b = t[i];
		t[FT_B] = b;
	}
}

static void fix_st(struct stat *st, const int64_t *set)
{
	int64_t t[FT_ALL] = { ts_to_ns(&st->st_mtim), ts_to_ns(&st->st_ctim),
			      ts_to_ns(&st->st_atim), HM_FT_SKIP };

	fix_times(st->st_dev, st->st_ino, t, set);
	st->st_mtim = ns_to_ts(t[FT_M]);
	st->st_ctim = ns_to_ts(t[FT_C]);
	st->st_atim = ns_to_ts(t[FT_A]);
}

static int fix_stat(int r, struct stat *st)
{
	if (r == 0 && hm.clock && st)
		fix_st(st, NULL);
	return r;
}

static int64_t stx_ns(const struct statx_timestamp *t)
{
	return (int64_t)t->tv_sec * NSEC_PER_SEC + t->tv_nsec;
}

static void stx_set(struct statx_timestamp *t, int64_t ns)
{
	struct timespec ts = ns_to_ts(ns);

	t->tv_sec = ts.tv_sec;
	t->tv_nsec = ts.tv_nsec;
}

void hm_fs_fix_statx(struct statx *stx)
{
	struct statx_timestamp *f[FT_ALL];
	unsigned bits[FT_ALL] = { STATX_MTIME, STATX_CTIME, STATX_ATIME, STATX_BTIME };
	int64_t t[FT_ALL];

	if (!hm.clock || !stx)
		return;
	f[FT_M] = &stx->stx_mtime;
	f[FT_C] = &stx->stx_ctime;
	f[FT_A] = &stx->stx_atime;
	f[FT_B] = &stx->stx_btime;
	for (int i = 0; i < FT_ALL; i++)
		t[i] = stx->stx_mask & bits[i] ? stx_ns(f[i]) : HM_FT_SKIP;
	fix_times(makedev(stx->stx_dev_major, stx->stx_dev_minor), stx->stx_ino, t, NULL);
	for (int i = 0; i < FT_ALL; i++)
		if (stx->stx_mask & bits[i])
			stx_set(f[i], t[i]);
}

/* After this process wrote (or truncated) fd: the write happened now. */
/*
 * A write through fd whose last stamp (this same descriptor, this same
 * page time) is still the table's: the write happened at the time already
 * recorded, so instead of an fstat to learn the kernel's new stamp, the
 * entry is marked dirty and whoever next finds that stamp gives it the
 * recorded time (filetab.c). What a stat then answers is what it would
 * have answered with the fstat; a write per syscall costs a table lookup,
 * not a second syscall (docs/file-times.md).
 */
static bool rewrote(int fd)
{
	struct hm_fsstamp *c = hm_fdtab_at(&hm.fs_stamp, (unsigned)fd, sizeof(*c),
					   HM_FSSTAMP_SHIFT, false);

	if (!c || !__atomic_load_n(&c->ino, __ATOMIC_RELAXED) ||
	    c->mono != __atomic_load_n(&hm.vc->mono, __ATOMIC_ACQUIRE))
		return false;
	return hm_ft_rewrote(c->dev, c->ino, hm_clock_page_wall());
}

static void stamped(int fd, const struct stat *st)
{
	struct hm_fsstamp *c = hm_fdtab_at(&hm.fs_stamp, (unsigned)fd, sizeof(*c),
					   HM_FSSTAMP_SHIFT, true);

	if (!c)
		return;
	__atomic_store_n(&c->ino, 0, __ATOMIC_RELAXED);
	c->dev = st->st_dev;
	c->mono = __atomic_load_n(&hm.vc->mono, __ATOMIC_ACQUIRE);
	__atomic_store_n(&c->ino, st->st_ino ? st->st_ino : 0, __ATOMIC_RELEASE);
}

void hm_fs_wrote(int fd, bool wrote)
{
	static const int64_t now[HM_FT_N] = { HM_FT_NOW, HM_FT_NOW, HM_FT_SEEN };
	struct stat st;
	int e = errno;

	if (fd < 0)
		return;
	if (wrote && hm.vc && rewrote(fd))
		return;
	if (hm_sys(SYS_fstat, fd, &st, 0) == 0 && S_ISREG(st.st_mode)) {
		fix_st(&st, wrote ? now : NULL);
		if (wrote && hm.vc)
			stamped(fd, &st);
	} else {
		hm_fsfd_set(fd, false); /* not a file: its writes stamp nothing */
	}
	errno = e;
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

/*
 * A virtual time a program sets, as the real time to store, and in *set
 * what the table records for it. A time that maps to before the run's start
 * is stored shifted (the bijection: read back exactly, and the same real
 * time outside as before). One that maps into the run is recorded in the
 * table with the virtual value asked for, and stored at most at the real
 * now: nothing the run sets is in the real future outside it.
 */
static struct timespec to_real(struct timespec ts, int64_t *set)
{
	int64_t ns, real;

	if (ts.tv_nsec == UTIME_NOW)
		*set = HM_FT_NOW;
	if (ts.tv_nsec == UTIME_NOW || ts.tv_nsec == UTIME_OMIT || ts.tv_nsec < 0 ||
	    ts.tv_nsec >= NSEC_PER_SEC)
		return ts;
	ns = ts_to_ns(&ts);
	if (ns < HM_FS_GUARD)
		return ts;
	real = ns + hm.fs_shift;
	if (!in_run(real))
		return ns_to_ts(real);
	*set = ns;
	if (real > hm_real_ns(CLOCK_REALTIME))
		return (struct timespec){ 0, UTIME_NOW };
	return ns_to_ts(real);
}

/* utimensat, or futimens when path is NULL (then dirfd is the file). */
static int set_times(int dirfd, const char *path, const struct timespec t[2], int flags)
{
	int64_t set[HM_FT_N] = { HM_FT_SEEN, HM_FT_NOW, HM_FT_SEEN };
	struct timespec r[2];
	struct stat st;
	long s;
	int ret;

	if (!t) {
		set[FT_M] = set[FT_A] = HM_FT_NOW;
	} else {
		r[0] = to_real(t[0], &set[FT_A]);
		r[1] = to_real(t[1], &set[FT_M]);
	}
	ret = path ? hm.real.utimensat(dirfd, path, t ? r : NULL, flags)
		   : hm.real.futimens(dirfd, t ? r : NULL);
	if (ret == 0 && hm.fs_since) {
		int e = errno;

		s = path ? hm_sys6(SYS_newfstatat, dirfd, (long)path, (long)&st,
				   flags & (AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH), 0, 0)
			 : hm_sys(SYS_fstat, dirfd, &st, 0);
		if (s == 0)
			fix_st(&st, set);
		errno = e;
	}
	return ret;
}

HM_EXPORT int utimensat(int dirfd, const char *path, const struct timespec t[2], int flags)
{
	hm_ready();
	if (!hm.clock)
		return hm.real.utimensat(dirfd, path, t, flags);
	/* A NULL path (declared nonnull, but the kernel's futimens form). */
	__asm__("" : "+r"(path));
	if (!path)
		return set_times(dirfd, NULL, t, 0);
	return set_times(dirfd, path, t, flags);
}

HM_EXPORT int futimens(int fd, const struct timespec t[2])
{
	hm_ready();
	if (!hm.clock)
		return hm.real.futimens(fd, t);
	return set_times(fd, NULL, t, 0);
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
	if (!hm.clock)
		return hm.real.utime(path, b);
	if (!b)
		return utimensat(AT_FDCWD, path, NULL, 0);
	ts[0] = (struct timespec){ b->actime, 0 };
	ts[1] = (struct timespec){ b->modtime, 0 };
	return utimensat(AT_FDCWD, path, ts, 0);
}

HM_EXPORT int utimes(const char *path, const struct timeval tv[2])
{
	struct timespec ts[2];

	hm_ready();
	if (!hm.clock)
		return hm.real.utimes(path, tv);
	if (!tv)
		return utimensat(AT_FDCWD, path, NULL, 0);
	tv_to_ts(tv, ts);
	return utimensat(AT_FDCWD, path, ts, 0);
}

HM_EXPORT int lutimes(const char *path, const struct timeval tv[2])
{
	struct timespec ts[2];

	hm_ready();
	if (!hm.clock)
		return hm.real.lutimes(path, tv);
	if (!tv)
		return utimensat(AT_FDCWD, path, NULL, AT_SYMLINK_NOFOLLOW);
	tv_to_ts(tv, ts);
	return utimensat(AT_FDCWD, path, ts, AT_SYMLINK_NOFOLLOW);
}

HM_EXPORT int futimes(int fd, const struct timeval tv[2])
{
	struct timespec ts[2];

	hm_ready();
	if (!hm.clock)
		return hm.real.futimes(fd, tv);
	if (!tv)
		return futimens(fd, NULL);
	tv_to_ts(tv, ts);
	return futimens(fd, ts);
}

HM_EXPORT int futimesat(int dirfd, const char *path, const struct timeval tv[2])
{
	struct timespec ts[2];

	hm_ready();
	if (!hm.clock)
		return hm.real.futimesat(dirfd, path, tv);
	if (!tv)
		return path ? utimensat(dirfd, path, NULL, 0) : futimens(dirfd, NULL);
	tv_to_ts(tv, ts);
	return path ? utimensat(dirfd, path, ts, 0) : futimens(dirfd, ts);
}
