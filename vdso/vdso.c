// SPDX-License-Identifier: MIT
/*
 * The synthetic vDSO (docs/static.md): what a process that does not load
 * the shim (a static binary, Go's runtime) calls for the time instead of
 * the kernel's vDSO, once the supervisor (engine/supervise.c) has pointed its
 * AT_SYSINFO_EHDR here. The realtime clocks read the run's clock page
 * (realtime = the page's mono + wall_off, include/hermetic/vclock.h), and
 * so do the monotonic ones where the supervisor also makes the process's
 * waits virtual (HM_VDSO_MONO); everything else goes to the kernel's own
 * vDSO functions, or to the syscall where the process has none.
 *
 * Freestanding: no libc, no TLS (Go's runtime owns %fs), no stack
 * protector, no relocation: it finds its data by its own address.
 */
#include <stddef.h>
#include <linux/types.h>
#include <time.h>
#include <sys/time.h>
#include "hermetic/vclock.h"
#include "hermetic/vdso.h"

#define NSEC 1000000000LL
#define TAI_OFFSET (37LL * NSEC)

extern const char __ehdr_start[] __attribute__((visibility("hidden")));

static inline const struct hm_vdso_data *data(void)
{
	return (const struct hm_vdso_data *)(__ehdr_start + HM_VDSO_DATA_OFF);
}

static inline const struct hm_vclock *page(void)
{
	return (const struct hm_vclock *)(__ehdr_start + HM_VDSO_PAGE_OFF);
}

