// SPDX-License-Identifier: MIT
/*
 * Clock reads, and setting the clock.
 *
 * Every thread of every process of a run reads one clock: the run's page
 * (vclock.c), whose monotonic time moves only when the whole run is idle
 * (docs/virtual-time.md). A thread's reading is
 *
 *   page's mono + this thread's ticks
 *
 * where the ticks are --tick per reading, counted only once the thread has
 * read the clock HM_TICK_AFTER times without waiting (a loop polling the
 * clock makes progress), and started again from zero at each of its waits
 * and each time the page's clock moves. They are the thread's own: how often
 * another thread (a JIT, a GC, a runtime's helper) reads the clock changes
 * nothing this thread sees, and a thread that reads the clock a few times
 * between waits sees exactly the page's time. A thread never sees its own
 * readings go back: after the page moves, ticks beyond it are carried over.
 *
 *   realtime (+coarse, alarm)  monotonic + the run's wall offset
 *   TAI                        realtime + 37 s
 *   monotonic (+raw, coarse,   as above
 *   boottime, boottime alarm)
 *   process/thread CPU time    starts at 0, +tick per reading, per thread
 *   (and the calling thread's or process's own CPU clock by its id:
 *   own_cpu_id)
 *   anything else              (negative ids: other processes' CPU clocks,
 *                              fd clocks) passes through
 *
 * With --tick 0 the clock is frozen between the run's idle moments; a thread
 * reading it more than --spin-limit times without a wait is busy-waiting
 * for time that cannot pass, and the process ends with a message (86).
 *
 * clock_settime(CLOCK_REALTIME) and settimeofday move the run's wall offset:
 * every process of the run sees the new time, the host's clock is not
 * touched (and the kernel refuses the raw syscall to enrolled processes).
 */
#include <string.h>
#include <linux/capability.h>
#include "shim.h"

bool hm_clock_virtual_id(clockid_t id)
{
	return id >= CLOCK_REALTIME && id <= CLOCK_TAI && id != 10;
}

static bool is_cpu_id(clockid_t id)
{
	return id == CLOCK_PROCESS_CPUTIME_ID || id == CLOCK_THREAD_CPUTIME_ID;
}

static bool is_wall_id(clockid_t id)
{
	return id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE || id == CLOCK_REALTIME_ALARM ||
	       id == CLOCK_TAI;
}

__attribute__((noinline, cold)) static void spin_exceeded(void)
{
	char num[24];

	hm_fmt_u64(num, sizeof(num), hm.spin_limit);
	hm_warn("process with lineage key ", hm.lineage, " ended by --spin-limit:");
	hm_warn("  it read the frozen clock (--tick 0) more than ", num,
		" times without sleeping or waiting in between.");
	hm_warn("  It is busy-waiting for time to pass, which never happens under a frozen clock.",
		NULL, NULL);
	hm_warn("  Fix: let the loop sleep or wait (virtual sleeps return at once), let readings "
		"advance (--tick 1us, the default), or disable the check with --spin-limit 0. "
		"Exit status 86.",
		NULL, NULL);
	hm_sys(SYS_exit_group, HM_EXIT_SPIN, 0, 0);
}

/* The ids the fast path serves: realtime (+coarse, alarm), TAI; monotonic
 * (+raw, coarse), boottime (+alarm). Not the CPU clocks, not id 10. */
#define WALL_IDS                                                                                   \
	(1u << CLOCK_REALTIME | 1u << CLOCK_REALTIME_COARSE | 1u << CLOCK_REALTIME_ALARM |         \
	 1u << CLOCK_TAI)
#define FAST_IDS                                                                                   \
	(WALL_IDS | 1u << CLOCK_MONOTONIC | 1u << CLOCK_MONOTONIC_RAW |                            \
	 1u << CLOCK_MONOTONIC_COARSE | 1u << CLOCK_BOOTTIME | 1u << CLOCK_BOOTTIME_ALARM)

struct hm_clock_fast hm_cf;

void hm_clock_fast_update(void)
{
	hm_cf.vc = hm.vc;
	hm_cf.tick = hm.tick;
	/* Past tick_after, a reading ticks (the fast path adds the tick);
	 * --tick 0 never ticks, and with a spin limit to count every reading
	 * goes the slow way, so a fast reading past tick_after always has a
	 * tick to add. */
	hm_cf.tick_after = hm.tick ? HM_TICK_AFTER : UINT64_MAX;
	__atomic_store_n(&hm_cf.ids,
			 hm.active && hm.clock && hm.vc && !hm.jr && !hm.sc_on &&
					 (hm.tick || !hm.spin_limit)
				 ? FAST_IDS
				 : 0,
			 __ATOMIC_RELEASE);
}

