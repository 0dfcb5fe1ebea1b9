// SPDX-License-Identifier: MIT
/*
 * Scopes (lib/scope.h): a named part of a run, one test, whose values do not
 * depend on what ran before it in the same process.
 *
 * Entering a scope gives this process
 *   - a clock offset: its readings restart at the run's start (monotonic at
 *     hm_mono_start(scope seed), realtime at --now or the time asked for)
 *     while the run's one clock keeps going underneath. Readings add the
 *     offset (hm.sc_mono, hm.sc_wall; clock.c) and absolute deadlines
 *     remove it (hm_clock_to_mono). Time still moves only when the whole run
 *     is idle, and a thread reads the clock only when it runs, after its own
 *     deadlines or events: so a scope's readings do not depend on what other
 *     processes of the run (pytest-xdist's workers) do meanwhile. For the
 *     same reason moving the clock inside a scope (hermetic_advance_ns,
 *     hermetic_set_now_ns, clock_settime) moves this process's offset, not
 *     the run's clock.
 *   - new random streams: every thread's stream is keyed by (scope seed,
 *     scope name, lineage key within the scope, thread, exec generation).
 *     Threads notice a new scope by its epoch (hm.sc_epoch) on their next
 *     draw and rekey then; their virtual CPU time restarts too.
 *   - new journal streams (record.c): each thread's stream ends and a new
 *     one begins in the scope's own directory of the spool,
 *     "scope.<root>-<gen0>-<seq>/", which becomes one scope section of the
 *     journal (docs/journal-format.md). The root writes "scope" there: the
 *     name, seed, start, and the status it left with.
 *
 * Leaving a scope returns to what the process saw before it: the clock of
 * the level outside (the run's, or the outer scope's), and, for this image's
 * threads, streams that continue where nothing repeats: keyed as the level
 * outside with "+k" (k scopes left at that level so far), in their own
 * directory, "<dir>+<k>" or "cont.<lineage>-<gen>+<k>" outside scopes.
 *
 * Processes started inside inherit the scope through HERMETIC_SCOPE, which
 * this file keeps in the environment every exec re-injects (hm.env), its
 * seed masked (env_mask: the environment is readable by other processes of
 * the user, the run's seed is not). Their
 * key within the scope is their lineage key relative to the root's, the
 * root's children numbered from 1 again (lib/scope.c). Only the process that
 * entered a scope can leave it; scopes nest HM_SCOPE_DEPTH deep.
 *
 * The no-FFI way in: opening "/dev/hermetic/..." (hm_magic_open, from the
 * open wrappers) performs an operation and returns a descriptor to read its
 * result from, one "key value" line each:
 *   /dev/hermetic/status
 *   /dev/hermetic/scope/enter?name=NAME[&seed=N][&now=TIME]
 *   /dev/hermetic/scope/leave[?status=passed|failed|skipped]
 *   /dev/hermetic/clock/advance?ns=N
 *   /dev/hermetic/clock/set?now=TIME
 * NAME and TIME percent-encoded, TIME as --now takes it or ns since the
 * epoch. Without the shim the path does not exist (ENOENT).
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include "shim.h"
#include "config.h"
#include "scope.h"

#define HM_SCOPE_DEPTH 8
#define PATH_BUF 4096
/* Threads of the root image that existed before it entered: keyed apart. */
#define PREEXISTING 0x80000000u

struct level {
	struct hm_scope_spec spec;
	char dir[HM_SCOPE_DIR_MAX];
	/* scopes inside this one that the image (rpid, rgen) left */
	uint32_t resumes;
	pid_t rpid;
	uint32_t rgen;
	pid_t pid; /* the root image (pid, gen) when entered here; 0 inherited */
	uint32_t gen;
	uint32_t threads0; /* threads the root image had created when it entered */
	uint32_t thread_in; /* the entering thread's index */
	bool replay; /* values come from the journal */
};

