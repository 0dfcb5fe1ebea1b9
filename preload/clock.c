// SPDX-License-Identifier: MIT
/*
 * Clock reads. Each thread keeps its own view of the virtual clocks
 * (hm_t.wall, hm_t.mono, hm_t.cpu): a new thread starts at its creator's
 * view, a child process at its parent's, and only the thread's own sleeps and
 * waits (and the Lamport merges of pthread_join and wait(2)) move it. That
 * keeps a thread's readings independent of what other threads do - a JVM's
 * or libuv's helper threads waking up cannot change what the main thread sees.
 *
 *   realtime (+coarse, alarm)  frozen; moves by sleeps/waits/advance
 *   TAI                        realtime + 37 s
 *   monotonic (+raw, coarse,   the reading, then +tick: consecutive readings
 *   boottime, boottime alarm)  differ by exactly the tick
 *   process/thread CPU time    starts at 0, +tick per reading
 *   anything else              (negative ids: other processes' CPU clocks,
 *                              fd clocks) passes through
 *
 * A frozen clock (realtime always, the others when the tick is 0) read more
 * than --spin-limit times without a sleep or wait in between ends the process:
 * such a loop waits for time to pass, which never happens.
 */
#include <string.h>
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

__attribute__((noinline, cold)) static void spin_exceeded(bool wall)
{
	char num[24];

	hm_fmt_u64(num, sizeof(num), hm.spin_limit);
	hm_warn("process with lineage key ", hm.lineage, " ended by --spin-limit:");
	hm_warn(wall ? "  it read the frozen wall clock (time, gettimeofday, CLOCK_REALTIME) more than "
		     : "  it read a frozen clock (--tick 0) more than ",
		num, " times without sleeping or waiting in between.");
	hm_warn("  It is busy-waiting for time to pass, which never happens under a frozen clock.",
		NULL, NULL);
	hm_warn(wall ? "  Fix: let the loop sleep or wait (virtual sleeps return at once), or "
		       "disable the check with --spin-limit 0. Exit status 86."
		     : "  Fix: let monotonic clocks advance per reading (--tick 1us), or disable the "
		       "check with --spin-limit 0. Exit status 86.",
		NULL, NULL);
	hm_sys(SYS_exit_group, HM_EXIT_SPIN, 0, 0);
}

static inline void frozen_read(bool wall)
{
	if (unlikely(hm.spin_limit && ++hm_t.spins > hm.spin_limit))
		spin_exceeded(wall);
}

/* One reading of a virtual clock id, ticking where the id ticks. */
static inline int64_t read_clock(clockid_t id)
{
	int64_t v;

	if (likely(is_wall_id(id))) {
		frozen_read(true);
		return id == CLOCK_TAI ? hm_t.wall + HM_TAI_OFFSET : hm_t.wall;
	}
	if (hm.tick == 0)
		frozen_read(false);
	if (is_cpu_id(id)) {
		v = hm_t.cpu;
		hm_t.cpu += hm.tick;
		return v;
	}
	v = hm_t.mono;
	hm_t.mono += hm.tick;
	hm_t.mono_ticked = true;
	return v;
}

int64_t hm_clock_now(clockid_t id)
{
	if (is_wall_id(id))
		return id == CLOCK_TAI ? hm_t.wall + HM_TAI_OFFSET : hm_t.wall;
	if (is_cpu_id(id))
		return hm_t.cpu;
	/* "Now" is the last reading: a deadline of last reading + 5 s is 5 s away. */
	return hm_t.mono_ticked ? hm_t.mono - (int64_t)hm.tick : hm_t.mono;
}

void hm_clock_waited(void)
{
	hm_t.spins = 0;
}

void hm_clock_advance(int64_t ns)
{
	hm_t.spins = 0;
	if (ns <= 0)
		return;
	hm_t.wall += ns;
	hm_t.mono += ns;
}

void hm_clock_merge(int64_t wall, int64_t mono)
{
	if (wall > hm_t.wall)
		hm_t.wall = wall;
	if (mono > hm_t.mono) {
		hm_t.mono = mono;
		hm_t.mono_ticked = false;
	}
}

HM_EXPORT int clock_gettime(clockid_t id, struct timespec *ts)
{
	if (unlikely(!hm_ready()))
		return hm_sys_errno(hm_sys(SYS_clock_gettime, id, ts, 0));
	if (!hm.clock || !hm_clock_virtual_id(id))
		return hm.real.clock_gettime(id, ts);
	*ts = ns_to_ts(read_clock(id));
	return 0;
}

HM_EXPORT int gettimeofday(struct timeval *tv, void *tz)
{
	if (unlikely(!hm_ready()))
		return hm_sys_errno(hm_sys(SYS_gettimeofday, tv, tz, 0));
	if (!hm.clock)
		return hm.real.gettimeofday(tv, tz);
	if (tz)
		memset(tz, 0, sizeof(struct timezone)); /* UTC, no DST */
	/* glibc declares tv nonnull; callers still pass NULL */
	__asm__("" : "+r"(tv));
	if (tv) {
		struct timespec ts = ns_to_ts(read_clock(CLOCK_REALTIME));

		tv->tv_sec = ts.tv_sec;
		tv->tv_usec = ts.tv_nsec / 1000;
	}
	return 0;
}

HM_EXPORT time_t time(time_t *t)
{
	time_t v;

	if (unlikely(!hm_ready()))
		return hm_sys(SYS_time, t, 0, 0);
	if (!hm.clock)
		return hm.real.time(t);
	v = ns_to_ts(read_clock(CLOCK_REALTIME)).tv_sec;
	if (t)
		*t = v;
	return v;
}

HM_EXPORT int timespec_get(struct timespec *ts, int base)
{
	if (unlikely(!hm_ready()) || !hm.clock)
		return hm.real.timespec_get ? hm.real.timespec_get(ts, base) : 0;
	if (base != TIME_UTC)
		return 0;
	*ts = ns_to_ts(read_clock(CLOCK_REALTIME));
	return base;
}

HM_EXPORT int ftime(struct timeb *tb)
{
	struct timespec ts;

	if (unlikely(!hm_ready()) || !hm.clock)
		return hm.real.ftime ? hm.real.ftime(tb) : -1;
	ts = ns_to_ts(read_clock(CLOCK_REALTIME));
	tb->time = ts.tv_sec;
	tb->millitm = ts.tv_nsec / 1000000;
	tb->timezone = 0;
	tb->dstflag = 0;
	return 0;
}

HM_EXPORT clock_t clock(void)
{
	if (unlikely(!hm_ready()) || !hm.clock)
		return hm.real.clock ? hm.real.clock() : (clock_t)-1;
	return read_clock(CLOCK_PROCESS_CPUTIME_ID) / (NSEC_PER_SEC / CLOCKS_PER_SEC);
}
