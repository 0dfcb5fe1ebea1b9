// SPDX-License-Identifier: MIT
/*
 * Entropy. Every source a program can reach through libc draws from the
 * calling thread's ChaCha20 stream, keyed by (seed, image, thread index) -
 * lib/lineage.c's hm_stream_key - and never by pid.
 *
 * /dev/urandom and /dev/random: descriptors opened on them are remembered in a
 * bitmap (hm.rand_fds); a read of a remembered descriptor is checked once more
 * with fstat (a descriptor number can be reused behind our back by close_range
 * or a raw close) before it is answered from the stream. fopen of those paths
 * returns a fopencookie stream reading from the same source, so getc, fread,
 * fgets and friends all follow.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/sysmacros.h>
#include "shim.h"

void hm_rng_reset(void)
{
	hm_t.rng_ready = false;
}

void hm_random_bytes_slow(void *buf, size_t len)
{
	if (unlikely(!hm_t.rng_ready || hm_scope_stale())) {
		uint8_t key[HM_CHACHA_KEY_SIZE];

		if (hm_scope_stale())
			hm_scope_thread_sync();
		/* in a scope: (seed, scope, lineage within it), scope.c */
		if (!hm.sc_epoch || !hm_scope_rng_key(key))
			hm_stream_key(hm.seed, hm.image, hm_t.index, key);
		hm_chacha_stream_init(&hm_t.rng, key);
		hm_t.rng_ready = true;
	}
	hm_chacha_stream_read(&hm_t.rng, buf, len);
}

/*
 * The journal path (HERMETIC_RECORD, HERMETIC_REPLAY): the bytes are the
 * recorded ones (replay), else live - seeded, or the real source through
 * live() - and are recorded. Returns the bytes handed out, or live()'s
 * failure (-1 and errno, nothing recorded or consumed).
 */
typedef ssize_t (*live_fn)(void *buf, size_t len, long arg);

static __attribute__((noinline)) ssize_t entropy_jr(enum hm_jentropy_src src, void *buf,
						    size_t len, live_fn live, long arg)
{
	ssize_t r = len;

	if (!((hm.jr & HM_JR_REPLAY) && hm_jr_get_entropy(src, buf, len))) {
		if (hm.rng)
			hm_random_bytes(buf, len);
		else if ((r = live(buf, len, arg)) < 0)
			return r;
	}
	if (hm.jr & HM_JR_RECORD)
		hm_jr_put_entropy(src, buf, (size_t)r);
	return r;
}

static ssize_t live_getrandom(void *buf, size_t len, long flags)
{
	return hm.real.getrandom(buf, len, (unsigned)flags);
}

static ssize_t live_sys_getrandom(void *buf, size_t len, long flags)
{
	return hm_sys_errno(hm_sys(SYS_getrandom, buf, len, flags));
}

static ssize_t live_getentropy(void *buf, size_t len, long unused)
{
	if (hm.real.getentropy)
		return hm.real.getentropy(buf, len) ? -1 : (ssize_t)len;
	return hm_sys(SYS_getrandom, buf, len, 0) == (long)len ? (ssize_t)len : -1;
}

static ssize_t live_arc4random_buf(void *buf, size_t len, long unused)
{
	if (hm.real.arc4random_buf)
		hm.real.arc4random_buf(buf, len);
	else
		hm_sys(SYS_getrandom, buf, len, 0);
	return len;
}

HM_EXPORT ssize_t getrandom(void *buf, size_t len, unsigned flags)
{
	if (unlikely(!hm_ready()))
		return hm_sys_errno(hm_sys(SYS_getrandom, buf, len, flags));
	if (!hm.rng_hook)
		return hm.real.getrandom(buf, len, flags);
	if (unlikely(hm.jr))
		return entropy_jr(HM_JE_GETRANDOM, buf, len, live_getrandom, flags);
	hm_random_bytes(buf, len);
	return len;
}

HM_EXPORT int getentropy(void *buf, size_t len)
{
	if (unlikely(!hm_ready()) || !hm.rng_hook) {
		if (hm.real.getentropy)
			return hm.real.getentropy(buf, len);
		return hm_sys(SYS_getrandom, buf, len, 0) == (long)len ? 0 : -1;
	}
	if (len > 256) {
		errno = EIO;
		return -1;
	}
	if (unlikely(hm.jr))
		return entropy_jr(HM_JE_GETENTROPY, buf, len, live_getentropy, 0) < 0 ? -1 : 0;
	hm_random_bytes(buf, len);
	return 0;
}

