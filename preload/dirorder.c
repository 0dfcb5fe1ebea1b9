// SPDX-License-Identifier: MIT
/*
 * --dir-order sorted|seeded: readdir in an order of the run's choosing, not
 * the filesystem's (ext4 lists by hash, tmpfs newest first, overlayfs
 * layer by layer). At a directory stream's first readdir the whole
 * directory is read through the real call and its entries ordered: by name
 * (sorted), or by a hash of each name keyed by the run's seed (seeded), the
 * name breaking ties; later calls hand them out one by one. The order is a
 * function of the names and the seed only: the same on every filesystem.
 *
 * A stream's list lives until closedir; rewinddir reads the directory
 * again (entries made since appear, as POSIX says), telldir and seekdir
 * count positions in the list. With --dir-order host (the default) the
 * wrappers are the real calls after one branch.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include "shim.h"
#include "identity.h"
#include "hermetic/dirorder.h"

struct dir_list {
	DIR *d;
	struct dir_list *next;
	struct dirent64 **ents;
	size_t n, pos;
	int err; /* the real readdir's error, handed out at its place */
};

static struct dir_list *lists;
static pthread_mutex_t lists_lock = PTHREAD_MUTEX_INITIALIZER;

/* The real call, resolved once (a benign race: every thread stores the
 * same pointer). Not hm.real: a program may read a directory before the
 * shim's initialisation has resolved it (a constructor of another library),
 * and these calls have no system call to fall back on. The one place the
 * shim resolves them: identity.c keeps none of its own. */
static void *real_sym(void **slot, const char *name)
{
	void *p = __atomic_load_n(slot, __ATOMIC_RELAXED);

	if (!p) {
		p = dlsym(RTLD_NEXT, name);
		__atomic_store_n(slot, p, __ATOMIC_RELAXED);
	}
	return p;
}

#define REAL(name, type) ((type)real_sym(&real_##name, #name))
static void *real_readdir64, *real_rewinddir, *real_telldir, *real_seekdir, *real_closedir;

/* What the comparator needs: the run's order and key. */
struct cmp_arg {
	int order;
	uint64_t key;
};

static int cmp(const void *pa, const void *pb, void *arg)
{
	const struct dirent64 *a = *(struct dirent64 *const *)pa, *b = *(struct dirent64 *const *)pb;
	const struct cmp_arg *c = arg;

	return hm_dirorder_cmp(a->d_name, b->d_name, c->order == HM_DIR_SEEDED, c->key);
}

static struct dirent64 *real_next(DIR *d)
{
	return REAL(readdir64, struct dirent64 * (*)(DIR *))(d);
}

static void free_ents(struct dir_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->ents[i]);
	free(l->ents);
	l->ents = NULL;
	l->n = l->pos = 0;
	l->err = 0;
}

/* The whole directory, ordered. On ENOMEM the entries read so far, then
 * the error. */
static void fill(struct dir_list *l, int order, uint64_t key)
{
	size_t cap = 0;
	struct dirent64 *e;
	int saved = errno;

	for (;;) {
		errno = 0;
		e = real_next(l->d);
		if (!e) {
			l->err = errno;
			break;
		}
		if (l->n == cap) {
			size_t ncap = cap ? cap * 2 : 64;
			struct dirent64 **p = realloc(l->ents, ncap * sizeof(*p));

			if (!p) {
				l->err = ENOMEM;
				break;
			}
			l->ents = p;
			cap = ncap;
		}
		if (!(l->ents[l->n] = malloc(e->d_reclen > sizeof(*e) ? e->d_reclen : sizeof(*e)))) {
			l->err = ENOMEM;
			break;
		}
		memcpy(l->ents[l->n++], e, e->d_reclen > sizeof(*e) ? sizeof(*e) : e->d_reclen);
	}
	qsort_r(l->ents, l->n, sizeof(*l->ents), cmp, &(struct cmp_arg){ order, key });
	errno = saved;
}

static struct dir_list *find(DIR *d, bool make)
{
	struct dir_list *l;

	for (l = lists; l; l = l->next)
		if (l->d == d)
			return l;
	if (!make || !(l = calloc(1, sizeof(*l))))
		return NULL;
	l->d = d;
	l->next = lists;
	lists = l;
	return l;
}

