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

/* Replay: the recorded reading of id is the thread's view of that clock
 * now, so that deadlines computed from it (wait.c) and children's clocks
 * continue from what the program saw. */
void hm_clock_follow(clockid_t id, int64_t ns)
{
	if (is_wall_id(id)) {
		hm_t.wall = id == CLOCK_TAI ? ns - HM_TAI_OFFSET : ns;
	} else if (is_cpu_id(id)) {
		hm_t.cpu = ns;
	} else if (hm_clock_virtual_id(id)) {
		hm_t.mono = ns;
		hm_t.mono_ticked = false;
	}
}

/* Replay: a wait ended at monotonic time mono (never backwards); the wall
 * clock moves with it. */
void hm_clock_jump(int64_t mono)
{
	int64_t now = hm_clock_now(CLOCK_MONOTONIC);

	hm_t.spins = 0;
	if (mono > now) {
		hm_t.wall += mono - now;
		hm_t.mono = mono;
		hm_t.mono_ticked = false;
	}
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

HM_EXPORT int clock_gettime(clockid_t id, struct timespec *ts)
{
	int64_t ns;

	if (unlikely(!hm_ready()))
		return hm_sys_errno(hm_sys(SYS_clock_gettime, id, ts, 0));
	if (!hm.clock_hook)
		return hm.real.clock_gettime(id, ts);
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

HM_EXPORT int gettimeofday(struct timeval *tv, void *tz)
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

HM_EXPORT time_t time(time_t *t)
{
	int64_t ns;
	time_t v;

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