HM_EXPORT uint32_t arc4random(void)
{
	uint32_t v;

	if (unlikely(!hm_ready()) || !hm.rng_hook) {
		if (hm.real.arc4random)
			return hm.real.arc4random();
		hm_sys(SYS_getrandom, &v, sizeof(v), 0);
		return v;
	}
	if (unlikely(hm.jr)) {
		entropy_jr(HM_JE_ARC4RANDOM, &v, sizeof(v), live_arc4random_buf, 0);
		return v;
	}
	hm_random_bytes(&v, sizeof(v));
	return v;
}

HM_EXPORT void arc4random_buf(void *buf, size_t len)
{
	if (unlikely(!hm_ready()) || !hm.rng_hook) {
		live_arc4random_buf(buf, len, 0);
		return;
	}
	if (unlikely(hm.jr)) {
		entropy_jr(HM_JE_ARC4RANDOM_BUF, buf, len, live_arc4random_buf, 0);
		return;
	}
	hm_random_bytes(buf, len);
}

/* Uniform in [0, upper): the seeded stream, or the real function. */
static uint32_t uniform(uint32_t upper)
{
	uint32_t r, min;

	if (!hm.rng && hm.real.arc4random_uniform)
		return hm.real.arc4random_uniform(upper);
	if (upper < 2)
		return 0;
	/* Reject the low values that would bias r % upper (as OpenBSD does). */
	min = -upper % upper;
	do {
		if (hm.rng)
			hm_random_bytes(&r, sizeof(r));
		else
			hm_sys(SYS_getrandom, &r, sizeof(r), 0);
	} while (r < min);
	return r % upper;
}

static ssize_t live_uniform(void *buf, size_t len, long upper)
{
	uint32_t v = uniform((uint32_t)upper);

	memcpy(buf, &v, sizeof(v));
	return sizeof(v);
}

HM_EXPORT uint32_t arc4random_uniform(uint32_t upper)
{
	uint32_t v;

	if (unlikely(!hm_ready()) || !hm.rng_hook || !hm.jr) {
		if (!hm.rng && hm.real.arc4random_uniform)
			return hm.real.arc4random_uniform(upper);
		return uniform(upper);
	}
	/* One record: the value returned, whatever the draws behind it. */
	if (!((hm.jr & HM_JR_REPLAY) && hm_jr_get_entropy(HM_JE_ARC4RANDOM_UNIFORM, &v, sizeof(v))))
		live_uniform(&v, sizeof(v), upper);
	else if (upper >= 2 && v >= upper)
		v %= upper; /* a recording for another bound: stay in range */
	if (hm.jr & HM_JR_RECORD)
		hm_jr_put_entropy(HM_JE_ARC4RANDOM_UNIFORM, &v, sizeof(v));
	return v;
}

/* syscall(2): SYS_getrandom is ours, SYS_futex waits with a timeout follow
 * virtual time (wait.c), SYS_statx reports shifted file times (files.c);
 * everything else passes through with all six argument registers. */
HM_EXPORT long syscall(long n, ...)
{
	va_list ap;
	long a, b, c, d, e, f;

	va_start(ap, n);
	a = va_arg(ap, long);
	b = va_arg(ap, long);
	c = va_arg(ap, long);
	d = va_arg(ap, long);
	e = va_arg(ap, long);
	f = va_arg(ap, long);
	va_end(ap);
	if (n == SYS_getrandom && hm_ready() && hm.rng_hook) {
		if (unlikely(hm.jr))
			return entropy_jr(HM_JE_SYSCALL_GETRANDOM, (void *)a, (size_t)b,
					  live_sys_getrandom, c);
		hm_random_bytes((void *)a, (size_t)b);
		return b;
	}
	if (n == SYS_futex && d && hm_ready() && hm.clock_hook)
		return hm_futex_wait((uint32_t *)a, (int)b, (uint32_t)c, (const struct timespec *)d,
				     (uint32_t *)e, (uint32_t)f);
	/* The run's clock page is the program's to close, unless it is
	 * enroll's own, which nobody could give back (fdkeep.c). */
	if (n == SYS_close && hm_ready() && hm_page_fd_is((int)a)) {
		hm_page_fd_closed();
		return 0;
	}
	if (n == SYS_close_range && hm_ready() && a <= b)
		return hm_sys_errno(hm_page_close_range((unsigned)a, (unsigned)b, (int)c));
#ifdef SYS_dup2
	if (n == SYS_dup2 && a != b && hm_ready() && hm_page_fd_is((int)b))
		hm_page_fd_evict((int)b);
#endif
	if (n == SYS_dup3 && a != b && hm_ready() && hm_page_fd_is((int)b))
		hm_page_fd_evict((int)b);
	if (n == SYS_statx && hm_ready()) {
		/* libuv (Node) calls statx this way: file times as stat shows them */
		long r = hm_sys_errno(hm_sys6(n, a, b, c, d, e, f));

		if (r == 0)
			hm_fs_fix_statx((struct statx *)e);
		return r;
	}
	return hm_sys_errno(hm_sys6(n, a, b, c, d, e, f));
}

