// SPDX-License-Identifier: MIT
/*
 * Thread streams: encoder (runs in the shim: libc only, no allocation) and
 * decoder (runs on untrusted bytes: every length checked before use).
 *
 * Record tags (docs/journal-format.md has the full table):
 *   0x00-0x7f  clock     0 SSSS CCC: slot S (clock id 0..14, 15 = id follows), call C
 *   0x80       end       varint reason
 *   0x90-0x9f  extension varint length, bytes: skipped by readers
 *   0xc0-0xdf  entropy   source in the low 5 bits; varint length, bytes
 *   0xe0-0xff  wait      call in the low 5 bits; flags, zigzag result, zigzag vtime delta
 *   anything else is malformed.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include "jstream.h"
#include "util.h"

#define TAG_END 0x80
#define TAG_EXT 0x90
#define TAG_ENTROPY 0xc0
#define TAG_WAIT 0xe0
#define SLOT_ESCAPE 15
#define WAIT_TIMED_OUT 0x01
#define WAIT_LAG 0x02 /* 2.2: the lag bound ended it (it timed out) */
#define VARINT_MAX 10
/* The largest record prefix (everything but entropy/extension bytes). */
#define REC_PREFIX_MAX (1 + 3 * VARINT_MAX + 1)

static inline uint64_t zigzag(int64_t v)
{
	/* On uint64_t: no signed overflow. */
	return ((uint64_t)v << 1) ^ (0 - ((uint64_t)v >> 63));
}

static inline int64_t unzigzag(uint64_t v)
{
	return (int64_t)((v >> 1) ^ (0 - (v & 1)));
}

static void put_u64le(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = v >> (8 * i);
}