/* realtime = the run's monotonic view + this; a scope has its own (scope.c) */
static inline int64_t wall_off(void)
{
	if (unlikely(hm.sc_on))
		return hm.sc_wall;
	return __atomic_load_n(&hm.vc->wall_off, __ATOMIC_ACQUIRE);
}

/* This thread's monotonic view; tick: this is a reading (may tick). */
static inline int64_t view(bool tick)
{
	int64_t m = __atomic_load_n(&hm.vc->mono, __ATOMIC_ACQUIRE), v;

	if (unlikely(m != hm_t.base)) {
		/* The run's clock moved: this thread starts from it again,
		 * keeping what it has already seen (base + off: readings do not
		 * store it; last until its first reading). */
		int64_t seen = hm_t.base ? hm_t.base + hm_t.off : hm_t.last;

		hm_t.off = seen > m ? seen - m : 0;
		hm_t.base = m;
		hm_t.reads = 0;
	}
	if (!tick)
		return m + hm_t.off + hm_t.lagoff;
	hm_t.reads++;
	if (likely(hm.tick)) {
		if (hm_t.reads > HM_TICK_AFTER) {
			hm_t.off += hm_tick_at(hm.tick, hm_t.reads, HM_TICK_AFTER);
			/* A timer of this process whose expiry the thread's
			 * readings have passed fires now (timers.c). */
			if (unlikely(m + hm_t.off + hm_t.lagoff >=
				     __atomic_load_n(&hm_timer_due, __ATOMIC_RELAXED)))
				hm_timers_ticked(m + hm_t.off + hm_t.lagoff);
		}
	} else if (unlikely(hm.spin_limit && hm_t.reads > hm.spin_limit)) {
		spin_exceeded();
	}
	v = m + hm_t.off;
	return v + hm_t.lagoff;
}

/* Per id the fast path serves: what its reading adds to the thread's
 * monotonic view, the page's wall_off (masked in) and TAI's offset. */
static const int64_t id_wall_mask[CLOCK_TAI + 1] = {
	[CLOCK_REALTIME] = -1, [CLOCK_REALTIME_COARSE] = -1, [CLOCK_REALTIME_ALARM] = -1,
	[CLOCK_TAI] = -1,
};
static const int64_t id_tai[CLOCK_TAI + 1] = { [CLOCK_TAI] = HM_TAI_OFFSET };

/*
 * The reading read_clock(id) would give, when it is the plain one: no scope,
 * no journal, the page has not moved since this thread last read it, and the
 * reading does not fire a timer or meet the spin limit. Else false, having
 * changed nothing: read_clock then does all of it. What it reads is the
 * page's mono and wall_off, one line of hm_cf, hm_timer_due when it ticks,
 * and the thread's own view (one line of initial-exec TLS), with no call.
 */
static __attribute__((always_inline)) inline bool fast_reading(clockid_t id, int64_t *out)
{
	struct shim_thread *t = &hm_t;
	const struct hm_vclock *vc;
	int64_t m, off, lag, v, w;
	uint64_t r;

	if (unlikely((unsigned)id > CLOCK_TAI ||
		     !((__atomic_load_n(&hm_cf.ids, __ATOMIC_ACQUIRE) >> id) & 1)))
		return false;
	vc = hm_cf.vc;
	m = __atomic_load_n(&vc->mono, __ATOMIC_ACQUIRE);
	/* Also a thread's first reading: its base is 0 until view() sets it,
	 * and the page's mono never is (HM_VMONO_BASE on), so a thread not yet
	 * initialised (hm_thread_init) always goes the slow way. */
	if (unlikely(m != t->base))
		return false;
	r = t->reads + 1;
	off = t->off;
	lag = t->lagoff;
	/* Past HM_TICK_AFTER readings a loop reads the clock: every reading
	 * ticks from then on (hm_clock_fast_update: then there is a tick),
	 * more the longer it goes on (hm_tick_at). Laid out as the straight
	 * line: the loop that reads the clock most is the one that ticks. */
	if (likely(r > hm_cf.tick_after)) {
		off += hm_tick_at(hm_cf.tick, r, hm_cf.tick_after);
		/* a tick that meets a timer's expiry: the slow path fires it */
		if (unlikely(m + off + lag >= __atomic_load_n(&hm_timer_due, __ATOMIC_RELAXED)))
			return false;
		t->off = off;
	}
	t->reads = r;
	v = m + off + lag;
	/* wall_off shares mono's line: read it whatever the id, and add it
	 * without a branch. */
	w = __atomic_load_n(&vc->wall_off, __ATOMIC_ACQUIRE);
	v += (w & id_wall_mask[(unsigned)id]) + id_tai[(unsigned)id];
	*out = v;
	return true;
}

