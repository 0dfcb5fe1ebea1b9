// SPDX-License-Identifier: MIT
#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <sys/stat.h>
#include "util.h"
#include "boundary.h"

/* Deeper trees are left alone rather than exhausting descriptors. */
#define REMOVE_MAX_DEPTH 512
#define REMOVE_MAX_PASSES 8

const char *const hm_env_safe[] = { "PATH", "LANG", "LC_*", "TZ", "TERM", "USER", "LOGNAME", "SHELL",
				    NULL };

void hm_boundary_init(struct hm_boundary *b)
{
	*b = (struct hm_boundary){ .fs = HM_FS_NONE, .stragglers = HM_STRAGGLERS_KILL };
}

void hm_boundary_free(struct hm_boundary *b)
{
	free(b->temp_parent);
	for (size_t i = 0; i < b->n_keep_env; i++)
		free(b->keep_env[i]);
	free(b->keep_env);
	for (size_t i = 0; i < b->n_env_ops; i++) {
		free(b->env_ops[i].name);
		free(b->env_ops[i].value);
	}
	free(b->env_ops);
	hm_boundary_init(b);
}

static bool run_owned(const char *name, size_t len)
{
	return len >= 9 && !strncmp(name, "HERMETIC_", 9);
}

static int add_env_op(struct hm_boundary *b, const char *name, size_t len, const char *value)
{
	struct hm_env_op *ops = realloc(b->env_ops, (b->n_env_ops + 1) * sizeof(*ops));
	char *n, *v = NULL;

	if (!ops)
		return -ENOMEM;
	b->env_ops = ops;
	n = strndup(name, len);
	if (!n || (value && !(v = strdup(value)))) {
		free(n);
		return -ENOMEM;
	}
	ops[b->n_env_ops++] = (struct hm_env_op){ .name = n, .value = v };
	return 0;
}

int hm_boundary_set(struct hm_boundary *b, const char *name, const char *v, const char **ret_why)
{
	if (!strcmp(name, "fs")) {
		*ret_why = "expected 'isolate' or 'none'";
		if (!v)
			return -EINVAL;
		if (!strcmp(v, "isolate"))
			b->fs = HM_FS_ISOLATE;
		else if (!strcmp(v, "none"))
			b->fs = HM_FS_NONE;
		else
			return -EINVAL;
		return 0;
	}
	if (!strcmp(name, "stragglers")) {
		*ret_why = "expected 'kill' or 'keep'";
		if (!v)
			return -EINVAL;
		if (!strcmp(v, "kill"))
			b->stragglers = HM_STRAGGLERS_KILL;
		else if (!strcmp(v, "keep"))
			b->stragglers = HM_STRAGGLERS_KEEP;
		else
			return -EINVAL;
		return 0;
	}
	if (!strcmp(name, "temp-parent")) {
		char *p;

		*ret_why = "expected a directory";
		if (!v || !*v)
			return -EINVAL;
		p = strdup(v);
		if (!p)
			return -ENOMEM;
		free(b->temp_parent);
		b->temp_parent = p;
		return 0;
	}
	if (!strcmp(name, "env")) {
		const char *eq = v ? strchr(v, '=') : NULL;

		*ret_why = "expected KEY=VALUE";
		if (!eq || eq == v)
			return -EINVAL;
		if (run_owned(v, eq - v)) {
			*ret_why = "HERMETIC_* variables belong to the run; use enroll's own options";
			return -EINVAL;
		}
		return add_env_op(b, v, eq - v, eq + 1);
	}
	if (!strcmp(name, "unset")) {
		*ret_why = "expected a variable name";
		if (!v || !*v || strchr(v, '='))
			return -EINVAL;
		if (run_owned(v, strlen(v))) {
			*ret_why = "HERMETIC_* variables belong to the run and always survive";
			return -EINVAL;
		}
		return add_env_op(b, v, strlen(v), NULL);
	}
	if (!strcmp(name, "keep-env")) {
		char **k, *g;

		*ret_why = "expected a variable name or a glob such as 'CI_*'";
		if (!v || !*v || strchr(v, '='))
			return -EINVAL;
		k = realloc(b->keep_env, (b->n_keep_env + 1) * sizeof(*k));
		if (!k)
			return -ENOMEM;
		b->keep_env = k;
		g = strdup(v);
		if (!g)
			return -ENOMEM;
		k[b->n_keep_env++] = g;
		return 0;
	}
	if (!strcmp(name, "no-chdir")) {
		b->no_chdir = true;
		return 0;
	}
	if (!strcmp(name, "scrub-env")) {
		b->scrub_env = true;
		return 0;
	}
	if (!strcmp(name, "print-boundary")) {
		b->print_boundary = true;
		return 0;
	}
	if (!strcmp(name, "keep-root")) {
		b->keep_root = true;
		return 0;
	}
	*ret_why = "unknown option";
	return -ENOENT;
}

