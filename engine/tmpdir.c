// SPDX-License-Identifier: MIT
/* The private temporary directory (tmpdir.h): made 0700 under $TMPDIR,
 * removed at exit without following a symlink out of it. */
#include <fcntl.h>
#include "util.h"
#include "boundary.h"
#include "engine.h"
#include "tmpdir.h"

static struct run_tmpdir *registered[4];

static void remove_all(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(registered); i++)
		if (registered[i])
			run_tmpdir_remove(registered[i]);
}

int run_tmpdir_make(struct run_tmpdir *t, const char *prefix, const char *what,
		    struct eng_error *err)
{
	const char *tmp = getenv("TMPDIR");
	char parent[PATH_MAX];
	static bool hooked;
	size_t i;

	t->parent_fd = -1;
	t->made = t->keep = false;
	if (!tmp || tmp[0] != '/')
		tmp = "/tmp";
	if (!realpath(tmp, parent))
		return eng_fail(err, errno, "Failed to find the temporary directory '%s': %s", tmp,
				strerror(errno));
	if (snprintf(t->path, sizeof(t->path), "%s/%s-XXXXXX", parent, prefix) >=
	    (int)sizeof(t->path))
		return eng_fail(err, ENAMETOOLONG, "temporary directory path too long: %s", parent);
	/* mkdtemp makes it 0700, ours: what goes in holds secrets. */
	if (!mkdtemp(t->path))
		return eng_fail(err, errno, "Failed to create %s in '%s': %s", what, parent,
				strerror(errno));
	snprintf(t->name, sizeof(t->name), "%s", strrchr(t->path, '/') + 1);
	t->parent_fd = open(parent, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (t->parent_fd < 0 || fstatat(t->parent_fd, t->name, &t->st, AT_SYMLINK_NOFOLLOW) < 0) {
		int e = errno;

		if (t->parent_fd >= 0)
			close(t->parent_fd);
		t->parent_fd = -1;
		(void)rmdir(t->path); /* empty and ours; left behind if it fails */
		return eng_fail(err, e, "Failed to open '%s': %s", parent, strerror(e));
	}
	t->made = true;
	for (i = 0; i < ARRAY_SIZE(registered) && registered[i] && registered[i] != t; i++)
		;
	if (i < ARRAY_SIZE(registered))
		registered[i] = t;
	if (!hooked) {
		atexit(remove_all);
		hooked = true;
	}
	return 0;
}

void run_tmpdir_remove(struct run_tmpdir *t)
{
	if (!t->made || t->keep)
		return;
	t->made = false;
	int r = hm_remove_tree_at(t->parent_fd, t->name, &t->st);

	if (r < 0)
		eng_warn("could not remove '%s': %s", t->path, strerror(-r));
	if (t->parent_fd >= 0)
		close(t->parent_fd);
	t->parent_fd = -1;
}
