// SPDX-License-Identifier: MIT
/*
 * A run has no pid namespace (by design: docs/design), so a process id
 * that the command prints is the machine's, different in every run. Here
 * the ids of one run are read as the processes its journal names, so that
 * check-determinism can tell a line that differs only in the runs' own
 * process ids from one that differs in anything else (checkdet.h).
 *
 * Names come from two places of the journal:
 * - the thread streams: each header has the real pid and tid it was
 *   recorded with, and the process's identity (hm_proc_child: its place in
 *   the run, never a pid) and lineage key; a thread is its image and index;
 * - the kernel stream: a process that drew nothing has no stream, but the
 *   kernel saw it forked (HM_EV_FORK, parent and child tgid). It is named
 *   by its place among its parent's forks, in the order of their times:
 *   the n-th fork of a named parent P is "~P.n" ("[~1.2.1]" for people).
 *   The run's first process, when it has no stream, is the first process
 *   of the kernel stream that no fork made: "[~1]". Keys of streams start
 *   with 'p' or 't', derived ones with '~': they never meet. A kernel
 *   stream that lost events (the summary's dropped count) names nothing:
 *   a lost fork would move its siblings to other places.
 * An id two processes of the run had (a pid the kernel gave again) names
 * neither: a line with it still differs. So does a number that names no
 * process of its run, such as the parent of the run's first process.
 */
#include <ctype.h>
#include <inttypes.h>
#include "util.h"
#include "checkdet.h"
#include "record.h"

#define KEY_MAX HM_LINEAGE_MAX

struct cd_id {
	uint32_t id; /* a pid or tid of the run */
	bool ambiguous; /* two processes had it */
	uint32_t born; /* the kernel's fork records that made it */
	uint32_t forks; /* the kernel's fork records of it as the parent, so far */
	char key[KEY_MAX]; /* what names compare by; "" for no name */
	char name[KEY_MAX]; /* for people */
};

struct cd_pids {
	struct cd_id *ids;
	size_t n, cap;
	uint32_t *slots; /* open addressing on id: index + 1 into ids, 0 empty */
	size_t mask; /* slots - 1, a power of 2 less one */
};

struct fork_rec {
	uint64_t time_ns;
	size_t seq; /* order in the stream: ties keep it */
	uint32_t parent, child;
};

struct kwalk {
	struct fork_rec *forks;
	size_t n, cap;
	uint32_t first; /* the first process the kernel stream shows */
};

static int fork_collect(const struct hm_trace_event *ev, void *userdata)
{
	struct kwalk *w = userdata;

	if (!w->first && ev->pid)
		w->first = ev->pid;
	if (ev->kind != HM_EV_FORK || (ev->flags & 1) || !ev->aux)
		return 0; /* not a process's fork (a thread's, or another event) */
	if (w->n == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 64;
		struct fork_rec *f = reallocarray(w->forks, cap, sizeof(*f));

		if (!f)
			return -ENOMEM;
		w->forks = f;
		w->cap = cap;
	}
	w->forks[w->n] = (struct fork_rec){ ev->time_ns, w->n, ev->pid, ev->aux };
	w->n++;
	return 0;
}