int hm_boundary_check(const struct hm_boundary *b, const char **ret_why)
{
	if (b->fs != HM_FS_ISOLATE) {
		if (b->temp_parent)
			*ret_why = "--temp-parent needs --fs isolate";
		else if (b->no_chdir)
			*ret_why = "--no-chdir needs --fs isolate";
		else if (b->keep_root)
			*ret_why = "--keep-root needs --fs isolate";
		else
			goto env;
		return -EINVAL;
	}
env:
	if (b->n_keep_env && !b->scrub_env) {
		*ret_why = "--keep-env needs --scrub-env (without it every variable is kept)";
		return -EINVAL;
	}
	return 0;
}

bool hm_env_keep(const char *name, char *const *globs, size_t n)
{
	for (const char *const *s = hm_env_safe; *s; s++)
		if (!fnmatch(*s, name, 0))
			return true;
	for (size_t i = 0; i < n; i++)
		if (!fnmatch(globs[i], name, 0))
			return true;
	return false;
}

bool hm_path_under(const char *path, const char *dir)
{
	size_t len = strlen(dir);

	while (len > 1 && dir[len - 1] == '/')
		len--;
	if (len == 1 && dir[0] == '/')
		return path[0] == '/';
	return !strncmp(path, dir, len) && (path[len] == 0 || path[len] == '/');
}

int hm_git_tree_find(const char *path, char *ret_top, size_t size)
{
	char dir[PATH_MAX], probe[PATH_MAX + 8];
	size_t len = strlen(path);
	struct stat st;

	if (path[0] != '/')
		return -EINVAL;
	if (len >= sizeof(dir))
		return -ENAMETOOLONG;
	memcpy(dir, path, len + 1);
	while (len > 1 && dir[len - 1] == '/')
		dir[--len] = 0;
	for (;;) {
		snprintf(probe, sizeof(probe), "%s/.git", len == 1 ? "" : dir);
		/* Any .git counts: a directory, a gitfile (worktree, submodule)
		 * or a symlink to either; erring towards "inside" is safe. */
		if (lstat(probe, &st) == 0 &&
		    (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode) || S_ISLNK(st.st_mode))) {
			if (len >= size)
				return -ENAMETOOLONG;
			memcpy(ret_top, dir, len + 1);
			return 1;
		}
		if (len == 1)
			return 0;
		char *slash = strrchr(dir, '/');

		len = slash == dir ? 1 : (size_t)(slash - dir);
		dir[len] = 0;
	}
}

/* --- removal that never leaves the tree ------------------------------------ */

struct rm_ctx {
	dev_t dev;
	uint64_t mnt;
	bool have_mnt;
};

static int mount_id(int fd, uint64_t *ret)
{
	struct statx stx;

	if (statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &stx) < 0)
		return -errno;
	if (!(stx.stx_mask & STATX_MNT_ID))
		return -EOPNOTSUPP;
	*ret = stx.stx_mnt_id;
	return 0;
}

/* The directory behind fd is on the tree's filesystem and mount: a bind
 * mount of an outside directory has the same st_dev but another mount id. */
static int same_fs(int fd, const struct rm_ctx *c, struct stat *ret_st)
{
	uint64_t mnt;

	if (fstat(fd, ret_st) < 0)
		return -errno;
	if (!S_ISDIR(ret_st->st_mode))
		return -ENOTDIR;
	if (ret_st->st_dev != c->dev)
		return -EXDEV;
	if (c->have_mnt && (mount_id(fd, &mnt) < 0 || mnt != c->mnt))
		return -EXDEV;
	return 0;
}

