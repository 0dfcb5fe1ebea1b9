/* SPDX-License-Identifier: MIT */
/*
 * The journal file: one zstd frame per run holding typed, length-prefixed
 * sections (configuration, fingerprint, thread streams, the kernel's
 * stream, exit status) and a CRC-32C trailer. docs/journal-format.md is the
 * specification; this is its only codec.
 *
 * Uses libzstd: lib/journal*.c are linked into the CLI, the daemon and the
 * tests, never into the shim (which writes thread streams, lib/jstream.h).
 *
 * Journals hold secrets (entropy a test turned into keys): hm_journal_save()
 * creates them 0600, owned by the run's user, under a temporary name that is
 * renamed only once the file is complete and on disk.
 */
#ifndef HERMETIC_JOURNAL_H
#define HERMETIC_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "config.h"
#include "jstream.h"

#define HM_JOURNAL_MAGIC "HMJRNL\r\n" /* 8 bytes, first in the payload */
#define HM_JOURNAL_MAJOR 2
#define HM_JOURNAL_MINOR 2
#define HM_JOURNAL_SUFFIX ".hjournal"
/* Default cap on a journal's decompressed size (and on the file itself). */
#define HM_JOURNAL_MAX_SIZE (1ULL << 30)
/* The reader refuses zstd frames that need a larger window. */
#define HM_JOURNAL_WINDOW_LOG_MAX 24
/* A kernel chunk's record size must lie in [1, this]. */
#define HM_JOURNAL_KREC_MAX 65536

/* Section types. */
enum hm_jsec_type {
	HM_JSEC_CONFIG = 1,
	HM_JSEC_FINGERPRINT = 2,
	HM_JSEC_EXIT = 3,
	HM_JSEC_STREAM = 4,
	HM_JSEC_KERNEL = 5,
	HM_JSEC_KERNEL_SUMMARY = 6,
	HM_JSEC_SCOPE = 7, /* 2.1: the stream sections after it are a scope's */
	HM_JSEC_END = 0xffff,
};
/* Section flags: a reader that does not know a critical section's type
 * must refuse the journal; unknown non-critical sections are skipped. */
#define HM_JSEC_F_CRITICAL 0x0001u

/* Well-known fingerprint keys. */
#define HM_FP_HOSTNAME "hostname"
#define HM_FP_KERNEL "kernel" /* uname -r */
#define HM_FP_KERNEL_VERSION "kernel_version" /* uname -v */
#define HM_FP_ARCH "arch" /* uname -m */
#define HM_FP_LIBC "libc" /* "glibc 2.36" */
#define HM_FP_TZ "tz" /* TZ, or the /etc/localtime target */
#define HM_FP_GIT_COMMIT "git_commit" /* HEAD of the working tree holding cwd */

/* A name and a value; in the environment list value is NULL when only the
 * name is kept (every variable but TZ, PYTHONHASHSEED, LANG, LC_*). */
struct hm_journal_kv {
	char *key;
	char *value;
};

/* The run's configuration: what replay re-enrolls with. */
struct hm_journal_config {
	struct hm_config cfg;
	uint64_t run_id; /* the daemon's run id, 0 without one */
	uint32_t uid; /* the enrolling user */
	int64_t started_ns; /* real wall-clock time the run started */
	size_t argc;
	char **argv; /* reader: NULL-terminated */
	size_t n_opts;
	struct hm_journal_kv *opts; /* other options as given: "fs" = "isolate" */
};

struct hm_journal_fingerprint {
	size_t n_fields;
	struct hm_journal_kv *fields; /* HM_FP_* and others */
	size_t n_env;
	struct hm_journal_kv *env;
};

struct hm_journal_exit {
	int32_t status; /* exit code, 0..255 */
	int32_t signal; /* terminating signal, 0 if exited */
	uint64_t wall_ns; /* real duration of the run */
	uint32_t stragglers; /* processes killed after the command exited */
};

/* One thread stream as read: bytes point into the journal's buffer. */
struct hm_journal_stream {
	struct hm_jstream_summary sum; /* sum.hdr names the stream */
	const uint8_t *data;
	size_t len;
	int32_t scope; /* index into hm_journal.scopes, -1: outside scopes */
};

