// SPDX-License-Identifier: MIT
/*
 * Scopes in a recording (preload/scope.c writes them): every scope a process
 * entered has a directory of its own in the spool, "scope.<root>-<gen>-<seq>",
 * holding its streams and a file "scope" (name, seed, start, root, and the
 * status it was left with); "<dir>+<k>" and "cont.<lineage>-<gen>+<k>" hold
 * what one image's threads drew after leaving k scopes inside a scope or
 * outside scopes. Each directory becomes a scope section followed by its
 * stream sections (docs/journal-format.md).
 *
 * enroll --journal-per-scope keeps, instead of one journal for the run, one
 * journal for every scope left failed (a failing test; every failing
 * attempt of one), in DIR, named in DIR/index.json with the scope's name.
 */
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <sys/stat.h>
#include <time.h>
#include "util.h"
#include "enroll.h"
#include "record.h"
#include "trust.h"
#include "scope.h"

struct sdir {
	char name[256];
	struct hm_journal_scope sc;
	char sname[HM_SCOPE_NAME_MAX];
	char root[HM_LINEAGE_MAX];
};

/* "<dir>/scope": one "key value" line each; later lines win. */
static int read_meta(int spool, const char *dir, struct sdir *s)
{
	char path[300], line[HM_SCOPE_NAME_MAX * 3 + 64];
	_cleanup_fclose_ FILE *f = NULL;
	int fd;

	snprintf(path, sizeof(path), "%s/scope", dir);
	fd = openat(spool, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || !(f = fdopen(fd, "re"))) {
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	s->sc.status = HM_SCOPE_OPEN;
	while (fgets(line, sizeof(line), f)) {
		char *v = strchr(line, ' ');
		int64_t n;
		int st;

		line[strcspn(line, "\n")] = 0;
		if (!v)
			continue;
		*v++ = 0;
		if (!strcmp(line, "name"))
			hm_pct_decode(v, strlen(v), s->sname, sizeof(s->sname));
		else if (!strcmp(line, "root") && strlen(v) < sizeof(s->root))
			strcpy(s->root, v);
		else if (!strcmp(line, "status") && (st = hm_scope_status_parse(v, strlen(v))) >= 0)
			s->sc.status = st;
		else if (hm_parse_dec_i64(v, &n) && !strcmp(line, "seed"))
			s->sc.seed = (uint64_t)n;
		else if (hm_parse_dec_i64(v, &n) && !strcmp(line, "now"))
			s->sc.now_ns = n;
		else if (hm_parse_dec_i64(v, &n) && !strcmp(line, "mono"))
			s->sc.mono_ns = n;
	}
	return hm_scope_name_valid(s->sname) && hm_lineage_valid(s->root) ? 0 : -EBADMSG;
}

/* What one spool directory is; false: not a scope's (or unreadable). */
static bool describe(struct enroll *e, int spool, const char *name, struct sdir *s)
{
	char base[256];
	const char *plus = strrchr(name, '+');

	memset(s, 0, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->sc.dir = s->name;
	s->sc.name = s->sname;
	s->sc.root = s->root;
	if (!strncmp(name, "cont.", 5) && plus) {
		const char *dash = memrchr(name, '-', plus - name);

		if (!dash || (size_t)(dash - name - 5) >= sizeof(s->root))
			return false;
		memcpy(s->root, name + 5, dash - name - 5);
		s->sc.kind = HM_JSCOPE_CONT;
		s->sc.seed = e->cfg.seed;
		s->sc.now_ns = e->cfg.now_ns;
		return hm_lineage_valid(s->root);
	}
	if (strncmp(name, "scope.", 6))
		return false;
	snprintf(base, sizeof(base), "%.*s", plus ? (int)(plus - name) : (int)strlen(name), name);
	if (read_meta(spool, base, s) < 0) {
		eng_warn("journal: the scope directory '%s' of the recording has no readable "
			 "description; left out",
			 name);
		return false;
	}
	if (plus) {
		s->sc.kind = HM_JSCOPE_CONT;
		s->sc.status = HM_SCOPE_OPEN;
	}
	return true;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct sdir *)a)->name, ((const struct sdir *)b)->name);
}

