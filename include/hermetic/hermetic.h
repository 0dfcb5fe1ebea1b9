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
 * Every process of a run reads one virtual clock; hermetic_advance_ns and
 * hermetic_set_now_ns move it for the whole run, except inside a scope,
 * where they move this process's clock (and that of the processes it starts
 * from then on).
 *
 * Scopes: hermetic_scope_enter(name) makes what follows in this process
 * independent of what ran before it (one test of a suite): the clock starts
 * again at the run's start (--now, or *now_ns), the random streams of every
 * thread are keyed by (scope seed, name, lineage key within the scope), the
 * journal gets a new section, and processes started from then on inherit
 * the scope. hermetic_scope_leave ends it and returns to what the process
 * saw before. Scopes nest 8 deep. Programs that cannot call C open
 * "/dev/hermetic/scope/enter?name=NAME" instead (README, "Scopes").
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

/* The run's seed (inside a scope, the scope's); 0 when not active. */
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

/* How a scope ended, for journals kept per failing scope. */
#define HERMETIC_SCOPE_PASSED 1
#define HERMETIC_SCOPE_FAILED 2
#define HERMETIC_SCOPE_SKIPPED 3

/* Enter a scope named name (1..511 bytes, no control characters). seed NULL:
 * hermetic_scope_seed(hermetic_seed(), name); now_ns NULL: the run's --now.
 * Returns 0, -EINVAL for a bad name, -EMLINK nested too deep, -ENOTSUP when
 * not active. */
HERMETIC_API int hermetic_scope_enter(const char *name, const uint64_t *seed,
				      const int64_t *now_ns);

/* Leave the innermost scope this process entered, with a HERMETIC_SCOPE_*
 * status. Returns 0, -ENOENT outside scopes, -EPERM for a scope this
 * process was started in (only the process that entered one leaves it),
 * -ENOTSUP when not active. */
HERMETIC_API int hermetic_scope_leave(int status);

/* The innermost scope's name; NULL outside scopes or when not active. */
HERMETIC_API const char *hermetic_scope_name(void);

/* The seed of a scope named name under base (what enter uses by default). */
HERMETIC_API uint64_t hermetic_scope_seed(uint64_t base, const char *name);

#ifdef __cplusplus
}
#endif
#endif