/* A scope (lib/scope.h): the streams its processes' threads had in it. A
 * continuation holds what one image's threads drew at a level after leaving
 * scopes inside it (name: that level's scope, "" outside scopes). */
enum hm_jscope_kind { HM_JSCOPE_SCOPE, HM_JSCOPE_CONT };
struct hm_journal_scope {
	uint8_t kind; /* HM_JSCOPE_* */
	uint8_t status; /* enum hm_scope_status: how the scope was left */
	uint64_t seed; /* the scope's seed */
	int64_t now_ns; /* where its realtime clock started */
	int64_t mono_ns; /* where its monotonic clock started */
	char *dir; /* its directory in a spool or replay dir: "scope.1-0-3", "...+1", "cont.1-0+2" */
	char *name;
	char *root; /* lineage key of the process that entered it */
	size_t n_streams; /* as read */
};

/* One chunk of the kernel's stream: opaque fixed-size records. */
struct hm_journal_kernel {
	uint32_t record_size;
	size_t n_records;
	const uint8_t *records;
};

/* A parsed journal. Owns its buffer; free with hm_journal_free(). */
struct hm_journal {
	uint16_t major, minor;
	size_t size; /* decompressed bytes */
	size_t n_sections;
	size_t n_skipped; /* unknown non-critical sections */
	bool has_config, has_fingerprint, has_exit, has_kernel_summary;
	struct hm_journal_config config;
	struct hm_journal_fingerprint fingerprint;
	struct hm_journal_exit exit;
	size_t n_streams;
	struct hm_journal_stream *streams; /* sorted: by scope, then hm_journal_stream_cmp */
	size_t n_scopes;
	struct hm_journal_scope *scopes; /* in the journal's order */
	size_t n_kernel;
	struct hm_journal_kernel *kernel;
	uint64_t kernel_records; /* sum over the chunks */
	uint64_t kernel_events; /* from the summary: events the daemon saw */
	uint64_t kernel_dropped; /* events the kernel could not deliver */
	uint8_t *buf;
};

/* --- writing ----------------------------------------------------------------- */

struct hm_journal_writer;

/* Start a journal on fd (which the caller owns; see hm_journal_save). level
 * is a zstd level, clamped to 1..19; 0 picks the default (3). Writes the
 * file header. Returns 0, -ENOMEM or -errno. */
int hm_journal_writer_new(int fd, int level, struct hm_journal_writer **ret);

int hm_journal_write_config(struct hm_journal_writer *w, const struct hm_journal_config *c);
/* Only TZ, PYTHONHASHSEED, LANG and LC_* keep their values: the writer drops
 * every other value whatever *f holds. */
int hm_journal_write_fingerprint(struct hm_journal_writer *w,
				 const struct hm_journal_fingerprint *f);
int hm_journal_write_exit(struct hm_journal_writer *w, const struct hm_journal_exit *e);
/* A thread stream as the shim wrote it. Its header must parse (-EINVAL);
 * a torn last record is the caller's to cut (hm_jstream_scan's valid_len). */
int hm_journal_write_stream(struct hm_journal_writer *w, const void *bytes, size_t len);
/* The same from a stream file the shim wrote (read from offset 0, at most
 * 4 GiB - 1). A torn last record, left by a thread killed mid-write, is cut
 * off: *ret_cut is the number of bytes dropped (0 for a whole stream).
 * Returns 0, -EINVAL (no valid stream header), -EFBIG or -errno. */
int hm_journal_write_stream_fd(struct hm_journal_writer *w, int fd, size_t *ret_cut);
/* A chunk of n kernel records of record_size bytes each. */
int hm_journal_write_kernel(struct hm_journal_writer *w, uint32_t record_size, const void *records,
			    size_t n);
int hm_journal_write_kernel_summary(struct hm_journal_writer *w, uint64_t events, uint64_t dropped);
/* A scope section: the stream sections written after it, up to the next
 * section of another type, are the scope's. -EINVAL for a bad dir, name or
 * root (the reader's rules, docs/journal-format.md). */
int hm_journal_write_scope(struct hm_journal_writer *w, const struct hm_journal_scope *sc);
/* A scope directory name a reader accepts: [A-Za-z0-9.+-], 1..255 bytes,
 * not "." or "..". */
