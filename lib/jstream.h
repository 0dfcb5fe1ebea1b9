/* SPDX-License-Identifier: MIT */
/*
 * One thread's journal stream: the ordered values the shim returned to one
 * thread of one process image (image id, thread index; lib/lineage.h).
 * docs/journal-format.md ("Thread streams") specifies the bytes.
 *
 * The encoder runs inside the shim, on every clock read of every enrolled
 * process: libc only, no allocation, no locking (one encoder per thread),
 * append-only into a caller-provided buffer that is flushed to an fd when
 * full. The decoder runs in the CLI and daemon over untrusted bytes: every
 * varint and length is checked against what remains, nothing is allocated.
 */
#ifndef HERMETIC_JSTREAM_H
#define HERMETIC_JSTREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "lineage.h"

#define HM_JSTREAM_MAGIC "HMJS"
#define HM_JSTREAM_VERSION 2
/* Smallest encoder buffer: the largest header plus one clock record. */
#define HM_JSTREAM_MIN_BUF 512
/* Clock ids 0..14 are delta-coded in their own slot; every other id
 * (dynamic clocks, future ids) shares slot 15 and carries its id. */
#define HM_JSTREAM_CLOCK_SLOTS 16

/* What a record is. */
enum hm_jrec_type {
	HM_JREC_CLOCK = 1, /* one clock reading */
	HM_JREC_ENTROPY, /* bytes handed out by one entropy call */
	HM_JREC_WAIT, /* outcome of one sleep or timed wait */
	HM_JREC_END, /* the thread or image ended cleanly (last record) */
	HM_JREC_EXT, /* extension record of a newer writer: skip it */
};

/* Which call produced a clock reading (3 bits). */
enum hm_jclock_call {
	HM_JC_CLOCK_GETTIME,
	HM_JC_GETTIMEOFDAY,
	HM_JC_TIME,
	HM_JC_TIMESPEC_GET,
	HM_JC_FTIME,
	HM_JC_CLOCK, /* clock(3): process CPU time */
	HM_JC_SYSCALL, /* syscall(SYS_clock_gettime, ...) */
	HM_JC_OTHER,
	HM_JC_MAX = HM_JC_OTHER,
};

/* Which source produced entropy (5 bits). */
enum hm_jentropy_src {
	HM_JE_GETRANDOM,
	HM_JE_GETENTROPY,
	HM_JE_ARC4RANDOM,
	HM_JE_ARC4RANDOM_BUF,
	HM_JE_ARC4RANDOM_UNIFORM, /* the 4-byte value returned, little-endian */
	HM_JE_URANDOM_READ, /* read/pread/readv/fread of /dev/urandom */
	HM_JE_RANDOM_READ, /* the same of /dev/random */
	HM_JE_SYSCALL_GETRANDOM, /* syscall(SYS_getrandom, ...) */
	HM_JE_OTHER = 31,
	HM_JE_MAX = HM_JE_OTHER,
};

/* Which sleep or timed wait (5 bits). */
enum hm_jwait_call {
	HM_JW_SLEEP,
	HM_JW_USLEEP,
	HM_JW_NANOSLEEP,
	HM_JW_CLOCK_NANOSLEEP,
	HM_JW_POLL,
	HM_JW_PPOLL,
	HM_JW_SELECT,
	HM_JW_PSELECT,
	HM_JW_EPOLL_WAIT,
	HM_JW_EPOLL_PWAIT,
	HM_JW_EPOLL_PWAIT2,
	HM_JW_COND_TIMEDWAIT,
	HM_JW_COND_CLOCKWAIT,
	HM_JW_MUTEX_TIMEDLOCK,
	HM_JW_MUTEX_CLOCKLOCK,
	HM_JW_SEM_TIMEDWAIT,
	HM_JW_SEM_CLOCKWAIT,
	HM_JW_OTHER = 31,
	HM_JW_MAX = HM_JW_OTHER,
};