/* Every scope directory of the spool, described, in name order. */
static int list(struct enroll *e, int spool, struct sdir **ret, size_t *n)
{
	int fd = dup(spool);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct sdir *v = NULL;
	size_t cap = 0;
	struct dirent *de;

	*n = 0;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	rewinddir(d);
	while ((de = readdir(d))) {
		struct stat st;

		if (!hm_journal_scope_dir_valid(de->d_name) || de->d_name[0] == '.' ||
		    fstatat(spool, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
			continue;
		if (*n == cap) {
			struct sdir *nv = reallocarray(v, cap ? cap * 2 : 8, sizeof(*v));

			if (!nv) {
				free(v);
				closedir(d);
				return -ENOMEM;
			}
			v = nv;
			cap = cap ? cap * 2 : 8;
		}
		if (describe(e, spool, de->d_name, &v[*n]))
			(*n)++;
	}
	closedir(d);
	if (*n) /* v is NULL when the spool holds no scope */
		qsort(v, *n, sizeof(*v), by_name);
	for (size_t i = 0; i < *n; i++) { /* (the copies moved: point into them again) */
		v[i].sc.dir = v[i].name;
		v[i].sc.name = v[i].sname;
		v[i].sc.root = v[i].root;
	}
	*ret = v;
	return 0;
}

static bool belongs(const char *name, const char *only)
{
	size_t n = strlen(only);

	return !strcmp(name, only) || (!strncmp(name, only, n) && name[n] == '+');
}

int record_write_scopes(struct enroll *e, struct hm_journal_writer *w, const char *only)
{
	_cleanup_close_ int spool =
		open(record_spool(e), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	_cleanup_free_ struct sdir *v = NULL;
	size_t n;
	int k;

	if (spool < 0)
		return -errno;
	if ((k = list(e, spool, &v, &n)) < 0)
		return k;
	for (size_t i = 0; i < n; i++) {
		if (only && !belongs(v[i].name, only))
			continue;
		if ((k = hm_journal_write_scope(w, &v[i].sc)) < 0 ||
		    (k = record_write_dir(e, w,
					  openat(spool, v[i].name,
						 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC))) < 0)
			return k;
	}
	return 0;
}

struct one {
	struct enroll *e;
	const char *dir;
	record_fill_scope_fn fill;
};

static int fill_one(struct hm_journal_writer *w, void *userdata)
{
	struct one *o = userdata;

	return o->fill(w, o->e, o->dir);
}

/* The ledger of journals recorded here (trust.h): replay takes it as ours. */
static void note_ours(const char *dir, const char *name)
{
	char path[PATH_MAX + 256];
	_cleanup_close_ int fd = -1;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		eng_warn("Failed to reopen journal '%s': %s; replaying it will ask first", path,
			 strerror(errno));
	else
		trust_note_fd(fd, path, "");
}

int record_scope_journals(struct enroll *e, record_fill_scope_fn fill)
{
	_cleanup_close_ int spool =
		open(record_spool(e), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	_cleanup_free_ struct sdir *v = NULL;
	const char *dir = record_dir(e);
	time_t secs = e->started_ns / 1000000000LL;
	char t[32];
	struct tm tm;
	size_t n, kept = 0;
	int k;

	if (spool < 0 || !dir[0])
		return spool < 0 ? -errno : -EINVAL;
	if ((k = list(e, spool, &v, &n)) < 0)
		return k;
	gmtime_r(&secs, &tm);
	strftime(t, sizeof(t), "%Y%m%dT%H%M%SZ", &tm);
	for (size_t i = 0; i < n; i++) {
		struct one o = { e, v[i].name, fill };
		char name[128];

		if (v[i].sc.kind != HM_JSCOPE_SCOPE || v[i].sc.status != HM_SCOPE_FAILED)
			continue;
		if (e->no_daemon)
			snprintf(name, sizeof(name), "%s-pid%d-%zu" HM_JOURNAL_SUFFIX, t, (int)getpid(),
				 kept + 1);
		else
			snprintf(name, sizeof(name), "%s-run%" PRIu64 "-%zu" HM_JOURNAL_SUFFIX, t,
				 e->run.run_id, kept + 1);
		k = hm_journal_save(dir, name, (uid_t)-1, (gid_t)-1, 0, fill_one, &o);
		if (k < 0) {
			eng_warn("Failed to write journal '%s/%s' of %s: %s", dir, name, v[i].sname,
				 strerror(-k));
			continue;
		}
		kept++;
		note_ours(dir, name);
		if ((k = record_index_update(e, name, v[i].sname)) < 0)
			eng_warn("Failed to update '%s/index.json': %s", dir, strerror(-k));
		eng_warn("journal of failing %s: %s/%s (replay with 'hermetic replay %s/%s --scope '%s'')",
			 v[i].sname, dir, name, dir, name, v[i].sname);
	}
	return (int)kept;
}
