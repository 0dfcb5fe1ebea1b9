// SPDX-License-Identifier: MIT
/*
 * The journal codec: thread streams and journal files round-trip every
 * record and section type; sizes of the benchmarks; and every
 * truncation, every single-bit flip and a set of hand-crafted hostile inputs
 * are refused with a clear error, never a crash.
 *
 * `journal --write FILE` writes the sample journal and `journal
 * --write-newer-major FILE` one of a future major format, and exit (used by
 * tests/integration/journal.sh).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <zstd.h>
#include "chacha20.h"
#include "jstream.h"
#include "journal.h"
#include "util.h"
#include "test.h"

#define MB (1000.0 * 1000.0)

/* --- helpers ----------------------------------------------------------------- */

static uint32_t crc32c(const void *data, size_t n)
{
	const uint8_t *p = data;
	uint32_t c = ~0u;

	while (n--) {
		c ^= *p++;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0x82f63b78u : c >> 1;
	}
	return ~c;
}

/* The whole content of fd from offset 0. */
static uint8_t *slurp(int fd, size_t *ret_len)
{
	struct stat st;
	uint8_t *p;

	if (fstat(fd, &st) < 0)
		return NULL;
	p = malloc(st.st_size + 1);
	if (!p || pread(fd, p, st.st_size, 0) != st.st_size) {
		free(p);
		return NULL;
	}
	*ret_len = st.st_size;
	return p;
}

static uint8_t *unzstd(const uint8_t *z, size_t zlen, size_t *ret_len)
{
	size_t cap = 64 << 20;
	uint8_t *p = malloc(cap);
	size_t n = ZSTD_decompress(p, cap, z, zlen);

	if (ZSTD_isError(n)) {
		free(p);
		return NULL;
	}
	*ret_len = n;
	return p;
}

static uint8_t *rezstd(const uint8_t *d, size_t len, size_t *ret_len)
{
	size_t cap = ZSTD_compressBound(len);
	uint8_t *p = malloc(cap);
	ZSTD_CCtx *c = ZSTD_createCCtx();
	size_t n;

	ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
	n = ZSTD_compress2(c, p, cap, d, len);
	ZSTD_freeCCtx(c);
	*ret_len = n;
	return p;
}

/* A hand-made payload: header, sections, then a correct end section. */
struct pl {
	uint8_t b[1 << 16];
	size_t len;
	uint32_t n;
};

static void pl_init(struct pl *p, uint16_t major, uint16_t minor)
{
	memcpy(p->b, HM_JOURNAL_MAGIC, 8);
	p->b[8] = major & 0xff, p->b[9] = major >> 8;
	p->b[10] = minor & 0xff, p->b[11] = minor >> 8;
	memset(p->b + 12, 0, 4);
	p->len = 16;
	p->n = 0;
}

static void pl_put(struct pl *p, const void *d, size_t n)
{
	memcpy(p->b + p->len, d, n);
	p->len += n;
}

static void pl_sec(struct pl *p, uint16_t type, uint16_t flags, const void *d, size_t n)
{
	uint8_t h[8] = { type & 0xff, type >> 8,       flags & 0xff,	 flags >> 8,
			 n & 0xff,    (n >> 8) & 0xff, (n >> 16) & 0xff, n >> 24 };

	pl_put(p, h, 8);
	pl_put(p, d, n);
	p->n++;
}

static void pl_end(struct pl *p)
{
	uint32_t crc = crc32c(p->b, p->len);
	uint8_t e[16] = { 0xff, 0xff, 1, 0, 8, 0, 0, 0 };

	memcpy(e + 8, &p->n, 4);
	memcpy(e + 12, &crc, 4);
	pl_put(p, e, 16);
}

/* A minimal valid configuration payload (54 fixed bytes, argc 0, no opts). */
static size_t min_config(uint8_t *b)
{
	memset(b, 0, 56);
	b[32] = 0x06; /* clock virtual, rng */
	return 56;
}

static int parse(const struct pl *p, char *err, size_t errlen)
{
	struct hm_journal *j = NULL;
	int r = hm_journal_parse(p->b, p->len, &j, err, errlen);

	hm_journal_free(j);
	return r;
}

/* --- the sample journal -------------------------------------------------------- */

struct sample {
	uint8_t s1[4096], s2[4096], s3[4096];
	size_t l1, l2, l3;
	struct hm_journal_kv opts[1], fields[3], env[4];
	struct hm_journal_config cfg;
	struct hm_journal_fingerprint fp;
	struct hm_journal_exit exit;
	uint8_t krec[5][24];
	bool with_unknown;
};

/* A process id per lineage key, for the samples: FNV-1a of the key. */
static uint64_t proc_of(const char *key)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *key; key++)
		h = (h ^ (uint8_t)*key) * 1099511628211ULL;
	return h ? h : 1;
}

/* The image of the samples' process with that key: python3, run once. */
static uint64_t image_of(const char *key)
{
	return hm_image_id(proc_of(key), "python3", 1);
}

#define HDR(key) { .lineage = key, .proc = 1, .exe = "python3", .exe_count = 1 }

static size_t make_stream(uint8_t *buf, size_t cap, const char *key, uint32_t thread, int n)
{
	struct hm_jstream_header h = { .thread = thread, .pid = 4242, .tid = 4242 + thread,
				       .proc = proc_of(key), .exe = "python3", .exe_count = 1 };
	struct hm_jstream_enc e;
	uint8_t rnd[16];

	snprintf(h.lineage, sizeof(h.lineage), "%s", key);
	hm_jstream_enc_init(&e, buf, cap, -1, &h);
	for (int i = 0; i < n; i++) {
		hm_jstream_put_clock(&e, HM_JC_CLOCK_GETTIME, 1, 1000000000000LL + i * 1000);
		memset(rnd, i, sizeof(rnd));
		if (i % 4 == 0)
			hm_jstream_put_entropy(&e, HM_JE_GETRANDOM, rnd, sizeof(rnd));
	}
	hm_jstream_put_wait(&e, HM_JW_EPOLL_WAIT, true, 0, 1000000500000LL);
	hm_jstream_put_end(&e, thread ? HM_JEND_THREAD_EXIT : HM_JEND_EXIT);
	return e.len;
}

static void sample_init(struct sample *s)
{
	static char *argv[] = { "python3", "-c", "print(1)", NULL };

	memset(s, 0, sizeof(*s));
	s->l1 = make_stream(s->s1, sizeof(s->s1), "1", 0, 20);
	s->l2 = make_stream(s->s2, sizeof(s->s2), "1", 1, 5);
	s->l3 = make_stream(s->s3, sizeof(s->s3), "1.2", 0, 8);
	hm_config_init(&s->cfg.cfg);
	s->cfg.cfg.seed = 42;
	s->cfg.cfg.seed_set = true;
	s->cfg.cfg.tick_ns = 1000;
	s->cfg.cfg.network = HM_NETWORK_BLOCK;
	s->cfg.run_id = 7;
	s->cfg.uid = 1000;
	s->cfg.started_ns = 1764500000000000000LL;
	s->cfg.argc = 3;
	s->cfg.argv = argv;
	s->opts[0] = (struct hm_journal_kv){ "fs", "isolate" };
	s->cfg.opts = s->opts;
	s->cfg.n_opts = 1;
	s->fields[0] = (struct hm_journal_kv){ HM_FP_HOSTNAME, "ci-runner-3" };
	s->fields[1] = (struct hm_journal_kv){ HM_FP_KERNEL, "6.18.0" };
	s->fields[2] = (struct hm_journal_kv){ HM_FP_LIBC, "glibc 2.36" };
	s->env[0] = (struct hm_journal_kv){ "TZ", "UTC" };
	s->env[1] = (struct hm_journal_kv){ "AWS_SECRET_ACCESS_KEY", "hunter2" };
	s->env[2] = (struct hm_journal_kv){ "LC_ALL", "C.UTF-8" };
	s->env[3] = (struct hm_journal_kv){ "HOME", NULL };
	s->fp = (struct hm_journal_fingerprint){ 3, s->fields, 4, s->env };
	s->exit = (struct hm_journal_exit){ .status = 1, .wall_ns = 1234567890, .stragglers = 2 };
	for (int i = 0; i < 5; i++)
		memset(s->krec[i], 'a' + i, sizeof(s->krec[i]));
}