static uint64_t get_u64le(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static size_t put_varint(uint8_t *p, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

/* Decode a canonical LEB128 varint from p[*off..len). Overlong (more than
 * 10 bytes, or bits past 64) and non-minimal encodings are refused, so
 * every value has exactly one encoding. */
static int get_varint(const uint8_t *p, size_t len, size_t *off, uint64_t *ret)
{
	uint64_t v = 0;
	size_t i = *off;

	for (unsigned n = 0; n < VARINT_MAX; n++, i++) {
		uint8_t b;

		if (i >= len)
			return -EBADMSG;
		b = p[i];
		if (n == VARINT_MAX - 1 && b > 1)
			return -EBADMSG;
		v |= (uint64_t)(b & 0x7f) << (7 * n);
		if (!(b & 0x80)) {
			if (b == 0 && n > 0)
				return -EBADMSG;
			*off = i + 1;
			*ret = v;
			return 0;
		}
	}
	return -EBADMSG;
}

static unsigned clock_slot(int32_t id)
{
	return id >= 0 && id < SLOT_ESCAPE ? (unsigned)id : SLOT_ESCAPE;
}

/* --- encoder ---------------------------------------------------------------- */

int hm_jstream_flush(struct hm_jstream_enc *e)
{
	int saved = errno, r;

	if (e->err)
		return e->err;
	if (e->fd < 0 || e->len == 0)
		return 0;
	r = hm_write_all(e->fd, e->buf, e->len);
	/* The shim calls this from inside wrapped calls: keep errno. */
	errno = saved;
	if (r < 0)
		return e->err = r;
	e->flushed += e->len;
	e->len = 0;
	return 0;
}

/* Make room for n bytes in the buffer. */
static int reserve(struct hm_jstream_enc *e, size_t n)
{
	int r;

	if (e->err)
		return e->err;
	if (e->cap - e->len >= n)
		return 0;
	if (e->fd < 0)
		return -ENOBUFS;
	r = hm_jstream_flush(e);
	if (r < 0)
		return r;
	return e->cap >= n ? 0 : -ENOBUFS;
}

/* Append a record prefix and its payload; payloads larger than the buffer
 * go straight to fd after the buffered bytes. */
static int append(struct hm_jstream_enc *e, const uint8_t *pre, size_t npre, const void *data,
		  size_t ndata)
{
	int r;

	if (e->fd < 0 || ndata <= e->cap - npre) {
		r = reserve(e, npre + ndata);
		if (r < 0)
			return r;
		memcpy(e->buf + e->len, pre, npre);
		if (ndata)
			memcpy(e->buf + e->len + npre, data, ndata);
		e->len += npre + ndata;
		return 0;
	}
	r = reserve(e, npre);
	if (r < 0)
		return r;
	memcpy(e->buf + e->len, pre, npre);
	e->len += npre;
	r = hm_jstream_flush(e);
	if (r < 0)
		return r;
	{
		int saved = errno;

		r = hm_write_all(e->fd, data, ndata);
		errno = saved;
	}
	if (r < 0)
		return e->err = r;
	e->flushed += ndata;
	return 0;
}

int hm_jstream_enc_init(struct hm_jstream_enc *e, void *buf, size_t cap, int fd,
			const struct hm_jstream_header *h)
{
	uint8_t *p = buf;
	size_t n = 0, klen;

	if (!buf || cap < HM_JSTREAM_MIN_BUF || !h || !hm_lineage_valid(h->lineage) || !h->proc ||
	    !hm_exe_valid(h->exe))
		return -EINVAL;
	klen = strlen(h->lineage);
	memcpy(p, HM_JSTREAM_MAGIC, 4);
	n = 4;
	p[n++] = HM_JSTREAM_VERSION;
	n += put_varint(p + n, h->thread);
	n += put_varint(p + n, h->gen);
	n += put_varint(p + n, h->pid);
	n += put_varint(p + n, h->tid);
	n += put_varint(p + n, klen);
	memcpy(p + n, h->lineage, klen);
	n += klen;
	put_u64le(p + n, h->proc);
	put_u64le(p + n + 8, h->parent);
	n += 16;
	n += put_varint(p + n, strlen(h->exe));
	memcpy(p + n, h->exe, strlen(h->exe));
	n += strlen(h->exe);
	n += put_varint(p + n, h->exe_count);
	*e = (struct hm_jstream_enc){ .buf = p, .cap = cap, .len = n, .fd = fd };
	return 0;
}

static int check_open(struct hm_jstream_enc *e)
{
	if (e->err)
		return e->err;
	return e->ended ? -EINVAL : 0;
}

int hm_jstream_put_clock(struct hm_jstream_enc *e, enum hm_jclock_call call, int32_t clock_id,
			 int64_t ns)
{
	uint8_t pre[REC_PREFIX_MAX];
	unsigned s = clock_slot(clock_id);
	uint64_t v = (uint64_t)ns, d = v - e->pred.last[s];
	size_t n = 0;
	int r;

	r = check_open(e);
	if (r < 0)
		return r;
	if ((unsigned)call > HM_JC_MAX)
		return -EINVAL;
	/* Hot path: every clock read. Encode in place when there is room. */
	if (e->cap - e->len >= REC_PREFIX_MAX && s != SLOT_ESCAPE) {
		uint8_t *p = e->buf + e->len;

		p[0] = (uint8_t)(s << 3 | call);
		e->len += 1 + put_varint(p + 1, zigzag((int64_t)(d - e->pred.delta[s])));
		e->pred.last[s] = v;
		e->pred.delta[s] = d;
		e->n_records++;
		return 0;
	}
	pre[n++] = (uint8_t)(s << 3 | call);
	if (s == SLOT_ESCAPE)
		n += put_varint(pre + n, zigzag(clock_id));
	n += put_varint(pre + n, zigzag((int64_t)(d - e->pred.delta[s])));
	r = append(e, pre, n, NULL, 0);
	if (r < 0)
		return r;
	e->pred.last[s] = v;
	e->pred.delta[s] = d;
	e->n_records++;
	return 0;
}

int hm_jstream_put_entropy(struct hm_jstream_enc *e, enum hm_jentropy_src src, const void *bytes,
			   size_t len)
{
	uint8_t pre[REC_PREFIX_MAX];
	size_t n = 0;
	int r;

	r = check_open(e);
	if (r < 0)
		return r;
	if ((unsigned)src > HM_JE_MAX || (len && !bytes))
		return -EINVAL;
	pre[n++] = (uint8_t)(TAG_ENTROPY | src);
	n += put_varint(pre + n, len);
	r = append(e, pre, n, bytes, len);
	if (r < 0)
		return r;
	e->n_records++;
	return 0;
}

int hm_jstream_put_wait(struct hm_jstream_enc *e, enum hm_jwait_call call, unsigned flags,
			int64_t result, uint64_t vtime_ns)
{
	uint8_t pre[REC_PREFIX_MAX];
	size_t n = 0;
	int r;

	r = check_open(e);
	if (r < 0)
		return r;
	if ((unsigned)call > HM_JW_MAX || (flags & ~(HM_JWAIT_TIMED_OUT | HM_JWAIT_LAG)))
		return -EINVAL;
	pre[n++] = (uint8_t)(TAG_WAIT | call);
	pre[n++] = (flags & HM_JWAIT_TIMED_OUT ? WAIT_TIMED_OUT : 0) |
		   (flags & HM_JWAIT_LAG ? WAIT_LAG | WAIT_TIMED_OUT : 0);
	n += put_varint(pre + n, zigzag(result));
	n += put_varint(pre + n, zigzag((int64_t)(vtime_ns - e->pred.wait_last)));
	r = append(e, pre, n, NULL, 0);
	if (r < 0)
		return r;
	e->pred.wait_last = vtime_ns;
	e->n_records++;
	return 0;
}

int hm_jstream_put_end(struct hm_jstream_enc *e, enum hm_jend_reason reason)
{
	uint8_t pre[REC_PREFIX_MAX];
	size_t n = 0;
	int r;

	r = check_open(e);
	if (r < 0)
		return r;
	pre[n++] = TAG_END;
	n += put_varint(pre + n, (uint64_t)reason);
	r = append(e, pre, n, NULL, 0);
	if (r < 0)
		return r;
	e->ended = true;
	e->n_records++;
	return 0;
}

/* --- decoder ---------------------------------------------------------------- */

static int bad(struct hm_jstream_dec *d, size_t off, const char *why)
{
	d->off = off;
	d->why = why;
	return -EBADMSG;
}

static int get_u32(const uint8_t *p, size_t len, size_t *off, uint32_t *ret)
{
	uint64_t v;

	if (get_varint(p, len, off, &v) < 0 || v > UINT32_MAX)
		return -EBADMSG;
	*ret = (uint32_t)v;
	return 0;
}

int hm_jstream_dec_init(struct hm_jstream_dec *d, const void *buf, size_t len)
{
	struct hm_jstream_header h = {};
	const uint8_t *p = buf;
	size_t off = 5;
	uint64_t klen;

	*d = (struct hm_jstream_dec){ .p = p, .len = len };
	if (len < 5 || memcmp(p, HM_JSTREAM_MAGIC, 4))
		return bad(d, 0, "not a thread stream (bad magic)");
	if (p[4] != HM_JSTREAM_VERSION)
		return bad(d, 4, "unsupported thread stream version");
	if (get_u32(p, len, &off, &h.thread) < 0 || get_u32(p, len, &off, &h.gen) < 0 ||
	    get_u32(p, len, &off, &h.pid) < 0 || get_u32(p, len, &off, &h.tid) < 0)
		return bad(d, off, "truncated or malformed stream header");
	if (get_varint(p, len, &off, &klen) < 0 || klen == 0 || klen >= HM_LINEAGE_MAX ||
	    klen > len - off)
		return bad(d, off, "bad lineage key length in stream header");
	memcpy(h.lineage, p + off, klen);
	h.lineage[klen] = 0;
	if (strlen(h.lineage) != klen || !hm_lineage_valid(h.lineage))
		return bad(d, off, "invalid lineage key in stream header");
	off += klen;
	if (len - off < 16)
		return bad(d, off, "truncated stream header (process ids)");
	h.proc = get_u64le(p + off);
	h.parent = get_u64le(p + off + 8);
	off += 16;
	if (!h.proc)
		return bad(d, off - 16, "process id 0 in stream header");
	if (get_varint(p, len, &off, &klen) < 0 || klen == 0 || klen >= HM_EXE_MAX ||
	    klen > len - off)
		return bad(d, off, "bad executable name length in stream header");
	memcpy(h.exe, p + off, klen);
	h.exe[klen] = 0;
	if (strlen(h.exe) != klen || !hm_exe_valid(h.exe))
		return bad(d, off, "invalid executable name in stream header");
	off += klen;
	if (get_u32(p, len, &off, &h.exe_count) < 0)
		return bad(d, off, "truncated or malformed stream header");
	h.image = hm_image_id(h.proc, h.exe, h.exe_count);
	d->hdr = h;
	d->off = off;
	return 0;
}

int hm_jstream_next(struct hm_jstream_dec *d, struct hm_jrec *ret)
{
	const uint8_t *p = d->p;
	size_t len = d->len, off = d->off, start = d->off;
	struct hm_jrec r = {};
	uint64_t v, w;
	uint8_t tag;

	if (d->why)
		return -EBADMSG;
	if (off >= len)
		return 0;
	if (d->ended)
		return bad(d, off, "bytes after the end record");
	tag = p[off++];
	if (tag < TAG_END) {
		unsigned s = tag >> 3;
		int32_t id = (int32_t)s;

		r.type = HM_JREC_CLOCK;
		r.call = tag & 7;
		if (s == SLOT_ESCAPE) {
			int64_t sid;

			if (get_varint(p, len, &off, &v) < 0)
				return bad(d, start, "truncated clock id");
			sid = unzigzag(v);
			if (sid < INT32_MIN || sid > INT32_MAX ||
			    clock_slot((int32_t)sid) != SLOT_ESCAPE)
				return bad(d, start, "bad escaped clock id");
			id = (int32_t)sid;
		}
		if (get_varint(p, len, &off, &v) < 0)
			return bad(d, start, "truncated clock reading");
		w = d->pred.delta[s] + (uint64_t)unzigzag(v);
		d->pred.delta[s] = w;
		d->pred.last[s] += w;
		r.clock.id = id;
		r.clock.ns = (int64_t)d->pred.last[s];
	} else if (tag == TAG_END) {
		r.type = HM_JREC_END;
		if (get_varint(p, len, &off, &r.end.reason) < 0)
			return bad(d, start, "truncated end record");
		d->ended = true;
	} else if ((tag & 0xf0) == TAG_EXT || (tag & 0xe0) == TAG_ENTROPY) {
		bool ext = (tag & 0xf0) == TAG_EXT;

		if (get_varint(p, len, &off, &v) < 0 || v > len - off)
			return bad(d, start,
				   ext ? "truncated extension record" : "truncated entropy record");
		if (ext) {
			r.type = HM_JREC_EXT;
			r.ext.kind = tag & 0x0f;
			r.ext.bytes = p + off;
			r.ext.len = (size_t)v;
		} else {
			r.type = HM_JREC_ENTROPY;
			r.call = tag & 0x1f;
			r.entropy.bytes = p + off;
			r.entropy.len = (size_t)v;
		}
		off += (size_t)v;
	} else if ((tag & 0xe0) == TAG_WAIT) {
		r.type = HM_JREC_WAIT;
		r.call = tag & 0x1f;
		if (off >= len)
			return bad(d, start, "truncated wait record");
		if (p[off] & ~(WAIT_TIMED_OUT | WAIT_LAG) || (p[off] & WAIT_LAG && !(p[off] & WAIT_TIMED_OUT)))
			return bad(d, start, "unknown wait flags");
		r.wait.lag = p[off] & WAIT_LAG;
		r.wait.timed_out = p[off++] & WAIT_TIMED_OUT;
		if (get_varint(p, len, &off, &v) < 0 || get_varint(p, len, &off, &w) < 0)
			return bad(d, start, "truncated wait record");
		r.wait.result = unzigzag(v);
		d->pred.wait_last += (uint64_t)unzigzag(w);
		r.wait.vtime_ns = d->pred.wait_last;
	} else {
		return bad(d, start, "unknown record tag");
	}
	r.index = ++d->n_records;
	d->off = off;
	*ret = r;
	return 1;
}

int hm_jstream_scan(const void *buf, size_t len, struct hm_jstream_summary *sum, const char **why)
{
	struct hm_jstream_dec d;
	struct hm_jrec rec;
	int r;

	*sum = (struct hm_jstream_summary){};
	r = hm_jstream_dec_init(&d, buf, len);
	if (r < 0) {
		*why = d.why;
		return r;
	}
	sum->hdr = d.hdr;
	sum->valid_len = d.off;
	while ((r = hm_jstream_next(&d, &rec)) > 0) {
		sum->records++;
		sum->valid_len = d.off;
		switch (rec.type) {
		case HM_JREC_CLOCK:
			sum->clock++;
			break;
		case HM_JREC_ENTROPY:
			sum->entropy++;
			sum->entropy_bytes += rec.entropy.len;
			break;
		case HM_JREC_WAIT:
			sum->wait++;
			sum->wait_timed_out += rec.wait.timed_out;
			sum->wait_lag += rec.wait.lag;
			break;
		case HM_JREC_END:
			sum->ended = true;
			sum->end_reason = rec.end.reason;
			break;
		case HM_JREC_EXT:
			sum->ext++;
			break;
		}
	}
	if (r < 0)
		*why = d.why;
	return r;
}

const char *hm_jrec_type_name(enum hm_jrec_type type)
{
	switch (type) {
	case HM_JREC_CLOCK:
		return "clock";
	case HM_JREC_ENTROPY:
		return "entropy";
	case HM_JREC_WAIT:
		return "wait";
	case HM_JREC_END:
		return "end";
	case HM_JREC_EXT:
		return "extension";
	}
	return "unknown";
}

const char *hm_jrec_call_name(enum hm_jrec_type type, uint8_t call)
{
	static const char *const clock[] = {
		[HM_JC_CLOCK_GETTIME] = "clock_gettime",
		[HM_JC_GETTIMEOFDAY] = "gettimeofday",
		[HM_JC_TIME] = "time",
		[HM_JC_TIMESPEC_GET] = "timespec_get",
		[HM_JC_FTIME] = "ftime",
		[HM_JC_CLOCK] = "clock",
		[HM_JC_SYSCALL] = "syscall(clock_gettime)",
		[HM_JC_OTHER] = "other clock",
	};
	static const char *const entropy[HM_JE_MAX + 1] = {
		[HM_JE_GETRANDOM] = "getrandom",
		[HM_JE_GETENTROPY] = "getentropy",
		[HM_JE_ARC4RANDOM] = "arc4random",
		[HM_JE_ARC4RANDOM_BUF] = "arc4random_buf",
		[HM_JE_ARC4RANDOM_UNIFORM] = "arc4random_uniform",
		[HM_JE_URANDOM_READ] = "read(/dev/urandom)",
		[HM_JE_RANDOM_READ] = "read(/dev/random)",
		[HM_JE_SYSCALL_GETRANDOM] = "syscall(getrandom)",
		[HM_JE_OTHER] = "other entropy",
	};
	static const char *const wait[HM_JW_MAX + 1] = {
		[HM_JW_SLEEP] = "sleep",
		[HM_JW_USLEEP] = "usleep",
		[HM_JW_NANOSLEEP] = "nanosleep",
		[HM_JW_CLOCK_NANOSLEEP] = "clock_nanosleep",
		[HM_JW_POLL] = "poll",
		[HM_JW_PPOLL] = "ppoll",
		[HM_JW_SELECT] = "select",
		[HM_JW_PSELECT] = "pselect",
		[HM_JW_EPOLL_WAIT] = "epoll_wait",
		[HM_JW_EPOLL_PWAIT] = "epoll_pwait",
		[HM_JW_EPOLL_PWAIT2] = "epoll_pwait2",
		[HM_JW_COND_TIMEDWAIT] = "pthread_cond_timedwait",
		[HM_JW_COND_CLOCKWAIT] = "pthread_cond_clockwait",
		[HM_JW_MUTEX_TIMEDLOCK] = "pthread_mutex_timedlock",
		[HM_JW_MUTEX_CLOCKLOCK] = "pthread_mutex_clocklock",
		[HM_JW_SEM_TIMEDWAIT] = "sem_timedwait",
		[HM_JW_SEM_CLOCKWAIT] = "sem_clockwait",
		[HM_JW_OTHER] = "other wait",
	};
	const char *s = NULL;

	if (type == HM_JREC_CLOCK && call < ARRAY_SIZE(clock))
		s = clock[call];
	else if (type == HM_JREC_ENTROPY && call < ARRAY_SIZE(entropy))
		s = entropy[call];
	else if (type == HM_JREC_WAIT && call < ARRAY_SIZE(wait))
		s = wait[call];
	return s ? s : "unknown call";
}