/* Open directory NAME of dirfd for removing its entries: never through a
 * symlink (O_NOFOLLOW), never onto another filesystem or mount, and made
 * readable and writable by us (only after those checks). */
static int enter_dir(int dirfd, const char *name, const struct rm_ctx *c, int *ret_fd)
{
	_cleanup_close_ int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	int r;

	if (fd < 0 && errno == EACCES) {
		/* No read permission: look at it through an O_PATH descriptor,
		 * which needs none, check it, then chmod and reopen that very
		 * inode through its /proc magic link. */
		_cleanup_close_ int p = openat(dirfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		char proc[64];

		if (p < 0)
			return -errno;
		r = same_fs(p, c, &st);
		if (r < 0)
			return r;
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", p);
		if (chmod(proc, (st.st_mode & 07777) | 0700) < 0)
			return -errno;
		fd = open(proc, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	}
	if (fd < 0)
		return -errno;
	r = same_fs(fd, c, &st);
	if (r < 0)
		return r;
	if ((st.st_mode & 0700) != 0700 && fchmod(fd, (st.st_mode & 07777) | 0700) < 0)
		return -errno;
	*ret_fd = steal_fd(&fd);
	return 0;
}

static int remove_entry(int dirfd, const char *name, const struct rm_ctx *c, int depth);

/* Remove every entry of the directory fd (taken over and closed). */
static int remove_contents(int fd, const struct rm_ctx *c, int depth)
{
	DIR *d;
	int err = 0;

	if (depth > REMOVE_MAX_DEPTH) {
		close(fd);
		return -ELOOP;
	}
	d = fdopendir(fd);
	if (!d) {
		err = -errno;
		close(fd);
		return err;
	}
	/* Entries removed while reading may make readdir skip others:
	 * repeat until a pass finds the directory empty or changes nothing. */
	for (int pass = 0; pass < REMOVE_MAX_PASSES; pass++) {
		struct dirent *de;
		bool seen = false, progress = false;

		err = 0;
		rewinddir(d);
		while ((errno = 0, de = readdir(d))) {
			int r;

			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			seen = true;
			r = remove_entry(dirfd(d), de->d_name, c, depth);
			if (r == 0)
				progress = true;
			else if (!err)
				err = r;
		}
		if (errno && !err)
			err = -errno;
		if (!seen || !progress)
			break;
	}
	closedir(d);
	return err;
}

static int remove_entry(int dirfd, const char *name, const struct rm_ctx *c, int depth)
{
	struct stat st;
	int fd, r;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (S_ISDIR(st.st_mode)) {
		r = enter_dir(dirfd, name, c, &fd);
		if (r == -ENOTDIR || r == -ELOOP)
			goto unlink; /* replaced by a non-directory meanwhile */
		if (r < 0)
			return r;
		r = remove_contents(fd, c, depth + 1);
		if (r < 0)
			return r;
		if (unlinkat(dirfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
			return -errno;
		return 0;
	}
unlink:
	/* Files, sockets, fifos, devices and symlinks: the entry itself goes,
	 * whatever it points to stays. */
	if (unlinkat(dirfd, name, 0) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

int hm_remove_tree_at(int dirfd, const char *name, const struct stat *expect)
{
	_cleanup_close_ int p = openat(dirfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct rm_ctx c = {};
	struct stat st, st2;
	int fd, r;

	if (p < 0)
		return -errno;
	if (fstat(p, &st) < 0)
		return -errno;
	if (expect && (st.st_dev != expect->st_dev || st.st_ino != expect->st_ino))
		return -ESTALE;
	c.dev = st.st_dev;
	c.have_mnt = mount_id(p, &c.mnt) == 0;
	r = enter_dir(dirfd, name, &c, &fd);
	if (r < 0)
		return r;
	/* Still the directory we looked at (not swapped in between). */
	if (fstat(fd, &st2) < 0 || st2.st_ino != st.st_ino) {
		close(fd);
		return -ESTALE;
	}
	r = remove_contents(fd, &c, 1);
	if (r < 0)
		return r;
	if (unlinkat(dirfd, name, AT_REMOVEDIR) < 0)
		return -errno;
	return 0;
}
