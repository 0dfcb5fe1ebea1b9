// SPDX-License-Identifier: MIT
/*
 * enroll --record[=DIR] [--keep-passing]
 *
 * Every process of the run writes its threads' streams (lib/jstream.h) to a
 * private spool named by HERMETIC_RECORD. When the cgroup is empty, the
 * streams, the kernel's stream (hermeticd, HM_REQ_RUN_KSTREAM), the
 * configuration, the machine's fingerprint and the exit status become one
 * journal. It is written to DIR (0600, ours, temporary name then rename,
 * DIR/index.json updated) and handed to hermeticd's store before the run
 * ends. The spool is not inside the run's isolated root: that root may be
 * removed before the journal is assembled, and CMD can write to it.
 */
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <limits.h>
#include <linux/types.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include "util.h"
#include "cli.h"
#include "enroll.h"
#include "record.h"
#include "trust.h"
#include "tmpdir.h"
#include "hermetic/trace.h"

#define INDEX_NAME "index.json"
/* A kernel chunk stays well below a section's 4 GiB length limit. */
#define KCHUNK_BYTES (8u << 20)

extern char **environ;

struct record {
	struct run_tmpdir spool; /* spool.keep: no journal could be kept anywhere */
	char dir[PATH_MAX]; /* DIR, absolute; "" without one */
	char cwd[PATH_MAX]; /* enroll's working directory: the git commit */
	struct hm_journal_fingerprint fp;
	bool have_fp;
	/* the kernel's stream */
	int kfd;
	struct hm_kstream_hdr khdr;
	const uint8_t *krec;
	size_t kmap_len;
	void *kmap;
	/* assembly */
	int code;
	uint64_t streams, cut_bytes, cut_streams, bad_streams;
};

