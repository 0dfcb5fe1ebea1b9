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
#include "enroll.h"
#include "record.h"
#include "record_int.h"
#include "trust.h"
#include "tmpdir.h"
#include "hermetic/trace.h"

/* A kernel chunk stays well below a section's 4 GiB length limit. */
#define KCHUNK_BYTES (8u << 20)

extern char **environ;


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

/* DIR made (0700) if need be, as an absolute path into r->dir. */
static int record_use_dir(struct record *r, const char *dir, struct eng_error *err)
{
	struct stat st;
	int k = mkdir_p(dir, 0700);

	if (k < 0)
		return eng_fail(err, -k, "Failed to create journal directory '%s': %s", dir,
				strerror(-k));
	errno = 0;
	if (!realpath(dir, r->dir) || stat(r->dir, &st) < 0 || !S_ISDIR(st.st_mode))
		return eng_fail(err, errno ? errno : ENOTDIR,
				"Failed to use journal directory '%s': %s", dir,
				errno ? strerror(errno) : "not a directory");
	if (access(r->dir, W_OK | X_OK) < 0)
		return eng_fail(err, errno, "Failed to use journal directory '%s': %s", r->dir,
				strerror(errno));
	return 0;
}

int record_setup(struct enroll *e, struct eng_error *err)
{
	_cleanup_free_ struct record *r = calloc(1, sizeof(*r));
	char ledger[PATH_MAX];
	int k;

	/* Where the ledger is, while HOME and XDG_STATE_HOME are still ours. */
	(void)trust_ledger_path(ledger, sizeof(ledger));

	if (!r)
		return eng_fail(err, ENOMEM, "out of memory");
	r->kfd = -1;
	if (!getcwd(r->cwd, sizeof(r->cwd)))
		r->cwd[0] = 0;
	if (e->recording.dir && (k = record_use_dir(r, e->recording.dir, err)) < 0)
		return k;
	if ((k = run_tmpdir_make(&r->spool, "hermetic-rec", "a recording spool", err)) < 0)
		return k;
	e->rec = r;
	r = NULL;
	return 0;
}

void record_export_env(struct enroll *e)
{
	setenv(HM_ENV_RECORD, e->rec->spool.path, 1);
}

int record_before_spawn(struct enroll *e, struct eng_error *err)
{
	struct record *r = e->rec;

	if (hm_journal_fingerprint_collect(&r->fp, environ, r->cwd[0] ? r->cwd : NULL) < 0)
		return eng_fail(err, ENOMEM, "out of memory");
	r->have_fp = true;
	return 0;
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
		.wall_ns = e->end.wall_ns,
		.stragglers = e->end.killed,
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

		if (e->end.have_audit && e->end.audit.events > events)
			events = e->end.audit.events;
		/* (and what went with a daemon that restarted during the run) */
		k = hm_journal_write_kernel_summary(w, events + e->daemon.events_lost,
						    r->khdr.kernel_dropped + r->khdr.daemon_dropped +
							    e->daemon.events_lost);
		if (k < 0)
			return k;
	}
	if (WIFSIGNALED(e->child.status)) {
		x.signal = WTERMSIG(e->child.status);
		x.status = 128 + x.signal;
	} else {
		x.status = r->code;
	}
	return hm_journal_write_exit(w, &x);
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

	record_command_line(e, s.command, sizeof(s.command));
	return enroll_daemon_store(e, &s, fd, ret_msg);
}

/* One scope's journal (record_scopes.c). */
static int fill_scope(struct hm_journal_writer *w, struct enroll *e, const char *dir)
{
	struct fill_ctx ctx = { e, dir };

	return fill(w, &ctx);
}

void record_prepare(struct enroll *e, int code)
{
	if ((code != 0 || e->recording.keep_passing) && !e->no_daemon && !e->rec->kstream_asked) {
		e->rec->kstream_asked = true;
		record_fetch_kstream(e);
	}
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
	if (e->recording.per_scope && record_scope_journals(e, fill_scope) > 0)
		return;
	if (code == 0 && !e->recording.keep_passing)
		return; /* a passing run's journal is dropped (--keep-passing keeps it) */
	record_prepare(e, code);
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
			eng_warn("Failed to write journal '%s/%s': %s%s", r->dir, name, strerror(-k),
				 e->no_daemon ? "" : "; handing it to hermeticd's store only");
		} else {
			snprintf(path, sizeof(path), "%s/%s", r->dir, name);
			k = record_index_update(e, name, NULL);
			if (k < 0)
				eng_warn("Failed to update '%s/" INDEX_NAME "': %s", r->dir, strerror(-k));
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
			eng_warn("Failed to write the run's journal: %s", strerror(-k));
			if (fd >= 0)
				close(fd);
			fd = -1;
		}
		hm_journal_writer_free(w);
	}
	if (!e->no_daemon && fd >= 0) {
		k = store(e, fd, &msg);
		if (k < 0)
			eng_warn("hermeticd did not keep the journal: %s", msg ? msg : strerror(-k));
		else
			snprintf(stored, sizeof(stored), "%" PRIu64, e->run.run_id);
	}
	snprintf(e->recording.journal_id, sizeof(e->recording.journal_id), "%s", stored);
	snprintf(e->recording.journal_file, sizeof(e->recording.journal_file), "%s", path);
	if (!stored[0] && !path[0]) {
		/* Nothing kept a journal: the spool's raw streams are the only
		 * copy of what the run saw. Keep them rather than lose them. */
		r->spool.keep = true;
		eng_warn("no journal of this run could be kept; its raw streams stay in %s "
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
		eng_warn("journal: %" PRIu64 " stream%s ended mid-record (a thread was killed while "
			 "writing); cut %" PRIu64 " torn byte%s",
			 r->cut_streams, r->cut_streams == 1 ? "" : "s", r->cut_bytes,
			 r->cut_bytes == 1 ? "" : "s");
	if (r->bad_streams)
		eng_warn("journal: %" PRIu64 " stream file%s held no readable stream and %s left out",
			 r->bad_streams, r->bad_streams == 1 ? "" : "s",
			 r->bad_streams == 1 ? "was" : "were");
	if (r->khdr.kernel_dropped || r->khdr.daemon_dropped)
		eng_warn("journal: the kernel's view is incomplete: %" PRIu64
			 " events lost by the kernel, %" PRIu64 " not kept by hermeticd",
			 (uint64_t)r->khdr.kernel_dropped, (uint64_t)r->khdr.daemon_dropped);
	if (stored[0] && path[0])
		eng_warn("journal %s: %s (%" PRIu64 " stream%s; replay with 'hermetic replay %s')",
			 stored, path, r->streams, r->streams == 1 ? "" : "s", path);
	else if (stored[0])
		eng_warn("journal %s in hermeticd's store (%" PRIu64
			 " stream%s; 'hermetic replay %s', 'hermetic journals fetch %s')",
			 stored, r->streams, r->streams == 1 ? "" : "s", stored, stored);
	else if (path[0])
		eng_warn("journal: %s (%" PRIu64 " stream%s; replay with 'hermetic replay %s')", path,
			 r->streams, r->streams == 1 ? "" : "s", path);
}