static struct {
	pthread_mutex_t lock;
	struct level lv[HM_SCOPE_DEPTH + 1]; /* [0]: outside scopes, [1..depth] scopes */
	int depth; /* 0: no scope */
	uint32_t seq; /* scopes this image entered */
	const char *replay_only; /* HERMETIC_REPLAY_SCOPE, or NULL */
	bool replay_cfg; /* HERMETIC_REPLAY was given */
	int env_at; /* index of our entry in hm.env, -1 none */
	int env_cur;
	char env[2][sizeof(HM_ENV_SCOPE "=") + HM_SCOPE_ENV_MAX];
} sc = { .lock = PTHREAD_MUTEX_INITIALIZER, .env_at = -1 };

static struct level *top(void)
{
	return sc.depth ? &sc.lv[sc.depth] : NULL;
}

/* Scopes this image left at the current level (0 for other images). */
static uint32_t resumed(void)
{
	const struct level *l = &sc.lv[sc.depth];

	return l->resumes && l->rpid == hm.pid && l->rgen == hm.gen ? l->resumes : 0;
}

static bool entered_here(const struct level *l)
{
	return l->pid && l->pid == hm.pid && l->gen == hm.gen;
}

/* ---- the environment children inherit ---- */

/* A scope's seed is as secret as the run's (other processes of the user
 * read /proc/PID/environ): HERMETIC_SCOPE carries it masked with a word
 * derived from the run's seed, which only the run's processes know (it is
 * in the clock page). */
static uint64_t env_mask(void)
{
	struct hm_chain c;

	hm_chain_init(&c, "hermetic scope env mask v1");
	hm_chain_u64(&c, hm.seed, "seed");
	return hm_chain_word(&c);
}

static void env_update(void)
{
	struct level *l = top();
	char *buf;
	size_t n;

	if (!l) {
		if (sc.env_at >= 0) {
			/* Swap-remove: a concurrent exec may copy an entry twice, never
			 * a torn one. */
			hm.env[sc.env_at] = hm.env[hm.nenv - 1];
			__atomic_store_n(&hm.nenv, hm.nenv - 1, __ATOMIC_RELEASE);
			sc.env_at = -1;
		}
		return;
	}
	sc.env_cur ^= 1;
	buf = sc.env[sc.env_cur];
	memcpy(buf, HM_ENV_SCOPE "=", sizeof(HM_ENV_SCOPE "="));
	{
		struct hm_scope_spec masked = l->spec;

		masked.seed ^= env_mask();
		n = hm_scope_format(&masked, buf + strlen(HM_ENV_SCOPE "="),
				    sizeof(sc.env[0]) - strlen(HM_ENV_SCOPE "="));
	}
	if (!n) {
		hm_warn("scope too large to pass to child processes: ", l->spec.name, NULL);
		return;
	}
	if (sc.env_at >= 0) {
		__atomic_store_n(&hm.env[sc.env_at], buf, __ATOMIC_RELEASE);
		return;
	}
	if (hm.nenv == HM_ENV_MAX) {
		hm_warn("environment too large, scope not passed on: ", l->spec.name, NULL);
		return;
	}
	/* (spawn.c's env_size leaves slack for one entry appearing between its
	 * sizing and its filling) */
	hm.env[hm.nenv] = buf;
	sc.env_at = hm.nenv;
	__atomic_store_n(&hm.nenv, hm.nenv + 1, __ATOMIC_RELEASE);
}

/* ---- the hot-path copies ---- */

static void publish(void)
{
	struct level *l = top();

	hm.sc_mono = l ? l->spec.mono : 0;
	hm.sc_wall = l ? l->spec.wall : 0;
	hm.sc_on = l != NULL;
	if (sc.replay_cfg) {
		/* replay inside the scope asked for (HERMETIC_REPLAY_SCOPE) only */
		if (l && l->replay)
			hm.jr |= HM_JR_REPLAY;
		else if (sc.replay_only)
			hm.jr &= ~HM_JR_REPLAY;
	}
	hm_clock_fast_update();
	__atomic_fetch_add(&hm.sc_epoch, 1, __ATOMIC_RELEASE);
}

void hm_scope_thread_sync(void)
{
	hm_t.sc_epoch = __atomic_load_n(&hm.sc_epoch, __ATOMIC_ACQUIRE);
	hm_t.rng_ready = false;
	hm_t.cpu = 0;
}