/* ---- /dev/urandom and /dev/random ---- */

static bool rand_path(const char *path)
{
	return path && path[0] == '/' && path[1] == 'd' &&
	       (!strcmp(path, "/dev/urandom") || !strcmp(path, "/dev/random"));
}

/* Still a random device? 8 for /dev/random (char 1:8), 9 for /dev/urandom
 * (1:9), else 0. */
static int rand_fd_live(int fd)
{
	struct stat st;

	if (hm_sys(SYS_fstat, fd, &st, 0) == 0 && S_ISCHR(st.st_mode) && major(st.st_rdev) == 1 &&
	    (minor(st.st_rdev) == 8 || minor(st.st_rdev) == 9))
		return minor(st.st_rdev);
	hm_randfd_set(fd, false);
	return 0;
}

/* 0: not ours to serve; else rand_fd_live's answer. */
static inline int serve_fd(int fd)
{
	return hm.rng_hook && hm_randfd(fd) ? rand_fd_live(fd) : 0;
}

static int opened(int fd, const char *path, int flags)
{
	if (fd >= 0 && hm.rng_hook)
		hm_randfd_set(fd, rand_path(path));
	if (fd >= 0 && hm.pyc)
		hm_pycfd_set(fd, path && hm_pyc_path(path));
	if (fd >= 0 && hm.fs_since) {
		/* Writes to it are recorded (files.c); a file it created or
		 * truncated was changed now. */
		hm_fsfd_set(fd, !(flags & O_PATH) && ((flags & O_ACCMODE) != O_RDONLY ||
						      (flags & (O_CREAT | O_TRUNC))));
		if (flags & (O_CREAT | O_TRUNC) && !(flags & O_PATH))
			hm_fs_wrote(fd, flags & O_TRUNC);
	}
	return fd;
}

static ssize_t live_read(void *buf, size_t len, long fd)
{
	return hm.real.read((int)fd, buf, len);
}

/* n bytes from a random device: seeded, or through the journal. */
static ssize_t rand_read(int fd, int minor, void *buf, size_t n)
{
	if (likely(!hm.jr)) {
		hm_random_bytes(buf, n);
		return n;
	}
	return entropy_jr(minor == 8 ? HM_JE_RANDOM_READ : HM_JE_URANDOM_READ, buf, n, live_read,
			  fd);
}

#define OPEN_MODE(flags, mode)                                                                    \
	do {                                                                                       \
		if ((flags) & (O_CREAT | __O_TMPFILE)) {                                           \
			va_list ap;                                                                \
			va_start(ap, flags);                                                       \
			mode = va_arg(ap, mode_t);                                                 \
			va_end(ap);                                                                \
		}                                                                                  \
	} while (0)

HM_EXPORT int open(const char *path, int flags, ...)
{
	mode_t mode = 0;

	OPEN_MODE(flags, mode);
	if (unlikely(!hm_ready()))
		return hm_sys_errno(hm_sys6(SYS_openat, AT_FDCWD, (long)path, flags, mode, 0, 0));
	if (unlikely(hm_magic_path(path)) && hm.active)
		return hm_magic_open(path, flags);
	return opened(hm.real.open(path, flags, mode), path, flags);
}

HM_EXPORT int open64(const char *path, int flags, ...)
{
	mode_t mode = 0;

	OPEN_MODE(flags, mode);
	if (unlikely(!hm_ready()))
		return hm_sys_errno(hm_sys6(SYS_openat, AT_FDCWD, (long)path, flags, mode, 0, 0));
	if (unlikely(hm_magic_path(path)) && hm.active)
		return hm_magic_open(path, flags);
	return opened(hm.real.open64(path, flags, mode), path, flags);
}