static int sample_fill(struct hm_journal_writer *w, void *userdata)
{
	struct sample *s = userdata;
	int r;

	if ((r = hm_journal_write_config(w, &s->cfg)) < 0 ||
	    (r = hm_journal_write_fingerprint(w, &s->fp)) < 0 ||
	    (r = hm_journal_write_stream(w, s->s1, s->l1)) < 0 ||
	    (r = hm_journal_write_stream(w, s->s3, s->l3)) < 0 ||
	    (r = hm_journal_write_stream(w, s->s2, s->l2)) < 0 ||
	    (r = hm_journal_write_kernel(w, 24, s->krec, 3)) < 0 ||
	    (r = hm_journal_write_kernel(w, 24, s->krec[3], 2)) < 0 ||
	    (r = hm_journal_write_kernel_summary(w, 6, 1)) < 0 ||
	    (r = hm_journal_write_exit(w, &s->exit)) < 0)
		return r;
	if (s->with_unknown) {
		r = hm_journal_section_begin(w, 0x4242, 0, 5);
		if (r >= 0)
			r = hm_journal_section_append(w, "hello", 5);
	}
	return r;
}

/* Write the sample to a memory file; return its bytes. */
static uint8_t *sample_bytes(struct sample *s, size_t *ret_len)
{
	struct hm_journal_writer *w;
	int fd = memfd_create("journal", MFD_CLOEXEC);
	uint8_t *p = NULL;

	if (fd < 0 || hm_journal_writer_new(fd, 0, &w) < 0)
		return NULL;
	if (sample_fill(w, s) >= 0 && hm_journal_writer_finish(w) >= 0)
		p = slurp(fd, ret_len);
	hm_journal_writer_free(w);
	close(fd);
	return p;
}

/* --- thread streams -------------------------------------------------------------- */

static void test_jstream_roundtrip(void)
{
	static const int32_t ids[] = {
		0, 1, 4, 7, 11, 14, 15, 20, -6, -2147483647 - 1, 2147483647
	};
	static const int64_t vals[] = { 0, 1, -1, INT64_MAX, INT64_MIN, 1577836800000000000LL, 42 };
	struct hm_jstream_header h = {
		.lineage = "1.3.1", .thread = 2, .gen = 1, .pid = 99, .tid = 100,
		.proc = 0x1234567890abcdefULL, .parent = 0xfedcba0987654321ULL,
		.exe = "python3.11", .exe_count = 3
	};
	static uint8_t buf[1 << 16];
	uint8_t ent[300];
	struct hm_jstream_enc e;
	struct hm_jstream_dec d;
	struct hm_jrec r;
	int ok = 1, n = 0, k;

	for (size_t i = 0; i < sizeof(ent); i++)
		ent[i] = (uint8_t)(i * 7);
	CHECK("jstream init refuses a small buffer",
	      hm_jstream_enc_init(&e, buf, 64, -1, &h) == -EINVAL);
	strcpy(h.lineage, "1.03");
	CHECK("jstream init refuses a bad lineage key",
	      hm_jstream_enc_init(&e, buf, sizeof(buf), -1, &h) == -EINVAL);
	strcpy(h.lineage, "1.3.1");
	h.proc = 0;
	CHECK("jstream init refuses process id 0",
	      hm_jstream_enc_init(&e, buf, sizeof(buf), -1, &h) == -EINVAL);
	h.proc = 0x1234567890abcdefULL;
	strcpy(h.exe, "a/b");
	CHECK("jstream init refuses a bad executable name",
	      hm_jstream_enc_init(&e, buf, sizeof(buf), -1, &h) == -EINVAL);
	strcpy(h.exe, "python3.11");
	CHECK("jstream init", hm_jstream_enc_init(&e, buf, sizeof(buf), -1, &h) == 0);
	/* Every clock call kind, many ids, extreme values in both orders. */
	for (int c = 0; c <= HM_JC_MAX; c++)
		for (size_t i = 0; i < ARRAY_SIZE(ids); i++)
			for (size_t v = 0; v < ARRAY_SIZE(vals); v++)
				ok &= hm_jstream_put_clock(&e, c, ids[i],
							   vals[(v + i) % ARRAY_SIZE(vals)]) == 0;
	for (int s = 0; s <= HM_JE_MAX; s++)
		ok &= hm_jstream_put_entropy(&e, s, ent, (size_t)s * 9) == 0;
	for (int c = 0; c <= HM_JW_MAX; c++)
		ok &= hm_jstream_put_wait(&e, c, (c & 1) | (c % 4 == 3 ? HM_JWAIT_LAG : 0),
					  c % 3 ? -c : INT64_MAX,
					  c % 5 ? (uint64_t)c * 1000000007ULL : UINT64_MAX) == 0;
	ok &= hm_jstream_put_end(&e, HM_JEND_EXEC) == 0;
	CHECK("jstream encode every record kind", ok);
	CHECK("jstream refuses records after end",
	      hm_jstream_put_clock(&e, HM_JC_TIME, 0, 1) == -EINVAL);
	CHECK("jstream refuses an unknown call", hm_jstream_put_clock(&e, 8, 0, 1) == -EINVAL);

	CHECK("jstream decode header",
	      hm_jstream_dec_init(&d, buf, e.len) == 0 && !strcmp(d.hdr.lineage, "1.3.1") &&
		      d.hdr.thread == 2 && d.hdr.gen == 1 && d.hdr.pid == 99 && d.hdr.tid == 100 &&
		      d.hdr.proc == 0x1234567890abcdefULL && d.hdr.parent == 0xfedcba0987654321ULL &&
		      !strcmp(d.hdr.exe, "python3.11") && d.hdr.exe_count == 3 &&
		      d.hdr.image == hm_image_id(d.hdr.proc, "python3.11", 3));
	ok = 1;
	for (int c = 0; c <= HM_JC_MAX; c++)
		for (size_t i = 0; i < ARRAY_SIZE(ids); i++)
			for (size_t v = 0; v < ARRAY_SIZE(vals); v++) {
				k = hm_jstream_next(&d, &r);
				ok &= k == 1 && r.type == HM_JREC_CLOCK && r.call == c &&
				      r.clock.id == ids[i] &&
				      r.clock.ns == vals[(v + i) % ARRAY_SIZE(vals)] &&
				      r.index == (uint64_t)++n;
			}
	CHECK("jstream clock readings round-trip (ids, calls, extremes)", ok);
	ok = 1;
	for (int s = 0; s <= HM_JE_MAX; s++) {
		k = hm_jstream_next(&d, &r);
		ok &= k == 1 && r.type == HM_JREC_ENTROPY && r.call == s &&
		      r.entropy.len == (size_t)s * 9 &&
		      !memcmp(r.entropy.bytes, ent, r.entropy.len);
	}
	CHECK("jstream entropy round-trips (every source, 0..279 bytes)", ok);
	ok = 1;
	for (int c = 0; c <= HM_JW_MAX; c++) {
		k = hm_jstream_next(&d, &r);
		ok &= k == 1 && r.type == HM_JREC_WAIT && r.call == c &&
		      r.wait.timed_out == (c & 1) && r.wait.lag == (c % 4 == 3) &&
		      r.wait.result == (c % 3 ? -c : INT64_MAX) &&
		      r.wait.vtime_ns == (c % 5 ? (uint64_t)c * 1000000007ULL : UINT64_MAX);
	}
	CHECK("jstream wait outcomes round-trip (the lag bound's flag too)", ok);
	k = hm_jstream_next(&d, &r);
	CHECK("jstream end record",
	      k == 1 && r.type == HM_JREC_END && r.end.reason == HM_JEND_EXEC);
	CHECK("jstream then the end of the bytes", hm_jstream_next(&d, &r) == 0);
	CHECK("jstream names",
	      !strcmp(hm_jrec_call_name(HM_JREC_ENTROPY, HM_JE_GETRANDOM), "getrandom") &&
		      !strcmp(hm_jrec_call_name(HM_JREC_WAIT, HM_JW_POLL), "poll") &&
		      !strcmp(hm_jrec_call_name(HM_JREC_CLOCK, 99), "unknown call"));
}

