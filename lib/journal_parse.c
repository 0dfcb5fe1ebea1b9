// SPDX-License-Identifier: MIT
/*
 * The journal codec, reader side: a payload parser over untrusted bytes that
 * checks every length, count and varint against what remains, caps what it
 * allocates, and says in one line what was wrong. journal_read.c
 * decompresses; docs/journal-format.md is the specification.
 */
#include <inttypes.h>
#include <stdarg.h>
#include "journal.h"
#include "scope.h"
#include "util.h"
#include "journal_int.h"

int hm_journal_fail_msg(char *err, size_t errlen, int code, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return code;
}

/* --- reading: the payload --------------------------------------------------------- */

struct cur {
	const uint8_t *p;
	size_t len, off;
};

static size_t c_left(const struct cur *c)
{
	return c->len - c->off;
}

static int c_le(struct cur *c, unsigned n, uint64_t *ret)
{
	uint64_t v = 0;

	if (c_left(c) < n)
		return -EBADMSG;
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)c->p[c->off + i] << (8 * i);
	c->off += n;
	*ret = v;
	return 0;
}

/* Canonical LEB128, as in thread streams. */
static int c_varint(struct cur *c, uint64_t *ret)
{
	uint64_t v = 0;

	for (unsigned n = 0; n < 10; n++) {
		uint8_t b;

		if (c->off + n >= c->len)
			return -EBADMSG;
		b = c->p[c->off + n];
		if (n == 9 && b > 1)
			return -EBADMSG;
		v |= (uint64_t)(b & 0x7f) << (7 * n);
		if (!(b & 0x80)) {
			if (b == 0 && n > 0)
				return -EBADMSG;
			c->off += n + 1;
			*ret = v;
			return 0;
		}
	}
	return -EBADMSG;
}

/* A count of elements each at least min_size bytes long: never more than
 * the bytes left can hold, so what it sizes is bounded by the input. */
static int c_count(struct cur *c, size_t min_size, size_t *ret)
{
	uint64_t n;

	if (c_varint(c, &n) < 0 || n > c_left(c) / min_size)
		return -EBADMSG;
	*ret = (size_t)n;
	return 0;
}

static int c_str(struct cur *c, char **ret)
{
	uint64_t n;
	char *s;

	if (c_varint(c, &n) < 0 || n > c_left(c))
		return -EBADMSG;
	if (memchr(c->p + c->off, 0, (size_t)n))
		return -EBADMSG;
	s = strndup((const char *)c->p + c->off, (size_t)n);
	if (!s)
		return -ENOMEM;
	c->off += (size_t)n;
	*ret = s;
	return 0;
}

struct pctx {
	struct hm_journal *j;
	char *err;
	size_t errlen;
	size_t index; /* of the section being parsed, from 1 */
	size_t offset; /* of its header in the payload */
	const char *name;
	bool newer_minor;
	int32_t scope; /* the scope the next stream sections belong to, -1 none */
};