/* ---- the journal ---- */

static bool replays(const struct hm_scope_spec *s)
{
	return sc.replay_cfg && (!sc.replay_only || !strcmp(sc.replay_only, s->name));
}

static void put(char **p, char *end, const char *s)
{
	size_t n = strlen(s);

	if (*p + n < end) {
		memcpy(*p, s, n);
		*p += n;
	}
}

static void put_i64(char **p, char *end, const char *key, int64_t v)
{
	char num[24];

	hm_fmt_i64(num, sizeof(num), v);
	put(p, end, key);
	put(p, end, " ");
	put(p, end, num);
	put(p, end, "\n");
}

/* Append text to <spool>/<dir>/scope (recording). */
static void meta_append(const struct level *l, const char *text, size_t len)
{
	char path[PATH_BUF], *p = path, *end = path + sizeof(path) - 1;
	long fd;

	put(&p, end, hm.rec_dir);
	put(&p, end, "/");
	put(&p, end, l->dir);
	put(&p, end, "/scope");
	*p = 0;
	fd = hm_sys6(SYS_openat, AT_FDCWD, (long)path,
		     O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600, 0, 0);
	if (fd < 0)
		return;
	hm_sys(SYS_write, fd, text, len);
	hm_sys(SYS_close, fd, 0, 0);
}

static void meta_begin(const struct level *l, int64_t now)
{
	char path[PATH_BUF], text[HM_SCOPE_NAME_MAX * 3 + 256], *p = path;
	char *end = path + sizeof(path) - 1;
	long r;

	put(&p, end, hm.rec_dir);
	put(&p, end, "/");
	put(&p, end, l->dir);
	*p = 0;
	r = hm_sys(SYS_mkdirat, AT_FDCWD, path, 0700);
	if (r < 0 && r != -EEXIST) {
		hm_warn("cannot create the scope's journal directory ", path, NULL);
		return;
	}
	p = text;
	end = text + sizeof(text) - 1;
	put(&p, end, "name ");
	p += hm_pct_encode(l->spec.name, p, end - p);
	put(&p, end, "\n");
	put_i64(&p, end, "seed", (int64_t)l->spec.seed);
	put_i64(&p, end, "now", now);
	put_i64(&p, end, "mono", hm_mono_start(l->spec.seed));
	put(&p, end, "root ");
	put(&p, end, l->spec.root);
	put(&p, end, "\n");
	meta_append(l, text, p - text);
}

/* The directory this image's streams continue in after leaving a scope
 * inside level l (recording). */
static void cont_dir(const struct level *l)
{
	char path[PATH_BUF], dir[HM_SCOPE_DIR_MAX], *p = path, *end = path + sizeof(path) - 1;

	if (l == &sc.lv[0])
		hm_scope_contname(NULL, hm.lineage, hm.gen, l->resumes, dir);
	else
		hm_scope_contname(l->dir, NULL, 0, l->resumes, dir);
	put(&p, end, hm.rec_dir);
	put(&p, end, "/");
	put(&p, end, dir);
	*p = 0;
	hm_sys(SYS_mkdirat, AT_FDCWD, path, 0700);
}

