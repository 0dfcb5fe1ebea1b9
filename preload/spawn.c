// SPDX-License-Identifier: MIT
/*
 * Processes and threads: lineage keys and the environment handed to every
 * exec. (The clock needs nothing here: every process maps the run's one
 * clock page, vclock.c.)
 *
 * Lineage. Each image of a process with key K numbers the children it creates
 * 1, 2, ... in creation order (fork, vfork, posix_spawn, system, popen all
 * count) and the n-th child gets "K.n"; an exec starts the count again. The
 * streams are keyed by image (lib/lineage.h): the process (the run's first,
 * or the n-th child of an image), the executable it runs (/proc/self/exe)
 * and how many times this process has run it. So a wrapper that execs the
 * program (env, sh -c exec, a version manager's shim script that forks
 * helpers first) changes neither the program's values nor its children's,
 * and the helpers' children are told apart from the program's by the image
 * that made them. HERMETIC_LINEAGE and HERMETIC_IMAGE carry this across
 * exec.
 *   fork        pthread_atfork handlers: prepare numbers the child, child sets
 *               its key and resets counters and streams.
 *   vfork       the child shares our memory and stack, so it may change
 *               nothing: an assembly stub numbers the child in the parent's
 *               thread-local hm_t.pending_child and jumps to the real vfork;
 *               the exec wrapper, seeing getpid() != hm.pid, derives the key
 *               without writing anything and builds the environment on the
 *               stack.
 *   posix_spawn runs no fork handlers and execs inside glibc, so the
 *               environment with the child's key is built here, before it.
 *   system/popen spawn /bin/sh from glibc's internal posix_spawn with
 *               environ: environ is swapped for the call.
 *
 * The environment. Every exec gets every HERMETIC_* variable of the run
 * (snapshot taken at start-up), LD_PRELOAD with the shim first, our
 * HERMETIC_LINEAGE and HERMETIC_IMAGE, whatever envp the caller passed. It
 * is built in one buffer - on the stack (alloca) when small, else an
 * anonymous mapping - never with malloc, so it works in vfork children.
 *
 * HERMETIC_IMAGE = "<proc>:<parent>:<gen>:<runs>" (lib/config.h).
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "shim.h"
#include "config.h"

extern char **environ;

/* ---- the environment ---- */

struct env_spec {
	const char *lineage;
	uint64_t proc, parent;
	uint32_t gen;
	const char *runs;
};

static bool has_prefix(const char *s, const char *p)
{
	return !strncmp(s, p, strlen(p));
}

static size_t count_env(char *const envp[])
{
	size_t n = 0;

	while (envp && envp[n])
		n++;
	return n;
}

static const char *find_preload(char *const envp[])
{
	for (size_t i = 0; envp && envp[i]; i++)
		if (has_prefix(envp[i], "LD_PRELOAD="))
			return envp[i] + strlen("LD_PRELOAD=");
	return NULL;
}

/* Does the ':'/' '-separated list hold path? */
static bool list_has(const char *list, const char *path)
{
	size_t len = strlen(path);

	for (const char *p = list; p && *p;) {
		size_t n = strcspn(p, ": ");

		if (n == len && !strncmp(p, path, len))
			return true;
		p += n;
		p += strspn(p, ": ");
	}
	return false;
}

/* Bytes needed for the environment built from envp. */
static size_t env_size(char *const envp[])
{
	const char *pre = find_preload(envp);

	return (count_env(envp) + hm.nenv + 4) * sizeof(char *) + strlen("HERMETIC_LINEAGE=") +
	       HM_LINEAGE_MAX + strlen("HERMETIC_IMAGE=") + 2 * 17 + 12 + HM_RUNS_MAX +
	       strlen("LD_PRELOAD=") +
	       (hm.preload ? strlen(hm.preload) : 0) + 1 + (pre ? strlen(pre) : 0) + 16;
}

static char *append(char *p, const char *s)
{
	size_t n = strlen(s);

	memcpy(p, s, n + 1);
	return p + n;
}