HM_EXPORT struct dirent64 *readdir64(DIR *d)
{
	struct dir_list *l;
	struct dirent64 *e = NULL;
	uint64_t key = 0;
	int order = hm_id_dir_order(&key);

	if (order == HM_DIR_HOST) {
		return real_next(d);
	}
	pthread_mutex_lock(&lists_lock);
	l = find(d, true);
	if (!l) {
		pthread_mutex_unlock(&lists_lock);
		errno = ENOMEM;
		return NULL;
	}
	if (!l->ents && !l->err)
		fill(l, order, key);
	if (l->pos < l->n)
		e = l->ents[l->pos++];
	else if (l->err)
		errno = l->err;
	pthread_mutex_unlock(&lists_lock);
	return e;
}

/* struct dirent is struct dirent64 on the 64-bit ABIs (glibc aliases them) */
_Static_assert(sizeof(struct dirent) == sizeof(struct dirent64), "dirent is dirent64");

HM_EXPORT struct dirent *readdir(DIR *d)
{
	return (struct dirent *)readdir64(d);
}

static int next_r(DIR *d, struct dirent64 *entry, struct dirent64 **result)
{
	int saved = errno;
	struct dirent64 *e;

	errno = 0;
	e = readdir64(d);
	if (!e && errno) {
		int r = errno;

		errno = saved;
		*result = NULL;
		return r;
	}
	if (e)
		memcpy(entry, e, sizeof(*entry));
	*result = e ? entry : NULL;
	errno = saved;
	return 0;
}

/* Deprecated, and still what older JDKs call. */
HM_EXPORT int readdir64_r(DIR *d, struct dirent64 *entry, struct dirent64 **result)
{
	return next_r(d, entry, result);
}

HM_EXPORT int readdir_r(DIR *d, struct dirent *entry, struct dirent **result)
{
	return next_r(d, (struct dirent64 *)entry, (struct dirent64 **)result);
}

HM_EXPORT void rewinddir(DIR *d)
{
	uint64_t key;
	struct dir_list *l;

	if (hm_id_dir_order(&key) == HM_DIR_HOST) {
		REAL(rewinddir, void (*)(DIR *))(d);
		return;
	}
	pthread_mutex_lock(&lists_lock);
	if ((l = find(d, false)))
		free_ents(l);
	pthread_mutex_unlock(&lists_lock);
	REAL(rewinddir, void (*)(DIR *))(d);
}

HM_EXPORT long telldir(DIR *d)
{
	uint64_t key;
	struct dir_list *l;
	long pos = -1;

	if (hm_id_dir_order(&key) == HM_DIR_HOST) {
		return REAL(telldir, long (*)(DIR *))(d);
	}
	pthread_mutex_lock(&lists_lock);
	l = find(d, false);
	pos = l ? (long)l->pos : 0;
	pthread_mutex_unlock(&lists_lock);
	return pos;
}

HM_EXPORT void seekdir(DIR *d, long pos)
{
	uint64_t key;
	struct dir_list *l;

	if (hm_id_dir_order(&key) == HM_DIR_HOST) {
		REAL(seekdir, void (*)(DIR *, long))(d, pos);
		return;
	}
	pthread_mutex_lock(&lists_lock);
	if ((l = find(d, true))) {
		if (!l->ents && !l->err)
			fill(l, hm_id_dir_order(&key), key);
		l->pos = pos < 0 ? 0 : (size_t)pos > l->n ? l->n : (size_t)pos;
	}
	pthread_mutex_unlock(&lists_lock);
}

HM_EXPORT int closedir(DIR *d)
{
	uint64_t key;

	if (hm_id_dir_order(&key) != HM_DIR_HOST) {
		struct dir_list **pp, *l;

		pthread_mutex_lock(&lists_lock);
		for (pp = &lists; (l = *pp); pp = &l->next)
			if (l->d == d) {
				*pp = l->next;
				free_ents(l);
				free(l);
				break;
			}
		pthread_mutex_unlock(&lists_lock);
	}
	return REAL(closedir, int (*)(DIR *))(d);
}
