/* SPDX-License-Identifier: MIT */
/*
 * What the wait wrappers share (wait.c: sleeps; poll.c: relative timeouts;
 * locks.c: absolute deadlines): the journal's way through a wait, and the
 * few helpers every virtual wait uses. The rules are wait.c's comment.
 */
#ifndef HERMETIC_PRELOAD_WAIT_H
#define HERMETIC_PRELOAD_WAIT_H

#include "shim.h"

#define SIGSETSIZE 8

/*
 * One wait through the journal: r = a timeout made by REPLAYED (the
 * recording timed out: no wait at all), else VIRTUAL (the virtual path: clock
 * virtual, or an event being replayed) or REAL (clock off). TIMED_OUT(r) says
 * whether r is a timeout; the result recorded is r, or -errno when r < 0.
 */
#define JW(kind, sleep, r, TIMED_OUT, REPLAYED, VIRTUAL, REAL)                                    \
	do {                                                                                       \
		struct hm_jw w_;                                                                   \
		if (hm_jw_begin(&w_, (kind), (sleep))) {                                           \
			REPLAYED;                                                                  \
		} else if (hm_jw_virtual(&w_)) {                                                   \
			r = (VIRTUAL);                                                             \
		} else {                                                                           \
			r = (REAL);                                                                \
		}                                                                                  \
		hm_jw_end(&w_, TIMED_OUT(r), (r) < 0 ? -(int64_t)errno : (int64_t)(r));            \
	} while (0)

/* A recorded sleep's result: 0, or -errno as -1 and errno. */
#define JW_SLEEP_RESULT(r)                                                                        \
	do {                                                                                       \
		if (w_.result < 0) {                                                               \
			errno = (int)-w_.result;                                                   \
			r = -1;                                                                    \
		} else {                                                                           \
			r = w_.result;                                                             \
		}                                                                                  \
	} while (0)

#define IS_ZERO(r) ((r) == 0)

static inline int64_t mono_now(void)
{
	return hm_clock_now(CLOCK_MONOTONIC);
}

/* Replaying a wait that saw an event: wait for it for real. */
static inline bool replay_event(void)
{
	return hm_t.jw_event;
}

/* After EINTR from a wait's real call: 0 = the deadline is due (our wake-up:
 * time out), -1 = return EINTR. A handler ran either way; when the deadline
 * is not due it may have been the program's (which must see EINTR to run,
 * as Python's signal handlers do), or a late wake-up of ours, after which
 * EINTR is what the kernel would say too: a handler was invoked. */
static inline int after_eintr(struct hm_vwait *w)
{
	return hm_vw_due(w) ? 0 : -1;
}

#define EAGAIN_TIMEDOUT(r) ((r) < 0 && errno == EAGAIN)
#define ERRNUM_TIMEDOUT(r) ((r) == ETIMEDOUT) /* pthread_*: an error number */
#define ERRNO_TIMEDOUT(r) ((r) < 0 && errno == ETIMEDOUT) /* sem_*: -1 and errno */
#define ERRNUM_SET_TIMEDOUT(r) (r = ETIMEDOUT)
#define ERRNO_SET_TIMEDOUT(r) (errno = ETIMEDOUT, r = -1)

/* wait.c: a sleep of ts (the virtual way), for thrd_sleep and the others */
int hm_nanosleep_v(const struct timespec *req, struct timespec *rem) HM_HIDDEN;

#endif