HM_EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = 0;

	OPEN_MODE(flags, mode);
	if (unlikely(!hm_ready()))
		return hm_sys_errno(hm_sys6(SYS_openat, dirfd, (long)path, flags, mode, 0, 0));
	if (unlikely(hm_magic_path(path)) && hm.active)
		return hm_magic_open(path, flags);
	return opened(hm.real.openat(dirfd, path, flags, mode), path, flags);
}

HM_EXPORT int openat64(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = 0;

	OPEN_MODE(flags, mode);
	if (unlikely(!hm_ready()))
		return hm_sys_errno(hm_sys6(SYS_openat, dirfd, (long)path, flags, mode, 0, 0));
	if (unlikely(hm_magic_path(path)) && hm.active)
		return hm_magic_open(path, flags);
	return opened(hm.real.openat64(dirfd, path, flags, mode), path, flags);
}

HM_EXPORT int __open_2(const char *path, int flags)
{
	hm_ready();
	if (unlikely(hm_magic_path(path)) && hm.active)
		return hm_magic_open(path, flags);
	return opened(hm.real.__open_2(path, flags), path, flags);
}

HM_EXPORT int __open64_2(const char *path, int flags)
{
	hm_ready();
	if (unlikely(hm_magic_path(path)) && hm.active)
		return hm_magic_open(path, flags);
	return opened(hm.real.__open64_2(path, flags), path, flags);
}

HM_EXPORT int __openat_2(int dirfd, const char *path, int flags)
{
	hm_ready();
	if (unlikely(hm_magic_path(path)) && hm.active)
		return hm_magic_open(path, flags);
	return opened(hm.real.__openat_2(dirfd, path, flags), path, flags);
}

HM_EXPORT int __openat64_2(int dirfd, const char *path, int flags)
{
	hm_ready();
	if (unlikely(hm_magic_path(path)) && hm.active)
		return hm_magic_open(path, flags);
	return opened(hm.real.__openat64_2(dirfd, path, flags), path, flags);
}

HM_EXPORT int close(int fd)
{
	if (unlikely(!hm_ready()))
		return hm_sys_errno(hm_sys(SYS_close, fd, 0, 0));
	/* The run's clock page is the program's to close (fdkeep.c). */
	if (unlikely(hm_page_fd_is(fd))) {
		hm_page_fd_closed();
		return 0;
	}
	if (hm_randfd(fd))
		hm_randfd_set(fd, false);
	if (hm_pycfd(fd))
		hm_pycfd_set(fd, false);
	hm_fsfd_forget(fd);
	hm_fd_forget(fd);
	if (unlikely(hm_timerfd(fd)))
		hm_timerfd_closed(fd);
	return hm.real.close(fd);
}

static void copy_fsfd(int fd, int old)
{
	if (hm_fdbits_get(&hm.fs_known, old))
		hm_fsfd_set(fd, hm_fdbits_get(&hm.fs_file, old));
	else
		hm_fsfd_forget(fd);
}

HM_EXPORT int dup2(int old, int new)
{
	int r;

	hm_ready();
	if (unlikely(hm_page_fd_is(new)) && old != new)
		hm_page_fd_evict(new); /* the page moves; the caller gets its number */
	r = hm.real.dup2(old, new);
	if (r >= 0 && hm.rng_hook && old != new)
		hm_randfd_set(r, hm_randfd(old));
	if (r >= 0 && hm.pyc && old != new)
		hm_pycfd_set(r, hm_pycfd(old));
	if (r >= 0 && hm.fs_since && old != new)
		copy_fsfd(r, old);
	if (r >= 0 && old != new)
		hm_fd_copy(r, old);
	return r;
}

HM_EXPORT int dup3(int old, int new, int flags)
{
	int r;

	hm_ready();
	if (unlikely(hm_page_fd_is(new)) && old != new)
		hm_page_fd_evict(new);
	r = hm.real.dup3(old, new, flags);
	if (r >= 0 && hm.rng_hook)
		hm_randfd_set(r, hm_randfd(old));
	if (r >= 0 && hm.pyc)
		hm_pycfd_set(r, hm_pycfd(old));
	if (r >= 0 && hm.fs_since)
		copy_fsfd(r, old);
	if (r >= 0)
		hm_fd_copy(r, old);
	return r;
}