/* ns_to_ts, without the sign fix-up for the usual non-negative reading. */
static inline struct timespec split_ns(int64_t v)
{
	if (likely(v >= 0))
		return (struct timespec){ .tv_sec = (uint64_t)v / NSEC_PER_SEC,
					  .tv_nsec = (uint64_t)v % NSEC_PER_SEC };
	return ns_to_ts(v);
}

/* One reading of a virtual clock id. */
static inline int64_t read_clock(clockid_t id)
{
	int64_t v;

	if (likely(is_wall_id(id))) {
		v = view(true) + wall_off();
		return id == CLOCK_TAI ? v + HM_TAI_OFFSET : v;
	}
	if (is_cpu_id(id)) {
		if (hm_scope_stale())
			hm_scope_thread_sync();
		v = hm_t.cpu;
		hm_t.cpu += hm.tick;
		return v;
	}
	return view(true) + hm.sc_mono;
}

/* Monotonic: the run's clock (deadlines are on it); realtime: this process's. */
int64_t hm_clock_now(clockid_t id)
{
	if (is_cpu_id(id))
		return hm_t.cpu;
	if (is_wall_id(id))
		return view(false) + wall_off() + (id == CLOCK_TAI ? HM_TAI_OFFSET : 0);
	return view(false);
}

/* The run's wall time as the page holds it, without this thread's ticks:
 * what file times record (filetab.c). No thread of the run reads less. */
int64_t hm_clock_page_wall(void)
{
	return __atomic_load_n(&hm.vc->mono, __ATOMIC_ACQUIRE) + wall_off();
}

int64_t hm_clock_to_mono(clockid_t id, int64_t t)
{
	if (is_wall_id(id))
		return t - wall_off() - (id == CLOCK_TAI ? HM_TAI_OFFSET : 0);
	return t - hm.sc_mono;
}

void hm_clock_waited(void)
{
	hm_t.reads = 0;
}

/*
 * CPython's GIL wait (locks.c) comes right after a reading of the
 * interpreter's own: take_gil computes its 5 ms deadline from
 * CLOCK_MONOTONIC (_PyThread_cond_after) before every timed wait on the GIL.
 * How often a thread waits for the GIL is decided in real time (whether the
 * holder let go yet), so that reading must count for nothing: neither in the
 * thread's readings since its last wait (past HM_TICK_AFTER each one ticks,
 * and the program's own readings would then see one tick more per GIL wait)
 * nor in its journal (two runs of one seed would differ by the number of GIL
 * waits). The reading's own tick, if it ticked, is taken back with it; the
 * thread's next reading sees what this one saw. A timer the tick fired stays
 * fired (a tick reaches a timer's expiry only past 100,000 readings).
 */
void hm_clock_unread(void)
{
	if (hm.jr & HM_JR_RECORD)
		hm_jr_unput_clock();
	/* Replaying, a recorded answer went back to the timing cursor: no
	 * reading of the thread's own was made */
	if ((hm.jr & HM_JR_REPLAY) && hm_jr_unget_clock())
		return;
	/* (if the run's clock moved since, the thread's next reading starts
	 * from what it had seen: base + off, this tick taken back) */
	if (hm_t.reads) {
		if (hm.tick && hm_t.reads > HM_TICK_AFTER)
			hm_t.off -= (int64_t)hm_tick_at(hm.tick, hm_t.reads, HM_TICK_AFTER);
		hm_t.reads--;
	}
}

/* The thread polled and found nothing (poll.c): its readings tick now. */
void hm_clock_spun(void)
{
	if (hm.tick && hm_t.reads < HM_TICK_AFTER)
		hm_t.reads = HM_TICK_AFTER;
}

/* Replay: the recorded reading of id is what this thread saw, so that
 * deadlines computed from it (wait.c) continue from there. */