/* Why a stream ended (HM_JREC_END). Readers accept other values. */
enum hm_jend_reason {
	HM_JEND_EXIT, /* the process exited */
	HM_JEND_EXEC, /* the image exec'd: another image (gen + 1) continues the process */
	HM_JEND_THREAD_EXIT, /* this thread returned or called pthread_exit */
	HM_JEND_SCOPE, /* the process entered or left a scope: its next stream is there */
};

/* Names a stream: who produced it. A stream is (image, thread); the
 * lineage key, gen, pid and tid are for people and for matching the
 * kernel's events (real ids at recording time); replay ignores them. */
struct hm_jstream_header {
	char lineage[HM_LINEAGE_MAX]; /* a valid lineage key, "1.3.1" */
	uint32_t thread; /* creation order within the image, main thread 0 */
	uint32_t gen; /* images of the process before this one, first image 0 */
	uint32_t pid;
	uint32_t tid;
	uint64_t proc; /* the process (hm_proc_root/hm_proc_child), not 0 */
	uint64_t parent; /* the image that created it, 0 for the run's first */
	char exe[HM_EXE_MAX]; /* what the image runs (hm_exe_name) */
	uint32_t exe_count; /* how many times the process ran exe (0: a fork child's inherited image) */
	uint64_t image; /* hm_image_id(proc, exe, exe_count): computed, not stored */
};

/* One decoded record. Pointers point into the decoded buffer. */
struct hm_jrec {
	enum hm_jrec_type type;
	uint8_t call; /* hm_jclock_call, hm_jentropy_src or hm_jwait_call */
	uint64_t index; /* 1-based position in the stream: "call #index" */
	union {
		struct {
			int32_t id; /* clockid_t */
			int64_t ns; /* the reading, ns */
		} clock;
		struct {
			const uint8_t *bytes;
			size_t len;
		} entropy;
		struct {
			bool timed_out;
			bool lag; /* the lag bound ended it (journal 2.2) */
			int64_t result; /* what the call returned */
			uint64_t vtime_ns; /* virtual CLOCK_MONOTONIC after the call */
		} wait;
		struct {
			uint64_t reason; /* hm_jend_reason */
		} end;
		struct {
			uint8_t kind; /* 0..15 */
			const uint8_t *bytes;
			size_t len;
		} ext;
	};
};

/* Delta state shared by encoder and decoder. Each clock reading is coded
 * as the zigzag varint of (value - last - last_delta): a clock advancing by
 * a constant tick costs one tag byte and one zero byte. */
struct hm_jstream_pred {
	uint64_t last[HM_JSTREAM_CLOCK_SLOTS];
	uint64_t delta[HM_JSTREAM_CLOCK_SLOTS];
	uint64_t wait_last;
};

struct hm_jstream_enc {
	uint8_t *buf;
	size_t cap;
	size_t len; /* bytes buffered, not yet flushed */
	int fd; /* -1: memory only, a full buffer is -ENOBUFS */
	int err; /* sticky: after a failed flush every call returns it */
	bool ended;
	uint64_t n_records;
	uint64_t flushed; /* bytes written to fd so far */
	struct hm_jstream_pred pred;
};

/*
 * Start a stream in buf (cap >= HM_JSTREAM_MIN_BUF bytes, owned by the
 * caller and living as long as the encoder) and write its header. With
 * fd >= 0, full buffers are written to fd (write(2), EINTR retried);
 * otherwise a record that does not fit is refused with -ENOBUFS and the
 * stream is left as it was. Returns 0, -EINVAL (bad header or buffer).
 */
int hm_jstream_enc_init(struct hm_jstream_enc *e, void *buf, size_t cap, int fd,
			const struct hm_jstream_header *h);

/* Append one record. Return 0, -ENOBUFS (memory mode, does not fit: nothing
 * appended), -EINVAL (call out of range, record after END), or the sticky
 * -errno of a failed write. */
int hm_jstream_put_clock(struct hm_jstream_enc *e, enum hm_jclock_call call, int32_t clock_id,
			 int64_t ns);
int hm_jstream_put_entropy(struct hm_jstream_enc *e, enum hm_jentropy_src src, const void *bytes,
			   size_t len);