HM_EXPORT ssize_t read(int fd, void *buf, size_t n)
{
	int m;

	if (unlikely(!hm_ready()))
		return hm_sys_errno(hm_sys(SYS_read, fd, buf, n));
	if (unlikely(m = serve_fd(fd)))
		return rand_read(fd, m, buf, n);
	if (unlikely(hm_pycfd(fd)))
		return hm_pyc_read(fd, buf, n, -1);
	if (unlikely(hm_timerfd(fd)))
		return hm_timerfd_read(fd, buf, n);
	if (unlikely(hm_remote_open())) {
		struct hm_vwait w;
		bool ext = hm_fd_block_begin(fd, &w);
		ssize_t r = hm.real.read(fd, buf, n);

		if (ext)
			hm_fd_block_end(&w);
		return r;
	}
	return hm.real.read(fd, buf, n);
}

HM_EXPORT ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen)
{
	if (n > buflen)
		return hm.real.__read_chk(fd, buf, n, buflen); /* let glibc report the overflow */
	return read(fd, buf, n);
}

HM_EXPORT ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
	int m;

	hm_ready();
	if (unlikely(m = serve_fd(fd)))
		return rand_read(fd, m, buf, n);
	if (unlikely(hm_pycfd(fd)) && off >= 0)
		return hm_pyc_read(fd, buf, n, off);
	return hm.real.pread(fd, buf, n, off);
}

HM_EXPORT ssize_t pread64(int fd, void *buf, size_t n, off_t off)
{
	int m;

	hm_ready();
	if (unlikely(m = serve_fd(fd)))
		return rand_read(fd, m, buf, n);
	if (unlikely(hm_pycfd(fd)) && off >= 0)
		return hm_pyc_read(fd, buf, n, off);
	return hm.real.pread64(fd, buf, n, off);
}

HM_EXPORT ssize_t readv(int fd, const struct iovec *iov, int cnt)
{
	ssize_t total = 0, r;
	int m;

	hm_ready();
	if (likely(!(m = serve_fd(fd))))
		return unlikely(hm_pycfd(fd)) ? hm_pyc_readv(fd, iov, cnt) : hm.real.readv(fd, iov, cnt);
	/* one value per buffer */
	for (int i = 0; i < cnt; i++) {
		if (!iov[i].iov_len)
			continue;
		if ((r = rand_read(fd, m, iov[i].iov_base, iov[i].iov_len)) < 0)
			return total ? total : r;
		total += r;
	}
	return total;
}

/* fopen("/dev/urandom"): a cookie stream over the same source. The cookie
 * is the device's minor number (8 /dev/random, 9 /dev/urandom). */
static ssize_t live_cookie(void *buf, size_t len, long unused)
{
	return hm_sys_errno(hm_sys(SYS_getrandom, buf, len, 0));
}

static ssize_t cookie_read(void *cookie, char *buf, size_t n)
{
	if (likely(!hm.jr)) {
		hm_random_bytes(buf, n);
		return n;
	}
	return entropy_jr((long)cookie == 8 ? HM_JE_RANDOM_READ : HM_JE_URANDOM_READ, buf, n,
			  live_cookie, 0);
}

static int cookie_close(void *cookie)
{
	return 0;
}

static FILE *fopen_rand(const char *path, const char *mode)
{
	cookie_io_functions_t io = { .read = cookie_read, .close = cookie_close };

	if (!hm.rng_hook || !rand_path(path) || !mode || mode[0] != 'r' || strchr(mode, '+'))
		return NULL;
	return fopencookie((void *)(long)(strcmp(path, "/dev/random") ? 9 : 8), mode, io);
}

HM_EXPORT FILE *fopen(const char *path, const char *mode)
{
	FILE *f;

	hm_ready();
	if (unlikely(hm.rng_hook && rand_path(path)) && (f = fopen_rand(path, mode)))
		return f;
	return hm_fs_fopened(hm.real.fopen(path, mode), mode);
}

HM_EXPORT FILE *fopen64(const char *path, const char *mode)
{
	FILE *f;

	hm_ready();
	if (unlikely(hm.rng_hook && rand_path(path)) && (f = fopen_rand(path, mode)))
		return f;
	return hm_fs_fopened(hm.real.fopen64(path, mode), mode);
}

/*
 * mkstemp and friends: glibc draws their names from an internal getrandom
 * that no wrapper sees, so they are reimplemented here on the seeded stream
 * (same alphabet and attempts as glibc; O_EXCL/mkdir decide uniqueness).
 */