static char *append_num(char *p, int64_t v, bool sep)
{
	p += hm_fmt_i64(p, 22, v);
	if (sep)
		*p++ = ':';
	*p = 0;
	return p;
}

/* 16 hex digits and ':'. */
static char *append_hex(char *p, uint64_t v)
{
	static const char digits[] = "0123456789abcdef";

	for (int i = 15; i >= 0; i--)
		*p++ = digits[(v >> (4 * i)) & 15];
	*p++ = ':';
	*p = 0;
	return p;
}

/* Fill buf (env_size(envp) bytes) and return the new envp. */
static char **env_fill(void *buf, char *const envp[], const struct env_spec *spec)
{
	/* One count of hm.env: scope.c may add an entry meanwhile (env_size's
	 * slack covers one more than it counted). */
	int nenv = __atomic_load_n(&hm.nenv, __ATOMIC_ACQUIRE);
	char **out = buf, **o = out;
	char *s = (char *)(out + count_env(envp) + nenv + 4);
	const char *pre = find_preload(envp);

	for (size_t i = 0; envp && envp[i]; i++) {
		if (has_prefix(envp[i], "HERMETIC_"))
			continue;
		if (has_prefix(envp[i], "LD_PRELOAD=") && hm.preload)
			continue;
		*o++ = envp[i];
	}
	for (int i = 0; i < nenv; i++)
		*o++ = (char *)__atomic_load_n(&hm.env[i], __ATOMIC_ACQUIRE);
	if (hm.preload) {
		*o++ = s;
		s = append(s, "LD_PRELOAD=");
		if (pre && list_has(pre, hm.preload)) {
			s = append(s, pre);
		} else {
			s = append(s, hm.preload);
			if (pre && *pre) {
				s = append(s, ":");
				s = append(s, pre);
			}
		}
		s++;
	}
	*o++ = s;
	s = append(s, HM_ENV_LINEAGE "=");
	s = append(s, spec->lineage);
	s++;
	*o++ = s;
	s = append(s, HM_ENV_IMAGE "=");
	s = append_hex(s, spec->proc);
	s = append_hex(s, spec->parent);
	s = append_num(s, spec->gen, true);
	s = append(s, spec->runs);
	*o = NULL;
	return out;
}

/* A buffer for the environment: stack when small (the caller's frame, via
 * alloca in the macro), else a mapping that env_release unmaps. (A vfork
 * child that execs successfully cannot unmap it: with a huge environment, its
 * parent keeps that one mapping.) */
#define ENV_STACK_MAX (16 * 1024)
#define ENV_ALLOC(size) ((size) <= ENV_STACK_MAX ? __builtin_alloca(size) : env_map(size))

static void *env_map(size_t size)
{
	long p = hm_sys6(SYS_mmap, 0, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p < 0 && p > -4096 ? NULL : (void *)p;
}

static void env_release(void *buf, size_t size)
{
	if (buf && size > ENV_STACK_MAX)
		hm_sys(SYS_munmap, buf, size, 0);
}

/* The key and counters an exec from this context passes on. key_buf must
 * hold HM_LINEAGE_MAX bytes. Writes nothing to shared state: in a vfork
 * child, our memory is the parent's. */
static void exec_spec(struct env_spec *spec, char *key_buf)
{
	pid_t me = hm_sys(SYS_getpid, 0, 0, 0);

	if (me != hm.pid && hm_t.pending_child &&
	    !hm_lineage_child(hm.lineage, hm_t.pending_child, key_buf, HM_LINEAGE_MAX)) {
		/* A vfork child, exec'ing: it is the parent's pending child, and
		 * its inherited image (count 0) was its first. */
		spec->lineage = key_buf;
		spec->proc = hm_proc_child(hm.image, hm_t.pending_child);
		spec->parent = hm.image;
		spec->gen = 1;
		spec->runs = "";
		return;
	}
	spec->lineage = hm.lineage;
	spec->proc = hm.proc;
	spec->parent = hm.parent;
	spec->gen = hm.gen + 1;
	spec->runs = hm.runs;
}

/* The spec for a new child (posix_spawn, system, popen): numbers it. */
static void child_spec(struct env_spec *spec, char *key_buf)
{
	uint64_t n = atomic_fetch_add(&hm.children, 1) + 1;

	if (hm_lineage_child(hm.lineage, n, key_buf, HM_LINEAGE_MAX))
		memcpy(key_buf, hm.lineage, strlen(hm.lineage) + 1); /* too deep: share the key */
	spec->lineage = key_buf;
	spec->proc = hm_proc_child(hm.image, n);
	spec->parent = hm.image;
	spec->gen = 0;
	spec->runs = "";
}

/* ---- who we are ---- */

void hm_image_set(void)
{
	hm.image = hm_image_id(hm.proc, hm.exe, hm.exe_count);
}

static const char *parse_hex(const char *s, uint64_t *ret)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < 16; i++, s++) {
		int d = *s >= '0' && *s <= '9' ? *s - '0' : *s >= 'a' && *s <= 'f' ? *s - 'a' + 10 : -1;

		if (d < 0)
			return NULL;
		v = v << 4 | d;
	}
	*ret = v;
	return s;
}