static int bad(struct pctx *x, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int bad(struct pctx *x, int code, const char *fmt, ...)
{
	char what[200];
	va_list ap;

	if (code == -ENOMEM)
		return hm_journal_fail_msg(x->err, x->errlen, code, "out of memory");
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (!x->name)
		return hm_journal_fail_msg(x->err, x->errlen, code, "malformed journal: %s", what);
	return hm_journal_fail_msg(x->err, x->errlen, code,
			"malformed journal: section %zu (%s) at offset %zu: %s", x->index, x->name,
			x->offset, what);
}

/* A known section's payload may only grow in a newer minor version. */
static int done(struct pctx *x, struct cur *c)
{
	if (c_left(c) && !x->newer_minor)
		return bad(x, -EBADMSG, "%zu unexpected trailing bytes", c_left(c));
	return 0;
}

static int kv_list(struct cur *c, size_t *ret_n, struct hm_journal_kv **ret, bool env)
{
	struct hm_journal_kv *kv;
	size_t n;
	int r;

	if (c_count(c, 2, &n) < 0)
		return -EBADMSG;
	kv = calloc(n ? n : 1, sizeof(*kv));
	if (!kv)
		return -ENOMEM;
	/* Stored first so that hm_journal_free releases a partial list. */
	*ret = kv;
	*ret_n = n;
	for (size_t i = 0; i < n; i++) {
		uint64_t has = 1;

		r = c_str(c, &kv[i].key);
		if (r < 0)
			return r;
		if (env && (c_le(c, 1, &has) < 0 || has > 1))
			return -EBADMSG;
		if (has) {
			r = c_str(c, &kv[i].value);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

static int parse_config(struct pctx *x, struct cur *c)
{
	struct hm_journal_config *k = &x->j->config;
	uint64_t seed, now, tick, spin, flags, net, run, uid, started;
	size_t argc;
	int r;

	if (c_le(c, 8, &seed) < 0 || c_le(c, 8, &now) < 0 || c_le(c, 8, &tick) < 0 ||
	    c_le(c, 8, &spin) < 0 || c_le(c, 1, &flags) < 0 || c_le(c, 1, &net) < 0 ||
	    c_le(c, 8, &run) < 0 || c_le(c, 4, &uid) < 0 || c_le(c, 8, &started) < 0)
		return bad(x, -EBADMSG, "truncated");
	if ((flags & ~CF_KNOWN) && !x->newer_minor)
		return bad(x, -EBADMSG, "unknown flags 0x%llx", (unsigned long long)flags);
	if (net > 2)
		return bad(x, -EBADMSG, "unknown network mode %llu", (unsigned long long)net);
	hm_config_init(&k->cfg);
	k->cfg.seed = seed;
	k->cfg.seed_set = flags & CF_SEED_SET;
	k->cfg.now_ns = (int64_t)now;
	k->cfg.tick_ns = tick;
	k->cfg.spin_limit = spin;
	k->cfg.clock_virtual = flags & CF_CLOCK_VIRTUAL;
	k->cfg.rng = flags & CF_RNG;
	k->cfg.aslr = flags & CF_ASLR;
	k->cfg.loopback = flags & CF_LOOPBACK;
	k->cfg.unix_sockets = flags & CF_UNIX;
	k->cfg.network = net == 2 ? HM_NETWORK_AUDIT : net ? HM_NETWORK_OFF : HM_NETWORK_BLOCK;
	k->run_id = run;
	k->uid = (uint32_t)uid;
	k->started_ns = (int64_t)started;
	if (c_count(c, 1, &argc) < 0)
		return bad(x, -EBADMSG, "bad argument count");
	k->argv = calloc(argc + 1, sizeof(char *));
	if (!k->argv)
		return bad(x, -ENOMEM, "out of memory");
	for (k->argc = 0; k->argc < argc; k->argc++) {
		r = c_str(c, &k->argv[k->argc]);
		if (r < 0)
			return bad(x, r, "bad argument %zu", k->argc);
	}
	r = kv_list(c, &k->n_opts, &k->opts, false);
	if (r < 0)
		return bad(x, r, "bad option list");
	x->j->has_config = true;
	return done(x, c);
}

static int parse_fingerprint(struct pctx *x, struct cur *c)
{
	struct hm_journal_fingerprint *f = &x->j->fingerprint;
	int r;

	r = kv_list(c, &f->n_fields, &f->fields, false);
	if (r < 0)
		return bad(x, r, "bad field list");
	r = kv_list(c, &f->n_env, &f->env, true);
	if (r < 0)
		return bad(x, r, "bad environment list");
	x->j->has_fingerprint = true;
	return done(x, c);
}

static int parse_exit(struct pctx *x, struct cur *c)
{
	uint64_t status, sig, wall, strag;

	if (c_le(c, 4, &status) < 0 || c_le(c, 4, &sig) < 0 || c_le(c, 8, &wall) < 0 ||
	    c_le(c, 4, &strag) < 0)
		return bad(x, -EBADMSG, "truncated");
	x->j->exit = (struct hm_journal_exit){
		.status = (int32_t)(uint32_t)status,
		.signal = (int32_t)(uint32_t)sig,
		.wall_ns = wall,
		.stragglers = (uint32_t)strag,
	};
	x->j->has_exit = true;
	return done(x, c);
}

static int grow(void **arr, size_t n, size_t *cap, size_t size);

static int parse_scope(struct pctx *x, struct cur *c, size_t *cap)
{
	struct hm_journal *j = x->j;
	struct hm_journal_scope *sc;
	uint64_t kind, status, seed, now, mono;
	int r;

	r = grow((void **)&j->scopes, j->n_scopes, cap, sizeof(*j->scopes));
	if (r < 0)
		return bad(x, r, "out of memory");
	sc = &j->scopes[j->n_scopes++]; /* counted first: hm_journal_free frees what it holds */
	memset(sc, 0, sizeof(*sc));
	if (c_le(c, 1, &kind) < 0 || c_le(c, 1, &status) < 0 || c_le(c, 8, &seed) < 0 ||
	    c_le(c, 8, &now) < 0 || c_le(c, 8, &mono) < 0 || c_str(c, &sc->dir) < 0 ||
	    c_str(c, &sc->name) < 0 || c_str(c, &sc->root) < 0)
		return bad(x, -EBADMSG, "truncated");
	sc->kind = kind;
	sc->status = status;
	sc->seed = seed;
	sc->now_ns = (int64_t)now;
	sc->mono_ns = (int64_t)mono;
	if (kind > HM_JSCOPE_CONT || status > HM_SCOPE_STATUS_MAX || !hm_journal_scope_ok(sc))
		return bad(x, -EBADMSG, "a malformed scope (kind %" PRIu64 ", status %" PRIu64 ", "
			   "directory '%s')", kind, status, sc->dir);
	for (size_t i = 0; i + 1 < j->n_scopes; i++)
		if (!strcmp(j->scopes[i].dir, sc->dir))
			return bad(x, -EBADMSG, "two scopes with the directory '%s'", sc->dir);
	return done(x, c);
}

static int grow(void **arr, size_t n, size_t *cap, size_t size)
{
	void *p;
	size_t ncap;

	if (n < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 8;
	p = reallocarray(*arr, ncap, size);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = ncap;
	return 0;
}

static int parse_stream(struct pctx *x, struct cur *c, size_t *cap)
{
	struct hm_journal *j = x->j;
	struct hm_journal_stream *s;
	const char *why = NULL;
	int r;

	r = grow((void **)&j->streams, j->n_streams, cap, sizeof(*j->streams));
	if (r < 0)
		return bad(x, r, "out of memory");
	s = &j->streams[j->n_streams];
	r = hm_jstream_scan(c->p + c->off, c_left(c), &s->sum, &why);
	if (r < 0)
		return bad(x, -EBADMSG, "thread stream %s thread %u, byte %zu: %s",
			   s->sum.hdr.lineage[0] ? s->sum.hdr.lineage : "?", s->sum.hdr.thread,
			   s->sum.valid_len, why ? why : "malformed");
	s->data = c->p + c->off;
	s->len = c_left(c);
	s->scope = x->scope;
	if (x->scope >= 0)
		j->scopes[x->scope].n_streams++;
	c->off = c->len;
	j->n_streams++;
	return 0;
}

static int parse_kernel(struct pctx *x, struct cur *c, size_t *cap)
{
	struct hm_journal *j = x->j;
	uint64_t size, reserved;
	size_t n;
	int r;

	if (c_le(c, 4, &size) < 0 || c_le(c, 4, &reserved) < 0)
		return bad(x, -EBADMSG, "truncated");
	if (size == 0 || size > HM_JOURNAL_KREC_MAX)
		return bad(x, -EBADMSG, "record size %llu out of range", (unsigned long long)size);
	if (reserved && !x->newer_minor)
		return bad(x, -EBADMSG, "reserved field is not zero");
	if (c_left(c) % size)
		return bad(x, -EBADMSG, "%zu bytes are not a whole number of %llu-byte records",
			   c_left(c), (unsigned long long)size);
	n = c_left(c) / size;
	r = grow((void **)&j->kernel, j->n_kernel, cap, sizeof(*j->kernel));
	if (r < 0)
		return bad(x, r, "out of memory");
	j->kernel[j->n_kernel++] = (struct hm_journal_kernel){
		.record_size = (uint32_t)size,
		.n_records = n,
		.records = c->p + c->off,
	};
	j->kernel_records += n;
	c->off = c->len;
	return 0;
}

static int parse_kernel_summary(struct pctx *x, struct cur *c)
{
	if (c_le(c, 8, &x->j->kernel_events) < 0 || c_le(c, 8, &x->j->kernel_dropped) < 0)
		return bad(x, -EBADMSG, "truncated");
	x->j->has_kernel_summary = true;
	return done(x, c);
}

/* Lineage keys in tree order: component by component, numerically. */
static int lineage_cmp(const char *a, const char *b)
{
	while (*a && *b) {
		uint64_t x = 0, y = 0;
		const char *ea = hm_parse_dec_u64(a, &x), *eb = hm_parse_dec_u64(b, &y);

		if (!ea || !eb)
			return strcmp(a, b);
		if (x != y)
			return x < y ? -1 : 1;
		a = *ea ? ea + 1 : ea;
		b = *eb ? eb + 1 : eb;
	}
	return *a ? 1 : *b ? -1 : 0;
}

#define CMP(x, y)                                                                                 \
	do {                                                                                       \
		if ((x) != (y))                                                                    \
			return (x) < (y) ? -1 : 1;                                                 \
	} while (0)

int hm_journal_stream_cmp(const void *pa, const void *pb)
{
	const struct hm_jstream_header *a = &((const struct hm_journal_stream *)pa)->sum.hdr;
	const struct hm_jstream_header *b = &((const struct hm_journal_stream *)pb)->sum.hdr;
	int r = lineage_cmp(a->lineage, b->lineage);

	if (r)
		return r;
	CMP(a->parent, b->parent);
	CMP(a->proc, b->proc);
	CMP(a->gen, b->gen);
	CMP(a->image, b->image);
	CMP(a->thread, b->thread);
	return 0;
}

/* By scope (outside scopes first, then in the journal's order), then tree order. */
static int scoped_cmp(const void *pa, const void *pb)
{
	const struct hm_journal_stream *a = pa, *b = pb;

	CMP(a->scope, b->scope);
	return hm_journal_stream_cmp(pa, pb);
}

/* What names a stream: (scope, image, thread). */
static int identity_cmp(const void *pa, const void *pb)
{
	const struct hm_jstream_header *a = &((const struct hm_journal_stream *)pa)->sum.hdr;
	const struct hm_jstream_header *b = &((const struct hm_journal_stream *)pb)->sum.hdr;

	CMP(((const struct hm_journal_stream *)pa)->scope, ((const struct hm_journal_stream *)pb)->scope);
	CMP(a->image, b->image);
	CMP(a->thread, b->thread);
	return 0;
}
#undef CMP

const struct hm_journal_stream *hm_journal_find_stream(const struct hm_journal *j, uint64_t image,
						       uint32_t thread)
{
	for (size_t i = 0; i < j->n_streams; i++)
		if (j->streams[i].sum.hdr.image == image && j->streams[i].sum.hdr.thread == thread)
			return &j->streams[i];
	return NULL;
}

/* Walk the section headers to the end section; check its count and the
 * CRC-32C of everything before it, and that nothing follows it. */
static int check_integrity(struct pctx *x)
{
	struct hm_journal *j = x->j;
	struct cur c = { j->buf, j->size, HEADER_SIZE };
	size_t n = 0;

	for (;;) {
		uint64_t type, flags, len, count = 0, crc = 0;
		size_t at = c.off;

		if (c_le(&c, 2, &type) < 0 || c_le(&c, 2, &flags) < 0 || c_le(&c, 4, &len) < 0)
			return bad(x, -EBADMSG, "no end section: the journal is truncated");
		if (len > c_left(&c))
			return bad(x, -EBADMSG,
				   "section %zu at offset %zu claims %llu bytes, %zu remain", n + 1,
				   at, (unsigned long long)len, c_left(&c));
		if (type != HM_JSEC_END) {
			c.off += (size_t)len;
			n++;
			continue;
		}
		if (len != END_SIZE || flags != HM_JSEC_F_CRITICAL)
			return bad(x, -EBADMSG, "malformed end section at offset %zu", at);
		c_le(&c, 4, &count);
		c_le(&c, 4, &crc);
		if (crc != hm_journal_crc32c(0, j->buf, at))
			return bad(x, -EBADMSG, "checksum mismatch: the journal is corrupted");
		if (count != n)
			return bad(x, -EBADMSG,
				   "the end section counts %llu sections, there are %zu",
				   (unsigned long long)count, n);
		if (c_left(&c))
			return bad(x, -EBADMSG, "%zu bytes after the end section", c_left(&c));
		return 0;
	}
}

static int parse_payload(struct pctx *x)
{
	struct hm_journal *j = x->j;
	struct cur c = { j->buf, j->size, 0 };
	size_t stream_cap = 0, kernel_cap = 0, scope_cap = 0;
	uint64_t major = 0, minor = 0, flags = 0; /* c_le sets them; gcc -fsanitize cannot tell */
	bool ended = false;
	int r;

	if (j->size < HEADER_SIZE || memcmp(j->buf, HM_JOURNAL_MAGIC, 8))
		return bad(x, -EBADMSG, "no journal header (bad magic)");
	c.off = 8;
	c_le(&c, 2, &major);
	c_le(&c, 2, &minor);
	c_le(&c, 4, &flags);
	j->major = (uint16_t)major;
	j->minor = (uint16_t)minor;
	if (major == 0)
		return bad(x, -EBADMSG, "format version 0.%llu is not a release format",
			   (unsigned long long)minor);
	if (major > HM_JOURNAL_MAJOR)
		return hm_journal_fail_msg(
			x->err, x->errlen, -EPROTONOSUPPORT,
			"journal format %llu.%llu is newer than this hermetic reads (%d.x): "
			"upgrade hermetic",
			(unsigned long long)major, (unsigned long long)minor, HM_JOURNAL_MAJOR);
	if (major < HM_JOURNAL_MAJOR)
		return hm_journal_fail_msg(
			x->err, x->errlen, -EPROTONOSUPPORT,
			"journal format %llu.%llu is older than this hermetic reads (%d.x): its "
			"streams are named by exec generation, not by image; replay it with the "
			"hermetic that recorded it",
			(unsigned long long)major, (unsigned long long)minor, HM_JOURNAL_MAJOR);
	if (flags)
		return bad(x, -EBADMSG, "header flags 0x%llx are not zero",
			   (unsigned long long)flags);
	x->newer_minor = minor > HM_JOURNAL_MINOR;
	/* Integrity before meaning: a corrupted section type must read as
	 * corruption, not as a section from the future. */
	r = check_integrity(x);
	if (r < 0)
		return r;

	while (c_left(&c)) {
		const struct sec_info *si;
		uint64_t type, sflags, len;
		struct cur s;

		x->index++;
		x->offset = c.off;
		x->name = NULL;
		if (ended)
			return bad(x, -EBADMSG, "%zu bytes after the end section", c_left(&c));
		if (c_le(&c, 2, &type) < 0 || c_le(&c, 2, &sflags) < 0 || c_le(&c, 4, &len) < 0)
			return bad(x, -EBADMSG, "truncated section header at offset %zu",
				   x->offset);
		if (len > c_left(&c))
			return bad(x, -EBADMSG,
				   "section %zu at offset %zu claims %llu bytes, %zu remain",
				   x->index, x->offset, (unsigned long long)len, c_left(&c));
		s = (struct cur){ c.p + c.off, (size_t)len, 0 };
		c.off += (size_t)len;
		/* A scope's streams are the stream sections right after it. */
		if (type != HM_JSEC_STREAM)
			x->scope = -1;
		si = hm_journal_sec_info((uint16_t)type);
		if (!si) {
			if (sflags & HM_JSEC_F_CRITICAL)
				return hm_journal_fail_msg(
					x->err, x->errlen, -EPROTONOSUPPORT,
					"journal has a critical section of type %llu that this "
					"hermetic (format %d.%d) does not know: upgrade hermetic",
					(unsigned long long)type, HM_JOURNAL_MAJOR,
					HM_JOURNAL_MINOR);
			j->n_skipped++;
			j->n_sections++;
			continue;
		}
		x->name = si->name;
		if ((sflags & HM_JSEC_F_CRITICAL) != si->flags ||
		    ((sflags & ~HM_JSEC_F_CRITICAL) &&
		     (!x->newer_minor || si->type == HM_JSEC_END)))
			return bad(x, -EBADMSG, "bad flags 0x%llx", (unsigned long long)sflags);
		switch (si->type) {
		case HM_JSEC_CONFIG:
			if (j->has_config)
				return bad(x, -EBADMSG, "a second configuration section");
			r = parse_config(x, &s);
			break;
		case HM_JSEC_FINGERPRINT:
			if (j->has_fingerprint)
				return bad(x, -EBADMSG, "a second fingerprint section");
			r = parse_fingerprint(x, &s);
			break;
		case HM_JSEC_EXIT:
			if (j->has_exit)
				return bad(x, -EBADMSG, "a second exit section");
			r = parse_exit(x, &s);
			break;
		case HM_JSEC_STREAM:
			r = parse_stream(x, &s, &stream_cap);
			break;
		case HM_JSEC_SCOPE:
			r = parse_scope(x, &s, &scope_cap);
			x->scope = r < 0 ? -1 : (int32_t)j->n_scopes - 1;
			break;
		case HM_JSEC_KERNEL:
			r = parse_kernel(x, &s, &kernel_cap);
			break;
		case HM_JSEC_KERNEL_SUMMARY:
			if (j->has_kernel_summary)
				return bad(x, -EBADMSG, "a second kernel summary section");
			r = parse_kernel_summary(x, &s);
			break;
		case HM_JSEC_END:
			/* Its length, flags, count and CRC were checked first. */
			ended = true;
			r = 0;
			break;
		default:
			r = -EBADMSG;
		}
		if (r < 0)
			return r;
		if (si->type != HM_JSEC_END)
			j->n_sections++;
	}
	x->name = NULL;
	if (!ended)
		return bad(x, -EBADMSG, "no end section: the journal is truncated");
	if (!j->has_config)
		return bad(x, -EBADMSG, "no configuration section");
	/* Replay looks streams up by (image, thread): refuse a journal that
	 * names one stream twice; then put them in tree order. */
	if (j->n_streams > 1)
		qsort(j->streams, j->n_streams, sizeof(*j->streams), identity_cmp);
	for (size_t i = 1; i < j->n_streams; i++)
		if (!identity_cmp(&j->streams[i - 1], &j->streams[i]))
			return bad(x, -EBADMSG, "two streams for process %s (%s #%u) thread %u",
				   j->streams[i].sum.hdr.lineage, j->streams[i].sum.hdr.exe,
				   j->streams[i].sum.hdr.exe_count, j->streams[i].sum.hdr.thread);
	if (j->n_streams > 1)
		qsort(j->streams, j->n_streams, sizeof(*j->streams), scoped_cmp);
	return 0;
}

static void kv_free(struct hm_journal_kv *kv, size_t n)
{
	for (size_t i = 0; kv && i < n; i++) {
		free(kv[i].key);
		free(kv[i].value);
	}
	free(kv);
}

void hm_journal_free(struct hm_journal *j)
{
	if (!j)
		return;
	if (j->config.argv)
		for (size_t i = 0; i < j->config.argc; i++)
			free(j->config.argv[i]);
	free(j->config.argv);
	kv_free(j->config.opts, j->config.n_opts);
	kv_free(j->fingerprint.fields, j->fingerprint.n_fields);
	kv_free(j->fingerprint.env, j->fingerprint.n_env);
	free(j->streams);
	for (size_t i = 0; i < j->n_scopes; i++) {
		free(j->scopes[i].dir);
		free(j->scopes[i].name);
		free(j->scopes[i].root);
	}
	free(j->scopes);
	free(j->kernel);
	free(j->buf);
	free(j);
}

/* Takes ownership of payload, whatever happens. */
int hm_journal_parse_owned(uint8_t *payload, size_t len, struct hm_journal **ret, char *err,
		       size_t errlen)
{
	struct hm_journal *j = calloc(1, sizeof(*j));
	struct pctx x = { .j = j, .err = err, .errlen = errlen, .scope = -1 };
	int r;

	if (!j) {
		free(payload);
		return hm_journal_fail_msg(err, errlen, -ENOMEM, "out of memory");
	}
	j->buf = payload;
	j->size = len;
	r = parse_payload(&x);
	if (r < 0) {
		hm_journal_free(j);
		return r;
	}
	*ret = j;
	return 0;
}

int hm_journal_parse(const void *payload, size_t len, struct hm_journal **ret, char *err,
		     size_t errlen)
{
	uint8_t *copy = malloc(len ? len : 1);

	if (!copy)
		return hm_journal_fail_msg(err, errlen, -ENOMEM, "out of memory");
	if (len)
		memcpy(copy, payload, len);
	return hm_journal_parse_owned(copy, len, ret, err, errlen);
}

const char *hm_journal_fp_get(const struct hm_journal_fingerprint *f, const char *key)
{
	for (size_t i = 0; i < f->n_fields; i++)
		if (f->fields[i].key && !strcmp(f->fields[i].key, key))
			return f->fields[i].value;
	return NULL;
}