/* The identity of thread index's stream: within the scope when in one. */
void hm_stream_ident(uint32_t index, bool replay, struct hm_stream_ident *id)
{
	struct level *l = top();
	uint32_t k = resumed();

	id->dir[0] = 0;
	if (!l || hm_scope_rel_lineage(l->spec.root, l->spec.children0, hm.lineage, id->lineage,
				       sizeof(id->lineage)) < 0) {
		memcpy(id->lineage, hm.lineage, strlen(hm.lineage) + 1);
		id->thread = index;
		id->gen = hm.gen;
		id->proc = hm.proc;
		id->parent = hm.parent;
		id->image = hm.image;
		if (k)
			hm_scope_contname(NULL, hm.lineage, hm.gen, k, id->dir);
		return;
	}
	id->gen = strcmp(hm.lineage, l->spec.root) ? hm.gen : hm.gen - l->spec.gen0;
	id->proc = hm_scope_proc(id->lineage);
	id->image = hm_image_id(id->proc, hm.exe, hm.exe_count);
	id->parent = 0;
	if (strchr(id->lineage, '.')) {
		char up[HM_LINEAGE_MAX];

		memcpy(up, id->lineage, strlen(id->lineage) + 1);
		*strrchr(up, '.') = 0;
		/* (the parent's image there, as if it ran the same executable) */
		id->parent = hm_image_id(hm_scope_proc(up), hm.exe, hm.exe_count);
	}
	id->thread = index;
	if (entered_here(l))
		id->thread = index == l->thread_in ? 0
			     : index > l->threads0 ? index - l->threads0
						   : PREEXISTING | index;
	{
		const char *dir = replay && sc.replay_only ? "scope" : l->dir;

		if (k)
			hm_scope_contname(dir, NULL, 0, k, id->dir);
		else
			memcpy(id->dir, dir, strlen(dir) + 1);
	}
}

bool hm_scope_rng_key(uint8_t key[HM_CHACHA_KEY_SIZE])
{
	struct hm_stream_ident id;
	struct level *l = top();
	uint32_t k = resumed();
	char name[HM_SCOPE_NAME_MAX + 16];
	size_t n;

	if (!l && !k)
		return false; /* the run's own key (lineage.c) */
	hm_stream_ident(hm_t.index, false, &id);
	/* After leaving k scopes: the level's name and "\1k", which no scope's
	 * name can be (no control bytes). */
	n = l ? strlen(l->spec.name) : 0;
	memcpy(name, l ? l->spec.name : "", n);
	if (k) {
		name[n++] = 1;
		n += hm_fmt_u64(name + n, 12, k);
	}
	name[n] = 0;
	hm_scope_stream_key(l ? l->spec.seed : hm.seed, name, id.image, id.thread, key);
	return true;
}

/* ---- entering and leaving ---- */

int hm_scope_enter(const char *name, const uint64_t *seed, const int64_t *now)
{
	struct level *l;
	int64_t view, wall;

	if (!hm_ready() || !hm.active)
		return -ENOTSUP;
	if (!hm_scope_name_valid(name))
		return -EINVAL;
	pthread_mutex_lock(&sc.lock);
	if (sc.depth == HM_SCOPE_DEPTH) {
		pthread_mutex_unlock(&sc.lock);
		return -EMLINK;
	}
	l = &sc.lv[sc.depth + 1];
	memset(l, 0, sizeof(*l));
	memcpy(l->spec.name, name, strlen(name) + 1);
	l->spec.seed = seed ? *seed : hm_scope_seed(hm_scope_seed_now(), name);
	/* The run's clock as this thread sees it, without the scope's offset. */
	view = hm.vc ? hm_clock_now(CLOCK_MONOTONIC) : 0;
	wall = now ? *now : hm.now0;
	l->spec.mono = hm_mono_start(l->spec.seed) - view;
	l->spec.wall = wall - view;
	l->spec.children0 = atomic_load(&hm.children);
	l->spec.gen0 = hm.gen;
	l->spec.seq = ++sc.seq;
	memcpy(l->spec.root, hm.lineage, strlen(hm.lineage) + 1);
	hm_scope_dirname(&l->spec, l->dir);
	l->pid = hm.pid;
	l->gen = hm.gen;
	l->threads0 = atomic_load(&hm.threads);
	l->thread_in = hm_t.index;
	l->replay = replays(&l->spec);
	sc.depth++;
	if (hm.jr & HM_JR_RECORD)
		meta_begin(l, wall);
	env_update();
	publish();
	hm_clock_waited();
	pthread_mutex_unlock(&sc.lock);
	return 0;
}

