// SPDX-License-Identifier: MIT
/*
 * Initialisation: read the HERMETIC_* environment once, resolve the real
 * symbols, register fork handlers. Runs from the constructor, or from the
 * first wrapper another library's constructor calls before ours ran, under
 * pthread_once. It must not allocate: getenv and dlsym(RTLD_NEXT) only, and
 * a wrapper that the dynamic linker or an allocator calls back into while we
 * are here sees hm_t.in_init and uses raw syscalls.
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>
#include <sys/prctl.h>
#include "shim.h"
#include "config.h"
#include "hermetic/trace.h"

struct shim_state hm = {
	.environ_lock = PTHREAD_MUTEX_INITIALIZER,
	.jr_lock = PTHREAD_MUTEX_INITIALIZER,
	.page = { .fd = -1 },
};
__thread struct shim_thread hm_t __attribute__((tls_model("initial-exec")));

static pthread_once_t once = PTHREAD_ONCE_INIT;

extern char **environ;

void hm_warn(const char *a, const char *b, const char *c)
{
	const char *parts[] = { "hermetic: ", a, b, c, "\n" };

	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
		if (parts[i])
			hm_sys(SYS_write, 2, parts[i], strlen(parts[i]));
}

int64_t hm_real_ns(clockid_t id)
{
	struct timespec ts;

	if (hm.real.clock_gettime)
		hm.real.clock_gettime(id, &ts);
	else
		hm_sys(SYS_clock_gettime, id, &ts, 0);
	return ts_to_ns(&ts);
}

static bool starts_with(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* Copy every HERMETIC_* variable we do not own into hm.env_buf. */
static void snapshot_env(void)
{
	size_t used = 0;

	hm.preload = NULL;
	hm.home = NULL;
	hm.dns_allow = "";
	hm.rec_dir = hm.rep_dir = hm.rep_report = NULL;
	for (char **e = environ; e && *e; e++) {
		size_t len;
		char *copy;

		if (!starts_with(*e, "HERMETIC_") || starts_with(*e, HM_ENV_LINEAGE "=") ||
		    starts_with(*e, HM_ENV_IMAGE "="))
			continue;
		len = strlen(*e) + 1;
		if (hm.nenv == HM_ENV_MAX || used + len > sizeof(hm.env_buf)) {
			hm_warn("environment too large, not passed on: ", *e, NULL);
			continue;
		}
		copy = memcpy(hm.env_buf + used, *e, len);
		used += len;
		hm.env[hm.nenv++] = copy;
		if (starts_with(copy, HM_ENV_PRELOAD "="))
			hm.preload = copy + strlen(HM_ENV_PRELOAD "=");
		else if (starts_with(copy, HM_ENV_DNS_ALLOW "="))
			hm.dns_allow = copy + strlen(HM_ENV_DNS_ALLOW "=");
		else if (starts_with(copy, HM_ENV_HOME "=") && copy[strlen(HM_ENV_HOME "=")])
			hm.home = copy + strlen(HM_ENV_HOME "=");
		else if (starts_with(copy, HM_ENV_RECORD "="))
			hm.rec_dir = copy + strlen(HM_ENV_RECORD "=");
		else if (starts_with(copy, HM_ENV_REPLAY "="))
			hm.rep_dir = copy + strlen(HM_ENV_REPLAY "=");
		else if (starts_with(copy, HM_ENV_REPLAY_REPORT "="))
			hm.rep_report = copy + strlen(HM_ENV_REPLAY_REPORT "=");
	}
}

void hm_env_add(const char *name, const char *value)
{
	size_t used = 0, nlen = strlen(name), vlen = strlen(value);

	if (hm.nenv)
		used = hm.env[hm.nenv - 1] + strlen(hm.env[hm.nenv - 1]) + 1 - hm.env_buf;
	if (hm.nenv == HM_ENV_MAX || used + nlen + vlen + 2 > sizeof(hm.env_buf)) {
		hm_warn("environment too large, not passed on: ", name, NULL);
		return;
	}
	memcpy(hm.env_buf + used, name, nlen);
	hm.env_buf[used + nlen] = '=';
	memcpy(hm.env_buf + used + nlen + 1, value, vlen + 1);
	hm.env[hm.nenv++] = hm.env_buf + used;
}

static bool env_u64(const char *name, uint64_t *ret)
{
	const char *v = getenv(name), *end;

	if (!v)
		return false;
	end = hm_parse_dec_u64(v, ret);
	return end && !*end;
}

static bool env_is(const char *name, const char *value, bool dflt)
{
	const char *v = getenv(name);

	return v ? !strcmp(v, value) : dflt;
}

static void resolve(void)
{
#define X(name, ret, args) hm.real.name = (ret(*) args)dlsym(RTLD_NEXT, #name);
	HM_REAL_FUNCS(X)
#undef X
}

/* The run's seed: in its clock page under enroll (so that no other process
 * of the user reads it in /proc/PID/environ), HERMETIC_SEED when the shim
 * is used alone. false: not enrolled. */