static void test_jstream_buffers(void)
{
	struct hm_jstream_header h = HDR("1");
	uint8_t small[HM_JSTREAM_MIN_BUF], big[100000];
	struct hm_jstream_summary sum;
	struct hm_jstream_enc e;
	const char *why = NULL;
	size_t before;
	uint8_t *got;
	size_t glen;
	int r, n = 0, fd;

	/* Memory mode: a full buffer refuses whole records and stays decodable. */
	hm_jstream_enc_init(&e, small, sizeof(small), -1, &h);
	while ((r = hm_jstream_put_clock(&e, HM_JC_CLOCK_GETTIME, 1, (int64_t)n * 12345)) == 0)
		n++;
	before = e.len;
	CHECK("jstream memory mode: full buffer is -ENOBUFS", r == -ENOBUFS && n > 100);
	CHECK("jstream memory mode: refused entropy leaves the stream as it was",
	      hm_jstream_put_entropy(&e, HM_JE_GETRANDOM, big, 1000) == -ENOBUFS &&
		      e.len == before);
	CHECK("jstream memory mode: what was kept decodes",
	      hm_jstream_scan(small, e.len, &sum, &why) == 0 && sum.clock == (uint64_t)n &&
		      sum.valid_len == e.len);

	/* fd mode: a minimal buffer, entropy larger than it, thousands of records. */
	fd = memfd_create("stream", MFD_CLOEXEC);
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)(i * 13 + 1);
	r = hm_jstream_enc_init(&e, small, sizeof(small), fd, &h);
	for (int i = 0; i < 5000 && r == 0; i++) {
		r = hm_jstream_put_clock(&e, HM_JC_CLOCK_GETTIME, i % 3, i * 7LL);
		if (r == 0 && i % 1000 == 0)
			r = hm_jstream_put_entropy(&e, HM_JE_URANDOM_READ, big, sizeof(big));
	}
	if (r == 0)
		r = hm_jstream_put_end(&e, HM_JEND_EXIT);
	if (r == 0)
		r = hm_jstream_flush(&e);
	got = slurp(fd, &glen);
	CHECK("jstream fd mode writes everything",
	      r == 0 && got && glen == e.flushed && e.len == 0);
	r = hm_jstream_scan(got, glen, &sum, &why);
	CHECK("jstream fd mode decodes", r == 0 && sum.clock == 5000 && sum.entropy == 5 &&
						 sum.entropy_bytes == 5 * sizeof(big) && sum.ended);
	/* A torn tail: the valid prefix is where the last whole record ends. */
	r = hm_jstream_scan(got, glen - 1, &sum, &why);
	CHECK("jstream torn tail: -EBADMSG with the valid prefix",
	      r == -EBADMSG && sum.valid_len < glen - 1 && sum.clock == 5000 && why);
	free(got);
	close(fd);

	/* A failing fd makes the error sticky. */
	hm_jstream_enc_init(&e, small, sizeof(small), 1000000, &h);
	for (n = 0; n < 1000 && (r = hm_jstream_put_clock(&e, 0, 0, n)) == 0; n++)
		;
	CHECK("jstream write error is reported and sticky",
	      r == -EBADF && hm_jstream_put_clock(&e, 0, 0, 1) == -EBADF);
}

/* The hostile stream bytes, each after a valid header for "1". */
static void test_jstream_hostile(void)
{
	static const struct {
		const char *name;
		uint8_t b[16];
		size_t n;
	} cases[] = {
		{ "unknown tag 0x81", { 0x81 }, 1 },
		{ "unknown tag 0xa0", { 0xa0 }, 1 },
		{ "truncated clock", { 0x08 }, 1 },
		{ "11-byte varint",
		  { 0x08, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01 },
		  12 },
		{ "varint past 64 bits",
		  { 0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02 },
		  11 },
		{ "non-minimal varint", { 0x08, 0x80, 0x00 }, 3 },
		{ "escaped clock id that has a slot", { 0x78, 0x02, 0x00 }, 3 },
		{ "escaped clock id beyond 32 bits",
		  { 0x78, 0x80, 0x80, 0x80, 0x80, 0x20, 0x00 },
		  7 },
		{ "entropy longer than the stream", { 0xc0, 0x05, 1, 2, 3 }, 5 },
		{ "entropy length 2^64-1",
		  { 0xc0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 },
		  11 },
		{ "extension longer than the stream", { 0x90, 0x7f }, 2 },
		{ "wait with unknown flags", { 0xe0, 0x02, 0x00, 0x00 }, 4 },
		{ "truncated wait", { 0xe0, 0x01, 0x00 }, 3 },
		{ "record after end", { 0x80, 0x00, 0x08, 0x00 }, 4 },
	};
	uint8_t hdr[] = { 'H', 'M', 'J', 'S', 1, 0, 0, 0, 0, 1, '1' }, buf[64];
	static const struct {
		const char *name;
		uint8_t b[16];
		size_t n;
	} headers[] = {
		{ "bad magic", { 'H', 'M', 'J', 'X', 1, 0, 0, 0, 0, 1, '1' }, 11 },
		{ "stream version 2", { 'H', 'M', 'J', 'S', 2, 0, 0, 0, 0, 1, '1' }, 11 },
		{ "lineage key 2", { 'H', 'M', 'J', 'S', 1, 0, 0, 0, 0, 1, '2' }, 11 },
		{ "lineage key with NUL",
		  { 'H', 'M', 'J', 'S', 1, 0, 0, 0, 0, 3, '1', 0, '1' },
		  13 },
		{ "lineage length 0", { 'H', 'M', 'J', 'S', 1, 0, 0, 0, 0, 0 }, 10 },
		{ "lineage longer than the stream",
		  { 'H', 'M', 'J', 'S', 1, 0, 0, 0, 0, 9, '1' },
		  11 },
		{ "thread index beyond 32 bits",
		  { 'H', 'M', 'J', 'S', 1, 0x80, 0x80, 0x80, 0x80, 0x10, 0, 0, 0, 1, '1' },
		  15 },
		{ "empty", {}, 0 },
	};
	struct hm_jstream_summary sum;
	const char *why;
	int ok = 1;
	char what[128];

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		memcpy(buf, hdr, sizeof(hdr));
		memcpy(buf + sizeof(hdr), cases[i].b, cases[i].n);
		why = NULL;
		snprintf(what, sizeof(what), "jstream hostile: %s", cases[i].name);
		CHECK(what,
		      hm_jstream_scan(buf, sizeof(hdr) + cases[i].n, &sum, &why) == -EBADMSG &&
			      why);
	}
	for (size_t i = 0; i < ARRAY_SIZE(headers); i++) {
		why = NULL;
		snprintf(what, sizeof(what), "jstream hostile header: %s", headers[i].name);
		CHECK(what, hm_jstream_scan(headers[i].b, headers[i].n, &sum, &why) == -EBADMSG &&
				    why && sum.valid_len == 0);
	}
	/* Every truncation of a valid stream is either a whole-record prefix or refused. */
	{
		uint8_t s[4096];
		size_t len = make_stream(s, sizeof(s), "1.2.3", 1, 30);

		for (size_t n = 0; n < len; n++) {
			int r = hm_jstream_scan(s, n, &sum, &why);

			ok &= (r == 0 && sum.valid_len == n) ||
			      (r == -EBADMSG && sum.valid_len < n) || (r == -EBADMSG && n == 0);
		}
		CHECK("jstream every truncation is a clean prefix or -EBADMSG", ok);
	}
}