int hm_scope_leave(enum hm_scope_status status)
{
	struct level *l;

	if (!hm_ready() || !hm.active)
		return -ENOTSUP;
	if ((unsigned)status > HM_SCOPE_STATUS_MAX)
		return -EINVAL;
	pthread_mutex_lock(&sc.lock);
	l = top();
	if (!l || !entered_here(l)) {
		pthread_mutex_unlock(&sc.lock);
		return l ? -EPERM : -ENOENT;
	}
	if (hm.jr & HM_JR_RECORD) {
		char text[32] = "status ";

		memcpy(text + 7, hm_scope_status_name(status),
		       strlen(hm_scope_status_name(status)) + 1);
		text[strlen(text)] = '\n';
		meta_append(l, text, strlen(text));
	}
	sc.depth--;
	/* This image's streams at the level outside continue apart (above). */
	l = &sc.lv[sc.depth];
	if (l->rpid != hm.pid || l->rgen != hm.gen)
		l->resumes = 0;
	l->resumes++;
	l->rpid = hm.pid;
	l->rgen = hm.gen;
	if (hm.jr & HM_JR_RECORD)
		cont_dir(l);
	env_update();
	publish();
	hm_clock_waited();
	pthread_mutex_unlock(&sc.lock);
	return 0;
}

const char *hm_scope_name(void)
{
	struct level *l = top();

	return l ? l->spec.name : NULL;
}

uint64_t hm_scope_seed_now(void)
{
	struct level *l = top();

	return l ? l->spec.seed : hm.seed;
}

/* Inside a scope the clock moves for this process (and what it starts
 * from now on), not for the run: see the top of this file. */
int hm_scope_advance(int64_t ns)
{
	struct level *l;

	pthread_mutex_lock(&sc.lock);
	if ((l = top())) {
		l->spec.mono += ns;
		l->spec.wall += ns;
		env_update();
		hm.sc_mono = l->spec.mono;
		hm.sc_wall = l->spec.wall;
	}
	pthread_mutex_unlock(&sc.lock);
	return l ? 0 : -ENOENT;
}

int hm_scope_set_wall(int64_t ns, bool mono_too)
{
	struct level *l;

	pthread_mutex_lock(&sc.lock);
	if ((l = top())) {
		int64_t view = hm_clock_now(CLOCK_MONOTONIC), now = view + l->spec.wall;

		if (mono_too && ns > now)
			l->spec.mono += ns - now;
		l->spec.wall = ns - view;
		env_update();
		hm.sc_mono = l->spec.mono;
		hm.sc_wall = l->spec.wall;
	}
	pthread_mutex_unlock(&sc.lock);
	return l ? 0 : -ENOENT;
}

/* At start-up (init.c): the scope this process was started in. */
void hm_scope_init(void)
{
	const char *v = getenv(HM_ENV_SCOPE), *only = getenv(HM_ENV_REPLAY_SCOPE);
	struct level *l = &sc.lv[1];

	sc.replay_cfg = (hm.jr & HM_JR_REPLAY) != 0;
	sc.replay_only = only && hm_scope_name_valid(only) ? only : NULL;
	for (int i = 0; i < hm.nenv; i++)
		if (!strncmp(hm.env[i], HM_ENV_SCOPE "=", sizeof(HM_ENV_SCOPE)))
			sc.env_at = i;
	if (v && *v) {
		if (hm_scope_parse(v, &l->spec) < 0) {
			hm_warn("malformed " HM_ENV_SCOPE ", not in a scope: ", v, NULL);
		} else {
			l->spec.seed ^= env_mask();
			hm_scope_dirname(&l->spec, l->dir);
			l->replay = replays(&l->spec);
			sc.depth = 1;
		}
	}
	if (!sc.depth && sc.env_at >= 0)
		env_update(); /* drop the malformed one */
	if (sc.depth || sc.replay_only)
		publish();
}

/* ---- /dev/hermetic/...: the way in without FFI ---- */

/* The value of key in a query "a=1&b=2", decoded into out; 1 found, 0 not,
 * -EINVAL malformed. */
static int query_get(const char *q, const char *key, char *out, size_t size)
{
	size_t kl = strlen(key);

	for (const char *p = q; p && *p;) {
		const char *amp = strchr(p, '&'), *end = amp ? amp : p + strlen(p);

		if ((size_t)(end - p) > kl && !strncmp(p, key, kl) && p[kl] == '=')
			return hm_pct_decode(p + kl + 1, end - p - kl - 1, out, size) < 0 ? -EINVAL
											   : 1;
		p = amp ? amp + 1 : NULL;
	}
	return 0;
}

