// SPDX-License-Identifier: MIT
/*
 * The disposable filesystem root and CMD's environment (--fs isolate,
 * --env, --unset, --scrub-env, --keep-env, --print-boundary, --keep-root).
 *
 * Everything here happens in enroll itself before CMD is started, so the
 * boundary holds from CMD's first instruction. The root is removed only once
 * the run's cgroup is proven empty, through hm_remove_tree_at(), which never
 * follows a symlink out of the root nor enters another mount.
 */
#include <fcntl.h>
#include <json-c/json.h>
#include "util.h"
#include "engine.h"
#include "boundary.h"
#include "isolate.h"

extern char **environ;

/* Where --fs isolate points each variable, relative to the root. HOME holds
 * the XDG directories at their default places, so tools that ignore the
 * XDG variables land in the same directories. */
static const struct {
	const char *name;
	const char *sub;
} isolate_vars[] = {
	{ "HOME", "home" },
	{ "TMPDIR", "tmp" },
	{ "XDG_CONFIG_HOME", "home/.config" },
	{ "XDG_CACHE_HOME", "home/.cache" },
	{ "XDG_DATA_HOME", "home/.local/share" },
	{ "XDG_STATE_HOME", "home/.local/state" },
	{ "XDG_RUNTIME_DIR", "run" },
	/* Caches and configuration that an outer environment may pin
	 * elsewhere, or that do not follow HOME/XDG. */
	{ "PYTHONPYCACHEPREFIX", "home/.cache/pycache" },
	{ "PYTHONUSERBASE", "home/.local" },
	{ "PIP_CACHE_DIR", "home/.cache/pip" },
	{ "npm_config_cache", "home/.npm" },
	{ "GOPATH", "home/go" },
	{ "GOMODCACHE", "home/go/pkg/mod" },
	{ "GOCACHE", "home/.cache/go-build" },
	{ "CARGO_HOME", "home/.cargo" },
	{ "GRADLE_USER_HOME", "home/.gradle" },
	{ "GIT_CONFIG_GLOBAL", "home/.gitconfig" },
};

/* Made at creation; the cache directories above are left to their tools. */
static const char *const root_dirs[] = {
	"home", "tmp", "run", "work", "home/.config", "home/.cache", "home/.local",
	"home/.local/share", "home/.local/state",
};

/* Maven takes its repository from a system property (Java's user.home
 * comes from the password database, not HOME). */
#define MAVEN_REPO_SUB "home/.m2/repository"

static struct boundary *at_exit_boundary;

void boundary_init(struct boundary *b)
{
	*b = (struct boundary){ .parent_fd = -1, .cwd_fd = -1 };
	hm_boundary_init(&b->opt);
}

int boundary_validate(struct boundary *b, char *msg, size_t size)
{
	const char *why, *given = b->opt.temp_parent, *what = "--temp-parent";
	char top[PATH_MAX], cwd[PATH_MAX];
	struct stat st;

	if (hm_boundary_check(&b->opt, &why) < 0) {
		snprintf(msg, size, "%s", why);
		return -EINVAL;
	}
	if (b->opt.fs != HM_FS_ISOLATE)
		return 0;
	if (!given) {
		given = getenv("TMPDIR");
		what = "the temp parent ($TMPDIR)";
		if (!given || !*given) {
			given = "/tmp";
			what = "the temp parent";
		}
	}
	if (!realpath(given, b->parent) || stat(b->parent, &st) < 0) {
		snprintf(msg, size, "%s %s: %s", what, given, strerror(errno));
		return -EINVAL;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(msg, size, "%s %s: not a directory", what, given);
		return -EINVAL;
	}
	/* A tool started in the root walks up looking for a checkout; it must
	 * find none, least of all ours. */
	if (getcwd(cwd, sizeof(cwd)) && hm_git_tree_find(cwd, top, sizeof(top)) == 1 &&
	    hm_path_under(b->parent, top)) {
		snprintf(msg, size,
			 "%s %s lies inside the current repository %s: a tool in the run would\n"
			 "  walk up into it; choose a directory outside any git working tree",
			 what, given, top);
		return -EINVAL;
	}
	if (hm_git_tree_find(b->parent, top, sizeof(top)) == 1) {
		snprintf(msg, size,
			 "%s %s lies inside the git working tree %s: a tool in the run would\n"
			 "  walk up into it; choose a directory outside any git working tree",
			 what, given, top);
		return -EINVAL;
	}
	given = getenv("GIT_WORK_TREE");
	if (given && *given && realpath(given, top) && hm_path_under(b->parent, top)) {
		snprintf(msg, size, "%s %s lies inside $GIT_WORK_TREE %s", what, b->parent, top);
		return -EINVAL;
	}
	return 0;
}

static void at_exit(void)
{
	struct boundary *b = at_exit_boundary;

	/* enroll is dying before the end of the run. Before CMD ran nothing
	 * can be using the root; after, nothing proves it unused. */
	if (b && b->root[0] && !b->finished)
		boundary_finish(b, !b->started);
}

static int out_of_memory(struct eng_error *err)
{
	return eng_fail(err, ENOMEM, "out of memory");
}

