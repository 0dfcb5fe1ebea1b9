// SPDX-License-Identifier: MIT
/*
 * libhermetic.so: the public handle (include/hermetic/hermetic.h). It holds no
 * state of its own: it looks up the shim's hermetic_shim_* functions once with
 * dlsym(RTLD_DEFAULT) and forwards to them; when the shim is not loaded it
 * answers "not active" and hands out the real clock and real entropy.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sys/random.h>
#include "hermetic/hermetic.h"
#include "scope.h"

static struct {
	int (*active)(void);
	uint64_t (*seed)(void);
	const char *(*lineage)(void);
	int64_t (*now_ns)(void);
	int (*advance_ns)(int64_t);
	int (*set_now_ns)(int64_t);
	int (*real_clock_gettime)(clockid_t, struct timespec *);
	ssize_t (*real_getrandom)(void *, size_t, unsigned);
	int (*scope_enter)(const char *, const uint64_t *, const int64_t *);
	int (*scope_leave)(int);
	const char *(*scope_name)(void);
} shim;

static pthread_once_t once = PTHREAD_ONCE_INIT;

static void resolve(void)
{
	shim.active = (int (*)(void))dlsym(RTLD_DEFAULT, "hermetic_shim_active");
	shim.seed = (uint64_t(*)(void))dlsym(RTLD_DEFAULT, "hermetic_shim_seed");
	shim.lineage = (const char *(*)(void))dlsym(RTLD_DEFAULT, "hermetic_shim_lineage");
	shim.now_ns = (int64_t(*)(void))dlsym(RTLD_DEFAULT, "hermetic_shim_now_ns");
	shim.advance_ns = (int (*)(int64_t))dlsym(RTLD_DEFAULT, "hermetic_shim_advance_ns");
	shim.set_now_ns = (int (*)(int64_t))dlsym(RTLD_DEFAULT, "hermetic_shim_set_now_ns");
	shim.real_clock_gettime = (int (*)(clockid_t, struct timespec *))dlsym(
		RTLD_DEFAULT, "hermetic_shim_real_clock_gettime");
	shim.real_getrandom = (ssize_t(*)(void *, size_t, unsigned))dlsym(
		RTLD_DEFAULT, "hermetic_shim_real_getrandom");
	shim.scope_enter = (int (*)(const char *, const uint64_t *, const int64_t *))dlsym(
		RTLD_DEFAULT, "hermetic_shim_scope_enter");
	shim.scope_leave = (int (*)(int))dlsym(RTLD_DEFAULT, "hermetic_shim_scope_leave");
	shim.scope_name = (const char *(*)(void))dlsym(RTLD_DEFAULT, "hermetic_shim_scope_name");
}

static void init(void)
{
	int saved = errno;

	pthread_once(&once, resolve);
	errno = saved;
}

HERMETIC_API int hermetic_active(void)
{
	init();
	return shim.active ? shim.active() : 0;
}

HERMETIC_API uint64_t hermetic_seed(void)
{
	init();
	return shim.seed ? shim.seed() : 0;
}

HERMETIC_API const char *hermetic_lineage(void)
{
	init();
	return shim.lineage ? shim.lineage() : "";
}

HERMETIC_API int hermetic_real_clock_gettime(clockid_t id, struct timespec *ts)
{
	init();
	if (shim.real_clock_gettime)
		return shim.real_clock_gettime(id, ts);
	return clock_gettime(id, ts); /* no shim: the libc clock is the real one */
}

HERMETIC_API int64_t hermetic_now_ns(void)
{
	struct timespec ts;

	init();
	if (shim.now_ns)
		return shim.now_ns();
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

HERMETIC_API int hermetic_advance_ns(int64_t ns)
{
	init();
	return shim.advance_ns ? shim.advance_ns(ns) : -ENOTSUP;
}

HERMETIC_API int hermetic_set_now_ns(int64_t ns)
{
	init();
	return shim.set_now_ns ? shim.set_now_ns(ns) : -ENOTSUP;
}

HERMETIC_API ssize_t hermetic_real_getrandom(void *buf, size_t len, unsigned flags)
{
	init();
	if (shim.real_getrandom)
		return shim.real_getrandom(buf, len, flags);
	return getrandom(buf, len, flags);
}

HERMETIC_API int hermetic_scope_enter(const char *name, const uint64_t *seed,
				      const int64_t *now_ns)
{
	init();
	return shim.scope_enter ? shim.scope_enter(name, seed, now_ns) : -ENOTSUP;
}

HERMETIC_API int hermetic_scope_leave(int status)
{
	init();
	return shim.scope_leave ? shim.scope_leave(status) : -ENOTSUP;
}

HERMETIC_API const char *hermetic_scope_name(void)
{
	init();
	return shim.scope_name ? shim.scope_name() : NULL;
}

HERMETIC_API uint64_t hermetic_scope_seed(uint64_t base, const char *name)
{
	return hm_scope_seed(base, name);
}