/* --- sizes ----------------------------------------------------------------------- */

static size_t journal_size_of_stream(const uint8_t *s, size_t len)
{
	struct sample sm;
	struct hm_journal_writer *w;
	int fd = memfd_create("size", MFD_CLOEXEC);
	struct stat st = {};

	sample_init(&sm);
	if (hm_journal_writer_new(fd, 0, &w) < 0)
		return 0;
	hm_journal_write_config(w, &sm.cfg);
	hm_journal_write_stream(w, s, len);
	hm_journal_writer_finish(w);
	hm_journal_writer_free(w);
	fstat(fd, &st);
	close(fd);
	return st.st_size;
}

static void test_sizes(void)
{
	struct hm_jstream_header h = HDR("1");
	size_t cap = 40 << 20, zt, zr, ze;
	uint8_t *buf = malloc(cap);
	struct hm_jstream_enc e;
	struct hm_chacha_stream cs;
	uint8_t key[HM_CHACHA_KEY_SIZE] = { 42 }, rnd[16];
	struct timespec ts;
	size_t raw_t, raw_r, raw_e;
	int ok = 1;

	/* A virtual monotonic clock at the default 1 us tick. */
	hm_jstream_enc_init(&e, buf, cap, -1, &h);
	for (int i = 0; i < 1000000; i++)
		ok &= hm_jstream_put_clock(&e, HM_JC_CLOCK_GETTIME, 1,
					   1000000000000LL + i * 1000LL) == 0;
	raw_t = e.len;
	zt = journal_size_of_stream(buf, e.len);
	/* Real readings (recording with --clock off). */
	hm_jstream_enc_init(&e, buf, cap, -1, &h);
	for (int i = 0; i < 1000000; i++) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ok &= hm_jstream_put_clock(&e, HM_JC_CLOCK_GETTIME, 1,
					   ts.tv_sec * 1000000000LL + ts.tv_nsec) == 0;
	}
	raw_r = e.len;
	zr = journal_size_of_stream(buf, e.len);
	/* One million 16-byte draws of seeded (incompressible) entropy. */
	hm_chacha_stream_init(&cs, key);
	hm_jstream_enc_init(&e, buf, cap, -1, &h);
	for (int i = 0; i < 1000000; i++) {
		hm_chacha_stream_read(&cs, rnd, sizeof(rnd));
		ok &= hm_jstream_put_entropy(&e, HM_JE_GETRANDOM, rnd, sizeof(rnd)) == 0;
	}
	raw_e = e.len;
	ze = journal_size_of_stream(buf, e.len);
	printf("# size: 1M clock readings, virtual 1us tick: %zu bytes raw, %zu bytes in a "
	       "journal\n",
	       raw_t, zt);
	printf("# size: 1M clock readings, real CLOCK_MONOTONIC: %zu bytes raw, %zu bytes in a "
	       "journal\n",
	       raw_r, zr);
	printf("# size: 1M 16-byte draws: %zu bytes raw, %zu bytes in a journal\n", raw_e, ze);
	CHECK("sizes: every record encoded", ok);
	CHECK("size: 1M virtual clock readings cost about 2 bytes each raw", raw_t <= 2000100);
	CHECK("size: 1M virtual clock readings in well under a megabyte", zt > 0 && zt < 100000);
	CHECK("size: 1M real clock readings under a megabyte", zr > 0 && zr < 1000000);
	CHECK("size: 1M 16-byte draws cost 18 bytes each raw, about as much compressed",
	      raw_e <= 18000100 && ze > 0 && ze < 18500000);
	free(buf);
}

/* --- journal files ------------------------------------------------------------------ */

static void test_journal_roundtrip(void)
{
	struct sample s;
	struct hm_journal *j = NULL;
	const struct hm_journal_stream *st;
	char err[256] = "";
	size_t len = 0;
	uint8_t *z;
	int r;

	sample_init(&s);
	z = sample_bytes(&s, &len);
	CHECK("journal write", z && len > 0);
	r = hm_journal_read(z, len, 0, &j, err, sizeof(err));
	CHECK("journal read", r == 0);
	if (r < 0) {
		printf("# %s\n", err);
		free(z);
		return;
	}
	CHECK("journal version", j->major == HM_JOURNAL_MAJOR && j->minor == HM_JOURNAL_MINOR);
	CHECK("journal config",
	      j->has_config && j->config.cfg.seed == 42 && j->config.cfg.seed_set &&
		      j->config.cfg.now_ns == HM_DEFAULT_NOW_NS && j->config.cfg.tick_ns == 1000 &&
		      j->config.cfg.clock_virtual && j->config.cfg.rng && !j->config.cfg.aslr &&
		      j->config.cfg.loopback && j->config.cfg.unix_sockets &&
		      j->config.cfg.network == HM_NETWORK_BLOCK &&
		      j->config.cfg.spin_limit == HM_DEFAULT_SPIN_LIMIT && j->config.run_id == 7 &&
		      j->config.uid == 1000 && j->config.started_ns == 1764500000000000000LL);
	CHECK("journal argv", j->config.argc == 3 && !strcmp(j->config.argv[0], "python3") &&
				      !strcmp(j->config.argv[2], "print(1)") && !j->config.argv[3]);
	CHECK("journal options", j->config.n_opts == 1 && !strcmp(j->config.opts[0].key, "fs") &&
					 !strcmp(j->config.opts[0].value, "isolate"));
	CHECK("journal fingerprint fields",
	      j->has_fingerprint &&
		      !strcmp(hm_journal_fp_get(&j->fingerprint, HM_FP_HOSTNAME), "ci-runner-3") &&
		      !strcmp(hm_journal_fp_get(&j->fingerprint, HM_FP_LIBC), "glibc 2.36") &&
		      !hm_journal_fp_get(&j->fingerprint, HM_FP_GIT_COMMIT));
	CHECK("journal fingerprint keeps TZ and LC_* values",
	      j->fingerprint.n_env == 4 && !strcmp(j->fingerprint.env[0].value, "UTC") &&
		      !strcmp(j->fingerprint.env[2].value, "C.UTF-8"));
	CHECK("journal fingerprint drops other values, keeps names",
	      !strcmp(j->fingerprint.env[1].key, "AWS_SECRET_ACCESS_KEY") &&
		      !j->fingerprint.env[1].value && !memmem(j->buf, j->size, "hunter2", 7));
	CHECK("journal exit", j->has_exit && j->exit.status == 1 && j->exit.signal == 0 &&
				      j->exit.wall_ns == 1234567890 && j->exit.stragglers == 2);
	CHECK("journal streams sorted",
	      j->n_streams == 3 && !strcmp(j->streams[0].sum.hdr.lineage, "1") &&
		      j->streams[0].sum.hdr.thread == 0 && j->streams[1].sum.hdr.thread == 1 &&
		      !strcmp(j->streams[2].sum.hdr.lineage, "1.2"));
	st = hm_journal_find_stream(j, image_of("1.2"), 0);
	CHECK("journal stream lookup and bytes",
	      st && st->len == s.l3 && !memcmp(st->data, s.s3, s.l3) && st->sum.clock == 8 &&
		      st->sum.entropy == 2 && st->sum.wait == 1 && st->sum.wait_timed_out == 1 &&
		      st->sum.ended && !hm_journal_find_stream(j, image_of("1.3"), 0));
	CHECK("journal kernel chunks",
	      j->n_kernel == 2 && j->kernel_records == 5 && j->kernel[0].record_size == 24 &&
		      j->kernel[1].n_records == 2 && !memcmp(j->kernel[1].records, s.krec[3], 48));
	CHECK("journal kernel summary",
	      j->has_kernel_summary && j->kernel_events == 6 && j->kernel_dropped == 1);
	CHECK("journal has no skipped sections", j->n_skipped == 0 && j->n_sections == 9);
	hm_journal_free(j);
	free(z);

	/* An unknown non-critical section is skipped. */
	s.with_unknown = true;
	z = sample_bytes(&s, &len);
	j = NULL;
	r = hm_journal_read(z, len, 0, &j, err, sizeof(err));
	CHECK("journal skips an unknown non-critical section", r == 0 && j->n_skipped == 1);
	hm_journal_free(j);
	free(z);

	/* Writer misuse. */
	{
		int fd = memfd_create("w", MFD_CLOEXEC);
		struct hm_journal_writer *w;

		hm_journal_writer_new(fd, 0, &w);
		CHECK("writer refuses a stream without a header",
		      hm_journal_write_stream(w, "junk", 4) == -EINVAL);
		CHECK("writer refuses kernel record size 0",
		      hm_journal_write_kernel(w, 0, "", 0) == -EINVAL);
		hm_journal_section_begin(w, 0x4243, 0, 10);
		CHECK("writer refuses a section longer than announced",
		      hm_journal_section_append(w, "01234567890", 11) == -EINVAL);
		CHECK("writer refuses to finish an incomplete section",
		      hm_journal_writer_finish(w) == -EINVAL);
		hm_journal_writer_free(w);
		close(fd);
	}
}