static bool find_seed(struct hm_vclock *page, const char *why, uint64_t *ret)
{
	if (page && __atomic_load_n(&page->has_seed, __ATOMIC_ACQUIRE)) {
		*ret = page->seed;
		return true;
	}
	if (env_u64(HM_ENV_SEED, ret))
		return true;
	if (!getenv(HM_ENV_CLOCK_FD))
		return false;
	/* Enrolled, but the page is lost to this process (vclock.c says so). */
	hm_warn("the run's seed is unknown to this process (", why ? why : "its page has none",
		"): it uses seed 0");
	*ret = 0;
	return true;
}

static void init(void)
{
	struct hm_vclock *page = NULL;
	const char *page_why = NULL;
	uint64_t seed, v;
	bool first;

	hm_t.in_init = true;
	resolve();
	hm.pid = hm_sys(SYS_getpid, 0, 0, 0);
	hm.ppid = hm_sys(SYS_getppid, 0, 0, 0);
	hm.page.fd = -1;
	if (!hm.real.clock_gettime)
		goto done;
	page = hm_page_init(&page_why);
	if (!find_seed(page, page_why, &seed))
		goto done; /* not enrolled: inert */
	hm.seed = seed;
	/* HERMETIC_NOW is a signed i64; the CLI writes it in decimal. */
	{
		const char *s = getenv(HM_ENV_NOW), *end;
		int64_t n;

		end = s ? hm_parse_dec_i64(s, &n) : NULL;
		hm.now0 = end && !*end ? n : HM_DEFAULT_NOW_NS;
	}
	hm.tick = env_u64(HM_ENV_TICK, &v) ? v : HM_DEFAULT_TICK_NS;
	hm.sched = env_u64(HM_ENV_SCHED_SEED, &hm.sched_seed);
	hm_sched_init();
	hm.spin_limit = env_u64(HM_ENV_SPIN_LIMIT, &v) ? v : HM_DEFAULT_SPIN_LIMIT;
	hm.clock = env_is(HM_ENV_CLOCK, "virtual", true);
	hm.rng = env_is(HM_ENV_RNG, "all", true);
	hm.net_block = env_is(HM_ENV_NETWORK, "block", true);
	first = hm_lineage_init();
	hm_sched_image();
	{
		const char *d = getenv("HERMETIC_DEBUG");

		hm.debug_waits = d && strstr(d, "waits");
	}
	/* The run's clock (replay keeps virtual time whatever the mode). The
	 * page's descriptor stays open for children either way (fdkeep.c). */
	if (hm.clock || getenv(HM_ENV_REPLAY))
		hm_vc_init(page, page_why);
	else if (page)
		hm_sys(SYS_munmap, page, HM_VCLOCK_SIZE, 0);
	if (first)
		hm_peers_note_stdio(); /* the run's first process */
	/* Every image but the run's first pays for its start on the run's
	 * clock where a keeper decides when it has passed (a self-kept clock
	 * would make each exec wait out a real grace); in replay too, whose
	 * page moves as the recording's did (file times are read off it). */
	hm.start_wait = !first && hm.vc && hm.vc->keeper == HM_VK_DAEMON;
	snapshot_env();
	hm_page_env_publish();
	hm_fs_init_shift();
	hm.jr_strict = !env_is(HM_ENV_REPLAY_STRICT, "0", false);
	hm_jr_init();
	hm_scope_init();
	pthread_atfork(hm_fork_prepare, hm_fork_parent, hm_fork_child);
	hm_signals_init();
	hm.active = true;
	hm_clock_fast_update();
done:
	__atomic_store_n(&hm.ready, true, __ATOMIC_RELEASE);
	hm_t.in_init = false;
}

bool hm_init_slow(void)
{
	if (hm_t.in_init)
		return false;
	pthread_once(&once, init);
	if (!hm_t.inited)
		hm_thread_init();
	return true;
}

void hm_thread_init(void)
{
	long tid = hm_sys(SYS_gettid, 0, 0, 0);

	hm_t.inited = true;
	hm_t.index = tid == hm.pid ? 0 : atomic_fetch_add(&hm.threads, 1) + 1;
	hm_t.cpu = 0;
	hm_t.rng_ready = false;
}

__attribute__((constructor)) static void hm_constructor(void)
{
	int saved = errno;

	hm_init_slow();
	if (hm.active) {
		/* Let libc finish its own start-up first: malloc's first call draws
		 * its tcache key from getrandom inside libc, out of our reach. */
		void *volatile p = malloc(1); /* volatile: the compiler may not elide it */

		free(p);
		/* Then announce this image to the kernel's view (bpf/trace.bpf.c,
		 * hm_rename): the thread renamed to the name it has, with
		 * HM_SHIM_HELLO_FLAGS and the process's lineage key (which the
		 * kernel's view reads for enroll --connections) in arguments
		 * PR_SET_NAME ignores. No effect of its own; the kernel counts
		 * what the image does from here on. */
		char name[16];

		if (hm_sys6(SYS_prctl, PR_GET_NAME, (long)name, 0, 0, 0, 0) == 0)
			hm_sys6(SYS_prctl, PR_SET_NAME, (long)name, HM_SHIM_HELLO_FLAGS,
				(long)hm.lineage, 0, 0);
		if (hm.start_wait)
			hm_start_wait();
	}
	errno = saved;
}

/* The streams end, and this process's slots in the clock page go. */
__attribute__((destructor)) static void hm_destructor(void)
{
	int saved = errno;

	if (hm.active) {
		hm_jr_exit();
		hm_vc_process_exit();
	}
	errno = saved;
}
