// SPDX-License-Identifier: MIT
/*
 * The fingerprint of the machine a journal was recorded on: what replay
 * compares to warn that it cannot be faithful (another kernel, libc, TZ,
 * locale, PYTHONHASHSEED). Environment values are secrets: only the names
 * are kept, except TZ, PYTHONHASHSEED, LANG and LC_*.
 */
#include <fcntl.h>
#include <limits.h>
#include <ctype.h>
#include <gnu/libc-version.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include "journal.h"
#include "util.h"

#define GIT_MAX_DEPTH 64 /* directories walked up from cwd */
#define GIT_MAX_SYMREF 5
#define PACKED_REFS_MAX (16 << 20)

static int kv_add(struct hm_journal_kv **kv, size_t *n, size_t *cap, const char *key,
		  const char *value, size_t klen)
{
	struct hm_journal_kv *p = *kv;

	if (*n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 16;

		p = reallocarray(*kv, ncap, sizeof(*p));
		if (!p)
			return -ENOMEM;
		*kv = p;
		*cap = ncap;
	}
	p[*n].key = strndup(key, klen);
	p[*n].value = value ? strdup(value) : NULL;
	if (!p[*n].key || (value && !p[*n].value)) {
		free(p[*n].key);
		free(p[*n].value);
		return -ENOMEM;
	}
	(*n)++;
	return 0;
}

static bool is_hex_id(const char *s, size_t n)
{
	if (n != 40 && n != 64)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]) || isupper((unsigned char)s[i]))
			return false;
	return true;
}

/* A ref name we are willing to open as a path under the git directory. */
static bool ref_ok(const char *ref)
{
	if (strncmp(ref, "refs/", 5) || strstr(ref, "..") || strstr(ref, "//"))
		return false;
	for (const char *p = ref; *p; p++)
		if ((unsigned char)*p <= ' ' || *p == '\\' || *p == ':' || *p == '~' || *p == '^')
			return false;
	return true;
}

/* Strip one trailing newline (and CR); return the length. */
static size_t chomp(char *s)
{
	size_t n = strlen(s);

	while (n && (s[n - 1] == '\n' || s[n - 1] == '\r'))
		s[--n] = 0;
	return n;
}

static int read_small(const char *dir, const char *name, char *buf, size_t size)
{
	char path[PATH_MAX];
	ssize_t n;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path))
		return -ENAMETOOLONG;
	n = hm_read_file_at(AT_FDCWD, path, buf, size);
	return n < 0 ? (int)n : 0;
}

static int packed_ref(const char *gitdir, const char *ref, char *out, size_t size)
{
	char path[PATH_MAX], line[1024];
	_cleanup_fclose_ FILE *f = NULL;
	size_t rlen = strlen(ref), total = 0;

	if ((size_t)snprintf(path, sizeof(path), "%s/packed-refs", gitdir) >= sizeof(path))
		return -ENAMETOOLONG;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *sp = strchr(line, ' ');

		total += strlen(line);
		if (total > PACKED_REFS_MAX)
			return -EFBIG;
		chomp(line);
		if (!sp || line[0] == '#' || line[0] == '^')
			continue;
		if (strlen(sp + 1) == rlen && !memcmp(sp + 1, ref, rlen) &&
		    is_hex_id(line, (size_t)(sp - line))) {
			if ((size_t)(sp - line) + 1 > size)
				return -ENOBUFS;
			memcpy(out, line, (size_t)(sp - line));
			out[sp - line] = 0;
			return 0;
		}
	}
	return -ENOENT;
}