/* A stream file with a torn tail goes into a journal cut at its last whole
 * record; a file that is not a stream is refused. */
static void test_stream_file(void)
{
	struct hm_journal_writer *w;
	struct hm_journal *j = NULL;
	uint8_t s[4096], *z;
	size_t len = make_stream(s, sizeof(s), "1.4", 2, 10), zlen, cut = 99;
	int sfd = memfd_create("stream", MFD_CLOEXEC), jfd = memfd_create("j", MFD_CLOEXEC);
	int bad = memfd_create("bad", MFD_CLOEXEC), r;
	struct sample sm;
	char err[256];

	sample_init(&sm);
	/* The stream without its end record, plus half of an entropy record. */
	if (write(sfd, s, len - 2) != (ssize_t)len - 2 || write(sfd, "\xc0\x10\x01\x02", 4) != 4 ||
	    write(bad, "not a stream", 12) != 12) {
		CHECK("stream file: setup", 0);
		return;
	}
	hm_journal_writer_new(jfd, 0, &w);
	hm_journal_write_config(w, &sm.cfg);
	r = hm_journal_write_stream_fd(w, sfd, &cut);
	CHECK("stream file: torn tail cut", r == 0 && cut == 4);
	CHECK("stream file: not a stream is -EINVAL",
	      hm_journal_write_stream_fd(w, bad, &cut) == -EINVAL);
	hm_journal_writer_finish(w);
	hm_journal_writer_free(w);
	z = slurp(jfd, &zlen);
	r = hm_journal_read(z, zlen, 0, &j, err, sizeof(err));
	CHECK("stream file: the journal reads, the stream has no end record",
	      r == 0 && j->n_streams == 1 && j->streams[0].len == len - 2 &&
		      !j->streams[0].sum.ended && j->streams[0].sum.clock == 10 &&
		      j->streams[0].sum.hdr.thread == 2);
	if (r == 0)
		hm_journal_free(j);
	free(z);
	close(sfd);
	close(jfd);
	close(bad);
}

static int fail_fill(struct hm_journal_writer *w, void *userdata)
{
	return -ENOSPC;
}

static void test_save(void)
{
	char dir[] = "/tmp/hmjournal.XXXXXX", path[512];
	struct sample s;
	struct hm_journal *j = NULL;
	struct stat st;
	char err[256];
	int n = 0;
	sample_init(&s);
	if (!mkdtemp(dir)) {
		CHECK("save: mkdtemp", 0);
		return;
	}
	umask(022);
	CHECK("save",
	      hm_journal_save(dir, "run-1" HM_JOURNAL_SUFFIX, -1, -1, 0, sample_fill, &s) == 0);
	snprintf(path, sizeof(path), "%s/run-1" HM_JOURNAL_SUFFIX, dir);
	CHECK("save: file is 0600 whatever the umask",
	      stat(path, &st) == 0 && (st.st_mode & 07777) == 0600 && st.st_uid == getuid());
	CHECK("save: reads back",
	      hm_journal_read_file(path, 0, &j, err, sizeof(err)) == 0 && j->n_streams == 3);
	hm_journal_free(j);
	CHECK("save: a failing fill leaves nothing",
	      hm_journal_save(dir, "run-2" HM_JOURNAL_SUFFIX, -1, -1, 0, fail_fill, NULL) ==
		      -ENOSPC);
	CHECK("save: refuses names with a slash or a leading dot",
	      hm_journal_save(dir, "a/b", -1, -1, 0, sample_fill, &s) == -EINVAL &&
		      hm_journal_save(dir, ".x", -1, -1, 0, sample_fill, &s) == -EINVAL);
	{
		char cmd[600];
		FILE *f;

		snprintf(cmd, sizeof(cmd), "ls -A %s | wc -l", dir);
		f = popen(cmd, "r");
		if (f && fscanf(f, "%d", &n) != 1)
			n = -1;
		if (f)
			pclose(f);
	}
	CHECK("save: no temporary files left behind", n == 1);
	if (getuid() == 0) {
		CHECK("save: chowns to the run's user",
		      hm_journal_save(dir, "run-3" HM_JOURNAL_SUFFIX, 1234, 1234, 0, sample_fill,
				      &s) == 0 &&
			      snprintf(path, sizeof(path), "%s/run-3" HM_JOURNAL_SUFFIX, dir) > 0 &&
			      stat(path, &st) == 0 && st.st_uid == 1234 && st.st_gid == 1234 &&
			      (st.st_mode & 07777) == 0600);
	}
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	if (system(path) != 0)
		printf("# could not remove %s\n", dir);
}

/* --- corruption: every truncation, every bit flip ---------------------------------- */