/* HERMETIC_IMAGE "<proc>:<parent>:<gen>:<runs>"; false if absent or bad. */
static bool parse_image(const char *s)
{
	uint64_t proc, parent, gen;
	size_t n;

	if (!s || !(s = parse_hex(s, &proc)) || *s++ != ':' || !(s = parse_hex(s, &parent)) ||
	    *s++ != ':' || !(s = hm_parse_dec_u64(s, &gen)) || *s++ != ':' || gen > UINT32_MAX ||
	    !proc)
		return false;
	n = strlen(s);
	if (n >= sizeof(hm.runs) || strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
					     "0123456789._+-=,?") != n)
		return false;
	hm.proc = proc;
	hm.parent = parent;
	hm.gen = (uint32_t)gen;
	memcpy(hm.runs, s, n + 1);
	return true;
}

bool hm_lineage_init(void)
{
	const char *lineage = getenv(HM_ENV_LINEAGE);
	char path[4096], runs[HM_RUNS_MAX];
	bool first = false;
	long n;

	if (!lineage || !hm_lineage_valid(lineage))
		lineage = HM_LINEAGE_ROOT;
	memcpy(hm.lineage, lineage, strlen(lineage) + 1);
	if (!parse_image(getenv(HM_ENV_IMAGE))) {
		/* The run's first process. */
		hm.proc = hm_proc_root();
		hm.parent = 0;
		hm.gen = 0;
		hm.runs[0] = 0;
		first = true;
	}
	/* What this image runs: the binary the kernel loaded (for a script,
	 * its interpreter). */
	n = hm_sys6(SYS_readlinkat, AT_FDCWD, (long)"/proc/self/exe", (long)path,
		    sizeof(path) - 1, 0, 0);
	path[n > 0 ? n : 0] = 0;
	hm_exe_name(path, hm.exe);
	hm.exe_count = hm_runs_get(hm.runs, hm.exe) + 1;
	if (!hm_runs_bump(hm.runs, hm.exe, runs, sizeof(runs)))
		memcpy(hm.runs, runs, strlen(runs) + 1);
	hm_image_set();
	atomic_store(&hm.children, 0);
	return first;
}

/* ---- exec ---- */

enum exec_kind { EXEC_VE, EXEC_VPE, EXEC_FVE, EXEC_VEAT };