void hm_clock_follow(clockid_t id, int64_t ns)
{
	int64_t m;

	if (is_cpu_id(id)) {
		hm_t.cpu = ns;
		return;
	}
	if (!hm_clock_virtual_id(id))
		return;
	ns = hm_clock_to_mono(id, ns);
	m = view(false) - hm_t.off - hm_t.lagoff;
	hm_t.off = ns - m - hm_t.lagoff; /* (what it has seen: base + off) */
}

void hm_clock_lag_to(int64_t v)
{
	int64_t now = view(false);

	if (now < v)
		hm_t.lagoff += v - now;
}

/* Replay: a wait ended at monotonic time mono: the run's clock is there. */
void hm_clock_jump(int64_t mono)
{
	hm_t.reads = 0;
	hm_vc_cas_max(mono - hm.sc_mono);
}

/* Does this process hold CAP_SYS_TIME (as the kernel would ask)? */
static bool may_set_time(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];

	if (hm_sys(SYS_capget, &h, d, 0) < 0)
		return false;
	return d[CAP_SYS_TIME / 32].effective & (1U << (CAP_SYS_TIME % 32));
}

static int set_wall(int64_t ns)
{
	if (!may_set_time()) {
		errno = EPERM;
		return -1;
	}
	if (hm.sc_on)
		return hm_scope_set_wall(ns, false) < 0 ? -1 : 0;
	__atomic_store_n(&hm.vc->wall_off, ns - view(false), __ATOMIC_RELEASE);
	return 0;
}

HM_EXPORT int clock_settime(clockid_t id, const struct timespec *ts)
{
	hm_ready();
	if (!hm.clock)
		return hm.real.clock_settime ? hm.real.clock_settime(id, ts)
					     : hm_sys_errno(hm_sys(SYS_clock_settime, id, ts, 0));
	__asm__("" : "+r"(ts)); /* declared nonnull; callers still pass NULL */
	if (!ts) {
		errno = EFAULT;
		return -1;
	}
	if (id != CLOCK_REALTIME || ts->tv_nsec < 0 || ts->tv_nsec >= NSEC_PER_SEC ||
	    ts->tv_sec < 0) {
		errno = EINVAL;
		return -1;
	}
	return set_wall(ts_to_ns(ts));
}

HM_EXPORT int settimeofday(const struct timeval *tv, const struct timezone *tz)
{
	hm_ready();
	if (!hm.clock)
		return hm.real.settimeofday ? hm.real.settimeofday(tv, tz)
					    : hm_sys_errno(hm_sys(SYS_settimeofday, tv, tz, 0));
	if (!tv)
		return 0; /* only the (obsolete) time zone: nothing of ours */
	if (tv->tv_usec < 0 || tv->tv_usec >= 1000000 || tv->tv_sec < 0) {
		errno = EINVAL;
		return -1;
	}
	return set_wall((int64_t)tv->tv_sec * NSEC_PER_SEC + tv->tv_usec * 1000);
}

HM_EXPORT int stime(const time_t *t)
{
	struct timeval tv = { .tv_sec = t ? *t : 0 };

	if (!t) {
		errno = EFAULT;
		return -1;
	}
	return settimeofday(&tv, NULL);
}

/*
 * The journal path (HERMETIC_RECORD, HERMETIC_REPLAY): the reading is the
 * recorded one (replay), else the live one - virtual where the shim
 * virtualises the clock, else the real call's, in ns - and is recorded.
 * False if the real call failed (errno set; nothing recorded or consumed).
 */
static bool live_reading(enum hm_jclock_call call, clockid_t id, int64_t *ns)
{
	struct timespec ts;
	struct timeval tv;
	struct timeb tb;
	clock_t c;
	time_t t;

	/* Replay keeps virtual time whatever the mode: a timing reading the
	 * recording had no answer for continues from the last replayed one. */
	if ((hm.clock || ((hm.jr & HM_JR_REPLAY) && !is_wall_id(id))) && hm_clock_virtual_id(id)) {
		*ns = read_clock(id);
		return true;
	}
	switch (call) {
	case HM_JC_GETTIMEOFDAY:
		if (hm.real.gettimeofday(&tv, NULL))
			return false;
		*ns = (int64_t)tv.tv_sec * NSEC_PER_SEC + tv.tv_usec * 1000;
		return true;
	case HM_JC_TIME:
		if ((t = hm.real.time(NULL)) == (time_t)-1)
			return false;
		*ns = (int64_t)t * NSEC_PER_SEC;
		return true;
	case HM_JC_TIMESPEC_GET:
		if (!hm.real.timespec_get || hm.real.timespec_get(&ts, TIME_UTC) != TIME_UTC)
			return false;
		*ns = ts_to_ns(&ts);
		return true;
	case HM_JC_FTIME:
		if (!hm.real.ftime || hm.real.ftime(&tb))
			return false;
		*ns = (int64_t)tb.time * NSEC_PER_SEC + (int64_t)tb.millitm * 1000000;
		return true;
	case HM_JC_CLOCK:
		if (!hm.real.clock || (c = hm.real.clock()) == (clock_t)-1)
			return false;
		*ns = (int64_t)c * (NSEC_PER_SEC / CLOCKS_PER_SEC);
		return true;
	default:
		if (hm.real.clock_gettime(id, &ts))
			return false;
		*ns = ts_to_ns(&ts);
		return true;
	}
}