static int query_time(const char *q, const char *key, int64_t *ns, bool *have)
{
	char v[64];
	const char *end;
	int k = query_get(q, key, v, sizeof(v));

	*have = k == 1;
	if (k <= 0)
		return k;
	if ((end = hm_parse_dec_i64(v, ns)) && !*end)
		return 0;
	return hm_parse_time(v, ns) < 0 ? -EINVAL : 0;
}

static int magic_op(const char *op, const char *q)
{
	char v[HM_SCOPE_NAME_MAX];
	int64_t ns;
	uint64_t seed;
	bool have_seed = false, have;
	const char *end;
	int k;

	if (!strcmp(op, "status"))
		return 0;
	if (!strcmp(op, "scope/enter")) {
		char name[HM_SCOPE_NAME_MAX];

		if (query_get(q, "name", name, sizeof(name)) != 1)
			return -EINVAL;
		if ((k = query_get(q, "seed", v, sizeof(v))) < 0)
			return k;
		if (k == 1) {
			if (!(end = hm_parse_dec_u64(v, &seed)) || *end)
				return -EINVAL;
			have_seed = true;
		}
		if ((k = query_time(q, "now", &ns, &have)) < 0)
			return k;
		return hm_scope_enter(name, have_seed ? &seed : NULL, have ? &ns : NULL);
	}
	if (!strcmp(op, "scope/leave")) {
		int st = HM_SCOPE_PASSED;

		if ((k = query_get(q, "status", v, sizeof(v))) < 0)
			return k;
		if (k == 1 && (st = hm_scope_status_parse(v, strlen(v))) < 0)
			return -EINVAL;
		return hm_scope_leave(st);
	}
	if (!strcmp(op, "clock/advance")) {
		if (query_get(q, "ns", v, sizeof(v)) != 1 || !(end = hm_parse_dec_i64(v, &ns)) ||
		    *end)
			return -EINVAL;
		return hermetic_shim_advance_ns(ns);
	}
	if (!strcmp(op, "clock/set")) {
		if ((k = query_time(q, "now", &ns, &have)) < 0 || !have)
			return -EINVAL;
		return hermetic_shim_set_now_ns(ns);
	}
	return -ENOENT;
}

/* What /dev/hermetic/... reads: the state after the operation. */
static int status_fd(int flags)
{
	char text[HM_SCOPE_NAME_MAX * 3 + 512], *p = text, *end = text + sizeof(text) - 1;
	const char *name = hm_scope_name();
	long fd;

	put_i64(&p, end, "active", 1);
	put(&p, end, "seed ");
	{
		char num[24];

		hm_fmt_u64(num, sizeof(num), hermetic_shim_seed());
		put(&p, end, num);
	}
	put(&p, end, "\nlineage ");
	put(&p, end, hm.lineage);
	put(&p, end, "\nscope ");
	if (name)
		p += hm_pct_encode(name, p, end - p);
	else
		put(&p, end, "-");
	put(&p, end, "\n");
	put_i64(&p, end, "now", hermetic_shim_now_ns());
	fd = hm_sys(SYS_memfd_create, "hermetic", flags & O_CLOEXEC ? MFD_CLOEXEC : 0, 0);
	if (fd < 0)
		return (int)fd;
	hm_sys(SYS_write, fd, text, p - text);
	hm_sys(SYS_lseek, fd, 0, SEEK_SET);
	return (int)fd;
}

int hm_magic_open(const char *path, int flags)
{
	char op[64];
	const char *rest = path + strlen(HM_MAGIC_PREFIX), *q = strchr(rest, '?');
	size_t n = q ? (size_t)(q - rest) : strlen(rest);
	int k;

	if (n >= sizeof(op)) {
		errno = ENOENT;
		return -1;
	}
	memcpy(op, rest, n);
	op[n] = 0;
	k = magic_op(op, q ? q + 1 : "");
	if (k == 0)
		k = status_fd(flags);
	if (k < 0) {
		errno = -k;
		return -1;
	}
	return k;
}