static int fork_cmp(const void *x, const void *y)
{
	const struct fork_rec *a = x, *b = y;

	if (a->time_ns != b->time_ns)
		return a->time_ns < b->time_ns ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static struct cd_id *find(const struct cd_pids *p, uint32_t id)
{
	for (size_t h = (id * 2654435761u) & p->mask;; h = (h + 1) & p->mask) {
		if (!p->slots[h])
			return NULL;
		if (p->ids[p->slots[h] - 1].id == id)
			return &p->ids[p->slots[h] - 1];
	}
}

/* id's entry, made (without a name) when there is none: never NULL, as
 * cap counts every id that can be added. */
static struct cd_id *get(struct cd_pids *p, uint32_t id)
{
	size_t h = (id * 2654435761u) & p->mask;
	struct cd_id *e = find(p, id);

	if (e)
		return e;
	while (p->slots[h])
		h = (h + 1) & p->mask;
	e = &p->ids[p->n++];
	memset(e, 0, sizeof(*e));
	e->id = id;
	p->slots[h] = (uint32_t)p->n;
	return e;
}

/* id names key (name for people); another key for it already: no one. */
static void name_id(struct cd_pids *p, uint32_t id, const char *key, const char *name)
{
	struct cd_id *e = get(p, id);

	if (e->key[0] && strcmp(e->key, key))
		e->ambiguous = true;
	if (e->key[0])
		return;
	snprintf(e->key, sizeof(e->key), "%s", key);
	snprintf(e->name, sizeof(e->name), "%s", name);
}

static void from_streams(struct cd_pids *p, const struct hm_journal *j)
{
	for (size_t i = 0; i < j->n_streams; i++) {
		const struct hm_jstream_header *h = &j->streams[i].sum.hdr;
		char key[KEY_MAX], name[KEY_MAX];

		if (!h->pid)
			continue;
		snprintf(key, sizeof(key), "p%016" PRIx64, h->proc);
		name_id(p, h->pid, key, h->lineage);
		if (!h->tid || h->tid == h->pid)
			continue; /* the main thread: the process */
		snprintf(key, sizeof(key), "t%016" PRIx64 ".%" PRIu32, h->image, h->thread);
		snprintf(name, sizeof(name), "%.200s thread %" PRIu32, h->lineage, h->thread);
		name_id(p, h->tid, key, name);
	}
}

/* child: the n-th fork of parent, named by that place. */
static void derive(const struct cd_id *parent, uint32_t n, struct cd_id *child)
{
	char key[KEY_MAX], name[KEY_MAX];
	bool derived = parent->key[0] == '~';
	/* a derived name "[~K]" continues as "[~K.n]" */
	int core = derived ? (int)strlen(parent->name) - 3 : (int)strlen(parent->name);
	const char *from = derived ? parent->name + 2 : parent->name;
	int kl = snprintf(key, sizeof(key), "%s%s.%" PRIu32, derived ? "" : "~", parent->key, n);
	int nl = snprintf(name, sizeof(name), "[~%.*s.%" PRIu32 "]", core, from, n);

	if (kl < 0 || (size_t)kl >= sizeof(key) || nl < 0 || (size_t)nl >= sizeof(name) || core < 0)
		return; /* too deep to name: no name */
	snprintf(child->key, sizeof(child->key), "%s", key);
	snprintf(child->name, sizeof(child->name), "%s", name);
}

static void from_forks(struct cd_pids *p, struct kwalk *w)
{
	struct cd_id *root;

	if (w->n)
		qsort(w->forks, w->n, sizeof(*w->forks), fork_cmp);
	for (size_t i = 0; i < w->n; i++)
		if (w->forks[i].child == w->first)
			w->first = 0; /* forked: not the run's first */
	if (w->first) {
		root = get(p, w->first);
		if (!root->key[0]) {
			snprintf(root->key, sizeof(root->key), "~1");
			snprintf(root->name, sizeof(root->name), "[~1]");
		}
	}
	for (size_t i = 0; i < w->n; i++) {
		struct cd_id *parent = get(p, w->forks[i].parent), *child = get(p, w->forks[i].child);
		uint32_t n = ++parent->forks;

		if (child->born++) {
			child->ambiguous = true; /* the pid came again */
			continue;
		}
		if (child->key[0] || !parent->key[0] || parent->ambiguous)
			continue; /* named by its stream; or a parent with no name */
		derive(parent, n, child);
	}
}

int cd_pids_make(const struct hm_journal *j, struct cd_pids **ret)
{
	struct kwalk w = { 0 };
	struct cd_pids *p = calloc(1, sizeof(*p));
	size_t slots = 16;
	int r;

	if (!p)
		return -ENOMEM;
	r = journal_kernel_each(j, fork_collect, &w);
	if (r < 0)
		goto cleanup;
	/* every id: a pid and a tid per stream, a parent and a child per
	 * fork, the first process */
	p->cap = 2 * j->n_streams + 2 * w.n + 1;
	r = -ENOMEM;
	if (p->cap >= UINT32_MAX / 2)
		goto cleanup; /* slots hold an index + 1 in 32 bits */
	while (slots < 2 * p->cap)
		slots *= 2;
	p->mask = slots - 1;
	p->ids = calloc(p->cap, sizeof(*p->ids));
	p->slots = calloc(slots, sizeof(*p->slots));
	if (!p->ids || !p->slots)
		goto cleanup;
	from_streams(p, j);
	/* a fork the kernel could not deliver would shift its siblings'
	 * places: derive none from a stream with a gap */
	if (!j->kernel_dropped)
		from_forks(p, &w);
	*ret = p;
	p = NULL;
	r = 0;
cleanup:
	free(w.forks);
	cd_pids_free(p);
	return r;
}

void cd_pids_free(struct cd_pids *p)
{
	if (!p)
		return;
	free(p->ids);
	free(p->slots);
	free(p);
}

static bool alnum(char ch)
{
	return isalnum((unsigned char)ch);
}

/* The n digits at s + i as an id: a number of its own (no letter, digit
 * or '.' before it, no letter or digit after it, nor a '.' and a digit: not
 * part of a name, a version or a fraction), at most 10 digits, no leading
 * 0. An '_' does separate: a name made with the pid, "test_python_4242"
 * (CPython's regrtest names its working directory so), "tmp_4242_x". */
static bool id_at(const char *s, size_t i, size_t n, uint32_t *ret)
{
	uint64_t v = 0;

	if (n > 10 || s[i] == '0' || (i && (alnum(s[i - 1]) || s[i - 1] == '.')) || alnum(s[i + n]) ||
	    (s[i + n] == '.' && isdigit((unsigned char)s[i + n + 1])))
		return false;
	for (size_t k = 0; k < n; k++)
		v = v * 10 + (uint64_t)(s[i + k] - '0');
	if (v > UINT32_MAX)
		return false;
	*ret = (uint32_t)v;
	return true;
}

static const struct cd_id *named(const struct cd_pids *p, uint32_t id)
{
	const struct cd_id *e = find(p, id);

	return e && e->key[0] && !e->ambiguous ? e : NULL;
}

/* name into names unless it is there: ", "-separated. */
static void add_name(char *names, size_t size, const char *name)
{
	size_t len = strlen(names), nl = strlen(name);

	for (const char *s = names; (s = strstr(s, name)); s++)
		if ((s == names || s[-1] == ' ') && (s[nl] == ',' || !s[nl]))
			return;
	if (len + 2 + nl < size)
		snprintf(names + len, size - len, "%s%s", len ? ", " : "", name);
}

static size_t digits(const char *s)
{
	size_t n = 0;

	while (isdigit((unsigned char)s[n]))
		n++;
	return n;
}

int cd_pids_same_line(const struct cd_pids *pa, const char *a, const struct cd_pids *pb, const char *b,
		      char *names, size_t size)
{
	size_t i = 0, k = 0;
	bool differed = false;

	names[0] = 0;
	while (a[i] || b[k]) {
		/* both at a run of digits: what precedes them is the same */
		size_t na = digits(a + i), nb = digits(b + k);
		const struct cd_id *x, *y;
		uint32_t u, v;

		if (!na || !nb) {
			if (a[i] != b[k])
				return 0;
			i++;
			k++;
			continue;
		}
		if (na != nb || memcmp(a + i, b + k, na)) {
			if (!id_at(a, i, na, &u) || !id_at(b, k, nb, &v) || !(x = named(pa, u)) ||
			    !(y = named(pb, v)) || strcmp(x->key, y->key))
				return 0;
			add_name(names, size, x->name);
			differed = true;
		}
		i += na;
		k += nb;
	}
	return differed;
}