#define HM_JWAIT_TIMED_OUT 0x1
#define HM_JWAIT_LAG 0x2 /* ended by the lag bound (implies timed out) */
int hm_jstream_put_wait(struct hm_jstream_enc *e, enum hm_jwait_call call, unsigned flags,
			int64_t result, uint64_t vtime_ns);
int hm_jstream_put_end(struct hm_jstream_enc *e, enum hm_jend_reason reason);

/* hm_jstream_put_clock's hot path, inline for the shim (every clock read of a
 * recording process): a reading of clock ids 0..14 while the buffer has room
 * is encoded in place; anything else goes to hm_jstream_put_clock. The bytes
 * are the same either way. */
static inline int hm_jstream_put_clock_fast(struct hm_jstream_enc *e, enum hm_jclock_call call,
					    int32_t clock_id, int64_t ns)
{
	if (__builtin_expect(!e->err && !e->ended && (unsigned)call <= HM_JC_MAX && clock_id >= 0 &&
				     clock_id < HM_JSTREAM_CLOCK_SLOTS - 1 && e->cap - e->len >= 16,
			     1)) {
		unsigned s = (unsigned)clock_id;
		uint64_t v = (uint64_t)ns, d = v - e->pred.last[s], dd = d - e->pred.delta[s];
		uint64_t z = (dd << 1) ^ (0 - (dd >> 63)); /* zigzag */
		uint8_t *p = e->buf + e->len;
		size_t n = 1;

		p[0] = (uint8_t)(s << 3 | call);
		while (z >= 0x80) {
			p[n++] = (uint8_t)(z | 0x80);
			z >>= 7;
		}
		p[n++] = (uint8_t)z;
		e->len += n;
		e->pred.last[s] = v;
		e->pred.delta[s] = d;
		e->n_records++;
		return 0;
	}
	return hm_jstream_put_clock(e, call, clock_id, ns);
}

/* Write buffered bytes to fd (no-op in memory mode). 0 or -errno. */
int hm_jstream_flush(struct hm_jstream_enc *e);

struct hm_jstream_dec {
	const uint8_t *p;
	size_t len;
	size_t off; /* of the next record; of the bad byte after an error */
	uint64_t n_records;
	bool ended;
	const char *why; /* after -EBADMSG: what was wrong, for messages */
	struct hm_jstream_header hdr;
	struct hm_jstream_pred pred;
};

/* Parse the header of buf[0..len). 0 or -EBADMSG (d->why says why). */
int hm_jstream_dec_init(struct hm_jstream_dec *d, const void *buf, size_t len);

/* Decode the next record into *ret. Returns 1 with a record, 0 at the end
 * of the bytes, -EBADMSG for malformed input (d->why, d->off). */
int hm_jstream_next(struct hm_jstream_dec *d, struct hm_jrec *ret);

/* What a whole stream holds. */
struct hm_jstream_summary {
	struct hm_jstream_header hdr;
	uint64_t records;
	uint64_t clock;
	uint64_t entropy;
	uint64_t entropy_bytes;
	uint64_t wait;
	uint64_t wait_timed_out;
	uint64_t wait_lag; /* of those, ended by the lag bound */
	uint64_t ext;
	bool ended;
	uint64_t end_reason;
	size_t valid_len; /* length of the longest prefix of whole records */
};

/* Decode a whole stream into *sum. Returns 0, or -EBADMSG with *why set and
 * *sum describing the valid prefix: sum->valid_len is where a writer killed
 * mid-record left its last whole record, so a reader can cut there (0 if
 * even the header is bad). Unlike ret_* parameters, *sum is always written. */
int hm_jstream_scan(const void *buf, size_t len, struct hm_jstream_summary *sum, const char **why);

/* "clock_gettime", "getrandom", "epoll_wait", ... for messages. */
const char *hm_jrec_call_name(enum hm_jrec_type type, uint8_t call);
const char *hm_jrec_type_name(enum hm_jrec_type type);

#endif