static int do_exec(enum exec_kind kind, int fd, const char *path, char *const argv[],
		   char *const envp[], int flags)
{
	char key[HM_LINEAGE_MAX];
	struct env_spec spec;
	bool streams = false;
	size_t size;
	char **env;
	void *buf;
	int r, e;

	if (!hm_ready() || !hm.active) {
		env = (char **)envp;
		buf = NULL;
		size = 0;
	} else {
		exec_spec(&spec, key);
		size = env_size(envp);
		buf = ENV_ALLOC(size);
		env = buf ? env_fill(buf, envp, &spec) : (char **)envp;
		/* The image's streams end here (not a vfork child's: they are its
		 * parent's). */
		streams = hm.jr && hm_sys(SYS_getpid, 0, 0, 0) == hm.pid;
		if (streams)
			hm_jr_exec_begin();
		/* The new image claims slots of its own (not a vfork child's:
		 * those are its parent's). */
		if (hm_sys(SYS_getpid, 0, 0, 0) == hm.pid)
			hm_vc_process_exit();
	}
	switch (kind) {
	case EXEC_VE:
		r = hm.real.execve(path, argv, env);
		break;
	case EXEC_VPE:
		r = hm.real.execvpe(path, argv, env);
		break;
	case EXEC_FVE:
		r = hm.real.fexecve(fd, argv, env);
		break;
	default:
		r = hm.real.execveat(fd, path, argv, env, flags);
		break;
	}
	e = errno;
	if (streams)
		hm_jr_exec_failed();
	env_release(buf, size);
	errno = e;
	return r;
}

HM_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	return do_exec(EXEC_VE, -1, path, argv, envp, 0);
}

HM_EXPORT int execv(const char *path, char *const argv[])
{
	return do_exec(EXEC_VE, -1, path, argv, environ, 0);
}

HM_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	return do_exec(EXEC_VPE, -1, file, argv, envp, 0);
}

HM_EXPORT int execvp(const char *file, char *const argv[])
{
	return do_exec(EXEC_VPE, -1, file, argv, environ, 0);
}

HM_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	return do_exec(EXEC_FVE, fd, NULL, argv, envp, 0);
}

HM_EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
		       int flags)
{
	return do_exec(EXEC_VEAT, dirfd, path, argv, envp, flags);
}

/* execl*: collect the arguments into an array on the stack. */
#define COLLECT_ARGS(arg0, ap, argv)                                                               \
	do {                                                                                       \
		size_t n_ = 1;                                                                     \
		va_list c_;                                                                        \
		va_copy(c_, ap);                                                                   \
		while (va_arg(c_, char *))                                                         \
			n_++;                                                                      \
		va_end(c_);                                                                        \
		argv = __builtin_alloca((n_ + 1) * sizeof(char *));                                \
		argv[0] = (char *)arg0;                                                            \
		for (size_t i_ = 1; i_ <= n_; i_++)                                                \
			argv[i_] = va_arg(ap, char *);                                             \
	} while (0)

HM_EXPORT int execl(const char *path, const char *arg, ...)
{
	char **argv;
	va_list ap;

	va_start(ap, arg);
	COLLECT_ARGS(arg, ap, argv);
	va_end(ap);
	return do_exec(EXEC_VE, -1, path, argv, environ, 0);
}

HM_EXPORT int execlp(const char *file, const char *arg, ...)
{
	char **argv;
	va_list ap;

	va_start(ap, arg);
	COLLECT_ARGS(arg, ap, argv);
	va_end(ap);
	return do_exec(EXEC_VPE, -1, file, argv, environ, 0);
}

HM_EXPORT int execle(const char *path, const char *arg, ...)
{
	char **argv, **envp = NULL;
	va_list ap;

	va_start(ap, arg);
	COLLECT_ARGS(arg, ap, argv);
	envp = va_arg(ap, char **);
	va_end(ap);
	return do_exec(EXEC_VE, -1, path, argv, envp, 0);
}

/* ---- posix_spawn, system, popen ---- */

static int do_spawn(bool p, pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
		    const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	char key[HM_LINEAGE_MAX];
	struct env_spec spec;
	size_t size;
	char **env;
	void *buf;
	int r;

	hm_ready();
	if (!hm.active)
		return (p ? hm.real.posix_spawnp : hm.real.posix_spawn)(pid, file, fa, attr, argv,
									  envp);
	if (!envp)
		envp = environ;
	child_spec(&spec, key);
	size = env_size(envp);
	buf = ENV_ALLOC(size);
	env = buf ? env_fill(buf, envp, &spec) : (char **)envp;
	r = (p ? hm.real.posix_spawnp : hm.real.posix_spawn)(pid, file, fa, attr, argv, env);
	env_release(buf, size);
	return r;
}