enum tmp_kind { TMP_FILE, TMP_DIR, TMP_NAME };

static int gen_tempname(char *tmpl, int suffixlen, int flags, enum tmp_kind kind)
{
	static const char letters[] =
		"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	size_t len = strlen(tmpl);
	char *x;

	if (suffixlen < 0 || len < 6 + (size_t)suffixlen ||
	    memcmp(tmpl + len - 6 - suffixlen, "XXXXXX", 6)) {
		errno = EINVAL;
		return -1;
	}
	x = tmpl + len - 6 - suffixlen;
	for (int attempt = 0; attempt < 62 * 62 * 62; attempt++) {
		uint8_t r[6];
		struct stat st;
		long ret;

		hm_random_bytes(r, sizeof(r));
		for (int i = 0; i < 6; i++)
			x[i] = letters[r[i] % 62];
		switch (kind) {
		case TMP_FILE:
			ret = hm_sys6(SYS_openat, AT_FDCWD, (long)tmpl,
				      (flags & ~O_ACCMODE) | O_RDWR | O_CREAT | O_EXCL, 0600, 0, 0);
			break;
		case TMP_DIR:
			ret = hm_sys6(SYS_mkdirat, AT_FDCWD, (long)tmpl, 0700, 0, 0, 0);
			break;
		default:
			ret = hm_sys6(SYS_newfstatat, AT_FDCWD, (long)tmpl, (long)&st,
				      AT_SYMLINK_NOFOLLOW, 0, 0);
			if (ret == -ENOENT)
				return 0;
			if (ret == 0)
				ret = -EEXIST;
			break;
		}
		if (ret >= 0)
			return ret;
		if (ret != -EEXIST) {
			errno = -ret;
			return -1;
		}
	}
	errno = EEXIST;
	return -1;
}

typedef int (*mkostemps_fn)(char *, int, int);

/* The real function when the stream is off, by name. */
static int real_mkostemps(const char *name, char *t, int suffixlen, int flags)
{
	void *f = dlsym(RTLD_NEXT, name);

	if (!strcmp(name, "mkstemp") || !strcmp(name, "mkstemp64"))
		return ((int (*)(char *))f)(t);
	if (!strcmp(name, "mkostemp") || !strcmp(name, "mkostemp64"))
		return ((int (*)(char *, int))f)(t, flags);
	if (!strcmp(name, "mkstemps") || !strcmp(name, "mkstemps64"))
		return ((int (*)(char *, int))f)(t, suffixlen);
	return ((mkostemps_fn)f)(t, suffixlen, flags);
}

#define MKTEMP_WRAPPER(name, args, suffixlen, flags)                                              \
	HM_EXPORT int name args                                                                    \
	{                                                                                          \
		if (!hm_ready() || !hm.rng)                                                        \
			return real_mkostemps(#name, t, suffixlen, flags);                          \
		return gen_tempname(t, suffixlen, flags, TMP_FILE);                                 \
	}

MKTEMP_WRAPPER(mkstemp, (char *t), 0, 0)
MKTEMP_WRAPPER(mkstemp64, (char *t), 0, 0)
MKTEMP_WRAPPER(mkostemp, (char *t, int flags), 0, flags)
MKTEMP_WRAPPER(mkostemp64, (char *t, int flags), 0, flags)
MKTEMP_WRAPPER(mkstemps, (char *t, int suffixlen), suffixlen, 0)
MKTEMP_WRAPPER(mkstemps64, (char *t, int suffixlen), suffixlen, 0)
MKTEMP_WRAPPER(mkostemps, (char *t, int suffixlen, int flags), suffixlen, flags)
MKTEMP_WRAPPER(mkostemps64, (char *t, int suffixlen, int flags), suffixlen, flags)

HM_EXPORT char *mkdtemp(char *t)
{
	if (!hm_ready() || !hm.rng)
		return ((char *(*)(char *))dlsym(RTLD_NEXT, "mkdtemp"))(t);
	return gen_tempname(t, 0, 0, TMP_DIR) < 0 ? NULL : t;
}

HM_EXPORT char *mktemp(char *t)
{
	if (!hm_ready() || !hm.rng)
		return ((char *(*)(char *))dlsym(RTLD_NEXT, "mktemp"))(t);
	if (gen_tempname(t, 0, 0, TMP_NAME) < 0)
		t[0] = 0;
	return t;
}