static int add_explicit(struct boundary *b, const char *name, struct eng_error *err)
{
	char **e = realloc(b->explicit, (b->n_explicit + 1) * sizeof(*e));

	if (!e)
		return out_of_memory(err);
	b->explicit = e;
	if (!(e[b->n_explicit] = strdup(name)))
		return out_of_memory(err);
	b->n_explicit++;
	return 0;
}

static int set_var(struct boundary *b, const char *name, const char *value, struct eng_error *err)
{
	if (setenv(name, value, 1) < 0)
		return eng_fail(err, errno, "Failed to set %s: %s", name, strerror(errno));
	return add_explicit(b, name, err);
}

static int make_root(struct boundary *b, struct eng_error *err)
{
	char tmpl[PATH_MAX];
	_cleanup_close_ int fd = -1;
	int n;

	n = snprintf(tmpl, sizeof(tmpl), "%s/hm-XXXXXX", strcmp(b->parent, "/") ? b->parent : "");
	if (n < 0 || (size_t)n >= sizeof(tmpl) - 64)
		return eng_fail(err, EINVAL, "temp parent '%s': path too long", b->parent);
	/* mkdtemp: a fresh name, mode 0700, owned by us. */
	if (!mkdtemp(tmpl))
		return eng_fail(err, errno, "Failed to create a root in '%s': %s", b->parent,
				strerror(errno));
	snprintf(b->root, sizeof(b->root), "%s", tmpl);
	snprintf(b->name, sizeof(b->name), "%s", strrchr(tmpl, '/') + 1);
	at_exit_boundary = b;
	atexit(at_exit);
	b->parent_fd = open(b->parent, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (b->parent_fd < 0)
		return eng_fail(err, errno, "Failed to open '%s': %s", b->parent, strerror(errno));
	fd = openat(b->parent_fd, b->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &b->root_st) < 0)
		return eng_fail(err, errno, "Failed to open '%s': %s", b->root, strerror(errno));
	for (size_t i = 0; i < ARRAY_SIZE(root_dirs); i++)
		if (mkdirat(fd, root_dirs[i], 0700) < 0)
			return eng_fail(err, errno, "Failed to create '%s/%s': %s", b->root,
					root_dirs[i], strerror(errno));
	/* sun_path holds 107 bytes: leave room for sockets beneath the root. */
	if (strlen(b->root) > 60)
		eng_warn("the root '%s' has a long path: unix socket paths beneath it may not fit "
			 "(107 bytes); pass a shorter --temp-parent",
			 b->root);
	return 0;
}

static int snapshot_env(struct boundary *b, struct eng_error *err)
{
	size_t n = 0;

	while (environ[n])
		n++;
	b->env_before = calloc(n + 1, sizeof(char *));
	if (!b->env_before)
		return out_of_memory(err);
	for (size_t i = 0; i < n; i++)
		if (!(b->env_before[i] = strdup(environ[i])))
			return out_of_memory(err);
	return 0;
}

static int scrub_env(struct boundary *b, struct eng_error *err)
{
	size_t n = 0;
	char **names;
	int r = 0;

	/* Collect first: unsetenv() rearranges environ. */
	while (environ[n])
		n++;
	names = calloc(n + 1, sizeof(char *));
	if (!names)
		return out_of_memory(err);
	for (size_t i = 0; i < n && r == 0; i++) {
		const char *eq = strchr(environ[i], '=');

		if (eq && !(names[i] = strndup(environ[i], eq - environ[i])))
			r = out_of_memory(err);
	}
	for (size_t i = 0; i < n; i++) {
		if (r == 0 && names[i] &&
		    !hm_env_keep(names[i], b->opt.keep_env, b->opt.n_keep_env))
			(void)unsetenv(names[i]); /* a name taken from environ: valid */
		free(names[i]);
	}
	free(names);
	return r;
}

static int isolate_env(struct boundary *b, struct eng_error *err)
{
	char path[PATH_MAX + 64];
	const char *old;
	_cleanup_free_ char *maven = NULL;
	int r;

	for (size_t i = 0; i < ARRAY_SIZE(isolate_vars); i++) {
		snprintf(path, sizeof(path), "%s/%s", b->root, isolate_vars[i].sub);
		if ((r = set_var(b, isolate_vars[i].name, path, err)) < 0)
			return r;
	}
	old = getenv("MAVEN_OPTS");
	if (asprintf(&maven, "%s%s-Dmaven.repo.local=%s/%s", old && *old ? old : "",
		     old && *old ? " " : "", b->root, MAVEN_REPO_SUB) < 0) {
		maven = NULL; /* asprintf leaves it undefined on failure */
		return out_of_memory(err);
	}
	return set_var(b, "MAVEN_OPTS", maven, err);
}

/* CMD's working directory under the root; CMD named by a relative path
 * means the one here, not one in the root (its arguments stay as given). */