bool hm_journal_scope_dir_valid(const char *dir);
/* A raw section streamed in pieces (e.g. a stream copied from a file):
 * begin, then append exactly len bytes in total before the next section. */
int hm_journal_section_begin(struct hm_journal_writer *w, uint16_t type, uint16_t flags,
			     uint32_t len);
int hm_journal_section_append(struct hm_journal_writer *w, const void *bytes, size_t n);
/* Write the end section and the zstd epilogue. The fd is not synced. */
int hm_journal_writer_finish(struct hm_journal_writer *w);
void hm_journal_writer_free(struct hm_journal_writer *w);

/* Fills a journal: called by hm_journal_save with a fresh writer. */
typedef int (*hm_journal_fill_fn)(struct hm_journal_writer *w, void *userdata);

/*
 * Write a journal to DIR/NAME: a 0600 temporary file in DIR (created
 * O_EXCL, chowned to uid:gid unless they are -1), filled by fill(), finished,
 * fsync'ed, renamed to NAME and the directory fsync'ed. On any failure the
 * temporary file is removed and NAME is untouched. NAME is one path
 * component not starting with '.'. Returns 0, -EINVAL or -errno (fill's
 * error is passed through).
 */
int hm_journal_save(const char *dir, const char *name, uid_t uid, gid_t gid, int level,
		    hm_journal_fill_fn fill, void *userdata);

/* --- reading ----------------------------------------------------------------- */

/*
 * Parse a journal file's bytes (one zstd frame). Decompresses at most
 * max_size bytes (0: HM_JOURNAL_MAX_SIZE), validates every section and
 * every thread stream completely. Returns 0 with *ret, or:
 *   -EBADMSG          malformed, truncated or corrupted
 *   -EFBIG            decompresses (or claims to) to more than max_size
 *   -EPROTONOSUPPORT  a newer major version, or an unknown critical section
 *   -ENOMEM
 * with a one-line reason in err (if errlen > 0) for every failure.
 */
int hm_journal_read(const void *data, size_t len, size_t max_size, struct hm_journal **ret,
		    char *err, size_t errlen);
/* The same on a file (regular, at most max_size bytes). Also -errno. */
int hm_journal_read_file(const char *path, size_t max_size, struct hm_journal **ret, char *err,
			 size_t errlen);
/* The same on an already decompressed payload (tests, fuzzing, tools). */
int hm_journal_parse(const void *payload, size_t len, struct hm_journal **ret, char *err,
		     size_t errlen);
void hm_journal_free(struct hm_journal *j);

/* Tree order of streams: lineage key component by component, numerically
 * ("1" < "1.2" < "1.10" < "2"), then the creating image and the process
 * (processes with one key: the children of a wrapper's earlier images),
 * then the images of a process in order, then threads. */
int hm_journal_stream_cmp(const void *a, const void *b);
/* The stream of (image, thread), or NULL. */
const struct hm_journal_stream *hm_journal_find_stream(const struct hm_journal *j, uint64_t image,
						       uint32_t thread);

/* The value of a fingerprint field, or NULL. */
const char *hm_journal_fp_get(const struct hm_journal_fingerprint *f, const char *key);

/* Does a variable's value go into the journal? TZ, PYTHONHASHSEED, LANG, LC_*. */
bool hm_journal_env_keeps_value(const char *name);

/* --- the fingerprint of this machine (lib/journal_fingerprint.c) ------------ */

/* Collect hostname, kernel, arch, libc, TZ, the git commit of the working
 * tree holding cwd (read from .git without running git), and envp's names
 * (values only where hm_journal_env_keeps_value). cwd NULL: getcwd().
 * Returns 0 or -ENOMEM; fields that cannot be found are left out. */
int hm_journal_fingerprint_collect(struct hm_journal_fingerprint *ret, char *const *envp,
				   const char *cwd);
void hm_journal_fingerprint_done(struct hm_journal_fingerprint *f);

/* Read the commit HEAD points at in the git working tree holding dir (its
 * .git directory or "gitdir:" file, loose refs and packed-refs). Writes 40
 * (or 64) hex digits and a NUL into out. Returns 0, -ENOENT (not in a
 * working tree, or unborn branch), -EBADMSG or -errno. */
int hm_journal_git_head(const char *dir, char *out, size_t size);

#endif