int hm_journal_git_head(const char *dir, char *out, size_t size)
{
	char cur[PATH_MAX], gitdir[PATH_MAX], common[PATH_MAX], buf[PATH_MAX + 16];
	struct stat st;
	bool found = false;

	if (!realpath(dir, cur))
		return -errno;
	/* Find the nearest .git: a directory, or a "gitdir: PATH" file
	 * (worktrees, submodules). */
	for (int depth = 0; depth < GIT_MAX_DEPTH; depth++) {
		char *slash;

		if ((size_t)snprintf(gitdir, sizeof(gitdir), "%s/.git",
				     strcmp(cur, "/") ? cur : "") >= sizeof(gitdir))
			return -ENAMETOOLONG;
		if (stat(gitdir, &st) == 0) {
			if (S_ISREG(st.st_mode)) {
				size_t n;

				if (hm_read_file_at(AT_FDCWD, gitdir, buf, sizeof(buf)) < 0)
					return -EBADMSG;
				n = chomp(buf);
				if (n < 9 || strncmp(buf, "gitdir: ", 8))
					return -EBADMSG;
				if (buf[8] == '/') {
					if (strlen(buf + 8) >= sizeof(gitdir))
						return -ENAMETOOLONG;
					strcpy(gitdir, buf + 8);
				} else if ((size_t)snprintf(gitdir, sizeof(gitdir), "%s/%s",
							    strcmp(cur, "/") ? cur : "",
							    buf + 8) >= sizeof(gitdir))
					return -ENAMETOOLONG;
			}
			found = true;
			break;
		}
		slash = strrchr(cur, '/');
		if (!slash || slash == cur) {
			if (!strcmp(cur, "/"))
				break;
			strcpy(cur, "/");
			continue;
		}
		*slash = 0;
	}
	if (!found)
		return -ENOENT;
	/* A linked worktree keeps its refs in the common directory. */
	snprintf(common, sizeof(common), "%s", gitdir);
	if (read_small(gitdir, "commondir", buf, sizeof(buf)) == 0 && chomp(buf)) {
		if (buf[0] == '/') {
			if (strlen(buf) >= sizeof(common))
				return -ENAMETOOLONG;
			strcpy(common, buf);
		} else if ((size_t)snprintf(common, sizeof(common), "%s/%s", gitdir, buf) >=
			   sizeof(common))
			return -ENAMETOOLONG;
	}
	if (read_small(gitdir, "HEAD", buf, sizeof(buf)) < 0)
		return -EBADMSG;
	for (int i = 0; i < GIT_MAX_SYMREF; i++) {
		char ref[PATH_MAX];
		size_t n = chomp(buf);

		if (is_hex_id(buf, n)) {
			if (n + 1 > size)
				return -ENOBUFS;
			memcpy(out, buf, n + 1);
			return 0;
		}
		if (strncmp(buf, "ref: ", 5) || !ref_ok(buf + 5))
			return -EBADMSG;
		if (strlen(buf + 5) >= sizeof(ref))
			return -ENAMETOOLONG;
		strcpy(ref, buf + 5);
		if (read_small(gitdir, ref, buf, sizeof(buf)) == 0 ||
		    read_small(common, ref, buf, sizeof(buf)) == 0)
			continue;
		return packed_ref(common, ref, out, size);
	}
	return -ELOOP;
}

/* TZ as the process sees it: $TZ, else the zone /etc/localtime names. */
static const char *local_tz(char *const *envp, char *buf, size_t size)
{
	ssize_t n;
	const char *z;

	for (char *const *e = envp; e && *e; e++)
		if (!strncmp(*e, "TZ=", 3))
			return *e + 3;
	n = readlink("/etc/localtime", buf, size - 1);
	if (n > 0) {
		buf[n] = 0;
		z = strstr(buf, "zoneinfo/");
		return z ? z + 9 : buf;
	}
	if (hm_read_file_at(AT_FDCWD, "/etc/timezone", buf, size) > 0 && chomp(buf))
		return buf;
	return NULL;
}

/* Add a field if it is known and nothing failed yet; pass errors on. */
static int field(struct hm_journal_fingerprint *f, size_t *cap, int r, const char *key,
		 const char *value)
{
	if (r < 0 || !value)
		return r;
	return kv_add(&f->fields, &f->n_fields, cap, key, value, strlen(key));
}

void hm_journal_fingerprint_done(struct hm_journal_fingerprint *f)
{
	for (size_t i = 0; f->fields && i < f->n_fields; i++) {
		free(f->fields[i].key);
		free(f->fields[i].value);
	}
	for (size_t i = 0; f->env && i < f->n_env; i++) {
		free(f->env[i].key);
		free(f->env[i].value);
	}
	free(f->fields);
	free(f->env);
	*f = (struct hm_journal_fingerprint){};
}

int hm_journal_fingerprint_collect(struct hm_journal_fingerprint *ret, char *const *envp,
				   const char *cwd)
{
	struct hm_journal_fingerprint f = {};
	size_t fcap = 0, ecap = 0;
	char buf[PATH_MAX], libc[64], commit[80];
	const char *tz;
	struct utsname u;
	int r = 0;

#define FIELD(k, v) (r = field(&f, &fcap, r, (k), (v)))

	if (uname(&u) == 0) {
		FIELD(HM_FP_HOSTNAME, u.nodename);
		FIELD(HM_FP_KERNEL, u.release);
		FIELD(HM_FP_KERNEL_VERSION, u.version);
		FIELD(HM_FP_ARCH, u.machine);
	}
	snprintf(libc, sizeof(libc), "glibc %s", gnu_get_libc_version());
	FIELD(HM_FP_LIBC, libc);
	tz = local_tz(envp, buf, sizeof(buf));
	FIELD(HM_FP_TZ, tz);
	if (!cwd)
		cwd = getcwd(buf, sizeof(buf));
	if (cwd && hm_journal_git_head(cwd, commit, sizeof(commit)) == 0)
		FIELD(HM_FP_GIT_COMMIT, commit);
#undef FIELD
	for (char *const *e = envp; e && *e && r >= 0; e++) {
		const char *eq = strchr(*e, '=');
		size_t klen = eq ? (size_t)(eq - *e) : strlen(*e);
		char name[256];
		bool keep;

		if (klen == 0)
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)klen, *e);
		keep = eq && hm_journal_env_keeps_value(name);
		r = kv_add(&f.env, &f.n_env, &ecap, *e, keep ? eq + 1 : NULL, klen);
	}
	if (r < 0) {
		hm_journal_fingerprint_done(&f);
		return r;
	}
	*ret = f;
	return 0;
}