static int root_work(struct boundary *b, char *const *argv, struct eng_error *err)
{
	char cwd[PATH_MAX];

	if (b->opt.no_chdir) {
		if (!getcwd(b->work, sizeof(b->work)))
			b->work[0] = 0;
		return 0;
	}
	/* make_root left room: the root is 64 bytes shorter than PATH_MAX. */
	if (snprintf(b->work, sizeof(b->work), "%s/work", b->root) >= (int)sizeof(b->work))
		return eng_fail(err, ENAMETOOLONG, "'%s/work': path too long", b->root);
	if (strchr(argv[0], '/') && argv[0][0] != '/' &&
	    (!getcwd(cwd, sizeof(cwd)) || asprintf(&b->exec_file, "%s/%s", cwd, argv[0]) < 0))
		return eng_fail(err, errno, "Failed to resolve '%s': %s", argv[0], strerror(errno));
	return 0;
}

int boundary_setup(struct boundary *b, char *const *argv, struct eng_error *err)
{
	int r;

	b->exec_file = argv[0];
	if ((r = snapshot_env(b, err)) < 0)
		return r;
	if (b->opt.fs == HM_FS_ISOLATE &&
	    ((r = make_root(b, err)) < 0 || (r = root_work(b, argv, err)) < 0))
		return r;
	if (b->opt.scrub_env && (r = scrub_env(b, err)) < 0)
		return r;
	if (b->opt.fs == HM_FS_ISOLATE) {
		if ((r = isolate_env(b, err)) < 0)
			return r;
		if (!b->opt.no_chdir && (r = set_var(b, "PWD", b->work, err)) < 0)
			return r;
	}
	for (size_t i = 0; i < b->opt.n_env_ops; i++) {
		const struct hm_env_op *op = &b->opt.env_ops[i];

		if (op->value) {
			if ((r = set_var(b, op->name, op->value, err)) < 0)
				return r;
		} else {
			(void)unsetenv(op->name); /* a name the options checked */
		}
	}
	return 0;
}

static const char *env_value(char *const *env, const char *name, size_t len)
{
	for (; *env; env++)
		if (!strncmp(*env, name, len) && (*env)[len] == '=')
			return *env + len + 1;
	return NULL;
}

int boundary_json(struct boundary *b, char **ret, struct eng_error *err)
{
	json_object *o, *set, *unset;
	char cwd[PATH_MAX];

	*ret = NULL;
	o = json_object_new_object();
	set = json_object_new_object();
	unset = json_object_new_array();
	if (!o || !set || !unset) {
		json_object_put(o);
		json_object_put(set);
		json_object_put(unset);
		return out_of_memory(err);
	}
	json_object_object_add(o, "root", b->root[0] ? json_object_new_string(b->root) : NULL);
	if (b->work[0])
		json_object_object_add(o, "cwd", json_object_new_string(b->work));
	else
		json_object_object_add(o, "cwd", getcwd(cwd, sizeof(cwd)) ? json_object_new_string(cwd)
									  : NULL);
	/* Every variable whose value is not what enroll started with, and
	 * every one set explicitly; values of removed ones are not shown. */
	for (char **e = environ; *e; e++) {
		const char *eq = strchr(*e, '='), *before;
		char name[256];
		bool explicit = false;

		if (!eq || (size_t)(eq - *e) >= sizeof(name))
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)(eq - *e), *e);
		for (size_t i = 0; i < b->n_explicit && !explicit; i++)
			explicit = !strcmp(b->explicit[i], name);
		before = env_value(b->env_before, *e, eq - *e);
		if (explicit || !before || strcmp(before, eq + 1))
			json_object_object_add(set, name, json_object_new_string(eq + 1));
	}
	for (char **e = b->env_before; *e; e++) {
		const char *eq = strchr(*e, '=');

		if (eq && !env_value(environ, *e, eq - *e))
			json_object_array_add(unset, json_object_new_string_len(*e, eq - *e));
	}
	json_object_object_add(o, "set", set);
	json_object_object_add(o, "unset", unset);
	json_object_object_add(o, "stragglers",
			       json_object_new_string(b->opt.stragglers == HM_STRAGGLERS_KEEP ? "keep"
											 : "kill"));
	*ret = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
								 JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
	return *ret ? 0 : out_of_memory(err);
}

int boundary_enter(struct boundary *b, struct eng_error *err)
{
	if (!b->root[0] || b->opt.no_chdir)
		return 0;
	b->cwd_fd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (chdir(b->work) < 0)
		return eng_fail(err, errno, "Failed to enter '%s': %s", b->work, strerror(errno));
	return 0;
}

void boundary_leave(struct boundary *b)
{
	/* Only for tidiness: if enroll's old directory is gone, stay. */
	if (b->cwd_fd >= 0 && fchdir(b->cwd_fd) == 0) {
		close(b->cwd_fd);
		b->cwd_fd = -1;
	}
}

void boundary_finish(struct boundary *b, bool run_empty)
{
	int r;

	if (!b->root[0] || b->finished)
		return;
	b->finished = true;
	if (!b->opt.keep_root && run_empty) {
		r = hm_remove_tree_at(b->parent_fd, b->name, &b->root_st);
		if (r == 0)
			return;
		eng_warn("Failed to remove '%s': %s", b->root, strerror(-r));
	}
	/* One line a script can grep for, whatever the reason. */
	eng_warn("kept root: %s", b->root);
}