HM_EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
			  const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	return do_spawn(false, pid, path, fa, attr, argv, envp);
}

HM_EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
			   const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	return do_spawn(true, pid, file, fa, attr, argv, envp);
}

/*
 * system() and popen() spawn /bin/sh with environ from inside glibc: swap
 * environ for the duration of the call. A lock orders our own swaps; another
 * thread reading environ meanwhile sees either the old or the new array,
 * both complete.
 */
HM_EXPORT int system(const char *cmd)
{
	char key[HM_LINEAGE_MAX];
	struct env_spec spec;
	char **saved;
	size_t size;
	void *buf;
	int r;

	hm_ready();
	if (!hm.active || !cmd)
		return hm.real.system(cmd);
	pthread_mutex_lock(&hm.environ_lock);
	child_spec(&spec, key);
	size = env_size(environ);
	buf = ENV_ALLOC(size);
	saved = environ;
	if (buf)
		environ = env_fill(buf, environ, &spec);
	pthread_mutex_unlock(&hm.environ_lock);
	r = hm.real.system(cmd);
	pthread_mutex_lock(&hm.environ_lock);
	environ = saved;
	pthread_mutex_unlock(&hm.environ_lock);
	env_release(buf, size);
	return r;
}

HM_EXPORT FILE *popen(const char *cmd, const char *mode)
{
	char key[HM_LINEAGE_MAX];
	struct env_spec spec;
	char **saved;
	size_t size;
	void *buf;
	FILE *f;
	int e;

	hm_ready();
	if (!hm.active)
		return hm.real.popen(cmd, mode);
	pthread_mutex_lock(&hm.environ_lock);
	child_spec(&spec, key);
	size = env_size(environ);
	buf = ENV_ALLOC(size);
	saved = environ;
	if (buf)
		environ = env_fill(buf, environ, &spec);
	f = hm.real.popen(cmd, mode);
	e = errno;
	environ = saved;
	pthread_mutex_unlock(&hm.environ_lock);
	env_release(buf, size);
	errno = e;
	return f;
}

/* ---- fork and vfork ---- */

/* The locks are taken across fork so that the child never inherits one held
 * by a thread that does not exist there. */
void hm_fork_prepare(void)
{
	if (!hm.active)
		return;
	hm_t.pending_child = atomic_fetch_add(&hm.children, 1) + 1;
	pthread_mutex_lock(&hm.environ_lock);
	hm_jr_fork_prepare();
}

void hm_fork_parent(void)
{
	if (!hm.active)
		return;
	hm_jr_fork_parent();
	pthread_mutex_unlock(&hm.environ_lock);
	hm_sched_point(HM_SCHED_FORK_PARENT, hm_t.pending_child);
}

void hm_fork_child(void)
{
	char key[HM_LINEAGE_MAX];

	if (!hm.active)
		return;
	pthread_mutex_unlock(&hm.environ_lock);
	hm.ppid = hm.pid;
	hm.pid = hm_sys(SYS_getpid, 0, 0, 0);
	if (!hm_lineage_child(hm.lineage, hm_t.pending_child, key, sizeof(key)))
		memcpy(hm.lineage, key, strlen(key) + 1);
	/* A new process, still running its parent's image: count 0. */
	hm.proc = hm_proc_child(hm.image, hm_t.pending_child);
	hm.parent = hm.image;
	hm.exe_count = 0;
	hm.gen = 0;
	hm.runs[0] = 0;
	hm_image_set();
	atomic_store(&hm.children, 0);
	atomic_store(&hm.threads, 0);
	hm_t.index = 0;
	hm_t.pending_child = 0;
	hm_rng_reset();
	hm_vc_fork_child();
	hm_timers_fork_child();
	hm_jr_fork_child(); /* (after the key and index: new streams use them) */
	hm_sched_point(HM_SCHED_FORK_CHILD, 0);
}

/* Called by the vfork stub in the parent, before the real vfork: number the
 * child and return the real vfork to jump to. */
