// SPDX-License-Identifier: MIT
/*
 * enroll --record=DIR: DIR/index.json, the list of the journals DIR holds
 * (for 'hermetic journals list --dir DIR'), rewritten atomically under a
 * lock of DIR as each journal is added, rebuilt from the journals
 * themselves when it is missing or unreadable.
 */
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <limits.h>
#include <sys/file.h>
#include <sys/stat.h>
#include "util.h"
#include "enroll.h"
#include "record.h"
#include "record_int.h"

/* "ls -l"-style quoting is not needed: the command for lists and indexes. */
void record_command_line(const struct enroll *e, char *buf, size_t size)
{
	size_t used = 0;

	buf[0] = 0;
	for (char *const *a = e->argv; *a && used < size; a++)
		used += snprintf(buf + used, size - used, "%s%s", a == e->argv ? "" : " ", *a);
}

static json_object *index_entry(const char *file, uint64_t run_id, const char *command,
				int status, uint64_t seed, int64_t started_ns, const char *scope)
{
	json_object *o = json_object_new_object();
	char t[64];

	if (scope)
		json_object_object_add(o, "scope", json_object_new_string(scope));

	json_object_object_add(o, "file", json_object_new_string(file));
	json_object_object_add(o, "run_id", json_object_new_uint64(run_id));
	json_object_object_add(o, "command", json_object_new_string(command));
	json_object_object_add(o, "exit_status", json_object_new_int(status));
	json_object_object_add(o, "seed", json_object_new_uint64(seed));
	json_object_object_add(o, "time", json_object_new_string(hm_format_time(started_ns, t,
										 sizeof(t))));
	return o;
}

/* A missing or unreadable index is rebuilt from the journals in DIR. */
static json_object *index_rebuild(int dfd, const char *dir)
{
	json_object *arr = json_object_new_array();
	int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return arr;
	}
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name), sl = strlen(HM_JOURNAL_SUFFIX);
		struct hm_journal *j = NULL;
		char path[PATH_MAX * 2], cmd[HM_JOURNAL_COMMAND_MAX * 4] = "", err[256];
		size_t used = 0;

		if (de->d_name[0] == '.' || len <= sl ||
		    strcmp(de->d_name + len - sl, HM_JOURNAL_SUFFIX))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (hm_journal_read_file(path, 0, &j, err, sizeof(err)) < 0)
			continue;
		for (size_t i = 0; i < j->config.argc && used < sizeof(cmd); i++)
			used += snprintf(cmd + used, sizeof(cmd) - used, "%s%s", i ? " " : "",
					 j->config.argv[i]);
		json_object_array_add(arr, index_entry(de->d_name, j->config.run_id, cmd,
						       j->has_exit ? j->exit.status : -1,
						       j->config.cfg.seed, j->config.started_ns,
						       j->n_scopes == 1 ? j->scopes[0].name : NULL));
		hm_journal_free(j);
	}
	closedir(d);
	return arr;
}

/* DIR/index.json: add the journal, rewrite atomically. Concurrent
 * recordings into one DIR serialise on a lock of the directory. */
int record_index_update(struct enroll *e, const char *name, const char *scope)
{
	struct record *r = e->rec;
	_cleanup_close_ int dfd = open(r->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	json_object *arr = NULL, *kept;
	char path[PATH_MAX + 64], tmp[PATH_MAX + 64], cmd[4096];
	const char *text;
	int fd, k = 0;
	size_t len;

	if (dfd < 0)
		return -errno;
	if (flock(dfd, LOCK_EX) < 0)
		return -errno;
	snprintf(path, sizeof(path), "%s/" INDEX_NAME, r->dir);
	arr = json_object_from_file(path);
	if (!arr || !json_object_is_type(arr, json_type_array)) {
		struct stat st;

		if (arr || fstatat(dfd, INDEX_NAME, &st, AT_SYMLINK_NOFOLLOW) == 0)
			eng_warn("%s was unreadable; rebuilt it from the journals in %s", path, r->dir);
		json_object_put(arr);
		arr = index_rebuild(dfd, r->dir);
	}
	/* Drop an older entry for the same file, and entries that are no object. */
	kept = json_object_new_array();
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		json_object *o = json_object_array_get_idx(arr, i), *f;

		if (!json_object_is_type(o, json_type_object) ||
		    (json_object_object_get_ex(o, "file", &f) &&
		     !strcmp(json_object_get_string(f) ?: "", name)))
			continue;
		json_object_array_add(kept, json_object_get(o));
	}
	json_object_put(arr);
	record_command_line(e, cmd, sizeof(cmd));
	json_object_array_add(kept, index_entry(name, e->no_daemon ? 0 : e->run.run_id, cmd, r->code,
						e->cfg.seed, e->started_ns, scope));
	text = json_object_to_json_string_ext(kept, JSON_C_TO_STRING_PRETTY |
							    JSON_C_TO_STRING_NOSLASHESCAPE);
	len = strlen(text);
	snprintf(tmp, sizeof(tmp), "%s/.index.json.XXXXXX", r->dir);
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		k = -errno;
		goto out;
	}
	if (fchmod(fd, 0600) < 0 || write(fd, text, len) != (ssize_t)len ||
	    write(fd, "\n", 1) != 1 || fsync(fd) < 0 || rename(tmp, path) < 0) {
		k = -errno ?: -EIO;
		unlink(tmp);
	}
	close(fd);
	fsync(dfd);
out:
	json_object_put(kept);
	return k;
}