static void test_corruption(void)
{
	struct sample s;
	struct hm_journal *j = NULL;
	size_t zlen = 0, plen = 0, rlen;
	uint8_t *z, *p, *copy, *rz;
	char err[256], first[300] = "";
	size_t bad_trunc = 0, bad_flip = 0, same_flip = 0, big_flip = 0, bad_pflip = 0,
	       bad_ptrunc = 0, bad_rflip = 0;
	int r;

	sample_init(&s);
	z = sample_bytes(&s, &zlen);
	p = unzstd(z, zlen, &plen);
	if (!z || !p) {
		CHECK("corruption: sample", 0);
		return;
	}
	printf("# corruption: journal %zu bytes compressed, %zu uncompressed\n", zlen, plen);
	for (size_t n = 0; n < zlen; n++) {
		err[0] = 0;
		r = hm_journal_read(z, n, 0, &j, err, sizeof(err));
		if (r != -EBADMSG || !err[0]) {
			bad_trunc++;
			if (!first[0])
				snprintf(first, sizeof(first), "truncation to %zu: %d", n, r);
		}
		if (r == 0)
			hm_journal_free(j);
	}
	CHECK("every truncation of the file is -EBADMSG with a message", bad_trunc == 0);
	for (size_t n = 0; n < plen; n++) {
		err[0] = 0;
		r = hm_journal_parse(p, n, &j, err, sizeof(err));
		if (r != -EBADMSG || !err[0])
			bad_ptrunc++;
		if (r == 0)
			hm_journal_free(j);
	}
	CHECK("every truncation of the payload is -EBADMSG with a message", bad_ptrunc == 0);

	copy = malloc(zlen);
	for (size_t bit = 0; bit < zlen * 8; bit++) {
		memcpy(copy, z, zlen);
		copy[bit / 8] ^= 1u << (bit % 8);
		err[0] = 0;
		r = hm_journal_read(copy, zlen, 0, &j, err, sizeof(err));
		if (r == 0) {
			/* zstd is not canonical: a few bits (window size, table
			 * descriptions of unused symbols) do not change what
			 * decodes. Such a flip must give the very same journal. */
			if (j->size == plen && !memcmp(j->buf, p, plen))
				same_flip++;
			else {
				bad_flip++;
				printf("# file bit %zu: decoded to a different journal\n", bit);
			}
			hm_journal_free(j);
		} else if (r == -EFBIG && bit < 6 * 8 && err[0]) {
			/* A flip in the frame header's content-size flag or
			 * window: refused as claiming too much. */
			big_flip++;
		} else if (r != -EBADMSG || !err[0]) {
			bad_flip++;
			printf("# file bit %zu: %d %s\n", bit, r, err);
		}
	}
	printf("# corruption: %zu single-bit flips of the file: %zu decode to the identical "
	       "journal, %zu "
	       "claim too large a size (frame header), the rest -EBADMSG\n",
	       zlen * 8, same_flip, big_flip);
	CHECK("every single-bit flip of the file is refused or decodes to the identical journal",
	      bad_flip == 0);
	free(copy);

	copy = malloc(plen);
	for (size_t bit = 0; bit < plen * 8; bit++) {
		memcpy(copy, p, plen);
		copy[bit / 8] ^= 1u << (bit % 8);
		err[0] = 0;
		r = hm_journal_parse(copy, plen, &j, err, sizeof(err));
		/* A flip in the major version reads as a newer format. */
		if (!(r == -EBADMSG || (r == -EPROTONOSUPPORT && bit / 8 >= 8 && bit / 8 < 10)) ||
		    !err[0]) {
			bad_pflip++;
			printf("# payload bit %zu: %d %s\n", bit, r, err);
		}
		if (r == 0)
			hm_journal_free(j);
		/* The same, recompressed with a valid zstd checksum: only the
		 * payload's own checks stand between the flip and the reader. */
		if (bit % 7 == 0) {
			rz = rezstd(copy, plen, &rlen);
			r = hm_journal_read(rz, rlen, 0, &j, err, sizeof(err));
			if (!(r == -EBADMSG ||
			      (r == -EPROTONOSUPPORT && bit / 8 >= 8 && bit / 8 < 10))) {
				bad_rflip++;
				printf("# recompressed payload bit %zu: %d %s\n", bit, r, err);
			}
			if (r == 0)
				hm_journal_free(j);
			free(rz);
		}
	}
	CHECK("every single-bit flip of the payload is refused with a message", bad_pflip == 0);
	CHECK("bit flips recompressed with a valid zstd checksum are refused", bad_rflip == 0);
	if (first[0])
		printf("# first unexpected result: %s\n", first);
	free(copy);
	free(p);
	free(z);
}

/* --- hand-crafted hostile inputs ----------------------------------------------------- */

static void expect(const char *name, int r, int want, const char *err)
{
	char what[256];

	snprintf(what, sizeof(what), "hostile: %s", name);
	CHECK(what, r == want && err[0]);
	if (r != want)
		printf("#   got %d (%s)\n", r, err);
}

