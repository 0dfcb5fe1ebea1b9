// SPDX-License-Identifier: MIT
/* The pure parts of a run's boundary: option values, the --scrub-env
 * allowlist, git working tree detection, and removal that never leaves the
 * tree (run against real temporary trees with symlinks, read-only
 * directories and, as root, a bind mount). */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "boundary.h"
#include "util.h"
#include "test.h"

static char base[64];

/* Path under the test's temporary directory. */
static const char *P(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static const char *P(const char *fmt, ...)
{
	static char bufs[4][4096];
	static int i;
	char rel[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rel, sizeof(rel), fmt, ap);
	va_end(ap);
	i = (i + 1) % 4;
	snprintf(bufs[i], sizeof(bufs[i]), "%s/%s", base, rel);
	return bufs[i];
}

static bool exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

static void touch(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

	if (fd >= 0)
		close(fd);
}

static void test_options(void)
{
	struct hm_boundary b;
	const char *why;

	hm_boundary_init(&b);
	CHECK("defaults: no isolation, kill stragglers",
	      b.fs == HM_FS_NONE && b.stragglers == HM_STRAGGLERS_KILL && !b.scrub_env);
	CHECK("fs isolate", !hm_boundary_set(&b, "fs", "isolate", &why) && b.fs == HM_FS_ISOLATE);
	CHECK("fs bad value refused", hm_boundary_set(&b, "fs", "tmpfs", &why) == -EINVAL);
	CHECK("stragglers keep",
	      !hm_boundary_set(&b, "stragglers", "keep", &why) && b.stragglers == HM_STRAGGLERS_KEEP);
	CHECK("stragglers bad value refused", hm_boundary_set(&b, "stragglers", "maybe", &why) == -EINVAL);
	CHECK("env KEY=VALUE", !hm_boundary_set(&b, "env", "A=b=c", &why) && b.n_env_ops == 1 &&
				       !strcmp(b.env_ops[0].name, "A") &&
				       !strcmp(b.env_ops[0].value, "b=c"));
	CHECK("env empty value", !hm_boundary_set(&b, "env", "E=", &why) && !strcmp(b.env_ops[1].value, ""));
	CHECK("env without = refused", hm_boundary_set(&b, "env", "A", &why) == -EINVAL);
	CHECK("env without name refused", hm_boundary_set(&b, "env", "=x", &why) == -EINVAL);
	CHECK("env HERMETIC_* refused", hm_boundary_set(&b, "env", "HERMETIC_SEED=1", &why) == -EINVAL);
	CHECK("unset", !hm_boundary_set(&b, "unset", "A", &why) && b.n_env_ops == 3 &&
			       !b.env_ops[2].value);
	CHECK("unset with = refused", hm_boundary_set(&b, "unset", "A=1", &why) == -EINVAL);
	CHECK("unset HERMETIC_* refused", hm_boundary_set(&b, "unset", "HERMETIC_RUN", &why) == -EINVAL);
	CHECK("keep-env glob", !hm_boundary_set(&b, "keep-env", "CI_*", &why) && b.n_keep_env == 1);
	CHECK("keep-env empty refused", hm_boundary_set(&b, "keep-env", "", &why) == -EINVAL);
	CHECK("keep-env without scrub-env refused", hm_boundary_check(&b, &why) == -EINVAL);
	CHECK("scrub-env", !hm_boundary_set(&b, "scrub-env", NULL, &why) && b.scrub_env &&
				   !hm_boundary_check(&b, &why));
	CHECK("temp-parent", !hm_boundary_set(&b, "temp-parent", "/x", &why) &&
				     !strcmp(b.temp_parent, "/x"));
	CHECK("unknown option", hm_boundary_set(&b, "color", "x", &why) == -ENOENT);
	b.fs = HM_FS_NONE;
	CHECK("temp-parent without isolate refused", hm_boundary_check(&b, &why) == -EINVAL);
	hm_boundary_free(&b);
	CHECK("free resets", b.n_env_ops == 0 && !b.temp_parent && !b.keep_env);
	hm_boundary_set(&b, "keep-root", NULL, &why);
	CHECK("keep-root without isolate refused", hm_boundary_check(&b, &why) == -EINVAL);
	hm_boundary_free(&b);
}

static void test_env(void)
{
	char *globs[] = { "CI_*", "MY_VAR" };

	CHECK("scrub keeps PATH", hm_env_keep("PATH", NULL, 0));
	CHECK("scrub keeps LC_ALL via LC_*", hm_env_keep("LC_ALL", NULL, 0));
	CHECK("scrub keeps the allowlist",
	      hm_env_keep("LANG", NULL, 0) && hm_env_keep("TZ", NULL, 0) && hm_env_keep("TERM", NULL, 0) &&
		      hm_env_keep("USER", NULL, 0) && hm_env_keep("LOGNAME", NULL, 0) &&
		      hm_env_keep("SHELL", NULL, 0));
	CHECK("scrub drops HOME", !hm_env_keep("HOME", NULL, 0));
	CHECK("scrub drops AWS_SECRET_ACCESS_KEY", !hm_env_keep("AWS_SECRET_ACCESS_KEY", NULL, 0));
	CHECK("scrub is case-sensitive", !hm_env_keep("path", NULL, 0));
	CHECK("scrub drops PATHX (whole-name match)", !hm_env_keep("PATHX", NULL, 0));
	CHECK("scrub drops LANGUAGE", !hm_env_keep("LANGUAGE", NULL, 0));
	CHECK("keep-env glob matches", hm_env_keep("CI_JOB_ID", globs, 2));
	CHECK("keep-env exact name", hm_env_keep("MY_VAR", globs, 2) && !hm_env_keep("MY_VAR2", globs, 2));
	CHECK("keep-env glob does not match others", !hm_env_keep("GITLAB_CI", globs, 2));
}

static void test_paths(void)
{
	char top[4096];

	CHECK("under: same", hm_path_under("/a/b", "/a/b"));
	CHECK("under: child", hm_path_under("/a/b/c", "/a/b"));
	CHECK("under: sibling prefix is not under", !hm_path_under("/a/bc", "/a/b"));
	CHECK("under: trailing slash", hm_path_under("/a/b/c", "/a/b/"));
	CHECK("under: root", hm_path_under("/x", "/"));

	CHECK("git: temp base is not in a tree (precondition)", hm_git_tree_find(base, top, sizeof(top)) == 0);
	mkdir(P("repo"), 0755);
	mkdir(P("repo/.git"), 0755);
	mkdir(P("repo/a"), 0755);
	mkdir(P("repo/a/b"), 0755);
	mkdir(P("repo/a/b/c"), 0755);
	mkdir(P("repo/a/b/c/d"), 0755);
	CHECK("git: found from 4 levels down",
	      hm_git_tree_find(P("repo/a/b/c/d"), top, sizeof(top)) == 1 && !strcmp(top, P("repo")));
	CHECK("git: found at the top itself",
	      hm_git_tree_find(P("repo"), top, sizeof(top)) == 1 && !strcmp(top, P("repo")));
	CHECK("git: trailing slash", hm_git_tree_find(P("repo/a/"), top, sizeof(top)) == 1 &&
					     !strcmp(top, P("repo")));
	mkdir(P("wt"), 0755);
	mkdir(P("wt/sub"), 0755);
	touch(P("wt/.git")); /* a linked worktree's gitfile */
	CHECK("git: gitfile counts",
	      hm_git_tree_find(P("wt/sub"), top, sizeof(top)) == 1 && !strcmp(top, P("wt")));
	mkdir(P("repo/a/inner"), 0755);
	mkdir(P("repo/a/inner/.git"), 0755);
	mkdir(P("repo/a/inner/x"), 0755);
	CHECK("git: the nearest tree is named", hm_git_tree_find(P("repo/a/inner/x"), top, sizeof(top)) == 1 &&
							 !strcmp(top, P("repo/a/inner")));
	mkdir(P("plain"), 0755);
	CHECK("git: plain directory is in no tree", hm_git_tree_find(P("plain"), top, sizeof(top)) == 0);
	CHECK("git: relative path refused", hm_git_tree_find("repo/a", top, sizeof(top)) == -EINVAL);
	CHECK("git: small buffer", hm_git_tree_find(P("repo/a"), top, 4) == -ENAMETOOLONG);
}

/* A tree with everything removal must not follow or must handle. */
static void build_tree(const char *r, const char *outside)
{
	char path[4096];

	mkdir(r, 0700);
	snprintf(path, sizeof(path), "%s/f", r);
	touch(path);
	snprintf(path, sizeof(path), "%s/d", r);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/d/g", r);
	touch(path);
	snprintf(path, sizeof(path), "%s/to-dir", r);
	symlink(outside, path);
	snprintf(path, sizeof(path), "%s/d/to-file", r);
	{
		char target[4096];

		snprintf(target, sizeof(target), "%s/keep", outside);
		symlink(target, path);
	}
	snprintf(path, sizeof(path), "%s/d/dangling", r);
	symlink("/nonexistent/x", path);
	snprintf(path, sizeof(path), "%s/fifo", r);
	mkfifo(path, 0600);
	/* Read-only directories, as in Go's module cache. */
	snprintf(path, sizeof(path), "%s/ro", r);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/ro/x", r);
	touch(path);
	snprintf(path, sizeof(path), "%s/ro/locked", r);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/ro/locked/y", r);
	touch(path);
	chmod(path, 0);
	snprintf(path, sizeof(path), "%s/ro/locked", r);
	chmod(path, 0);
	snprintf(path, sizeof(path), "%s/ro", r);
	chmod(path, 0555);
	/* Deep enough to matter, shallow enough for the depth limit. */
	snprintf(path, sizeof(path), "%s/deep", r);
	for (int i = 0; i < 100; i++) {
		mkdir(path, 0755);
		strcat(path, "/d");
	}
}

static void test_remove(void)
{
	char out[4096];
	_cleanup_close_ int bfd = open(base, O_PATH | O_DIRECTORY | O_CLOEXEC);
	struct stat st, other;
	int r;

	snprintf(out, sizeof(out), "%s", P("outside"));
	mkdir(out, 0755);
	mkdir(P("outside/sub"), 0755);
	touch(P("outside/keep"));
	touch(P("outside/sub/keep2"));

	build_tree(P("root"), out);
	CHECK("remove: tree built", exists(P("root/to-dir/keep")) && exists(P("root/ro/locked")) &&
					    exists(P("root/deep/d/d/d")));
	lstat(P("root"), &st);
	stat(P("outside"), &other);
	CHECK("remove: another directory is refused (expect)",
	      hm_remove_tree_at(bfd, "root", &other) == -ESTALE && exists(P("root/f")));
	r = hm_remove_tree_at(bfd, "root", &st);
	CHECK("remove: whole tree removed", r == 0 && !exists(P("root")));
	CHECK("remove: symlinked directory's contents survive",
	      exists(P("outside/keep")) && exists(P("outside/sub/keep2")));
	CHECK("remove: symlinked file survives", exists(P("outside/keep")));

	/* The root itself given as a symlink: refused, nothing removed. */
	symlink(out, P("rootlink"));
	r = hm_remove_tree_at(bfd, "rootlink", NULL);
	CHECK("remove: a symlink as root is refused",
	      r < 0 && exists(P("rootlink")) && exists(P("outside/keep")) && exists(P("outside/sub/keep2")));
	unlink(P("rootlink"));
	CHECK("remove: missing root is ENOENT", hm_remove_tree_at(bfd, "nothing", NULL) == -ENOENT);

	/* As a user without privileges, read-only directories must be made
	 * writable first (root would not notice). */
	if (geteuid() == 0) {
		pid_t pid;
		int status;

		mkdir(P("user"), 0755);
		chown(P("user"), 65534, 65534);
		pid = fork();
		if (pid == 0) {
			if (setgid(65534) < 0 || setuid(65534) < 0)
				_exit(3);
			build_tree(P("user/root"), out);
			if (!exists(P("user/root/ro/locked")))
				_exit(4);
			_exit(hm_remove_tree_at(bfd, "user/root", NULL) == 0 ? 0 : 1);
		}
		waitpid(pid, &status, 0);
		CHECK("remove: read-only and unreadable directories, as an unprivileged user",
		      WIFEXITED(status) && WEXITSTATUS(status) == 0 && !exists(P("user/root")) &&
			      exists(P("outside/keep")));
	} else {
		build_tree(P("user"), out);
		CHECK("remove: read-only and unreadable directories, unprivileged",
		      hm_remove_tree_at(bfd, "user", NULL) == 0 && !exists(P("user")));
	}

	/* A bind mount of an outside directory inside the root: same st_dev,
	 * another mount; it must not be entered. */
	mkdir(P("broot"), 0700);
	mkdir(P("broot/mnt"), 0755);
	touch(P("broot/file"));
	if (mount(out, P("broot/mnt"), NULL, MS_BIND, NULL) == 0) {
		r = hm_remove_tree_at(bfd, "broot", NULL);
		CHECK("remove: a bind mount inside is not entered",
		      r == -EXDEV && exists(P("outside/keep")) && exists(P("outside/sub/keep2")) &&
			      exists(P("broot/mnt/keep")) && !exists(P("broot/file")));
		umount2(P("broot/mnt"), MNT_DETACH);
		CHECK("remove: after unmounting, removal completes",
		      hm_remove_tree_at(bfd, "broot", NULL) == 0 && !exists(P("broot")) &&
			      exists(P("outside/keep")));
	} else {
		printf("SKIP remove: a bind mount inside is not entered: mount: %s (needs root)\n",
		       strerror(errno));
	}
}

static void cleanup(void)
{
	char cmd[256];

	/* The test's own scratch directory (made by mkdtemp below). */
	snprintf(cmd, sizeof(cmd), "chmod -R u+rwx '%s' 2>/dev/null; rm -rf '%s'", base, base);
	if (system(cmd) != 0) {
		/* best effort */
	}
}

int main(void)
{
	snprintf(base, sizeof(base), "/tmp/hmut-boundary-XXXXXX");
	if (!mkdtemp(base)) {
		printf("FAIL mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	chmod(base, 0755);
	atexit(cleanup);
	test_options();
	test_env();
	test_paths();
	test_remove();
	T_EXIT();
}