HM_HIDDEN void *hm_vfork_prepare(void)
{
	int saved = errno;

	hm_ready();
	if (hm.active)
		hm_t.pending_child = atomic_fetch_add(&hm.children, 1) + 1;
	errno = saved;
	return (void *)hm.real.vfork;
}

/* vfork must not return through a frame of ours (the child would clobber it
 * for the parent), so the wrapper tail-jumps to the real vfork. */
#if defined(__x86_64__)
__asm__(".text\n"
	".globl vfork\n"
	".type vfork,@function\n"
	"vfork:\n"
	"	endbr64\n"
	"	sub $8, %rsp\n"
	"	call hm_vfork_prepare\n"
	"	add $8, %rsp\n"
	"	jmp *%rax\n"
	".size vfork, .-vfork\n");
#elif defined(__aarch64__)
__asm__(".text\n"
	".globl vfork\n"
	".type vfork,%function\n"
	"vfork:\n"
	"	stp x29, x30, [sp, #-16]!\n"
	"	bl hm_vfork_prepare\n"
	"	ldp x29, x30, [sp], #16\n"
	"	br x0\n"
	".size vfork, .-vfork\n");
#endif

/* ---- threads ---- */

struct hm_start {
	void *(*fn)(void *);
	void *arg;
	uint32_t index;
	int64_t view; /* the creator's monotonic view when it created the thread */
	int64_t lagoff; /* and what the lag bound gave it alone */
};

static void thread_exited(void *unused)
{
	if (hm.jr)
		hm_jr_thread_exit();
	hm_vc_thread_exit();
}

static void *trampoline(void *p)
{
	struct hm_start s = *(struct hm_start *)p;
	void *ret;

	free(p);
	hm_t.inited = true;
	hm_t.index = s.index;
	hm_t.cpu = 0;
	hm_t.rng_ready = false;
	/* The thread starts at its creator's time, ticks included (clock.c):
	 * elapsed time measured across the two agrees. */
	hm_t.last = s.view;
	hm_t.lagoff = s.lagoff;
	hm_sched_point(HM_SCHED_THREAD, s.index);
	pthread_cleanup_push(thread_exited, NULL);
	ret = s.fn(s.arg);
	pthread_cleanup_pop(1);
	return ret;
}

HM_EXPORT int pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *),
			     void *arg)
{
	struct hm_start *s;
	uint32_t index;
	int r;

	hm_ready();
	if (!hm.active || !(s = malloc(sizeof(*s))))
		return hm.real.pthread_create(t, attr, fn, arg);
	s->fn = fn;
	s->arg = arg;
	s->index = atomic_fetch_add(&hm.threads, 1) + 1;
	s->lagoff = hm_t.lagoff;
	s->view = hm.clock && hm.vc ? hm_clock_now(CLOCK_MONOTONIC) - hm_t.lagoff : 0;
	index = s->index;
	r = hm.real.pthread_create(t, attr, trampoline, s);
	if (r)
		free(s);
	else
		hm_sched_point(HM_SCHED_CREATOR, index);
	return r;
}

/* ---- exit ---- */

HM_EXPORT void _exit(int status)
{
	if (hm.ready && hm.active) {
		/* (a vfork child's streams are its parent's) */
		if (hm_sys(SYS_getpid, 0, 0, 0) == hm.pid) {
			if (hm.jr)
				hm_jr_exit();
			hm_vc_process_exit();
		}
	}
	if (hm.real._exit)
		hm.real._exit(status);
	for (;;)
		hm_sys(SYS_exit_group, status, 0, 0);
}

HM_EXPORT void _Exit(int status)
{
	_exit(status);
}

/* abort() runs no destructor: the streams end here, or a failing test that
 * asserts would lose the values it saw last. */
HM_EXPORT void abort(void)
{
	if (hm.ready && hm.active && hm.jr && hm_sys(SYS_getpid, 0, 0, 0) == hm.pid)
		hm_jr_exit();
	if (hm.real.abort)
		hm.real.abort();
	for (;;) {
		hm_sys(SYS_kill, hm_sys(SYS_getpid, 0, 0, 0), SIGABRT, 0);
		hm_sys(SYS_exit_group, 127, 0, 0);
	}
}