static void test_hostile(void)
{
	static uint8_t sbuf[HM_JSTREAM_MIN_BUF];
	struct hm_jstream_header h = HDR("1");
	struct hm_jstream_enc e;
	struct hm_journal *j = NULL;
	struct pl *p = malloc(sizeof(*p));
	uint8_t cfg[64], b[64], *big, *zb;
	char err[256];
	size_t clen = min_config(cfg), zlen;
	int r;

#define PARSE() (err[0] = 0, parse(p, err, sizeof(err)))

	hm_jstream_enc_init(&e, sbuf, sizeof(sbuf), -1, &h);
	hm_jstream_put_clock(&e, 0, 0, 5);

	pl_init(p, HM_JOURNAL_MAJOR, 0);
	pl_sec(p, HM_JSEC_CONFIG, 1, cfg, clen);
	pl_end(p);
	expect("minimal journal is valid", PARSE(), 0, "x");

	pl_init(p, HM_JOURNAL_MAJOR + 1, 0);
	pl_sec(p, HM_JSEC_CONFIG, 1, cfg, clen);
	pl_end(p);
	expect("newer major version", PARSE(), -EPROTONOSUPPORT, err);
	printf("#   message: %s\n", err);

	pl_init(p, HM_JOURNAL_MAJOR - 1, 0);
	pl_sec(p, HM_JSEC_CONFIG, 1, cfg, clen);
	pl_end(p);
	expect("older major version (streams named by exec generation)", PARSE(), -EPROTONOSUPPORT, err);
	printf("#   message: %s\n", err);

	pl_init(p, 0, 9);
	pl_end(p);
	expect("major version 0", PARSE(), -EBADMSG, err);

	pl_init(p, HM_JOURNAL_MAJOR, 5);
	cfg[clen] = 0x77; /* a field of minor version 5 */
	pl_sec(p, HM_JSEC_CONFIG, 1 | 0x100, cfg, clen + 1);
	pl_sec(p, 0x1234, 0, "future", 6);
	pl_end(p);
	expect("newer minor: trailing fields, new flags, unknown section are accepted", PARSE(), 0,
	       "x");

	pl_init(p, HM_JOURNAL_MAJOR, 0);
	pl_sec(p, HM_JSEC_CONFIG, 1, cfg, clen + 1);
	pl_end(p);
	expect("same minor: trailing bytes in a section", PARSE(), -EBADMSG, err);

	pl_init(p, HM_JOURNAL_MAJOR, 5);
	pl_sec(p, HM_JSEC_CONFIG, 1, cfg, clen);
	pl_sec(p, 0x1234, HM_JSEC_F_CRITICAL, "future", 6);
	pl_end(p);
	expect("unknown critical section", PARSE(), -EPROTONOSUPPORT, err);
	printf("#   message: %s\n", err);

	pl_init(p, HM_JOURNAL_MAJOR, 0);
	pl_sec(p, HM_JSEC_CONFIG, 0, cfg, clen);
	pl_end(p);
	expect("configuration not marked critical", PARSE(), -EBADMSG, err);

	pl_init(p, HM_JOURNAL_MAJOR, 0);
	pl_end(p);
	expect("no configuration", PARSE(), -EBADMSG, err);

	pl_init(p, HM_JOURNAL_MAJOR, 0);
	pl_sec(p, HM_JSEC_CONFIG, 1, cfg, clen);
	pl_sec(p, HM_JSEC_CONFIG, 1, cfg, clen);
	pl_end(p);
	expect("two configurations", PARSE(), -EBADMSG, err);

	pl_init(p, HM_JOURNAL_MAJOR, 0);
	pl_sec(p, HM_JSEC_CONFIG, 1, cfg, clen);
	pl_sec(p, HM_JSEC_STREAM, 1, sbuf, e.len);
	pl_sec(p, HM_JSEC_STREAM, 1, sbuf, e.len);
	pl_end(p);
	expect("two streams for one thread", PARSE(), -EBADMSG, err);

	pl_init(p, HM_JOURNAL_MAJOR, 0);
	pl_sec(p, HM_JSEC_CONFIG, 1, cfg, clen);
	pl_sec(p, HM_JSEC_STREAM, 1, sbuf, e.len - 1);
	pl_end(p);
	expect("torn stream inside a journal", PARSE(), -EBADMSG, err);
	printf("#   message: %s\n", err);

	pl_init(p, HM_JOURNAL_MAJOR, 0);
	pl_sec(p, HM_JSEC_CONFIG, 1, cfg, clen);
	pl_end(p);
	pl_put(p, "x", 1);
	expect("bytes after the end section", PARSE(), -EBADMSG, err);

	pl_init(p, HM_JOURNAL_MAJOR, 0);
	pl_sec(p, HM_JSEC_CONFIG, 1, cfg, clen);
	pl_end(p);
	p->b[20] ^= 1; /* inside the config: only the checksum sees it */
	expect("checksum mismatch", PARSE(), -EBADMSG, err);

	pl_init(p, HM_JOURNAL_MAJOR, 0);
	pl_sec(p, HM_JSEC_CONFIG, 1, cfg, clen);
	p->n = 7;
	pl_end(p);
	expect("wrong section count", PARSE(), -EBADMSG, err);

	/* argc of 2^62: a count no input can back, refused before allocating. */
	memcpy(b, cfg, 54);
	b[54] = 0x80, b[55] = 0x80, b[56] = 0x80, b[57] = 0x80, b[58] = 0x80, b[59] = 0x80;
	b[60] = 0x80, b[61] = 0x80, b[62] = 0x40;
	pl_init(p, HM_JOURNAL_MAJOR, 0);
	pl_sec(p, HM_JSEC_CONFIG, 1, b, 63);
	pl_end(p);
	expect("argc 2^62", PARSE(), -EBADMSG, err);

	memcpy(b, cfg, 54);
	b[54] = 1, b[55] = 3, b[56] = 'a', b[57] = 0, b[58] = 'b', b[59] = 0;
	pl_init(p, HM_JOURNAL_MAJOR, 0);
	pl_sec(p, HM_JSEC_CONFIG, 1, b, 60);
	pl_end(p);
	expect("argument with a NUL byte", PARSE(), -EBADMSG, err);

	memcpy(b, cfg, 56);
	b[33] = 7;
	pl_init(p, HM_JOURNAL_MAJOR, 0);
	pl_sec(p, HM_JSEC_CONFIG, 1, b, 56);
	pl_end(p);
	expect("unknown network mode", PARSE(), -EBADMSG, err);

	pl_init(p, HM_JOURNAL_MAJOR, 0);
	pl_sec(p, HM_JSEC_CONFIG, 1, cfg, clen);
	pl_sec(p, HM_JSEC_FINGERPRINT, 0, "\x00\x01\x01X\x02", 5);
	pl_end(p);
	expect("environment entry with has_value 2", PARSE(), -EBADMSG, err);

	pl_init(p, HM_JOURNAL_MAJOR, 0);
	pl_sec(p, HM_JSEC_CONFIG, 1, cfg, clen);
	pl_sec(p, HM_JSEC_KERNEL, 0, "\x00\x00\x00\x00\x00\x00\x00\x00", 8);
	pl_end(p);
	expect("kernel record size 0", PARSE(), -EBADMSG, err);

	pl_init(p, HM_JOURNAL_MAJOR, 0);
	pl_sec(p, HM_JSEC_CONFIG, 1, cfg, clen);
	pl_sec(p, HM_JSEC_KERNEL, 0,
	       "\x03\x00\x00\x00\x00\x00\x00\x00"
	       "abcd",
	       12);
	pl_end(p);
	expect("kernel records not a whole number", PARSE(), -EBADMSG, err);

	pl_init(p, HM_JOURNAL_MAJOR, 0);
	pl_sec(p, HM_JSEC_CONFIG, 1, cfg, clen);
	{
		uint8_t hd[8] = { 1, 0, 1, 0, 0xff, 0xff, 0xff, 0x7f };

		pl_put(p, hd, 8);
	}
	expect("section claiming 2 GiB", PARSE(), -EBADMSG, err);

	memcpy(b, cfg, 56);
	b[32] |= 0x80;
	pl_init(p, HM_JOURNAL_MAJOR, 0);
	pl_sec(p, HM_JSEC_CONFIG, 1, b, 56);
	pl_end(p);
	expect("unknown configuration flag, same minor", PARSE(), -EBADMSG, err);

	pl_init(p, HM_JOURNAL_MAJOR, 0);
	pl_sec(p, HM_JSEC_CONFIG, 1, cfg, 40);
	pl_end(p);
	expect("truncated configuration", PARSE(), -EBADMSG, err);

	pl_init(p, HM_JOURNAL_MAJOR, 0);
	pl_sec(p, HM_JSEC_CONFIG, 1, cfg, clen);
	pl_sec(p, HM_JSEC_FINGERPRINT, 0, "\x00\x00", 2);
	pl_sec(p, HM_JSEC_FINGERPRINT, 0, "\x00\x00", 2);
	pl_end(p);
	expect("two fingerprints", PARSE(), -EBADMSG, err);

	memset(b, 0, 20);
	pl_init(p, HM_JOURNAL_MAJOR, 0);
	pl_sec(p, HM_JSEC_CONFIG, 1, cfg, clen);
	pl_sec(p, HM_JSEC_EXIT, 0, b, 20);
	pl_sec(p, HM_JSEC_EXIT, 0, b, 20);
	pl_end(p);
	expect("two exit sections", PARSE(), -EBADMSG, err);

	pl_init(p, HM_JOURNAL_MAJOR, 0);
	pl_sec(p, HM_JSEC_CONFIG, 1, cfg, clen);
	pl_sec(p, HM_JSEC_EXIT, 0, b, 19);
	pl_end(p);
	expect("truncated exit section", PARSE(), -EBADMSG, err);

	pl_init(p, HM_JOURNAL_MAJOR, 0);
	pl_sec(p, HM_JSEC_CONFIG, 1, cfg, clen);
	pl_sec(p, HM_JSEC_KERNEL_SUMMARY, 0, b, 16);
	pl_sec(p, HM_JSEC_KERNEL_SUMMARY, 0, b, 16);
	pl_end(p);
	expect("two kernel summaries", PARSE(), -EBADMSG, err);

	pl_init(p, HM_JOURNAL_MAJOR, 0);
	pl_sec(p, HM_JSEC_CONFIG, 1, cfg, clen);
	pl_sec(p, HM_JSEC_KERNEL, 0, "\x01\x00\x00\x00\x01\x00\x00\x00", 8);
	pl_end(p);
	expect("kernel reserved field not zero", PARSE(), -EBADMSG, err);

	pl_init(p, HM_JOURNAL_MAJOR, 0);
	pl_sec(p, HM_JSEC_CONFIG, 1, cfg, clen);
	pl_sec(p, HM_JSEC_STREAM, 0, sbuf, e.len);
	pl_end(p);
	expect("stream not marked critical", PARSE(), -EBADMSG, err);

	pl_init(p, HM_JOURNAL_MAJOR, 0);
	pl_sec(p, HM_JSEC_CONFIG, 1, cfg, clen);
	pl_sec(p, 0x4242, 0x8000, "x", 1);
	pl_sec(p, HM_JSEC_CONFIG | 0, 1 | 0x4000, cfg, 0);
	pl_end(p);
	expect("reserved section flags, same minor", PARSE(), -EBADMSG, err);

	pl_init(p, HM_JOURNAL_MAJOR, 0);
	pl_sec(p, HM_JSEC_CONFIG, 1, cfg, clen);
	pl_put(p, "\xff\xff\x01\x00\x09\x00\x00\x00", 8);
	pl_put(p, "\x01\x00\x00\x00\x00\x00\x00\x00\x00", 9);
	expect("end section of the wrong length", PARSE(), -EBADMSG, err);

	/* A valid extension record (from a newer shim) is skipped. */
	{
		/* header: magic, version 2, thread, gen, pid, tid, key "1", process 1,
		 * parent 0, executable "x" run once */
		uint8_t s[64] = { 'H', 'M', 'J', 'S', 2, 0, 0, 0, 0, 1, '1',
				  1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
				  1, 'x', 1,
				  0x95, 3, 'a', 'b', 'c', 0x08, 0x02 };
		struct hm_jstream_summary sum;
		const char *why = NULL;

		CHECK("jstream: an extension record is skipped",
		      hm_jstream_scan(s, 37, &sum, &why) == 0 && sum.ext == 1 && sum.clock == 1 &&
			      !strcmp(hm_jrec_type_name(HM_JREC_EXT), "extension"));
		s[35] = 0x78; /* escaped clock id, then nothing */
		CHECK("jstream: truncated escaped clock id",
		      hm_jstream_scan(s, 36, &sum, &why) == -EBADMSG);
		s[4] = 1;
		CHECK("jstream: version 1 streams are refused",
		      hm_jstream_scan(s, 36, &sum, &why) == -EBADMSG);
	}

	/* zstd-level attacks. */
	err[0] = 0;
	r = hm_journal_read("", 0, 0, &j, err, sizeof(err));
	expect("empty file", r, -EBADMSG, err);
	r = hm_journal_read("hello, world, not a journal", 27, 0, &j, err, sizeof(err));
	expect("not zstd", r, -EBADMSG, err);
	r = hm_journal_read(p->b, p->len, 0, &j, err, sizeof(err));
	expect("an uncompressed payload", r, -EBADMSG, err);
	{
		/* Frame header declaring 2^40 bytes of content: refused unread. */
		uint8_t f[] = { 0x28, 0xb5, 0x2f, 0xfd, 0xc4, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0 };

		r = hm_journal_read(f, sizeof(f), 0, &j, err, sizeof(err));
		expect("frame claiming 1 TiB", r, -EFBIG, err);
	}
	{
		/* A frame that needs a 1 GiB window (Window_Descriptor 0xa0). */
		uint8_t f[] = { 0x28, 0xb5, 0x2f, 0xfd, 0x04, 0xa0, 0x01, 0x00, 0x00, 0, 0, 0, 0 };

		r = hm_journal_read(f, sizeof(f), 0, &j, err, sizeof(err));
		expect("frame needing a 1 GiB window", r, -EBADMSG, err);
	}
	{
		/* A skippable frame alone. */
		uint8_t f[] = { 0x50, 0x2a, 0x4d, 0x18, 4, 0, 0, 0, 'a', 'b', 'c', 'd' };

		r = hm_journal_read(f, sizeof(f), 0, &j, err, sizeof(err));
		expect("a skippable frame alone", r, -EBADMSG, err);
	}
	/* A decompression bomb: 64 MiB of zeros, read with a 1 MiB cap, in a
	 * frame without a content size (as the streaming writer makes them). */
	big = calloc(1, 64 << 20);
	{
		ZSTD_CCtx *c = ZSTD_createCCtx();
		ZSTD_inBuffer in = { big, 64 << 20, 0 };
		ZSTD_outBuffer out;

		ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, 0);
		zb = malloc(1 << 20);
		out = (ZSTD_outBuffer){ zb, 1 << 20, 0 };
		ZSTD_compressStream2(c, &out, &in, ZSTD_e_end);
		zlen = out.pos;
		ZSTD_freeCCtx(c);
	}
	r = hm_journal_read(zb, zlen, 1 << 20, &j, err, sizeof(err));
	expect("64 MiB bomb with a 1 MiB cap", r, -EFBIG, err);
	printf("#   (bomb of %zu bytes) message: %s\n", zlen, err);
	{
		size_t n = ZSTD_compress(zb, 1 << 20, big, 64 << 20, 1);

		r = hm_journal_read(zb, n, 1 << 20, &j, err, sizeof(err));
		expect("64 MiB bomb declaring its size", r, -EFBIG, err);
	}
	free(zb);
	free(big);
	free(p);