static __attribute__((noinline)) bool jr_reading(enum hm_jclock_call call, clockid_t id,
						 int64_t *ns)
{
	if (!((hm.jr & HM_JR_REPLAY) && hm_jr_get_clock(call, id, ns)) &&
	    !live_reading(call, id, ns))
		return false;
	if (hm.jr & HM_JR_RECORD)
		hm_jr_put_clock(call, id, *ns);
	return true;
}

static __attribute__((noinline)) int clock_gettime_jr(clockid_t id, struct timespec *ts)
{
	int64_t ns;

	/* An id that is not always valid must be valid before a value is consumed. */
	if (!hm_clock_virtual_id(id) && (hm.jr & HM_JR_REPLAY) && hm.real.clock_gettime(id, ts))
		return -1;
	if (!jr_reading(HM_JC_CLOCK_GETTIME, id, &ns))
		return -1;
	*ts = ns_to_ts(ns);
	return 0;
}

/* Recording a virtual clock (and not replaying): the hot path of a recording. */
static inline bool record_virtual(clockid_t id)
{
	return hm.jr == HM_JR_RECORD && hm.clock && hm_clock_virtual_id(id);
}

/*
 * A CPU clock named by a clockid_t of the kernel's encoding (negative: what
 * clock_getcpuclockid and pthread_getcpuclockid return, ~pid << 3, 4 for a
 * thread, the low two bits which time; 3 is a clock fd) that is the calling
 * thread's or process's own is the virtual one CLOCK_THREAD_CPUTIME_ID or
 * CLOCK_PROCESS_CPUTIME_ID reads: read through the id, it was the real CPU
 * time, another value in every run (CPython's test_pthread_getcpuclockid).
 * Another thread's or process's passes through.
 */
static clockid_t own_cpu_id(clockid_t id)
{
	pid_t who;

	if (id >= 0 || (id & 3) == 3 || !hm.clock)
		return id;
	who = ~(id >> 3);
	if (id & 4)
		return !who || who == (pid_t)hm_sys(SYS_gettid, 0, 0, 0) ? CLOCK_THREAD_CPUTIME_ID : id;
	return !who || who == hm.pid ? CLOCK_PROCESS_CPUTIME_ID : id;
}

static __attribute__((noinline)) int clock_gettime_slow(clockid_t id, struct timespec *ts)
{
	int64_t ns;

	if (unlikely(!hm_ready()))
		return hm_sys_errno(hm_sys(SYS_clock_gettime, id, ts, 0));
	if (!hm.clock_hook)
		return hm.real.clock_gettime(id, ts);
	id = own_cpu_id(id);
	if (unlikely(hm.jr)) {
		if (!record_virtual(id))
			return clock_gettime_jr(id, ts);
		ns = read_clock(id);
		*ts = ns_to_ts(ns);
		hm_jr_put_clock(HM_JC_CLOCK_GETTIME, id, ns);
		return 0;
	}
	if (!hm_clock_virtual_id(id))
		return hm.real.clock_gettime(id, ts);
	*ts = ns_to_ts(read_clock(id));
	return 0;
}

HM_EXPORT int clock_gettime(clockid_t id, struct timespec *ts)
{
	int64_t ns;

	if (likely(fast_reading(id, &ns))) {
		*ts = split_ns(ns);
		return 0;
	}
	return clock_gettime_slow(id, ts);
}

