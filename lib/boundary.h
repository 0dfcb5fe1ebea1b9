/* SPDX-License-Identifier: MIT */
/*
 * A run's boundary: the disposable filesystem root and the environment the
 * command starts with. The options live in one struct (struct hm_boundary) so
 * that a journal can carry them and replay can honour them; the pure parts
 * (option values, the --scrub-env allowlist, git working tree detection,
 * removal of a tree that never leaves it) are here so unit tests link them.
 * libc only, no logging: this file is linked into the preload shim too.
 */
#ifndef HERMETIC_BOUNDARY_H
#define HERMETIC_BOUNDARY_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

enum hm_fs { HM_FS_NONE, HM_FS_ISOLATE };
enum hm_stragglers { HM_STRAGGLERS_KILL, HM_STRAGGLERS_KEEP };

/* One --env KEY=VALUE (value set) or --unset KEY (value NULL). */
struct hm_env_op {
	char *name;
	char *value;
};

struct hm_boundary {
	enum hm_fs fs;
	char *temp_parent; /* NULL: $TMPDIR, else /tmp */
	bool no_chdir;
	bool scrub_env;
	char **keep_env; /* --keep-env globs, in order */
	size_t n_keep_env;
	struct hm_env_op *env_ops; /* --env and --unset, in command-line order */
	size_t n_env_ops;
	bool print_boundary;
	enum hm_stragglers stragglers;
	bool keep_root;
};

void hm_boundary_init(struct hm_boundary *b);
void hm_boundary_free(struct hm_boundary *b);

/* Parse one option into b. name is the long option without dashes: "fs",
 * "temp-parent", "no-chdir", "env", "unset", "scrub-env", "keep-env",
 * "print-boundary", "stragglers", "keep-root"; value is NULL for flags.
 * Returns 0, -ENOENT for an unknown name, -EINVAL for a bad value (with
 * *ret_why saying what a valid one looks like), -ENOMEM. */
int hm_boundary_set(struct hm_boundary *b, const char *name, const char *value,
		    const char **ret_why);

/* Whether the options hang together; on -EINVAL *ret_why says why
 * ("--keep-env needs --scrub-env", ...). */
int hm_boundary_check(const struct hm_boundary *b, const char **ret_why);

/* The variables --scrub-env keeps, as fnmatch(3) patterns, NULL-terminated:
 * PATH, LANG, LC_*, TZ, TERM, USER, LOGNAME, SHELL. */
extern const char *const hm_env_safe[];

/* Whether variable NAME survives --scrub-env: it matches hm_env_safe or one
 * of the n globs (fnmatch(3), case-sensitive). */
bool hm_env_keep(const char *name, char *const *globs, size_t n);

/* Whether PATH is DIR or lies beneath it (both absolute and canonical). */
bool hm_path_under(const char *path, const char *dir);

/* The git working tree containing PATH (absolute and canonical): walk up
 * from PATH to / looking for a ".git" entry, a directory or a file (linked
 * worktrees, submodules) or a symlink. On success the tree's top directory
 * is copied to ret_top. Returns 1 found, 0 none, -ENAMETOOLONG, -EINVAL. */
int hm_git_tree_find(const char *path, char *ret_top, size_t size);

/* Remove directory NAME of dirfd with everything beneath it, never leaving
 * it: every directory is entered only by openat(O_NOFOLLOW|O_DIRECTORY) from
 * its parent's descriptor, so a symlink is removed, never followed; a
 * directory on another filesystem or mount is not entered (-EXDEV) and
 * stays. Directories without write permission are made writable first (Go's
 * module cache is read-only). When expect is not NULL, NAME must still be
 * that directory (st_dev, st_ino), else -ESTALE. Everything removable is
 * removed; returns 0 or the first -errno. */
int hm_remove_tree_at(int dirfd, const char *name, const struct stat *expect);

#endif