#undef PARSE
}

static void test_fingerprint(void)
{
	char *envp[] = { "HOME=/root",	     "TZ=Europe/Paris",
			 "LANG=C.UTF-8",     "GITHUB_TOKEN=ghp_secret",
			 "PYTHONHASHSEED=0", NULL };
	struct hm_journal_fingerprint f;
	char commit[80];
	bool ok = true;

	CHECK("fingerprint collect", hm_journal_fingerprint_collect(&f, envp, "/") == 0);
	CHECK("fingerprint has kernel, arch, libc",
	      hm_journal_fp_get(&f, HM_FP_KERNEL) && hm_journal_fp_get(&f, HM_FP_ARCH) &&
		      !strncmp(hm_journal_fp_get(&f, HM_FP_LIBC), "glibc ", 6));
	CHECK("fingerprint TZ from the environment",
	      !strcmp(hm_journal_fp_get(&f, HM_FP_TZ), "Europe/Paris"));
	CHECK("fingerprint keeps names, values only for TZ/LANG/LC_*/PYTHONHASHSEED",
	      f.n_env == 5 && !f.env[0].value && !strcmp(f.env[1].value, "Europe/Paris") &&
		      !strcmp(f.env[2].value, "C.UTF-8") && !f.env[3].value &&
		      !strcmp(f.env[3].key, "GITHUB_TOKEN") && !strcmp(f.env[4].value, "0"));
	CHECK("fingerprint: no git commit outside a working tree",
	      !hm_journal_fp_get(&f, HM_FP_GIT_COMMIT));
	hm_journal_fingerprint_done(&f);
	/* This source tree is a git working tree when tests run from it. */
	if (access(".git", F_OK) == 0) {
		FILE *g = popen("git rev-parse HEAD 2>/dev/null", "r");
		char want[80] = "";

		if (g && fgets(want, sizeof(want), g))
			want[strcspn(want, "\n")] = 0;
		if (g)
			pclose(g);
		ok = hm_journal_git_head("tests", commit, sizeof(commit)) == 0 &&
		     (!want[0] || !strcmp(commit, want));
		CHECK("fingerprint: git commit of the working tree, as git says", ok);
	} else {
		printf("SKIP fingerprint git commit: not run from a git working tree\n");
	}
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--write")) {
		/* The sample journal, for tests/integration/journal.sh. */
		static struct sample s;
		char *slash = strrchr(argv[2], '/');
		int r;

		sample_init(&s);
		if (slash) {
			*slash = 0;
			r = hm_journal_save(argv[2], slash + 1, -1, -1, 0, sample_fill, &s);
		} else {
			r = hm_journal_save(".", argv[2], -1, -1, 0, sample_fill, &s);
		}
		if (r < 0)
			fprintf(stderr, "Failed to write journal: %s\n", strerror(-r));
		return r < 0;
	}
	if (argc == 3 && !strcmp(argv[1], "--write-newer-major")) {
		/* A journal from a future format, one major version up. */
		static struct pl p;
		uint8_t cfg[64], z[4096];
		size_t n;
		FILE *f;

		pl_init(&p, HM_JOURNAL_MAJOR + 1, 0);
		pl_sec(&p, HM_JSEC_CONFIG, 1, cfg, min_config(cfg));
		pl_end(&p);
		n = ZSTD_compress(z, sizeof(z), p.b, p.len, 3);
		f = fopen(argv[2], "we");
		if (ZSTD_isError(n) || !f || fwrite(z, 1, n, f) != n || fclose(f))
			return 1;
		return 0;
	}
	test_jstream_roundtrip();
	test_jstream_buffers();
	test_jstream_hostile();
	test_journal_roundtrip();
	test_save();
	test_stream_file();
	test_fingerprint();
	test_hostile();
	test_corruption();
	test_sizes();
	T_EXIT();
}
