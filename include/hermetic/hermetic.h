/* SPDX-License-Identifier: MIT */
/*
 * hermetic's handle for programs under test: ask whether the run is
 * hermetic, read its seed, read and move the virtual clock, and escape to the
 * real clock or real entropy for the one call that needs them.
 *
 * Link with -lhermetic (build/libhermetic.so), or from Python:
 *     h = ctypes.CDLL("libhermetic.so"); h.hermetic_active()
 * Every function works whether or not the shim is loaded: without it,
 * hermetic_active() is 0, the clock functions report the real clock and the
 * ones that would move it fail with -ENOTSUP.
 *
 * The virtual clock is per thread (a thread starts at its creator's time, a
 * child process at its parent's); these functions read and move the calling
 * thread's view.
 */
#ifndef HERMETIC_HERMETIC_H
#define HERMETIC_HERMETIC_H

#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HERMETIC_API __attribute__((visibility("default")))

/* Exit status of a process the shim ended for busy-waiting on a frozen
 * clock (--spin-limit). */
#define HERMETIC_EXIT_SPIN 86

/* 1 when this process runs under hermetic's shim (enrolled), else 0. */
HERMETIC_API int hermetic_active(void);

/* The run's seed; 0 when not active. */
HERMETIC_API uint64_t hermetic_seed(void);

/* This process's lineage key ("1", "1.3", ...); "" when not active. */
HERMETIC_API const char *hermetic_lineage(void);

/* Virtual CLOCK_REALTIME in ns since the epoch, without counting as a clock
 * read (no tick, no spin count). The real clock when not active. */
HERMETIC_API int64_t hermetic_now_ns(void);

/* Move the virtual clocks (realtime and monotonic) forward by ns >= 0.
 * Returns 0, -EINVAL for ns < 0, -ENOTSUP when not active or the clock is off. */
HERMETIC_API int hermetic_advance_ns(int64_t ns);

/* Set virtual realtime to ns since the epoch (backwards too); monotonic
 * clocks move forward by the same amount when it moves forward, never back.
 * Returns 0 or -ENOTSUP. */
HERMETIC_API int hermetic_set_now_ns(int64_t ns);

/* The real clock, bypassing the virtual one. 0 or -1/errno like clock_gettime. */
HERMETIC_API int hermetic_real_clock_gettime(clockid_t id, struct timespec *ts);

/* Real entropy from the kernel, bypassing the seeded stream. Like getrandom(2). */
HERMETIC_API ssize_t hermetic_real_getrandom(void *buf, size_t len, unsigned flags);

#ifdef __cplusplus
}
#endif
#endif