static int mkdir_p(const char *path, mode_t mode)
{
	char buf[PATH_MAX];
	char *p;

	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
		return -ENAMETOOLONG;
	for (p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(buf, mode) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, mode) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

void record_setup(struct enroll *e)
{
	struct record *r = calloc(1, sizeof(*r));
	char ledger[PATH_MAX];
	struct eng_error err;
	struct stat st;

	/* Where the ledger is, while HOME and XDG_STATE_HOME are still ours. */
	(void)trust_ledger_path(ledger, sizeof(ledger));

	if (!r)
		die(EXIT_INTERNAL, "out of memory");
	r->kfd = -1;
	if (!getcwd(r->cwd, sizeof(r->cwd)))
		r->cwd[0] = 0;
	if (e->record_dir) {
		int k = mkdir_p(e->record_dir, 0700);

		if (k < 0)
			die(EXIT_INTERNAL, "Failed to create journal directory '%s': %s", e->record_dir,
			    strerror(-k));
		if (!realpath(e->record_dir, r->dir) || stat(r->dir, &st) < 0 ||
		    !S_ISDIR(st.st_mode))
			die(EXIT_INTERNAL, "Failed to use journal directory '%s': %s", e->record_dir,
			    errno ? strerror(errno) : "not a directory");
		if (access(r->dir, W_OK | X_OK) < 0)
			die(EXIT_INTERNAL, "Failed to use journal directory '%s': %s", r->dir,
			    strerror(errno));
	}
	if (run_tmpdir_make(&r->spool, "hermetic-rec", "a recording spool", &err) < 0)
		die(EXIT_INTERNAL, "%s", err.msg);
	e->rec = r;
}

void record_export_env(struct enroll *e)
{
	setenv(HM_ENV_RECORD, e->rec->spool.path, 1);
}

void record_before_spawn(struct enroll *e)
{
	struct record *r = e->rec;

	if (hm_journal_fingerprint_collect(&r->fp, environ, r->cwd[0] ? r->cwd : NULL) < 0)
		die(EXIT_INTERNAL, "out of memory");
	r->have_fp = true;
}

void record_cleanup(struct enroll *e)
{
	struct record *r = e->rec;

	run_tmpdir_remove(&r->spool);
	if (r->kmap)
		munmap(r->kmap, r->kmap_len);
	r->kmap = NULL;
	if (r->kfd >= 0)
		close(r->kfd);
	r->kfd = -1;
	if (r->have_fp)
		hm_journal_fingerprint_done(&r->fp);
	r->have_fp = false;
}

/* The kernel's stream of the run, mapped. Failures are warnings: the
 * shim's values are worth keeping without it. */
static void fetch_kstream(struct enroll *e)
{
	struct record *r = e->rec;
	struct hm_run_ref ref = { .run_id = e->run.run_id };
	const char *msg = NULL;
	struct hm_kstream_hdr h;
	struct stat st;
	uint64_t need;
	ssize_t n;

	n = cli_call(e->sock, HM_REQ_RUN_KSTREAM, &ref, sizeof(ref), -1, HM_REP_KSTREAM, &r->khdr,
		     sizeof(r->khdr), true, &r->kfd, &msg);
	if (n < 0) {
		warnx_("cannot read the run's kernel stream: %s", msg);
		return;
	}
	if (r->kfd < 0) {
		warnx_("hermeticd sent no kernel stream");
		return;
	}
	/* The memfd is sealed; still, believe only what it holds. */
	if (pread(r->kfd, &h, sizeof(h), 0) != sizeof(h) || fstat(r->kfd, &st) < 0 ||
	    h.record_size == 0 || h.record_size > HM_JOURNAL_KREC_MAX ||
	    h.records > (UINT64_MAX - sizeof(h)) / h.record_size ||
	    (need = sizeof(h) + h.records * h.record_size) > (uint64_t)st.st_size) {
		warnx_("the run's kernel stream from hermeticd is malformed; not recorded");
		close(r->kfd);
		r->kfd = -1;
		return;
	}
	r->khdr = h;
	if (!h.records)
		return;
	r->kmap_len = need;
	r->kmap = mmap(NULL, need, PROT_READ, MAP_PRIVATE, r->kfd, 0);
	if (r->kmap == MAP_FAILED) {
		r->kmap = NULL;
		warnx_("cannot map the run's kernel stream: %s", strerror(errno));
		return;
	}
	r->krec = (const uint8_t *)r->kmap + sizeof(h);
}

/* Every stream file of one spool directory (dfd, which is taken):
 * "<lineage>.<thread>.<image>.hjs". */
int record_write_dir(struct enroll *e, struct hm_journal_writer *w, int dfd)
{
	struct record *r = e->rec;
	DIR *d;
	struct dirent *de;
	int ret = 0;

	if (dfd < 0)
		return -errno;
	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return -errno;
	}
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name), cut = 0;
		struct stat st;
		int fd, k;

		if (de->d_name[0] == '.' || len < 5 || strcmp(de->d_name + len - 4, ".hjs"))
			continue;
		fd = openat(dirfd(d), de->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
		if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
			r->bad_streams++;
			if (fd >= 0)
				close(fd);
			continue;
		}
		k = hm_journal_write_stream_fd(w, fd, &cut);
		close(fd);
		if (k == -EINVAL || k == -EFBIG) {
			/* No whole header (killed at once), or too big for a section. */
			r->bad_streams++;
			continue;
		}
		if (k < 0) {
			ret = k;
			break;
		}
		r->streams++;
		if (cut) {
			r->cut_streams++;
			r->cut_bytes += cut;
		}
	}
	closedir(d);
	return ret;
}

const char *record_spool(const struct enroll *e)
{
	return e->rec->spool.path;
}

const char *record_dir(const struct enroll *e)
{
	return e->rec->dir;
}

/* The journal of the run, or (only) of one scope of it. */
struct fill_ctx {
	struct enroll *e;
	const char *only; /* a scope's directory in the spool, or NULL */
};

