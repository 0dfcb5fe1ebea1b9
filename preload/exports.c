// SPDX-License-Identifier: MIT
/*
 * The shim's side of include/hermetic/hermetic.h: lib/handle.c (libhermetic.so)
 * finds these with dlsym(RTLD_DEFAULT, "hermetic_shim_...") and forwards to
 * them; they can also be called directly (ctypes.CDLL(None)).
 */
#include "shim.h"

HM_EXPORT int hermetic_shim_active(void)
{
	return hm_ready() && hm.active;
}

HM_EXPORT uint64_t hermetic_shim_seed(void)
{
	return hermetic_shim_active() ? hm_scope_seed_now() : 0;
}

/* The run's own seed, in or out of scopes (it lives in the clock page, not
 * in the environment: hermetic.Handle.base_seed). */
HM_EXPORT uint64_t hermetic_shim_base_seed(void)
{
	return hermetic_shim_active() ? hm.seed : 0;
}

HM_EXPORT const char *hermetic_shim_lineage(void)
{
	return hermetic_shim_active() ? hm.lineage : "";
}

HM_EXPORT uint32_t hermetic_shim_thread_index(void)
{
	return hermetic_shim_active() ? hm_t.index : 0;
}

HM_EXPORT int64_t hermetic_shim_now_ns(void)
{
	if (hm_ready() && hm.clock)
		return hm_clock_now(CLOCK_REALTIME);
	return hm_real_ns(CLOCK_REALTIME);
}

HM_EXPORT int hermetic_shim_advance_ns(int64_t ns)
{
	if (!hm_ready() || !hm.clock)
		return -ENOTSUP;
	if (ns < 0)
		return -EINVAL;
	if (hm.sc_on)
		return hm_scope_advance(ns); /* this process's, not the run's (scope.c) */
	/* The run's clock, for every process of the run. */
	hm_vc_cas_max(hm_clock_now(CLOCK_MONOTONIC) + ns);
	hm_clock_waited();
	return 0;
}

HM_EXPORT int hermetic_shim_set_now_ns(int64_t ns)
{
	if (!hm_ready() || !hm.clock)
		return -ENOTSUP;
	/* Forward: the monotonic clock moves with it. Back: only the wall
	 * clock does (monotonic time never goes back). */
	if (hm.sc_on)
		return hm_scope_set_wall(ns, true);
	int64_t now = hm_clock_now(CLOCK_REALTIME), mono = hm_clock_now(CLOCK_MONOTONIC);

	if (ns > now)
		hm_vc_cas_max(mono + (ns - now));
	__atomic_store_n(&hm.vc->wall_off, ns - hm_clock_now(CLOCK_MONOTONIC), __ATOMIC_RELEASE);
	hm_clock_waited();
	return 0;
}

HM_EXPORT int hermetic_shim_real_clock_gettime(clockid_t id, struct timespec *ts)
{
	if (!hm_ready() || !hm.real.clock_gettime)
		return hm_sys_errno(hm_sys(SYS_clock_gettime, id, ts, 0));
	return hm.real.clock_gettime(id, ts);
}

HM_EXPORT ssize_t hermetic_shim_real_getrandom(void *buf, size_t len, unsigned flags)
{
	return hm_sys_errno(hm_sys(SYS_getrandom, buf, len, flags));
}

/* Scopes (scope.c). name: 1..511 bytes, no control characters; seed NULL:
 * derived from the current seed and the name; now_ns NULL: --now. */
HM_EXPORT int hermetic_shim_scope_enter(const char *name, const uint64_t *seed,
					const int64_t *now_ns)
{
	return hm_scope_enter(name, seed, now_ns);
}

HM_EXPORT int hermetic_shim_scope_leave(int status)
{
	return hm_scope_leave((enum hm_scope_status)status);
}

HM_EXPORT const char *hermetic_shim_scope_name(void)
{
	return hermetic_shim_active() ? hm_scope_name() : NULL;
}

HM_EXPORT uint64_t hermetic_shim_scope_seed(uint64_t base, const char *name)
{
	return hm_scope_seed(base, name);
}