static inline long raw3(long nr, long a, long b, long c)
{
	long ret;

	__asm__ volatile("syscall" : "=a"(ret) : "a"(nr), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
	return ret;
}

static inline int is_mono(clockid_t id)
{
	return id == CLOCK_MONOTONIC || id == CLOCK_MONOTONIC_RAW || id == CLOCK_MONOTONIC_COARSE ||
	       id == CLOCK_BOOTTIME || id == 9 /* BOOTTIME_ALARM */;
}

/* The process's view of the run's monotonic clock: the page's, plus ticks
 * once it has read it tick_after times without the clock moving, never
 * going back. Threads race on the counters; that changes how soon ticks
 * start, never the order of one thread's readings past a move. */
static inline long long view(const struct hm_vclock *vc)
{
	struct hm_vdso_data *d = (struct hm_vdso_data *)data();
	long long m = __atomic_load_n(&vc->mono, __ATOMIC_ACQUIRE), v, last;

	if (__atomic_load_n(&d->base, __ATOMIC_RELAXED) != m) {
		last = __atomic_load_n(&d->last, __ATOMIC_RELAXED);
		__atomic_store_n(&d->off, last > m ? last - m : 0, __ATOMIC_RELAXED);
		__atomic_store_n(&d->reads, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&d->base, m, __ATOMIC_RELEASE);
	}
	if (d->tick && __atomic_add_fetch(&d->reads, 1, __ATOMIC_RELAXED) > d->tick_after)
		v = m + __atomic_add_fetch(&d->off, (long long)d->tick, __ATOMIC_RELAXED);
	else
		v = m + __atomic_load_n(&d->off, __ATOMIC_RELAXED);
	__atomic_store_n(&d->last, v, __ATOMIC_RELAXED);
	return v;
}

static inline int is_wall(clockid_t id)
{
	return id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE || id == 8 /* _ALARM */ ||
	       id == 11 /* TAI */;
}

/* The run's realtime, ns; false when this process keeps the real one. */
static inline int wall(clockid_t id, long long *ns)
{
	const struct hm_vclock *vc = page();
	unsigned long long fl = data()->flags;
	long long v;

	if (!(fl & HM_VDSO_WALL))
		return 0;
	v = fl & HM_VDSO_MONO ? view(vc) : __atomic_load_n(&vc->mono, __ATOMIC_ACQUIRE);
	v += __atomic_load_n(&vc->wall_off, __ATOMIC_ACQUIRE);
	*ns = id == 11 ? v + TAI_OFFSET : v;
	return 1;
}

static inline void to_ts(long long ns, struct timespec *ts)
{
	long long s = ns / NSEC, r = ns % NSEC;

	if (r < 0) {
		r += NSEC;
		s--;
	}
	ts->tv_sec = s;
	ts->tv_nsec = r;
}

int __vdso_clock_gettime(clockid_t id, struct timespec *ts)
{
	const struct hm_vdso_data *d = data();
	long long ns;

	if (is_wall(id) && wall(id, &ns)) {
		to_ts(ns, ts);
		return 0;
	}
	if (is_mono(id) && (d->flags & HM_VDSO_MONO)) {
		to_ts(view(page()), ts);
		return 0;
	}
	if (d->real_clock_gettime)
		return ((int (*)(clockid_t, struct timespec *))d->real_clock_gettime)(id, ts);
	return (int)raw3(228 /* clock_gettime */, id, (long)ts, 0);
}

int __vdso_gettimeofday(struct timeval *tv, struct timezone *tz)
{
	const struct hm_vdso_data *d = data();
	long long ns;

	if (wall(CLOCK_REALTIME, &ns)) {
		if (tv) {
			struct timespec ts;

			to_ts(ns, &ts);
			tv->tv_sec = ts.tv_sec;
			tv->tv_usec = ts.tv_nsec / 1000;
		}
		if (tz)
			tz->tz_minuteswest = tz->tz_dsttime = 0; /* UTC, as the shim */
		return 0;
	}
	if (d->real_gettimeofday)
		return ((int (*)(struct timeval *, struct timezone *))d->real_gettimeofday)(tv, tz);
	return (int)raw3(96 /* gettimeofday */, (long)tv, (long)tz, 0);
}

time_t __vdso_time(time_t *t)
{
	const struct hm_vdso_data *d = data();
	long long ns;

	if (wall(CLOCK_REALTIME, &ns)) {
		struct timespec ts;

		to_ts(ns, &ts);
		if (t)
			*t = ts.tv_sec;
		return ts.tv_sec;
	}
	if (d->real_time)
		return ((time_t(*)(time_t *))d->real_time)(t);
	return (time_t)raw3(201 /* time */, (long)t, 0, 0);
}

long __vdso_getcpu(unsigned *cpu, unsigned *node, void *cache)
{
	const struct hm_vdso_data *d = data();

	if (d->real_getcpu)
		return ((long (*)(unsigned *, unsigned *, void *))d->real_getcpu)(cpu, node, cache);
	return raw3(309 /* getcpu */, (long)cpu, (long)node, (long)cache);
}

int clock_gettime(clockid_t, struct timespec *) __attribute__((weak, alias("__vdso_clock_gettime")));
int gettimeofday(struct timeval *, void *) __attribute__((weak, alias("__vdso_gettimeofday")));
time_t time(time_t *) __attribute__((weak, alias("__vdso_time")));
long getcpu(unsigned *, unsigned *, void *) __attribute__((weak, alias("__vdso_getcpu")));

/* ---- Go's getrandom (HM_VDSO_RNG, docs/static.md) ---- */

#define ROTL(a, b) (((a) << (b)) | ((a) >> (32 - (b))))
#define QR(a, b, c, d)                                                                             \
	(a += b, d ^= a, d = ROTL(d, 16), c += d, b ^= c, b = ROTL(b, 12), a += b, d ^= a,         \
	 d = ROTL(d, 8), c += d, b ^= c, b = ROTL(b, 7))

/* Block blk of the stream of key: lib/chacha20.c's hm_chacha20_block with
 * the block's low 32 bits as the counter and its high 32 bits as the first
 * nonce word (hm_chacha_stream), so these are the bytes the supervisor's
 * stream of the same key hands out. Little-endian machine (x86_64). */
static void chacha_block(const __u8 key[32], unsigned long long blk, __u32 out[16])
{
	__u32 in[16], x[16];
	int i;

	in[0] = 0x61707865;
	in[1] = 0x3320646e;
	in[2] = 0x79622d32;
	in[3] = 0x6b206574;
	for (i = 0; i < 8; i++)
		in[4 + i] = (__u32)key[4 * i] | (__u32)key[4 * i + 1] << 8 |
			    (__u32)key[4 * i + 2] << 16 | (__u32)key[4 * i + 3] << 24;
	in[12] = (__u32)blk;
	in[13] = (__u32)(blk >> 32);
	in[14] = in[15] = 0;
	for (i = 0; i < 16; i++)
		x[i] = in[i];
	for (i = 0; i < 10; i++) {
		QR(x[0], x[4], x[8], x[12]);
		QR(x[1], x[5], x[9], x[13]);
		QR(x[2], x[6], x[10], x[14]);
		QR(x[3], x[7], x[11], x[15]);
		QR(x[0], x[5], x[10], x[15]);
		QR(x[1], x[6], x[11], x[12]);
		QR(x[2], x[7], x[8], x[13]);
		QR(x[3], x[4], x[9], x[14]);
	}
	for (i = 0; i < 16; i++)
		out[i] = x[i] + in[i];
}

/* What hm_go_getrandom returns in Go's registers: n, and err's two words. */
struct go_ret {
	long n;
	unsigned long err_itab, err_data;
};

/* GetRandom(p, flags) of the process this page is for: len bytes of its
 * stream from the position the call reserves. Anything else (a fork
 * child's copy of the page, flags the kernel would refuse) is the raw
 * syscall, as Go's own function makes it. */
__attribute__((used)) static void go_getrandom(struct go_ret *r, unsigned char *p, unsigned long len,
					       unsigned long flags)
{
	struct hm_vdso_data *d = (struct hm_vdso_data *)data();
	unsigned long long pos;
	long n;

	r->err_itab = r->err_data = 0;
	if (!len) {
		r->n = 0;
		return;
	}
	if (!(d->flags & HM_VDSO_RNG) || (flags & ~7ul) ||
	    raw3(39 /* getpid */, 0, 0, 0) != (long)d->rng_pid) {
		n = raw3(318 /* getrandom */, (long)p, (long)len, (long)flags);
	} else {
		if (len > 33554431) /* as the kernel: at most INT_MAX >> 6 per call */
			len = 33554431;
		pos = __atomic_fetch_add(&d->rng_pos, len, __ATOMIC_RELAXED);
		for (unsigned long done = 0; done < len;) {
			__u32 b[16];
			unsigned long off = (pos + done) & 63, k = 64 - off;

			if (k > len - done)
				k = len - done;
			chacha_block(d->rng_key, (pos + done) >> 6, b);
			for (unsigned long i = 0; i < k; i++)
				p[done + i] = ((const unsigned char *)b)[off + i];
			done += k;
		}
		n = (long)len;
	}
	if (n < 0 && n > -256 && d->go_errno_itab) {
		r->n = 0;
		r->err_itab = d->go_errno_itab;
		r->err_data = d->go_small_ints + 8 * (unsigned long)-n;
		return;
	}
	r->n = n < 0 ? 0 : n;
}

/*
 * The entry point of the image: the supervisor writes a jump here over the
 * first bytes of Go's internal/syscall/unix.GetRandom(p []byte, flags)
 * (n int, err error). Go's register ABI (ABIInternal, Go 1.17 on): p's
 * pointer, length and capacity in RAX, RBX, RCX, flags in RDI; n in RAX, err
 * in RBX (itab) and RCX (data). R14 (the goroutine), R15 and RBP are
 * preserved by the C code, as the C ABI keeps them; X15 must be zero again
 * when Go runs on. It runs on the goroutine's stack, which leaves a leaf
 * routine at least 800 bytes (Go's StackLimit); go_getrandom needs about
 * 200, and Go's signal handlers run on their own stack.
 */
__asm__(".text\n"
	".globl hm_go_getrandom\n"
	".type hm_go_getrandom,@function\n"
	"hm_go_getrandom:\n"
	"	push %rbp\n"
	"	mov %rsp, %rbp\n"
	"	sub $32, %rsp\n"
	"	and $-16, %rsp\n"
	"	mov %rdi, %rcx\n" /* flags (p's capacity is not needed) */
	"	mov %rbx, %rdx\n" /* len */
	"	mov %rax, %rsi\n" /* p */
	"	mov %rsp, %rdi\n" /* struct go_ret */
	"	call go_getrandom\n"
	"	mov 0(%rsp), %rax\n"
	"	mov 8(%rsp), %rbx\n"
	"	mov 16(%rsp), %rcx\n"
	"	xorps %xmm15, %xmm15\n"
	"	mov %rbp, %rsp\n"
	"	pop %rbp\n"
	"	ret\n"
	".size hm_go_getrandom, .-hm_go_getrandom\n");