static int fill(struct hm_journal_writer *w, void *userdata)
{
	struct fill_ctx *ctx = userdata;
	struct enroll *e = ctx->e;
	struct record *r = e->rec;
	_cleanup_free_ struct hm_journal_kv *opts = NULL;
	struct hm_journal_config c = {
		.cfg = e->cfg,
		.run_id = e->no_daemon ? 0 : e->run.run_id,
		.uid = getuid(),
		.started_ns = e->started_ns,
	};
	struct hm_journal_exit x = {
		.wall_ns = e->wall_ns,
		.stragglers = e->killed,
	};
	int k;

	r->streams = r->cut_bytes = r->cut_streams = r->bad_streams = 0;
	for (char **a = e->argv; *a; a++)
		c.argc++;
	c.argv = e->argv;
	opts = calloc(e->n_opts ? e->n_opts : 1, sizeof(*opts));
	if (!opts)
		return -ENOMEM;
	for (size_t i = 0; i < e->n_opts; i++)
		opts[i] = (struct hm_journal_kv){ (char *)e->opts[i].name, (char *)e->opts[i].value };
	c.n_opts = e->n_opts;
	c.opts = opts;
	if ((k = hm_journal_write_config(w, &c)) < 0)
		return k;
	if (r->have_fp && (k = hm_journal_write_fingerprint(w, &r->fp)) < 0)
		return k;
	if (!ctx->only) {
		k = record_write_dir(e, w,
				     open(r->spool.path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
		if (k < 0)
			return k;
	}
	if ((k = record_write_scopes(e, w, ctx->only)) < 0)
		return k;
	if (r->krec && !ctx->only) {
		size_t per = KCHUNK_BYTES / r->khdr.record_size;

		for (uint64_t i = 0; i < r->khdr.records; i += per) {
			size_t n = r->khdr.records - i < per ? r->khdr.records - i : per;

			k = hm_journal_write_kernel(w, r->khdr.record_size,
						    r->krec + i * r->khdr.record_size, n);
			if (k < 0)
				return k;
		}
	}
	if (r->kfd >= 0 && !ctx->only) {
		/* events: what the daemon received; dropped: what the journal
		 * lacks, whether the kernel or the daemon could not keep it. */
		uint64_t events = r->khdr.records + r->khdr.daemon_dropped;

		if (e->have_audit && e->audit.events > events)
			events = e->audit.events;
		/* (and what went with a daemon that restarted during the run) */
		k = hm_journal_write_kernel_summary(w, events + e->daemon_events_lost,
						    r->khdr.kernel_dropped + r->khdr.daemon_dropped +
							    e->daemon_events_lost);
		if (k < 0)
			return k;
	}
	if (WIFSIGNALED(e->child_status)) {
		x.signal = WTERMSIG(e->child_status);
		x.status = 128 + x.signal;
	} else {
		x.status = r->code;
	}
	return hm_journal_write_exit(w, &x);
}

/* "ls -l"-style quoting is not needed: the command for lists and indexes. */
static void command_line(struct enroll *e, char *buf, size_t size)
{
	size_t used = 0;

	buf[0] = 0;
	for (char **a = e->argv; *a && used < size; a++)
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
			warnx_("%s was unreadable; rebuilt it from the journals in %s", path, r->dir);
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
	command_line(e, cmd, sizeof(cmd));
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

/* Hand the journal to hermeticd's store (its id is the run id). */
static int store(struct enroll *e, int fd, const char **ret_msg)
{
	struct hm_journal_store s = {
		.run_id = e->run.run_id,
		.exit_status = e->rec->code,
		.seed = e->cfg.seed,
		.started_ns = e->started_ns,
	};

	command_line(e, s.command, sizeof(s.command));
	return cli_store_journal(e->sock, &s, fd, ret_msg);
}

/* One scope's journal (record_scopes.c). */
static int fill_scope(struct hm_journal_writer *w, struct enroll *e, const char *dir)
{
	struct fill_ctx ctx = { e, dir };

	return fill(w, &ctx);
}

void record_finish(struct enroll *e, int code)
{
	struct fill_ctx whole = { e, NULL };
	struct record *r = e->rec;
	char name[128], t[32], path[PATH_MAX + 160] = "", stored[64] = "";
	const char *msg = NULL;
	struct tm tm;
	time_t secs = e->started_ns / 1000000000LL;
	int k, fd = -1;

	r->code = code;
	/* --journal-per-scope: a journal per failing scope (test) instead of
	 * one for the run, whatever the run's own status. */
	if (e->journal_per_scope && record_scope_journals(e, fill_scope) > 0)
		return;
	if (code == 0 && !e->keep_passing)
		return; /* a passing run's journal is dropped (--keep-passing keeps it) */
	if (!e->no_daemon)
		fetch_kstream(e);
	gmtime_r(&secs, &tm);
	strftime(t, sizeof(t), "%Y%m%dT%H%M%SZ", &tm);
	if (e->no_daemon)
		snprintf(name, sizeof(name), "%s-pid%d" HM_JOURNAL_SUFFIX, t, (int)getpid());
	else
		snprintf(name, sizeof(name), "%s-run%" PRIu64 HM_JOURNAL_SUFFIX, t, e->run.run_id);

	if (r->dir[0]) {
		/* enroll runs as the user who asked: the file is theirs. */
		k = hm_journal_save(r->dir, name, (uid_t)-1, (gid_t)-1, 0, fill, &whole);
		if (k < 0) {
			warnx_("Failed to write journal '%s/%s': %s%s", r->dir, name, strerror(-k),
			       e->no_daemon ? "" : "; handing it to hermeticd's store only");
		} else {
			snprintf(path, sizeof(path), "%s/%s", r->dir, name);
			k = record_index_update(e, name, NULL);
			if (k < 0)
				warnx_("Failed to update '%s/" INDEX_NAME "': %s", r->dir, strerror(-k));
			fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		}
	}
	if (fd < 0 && !e->no_daemon) {
		/* No DIR, or DIR failed (a full disk): build it in memory for the store. */
		struct hm_journal_writer *w = NULL;

		fd = memfd_create("hermetic-journal", MFD_CLOEXEC | MFD_ALLOW_SEALING);
		if (fd < 0 || (k = hm_journal_writer_new(fd, 0, &w)) < 0 || (k = fill(w, &whole)) < 0 ||
		    (k = hm_journal_writer_finish(w)) < 0) {
			if (fd < 0)
				k = -errno;
			warnx_("Failed to write the run's journal: %s", strerror(-k));
			if (fd >= 0)
				close(fd);
			fd = -1;
		}
		hm_journal_writer_free(w);
	}
	if (!e->no_daemon && fd >= 0) {
		k = store(e, fd, &msg);
		if (k < 0)
			warnx_("hermeticd did not keep the journal: %s", msg ? msg : strerror(-k));
		else
			snprintf(stored, sizeof(stored), "%" PRIu64, e->run.run_id);
	}
	snprintf(e->journal_id, sizeof(e->journal_id), "%s", stored);
	snprintf(e->journal_file, sizeof(e->journal_file), "%s", path);
	if (!stored[0] && !path[0]) {
		/* Nothing kept a journal: the spool's raw streams are the only
		 * copy of what the run saw. Keep them rather than lose them. */
		r->spool.keep = true;
		warnx_("no journal of this run could be kept; its raw streams stay in %s "
		       "(private to you; remove it when done)",
		       r->spool.path);
	}
	if (fd >= 0) {
		/* The ledger of journals recorded here (trust.h): replay takes
		 * this one as ours without asking. */
		if (stored[0] || path[0])
			trust_note_fd(fd, path, stored);
		close(fd);
	}
	if (r->cut_streams)
		warnx_("journal: %" PRIu64 " stream%s ended mid-record (a thread was killed while "
		       "writing); cut %" PRIu64 " torn byte%s",
		       r->cut_streams, r->cut_streams == 1 ? "" : "s", r->cut_bytes,
		       r->cut_bytes == 1 ? "" : "s");
	if (r->bad_streams)
		warnx_("journal: %" PRIu64 " stream file%s held no readable stream and %s left out",
		       r->bad_streams, r->bad_streams == 1 ? "" : "s",
		       r->bad_streams == 1 ? "was" : "were");
	if (r->khdr.kernel_dropped || r->khdr.daemon_dropped)
		warnx_("journal: the kernel's view is incomplete: %" PRIu64
		       " events lost by the kernel, %" PRIu64 " not kept by hermeticd",
		       (uint64_t)r->khdr.kernel_dropped, (uint64_t)r->khdr.daemon_dropped);
	if (stored[0] && path[0])
		warnx_("journal %s: %s (%" PRIu64 " stream%s; replay with 'hermetic replay %s')",
		       stored, path, r->streams, r->streams == 1 ? "" : "s", path);
	else if (stored[0])
		warnx_("journal %s in hermeticd's store (%" PRIu64
		       " stream%s; 'hermetic replay %s', 'hermetic journals fetch %s')",
		       stored, r->streams, r->streams == 1 ? "" : "s", stored, stored);
	else if (path[0])
		warnx_("journal: %s (%" PRIu64 " stream%s; replay with 'hermetic replay %s')", path,
		       r->streams, r->streams == 1 ? "" : "s", path);
}

/* --- the kernel's view of a journal ------------------------------------------------- */

int journal_audit(const struct hm_journal *j, struct hm_audit_acc *a)
{
	size_t records = 0;
	uint32_t cap;
	struct hm_audit_proc *procs;

	for (size_t k = 0; k < j->n_kernel; k++)
		records += j->kernel[k].n_records;
	/* A process needs at least one record; a fork names two. */
	cap = records * 2 + 1 < 65536 ? records * 2 + 1 : 65536;
	procs = calloc(cap, sizeof(*procs));
	if (!procs)
		return -ENOMEM;
	hm_audit_init(a, procs, cap);
	for (size_t k = 0; k < j->n_kernel; k++) {
		const struct hm_journal_kernel *ch = &j->kernel[k];

		if (ch->record_size < sizeof(struct hm_trace_event))
			continue; /* not the records this hermetic writes */
		for (size_t i = 0; i < ch->n_records; i++) {
			struct hm_trace_event ev;

			memcpy(&ev, ch->records + i * ch->record_size, sizeof(ev));
			hm_audit_add(a, &ev);
		}
	}
	return 0;
}