static __attribute__((noinline)) int gettimeofday_slow(struct timeval *tv, void *tz)
{
	if (unlikely(!hm_ready()))
		return hm_sys_errno(hm_sys(SYS_gettimeofday, tv, tz, 0));
	if (!hm.clock_hook)
		return hm.real.gettimeofday(tv, tz);
	if (tz) {
		if (hm.clock)
			memset(tz, 0, sizeof(struct timezone)); /* UTC, no DST */
		else
			hm.real.gettimeofday(NULL, tz);
	}
	/* glibc declares tv nonnull; callers still pass NULL */
	__asm__("" : "+r"(tv));
	if (tv) {
		struct timespec ts;
		int64_t ns;

		if (likely(!hm.jr)) {
			ns = read_clock(CLOCK_REALTIME);
		} else if (record_virtual(CLOCK_REALTIME)) {
			ns = read_clock(CLOCK_REALTIME);
			hm_jr_put_clock(HM_JC_GETTIMEOFDAY, CLOCK_REALTIME, ns);
		} else if (!jr_reading(HM_JC_GETTIMEOFDAY, CLOCK_REALTIME, &ns)) {
			return -1;
		}
		ts = ns_to_ts(ns);
		tv->tv_sec = ts.tv_sec;
		tv->tv_usec = ts.tv_nsec / 1000;
	}
	return 0;
}

HM_EXPORT int gettimeofday(struct timeval *tv, void *tz)
{
	int64_t ns;

	/* glibc declares tv nonnull; callers still pass NULL */
	__asm__("" : "+r"(tv));
	if (likely(tv && !tz && fast_reading(CLOCK_REALTIME, &ns))) {
		struct timespec ts = split_ns(ns);

		tv->tv_sec = ts.tv_sec;
		tv->tv_usec = ts.tv_nsec / 1000;
		return 0;
	}
	return gettimeofday_slow(tv, tz);
}

HM_EXPORT time_t time(time_t *t)
{
	int64_t ns;
	time_t v;

	if (likely(fast_reading(CLOCK_REALTIME, &ns))) {
		v = split_ns(ns).tv_sec;
		if (t)
			*t = v;
		return v;
	}
	if (unlikely(!hm_ready()))
		return hm_sys(SYS_time, t, 0, 0);
	if (!hm.clock_hook)
		return hm.real.time(t);
	if (unlikely(hm.jr)) {
		if (!jr_reading(HM_JC_TIME, CLOCK_REALTIME, &ns))
			return (time_t)-1;
	} else {
		ns = read_clock(CLOCK_REALTIME);
	}
	v = ns_to_ts(ns).tv_sec;
	if (t)
		*t = v;
	return v;
}

HM_EXPORT int timespec_get(struct timespec *ts, int base)
{
	int64_t ns;

	if (unlikely(!hm_ready()) || !hm.clock_hook)
		return hm.real.timespec_get ? hm.real.timespec_get(ts, base) : 0;
	if (base != TIME_UTC)
		return hm.clock || !hm.real.timespec_get ? 0 : hm.real.timespec_get(ts, base);
	if (unlikely(hm.jr)) {
		if (!jr_reading(HM_JC_TIMESPEC_GET, CLOCK_REALTIME, &ns))
			return 0;
	} else {
		ns = read_clock(CLOCK_REALTIME);
	}
	*ts = ns_to_ts(ns);
	return base;
}

HM_EXPORT int ftime(struct timeb *tb)
{
	struct timespec ts;
	int64_t ns;

	if (unlikely(!hm_ready()) || !hm.clock_hook)
		return hm.real.ftime ? hm.real.ftime(tb) : -1;
	if (unlikely(hm.jr)) {
		if (!jr_reading(HM_JC_FTIME, CLOCK_REALTIME, &ns))
			return -1;
	} else {
		ns = read_clock(CLOCK_REALTIME);
	}
	ts = ns_to_ts(ns);
	tb->time = ts.tv_sec;
	tb->millitm = ts.tv_nsec / 1000000;
	tb->timezone = 0;
	tb->dstflag = 0;
	return 0;
}

HM_EXPORT clock_t clock(void)
{
	int64_t ns;

	if (unlikely(!hm_ready()) || !hm.clock_hook)
		return hm.real.clock ? hm.real.clock() : (clock_t)-1;
	if (unlikely(hm.jr)) {
		if (!jr_reading(HM_JC_CLOCK, CLOCK_PROCESS_CPUTIME_ID, &ns))
			return (clock_t)-1;
	} else {
		ns = read_clock(CLOCK_PROCESS_CPUTIME_ID);
	}
	return ns / (NSEC_PER_SEC / CLOCKS_PER_SEC);
}
