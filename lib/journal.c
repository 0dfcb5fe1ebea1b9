// SPDX-License-Identifier: MIT
/*
 * The journal codec, writer side: a streaming zstd writer of typed sections
 * and the atomic save; the CRC and the table of section types that the
 * reader (journal_parse.c, journal_read.c) shares. docs/journal-format.md is
 * the specification.
 */
#include <fcntl.h>
#include <limits.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <zstd.h>
#include <inttypes.h>
#include "journal.h"
#include "scope.h"
#include "util.h"
#include "journal_int.h"

/* --- CRC-32C (Castagnoli), reflected, over the payload ----------------------- */

static const uint32_t crc32c_table[256] = {
	0x00000000, 0xf26b8303, 0xe13b70f7, 0x1350f3f4, 0xc79a971f, 0x35f1141c, 0x26a1e7e8,
	0xd4ca64eb, 0x8ad958cf, 0x78b2dbcc, 0x6be22838, 0x9989ab3b, 0x4d43cfd0, 0xbf284cd3,
	0xac78bf27, 0x5e133c24, 0x105ec76f, 0xe235446c, 0xf165b798, 0x030e349b, 0xd7c45070,
	0x25afd373, 0x36ff2087, 0xc494a384, 0x9a879fa0, 0x68ec1ca3, 0x7bbcef57, 0x89d76c54,
	0x5d1d08bf, 0xaf768bbc, 0xbc267848, 0x4e4dfb4b, 0x20bd8ede, 0xd2d60ddd, 0xc186fe29,
	0x33ed7d2a, 0xe72719c1, 0x154c9ac2, 0x061c6936, 0xf477ea35, 0xaa64d611, 0x580f5512,
	0x4b5fa6e6, 0xb93425e5, 0x6dfe410e, 0x9f95c20d, 0x8cc531f9, 0x7eaeb2fa, 0x30e349b1,
	0xc288cab2, 0xd1d83946, 0x23b3ba45, 0xf779deae, 0x05125dad, 0x1642ae59, 0xe4292d5a,
	0xba3a117e, 0x4851927d, 0x5b016189, 0xa96ae28a, 0x7da08661, 0x8fcb0562, 0x9c9bf696,
	0x6ef07595, 0x417b1dbc, 0xb3109ebf, 0xa0406d4b, 0x522bee48, 0x86e18aa3, 0x748a09a0,
	0x67dafa54, 0x95b17957, 0xcba24573, 0x39c9c670, 0x2a993584, 0xd8f2b687, 0x0c38d26c,
	0xfe53516f, 0xed03a29b, 0x1f682198, 0x5125dad3, 0xa34e59d0, 0xb01eaa24, 0x42752927,
	0x96bf4dcc, 0x64d4cecf, 0x77843d3b, 0x85efbe38, 0xdbfc821c, 0x2997011f, 0x3ac7f2eb,
	0xc8ac71e8, 0x1c661503, 0xee0d9600, 0xfd5d65f4, 0x0f36e6f7, 0x61c69362, 0x93ad1061,
	0x80fde395, 0x72966096, 0xa65c047d, 0x5437877e, 0x4767748a, 0xb50cf789, 0xeb1fcbad,
	0x197448ae, 0x0a24bb5a, 0xf84f3859, 0x2c855cb2, 0xdeeedfb1, 0xcdbe2c45, 0x3fd5af46,
	0x7198540d, 0x83f3d70e, 0x90a324fa, 0x62c8a7f9, 0xb602c312, 0x44694011, 0x5739b3e5,
	0xa55230e6, 0xfb410cc2, 0x092a8fc1, 0x1a7a7c35, 0xe811ff36, 0x3cdb9bdd, 0xceb018de,
	0xdde0eb2a, 0x2f8b6829, 0x82f63b78, 0x709db87b, 0x63cd4b8f, 0x91a6c88c, 0x456cac67,
	0xb7072f64, 0xa457dc90, 0x563c5f93, 0x082f63b7, 0xfa44e0b4, 0xe9141340, 0x1b7f9043,
	0xcfb5f4a8, 0x3dde77ab, 0x2e8e845f, 0xdce5075c, 0x92a8fc17, 0x60c37f14, 0x73938ce0,
	0x81f80fe3, 0x55326b08, 0xa759e80b, 0xb4091bff, 0x466298fc, 0x1871a4d8, 0xea1a27db,
	0xf94ad42f, 0x0b21572c, 0xdfeb33c7, 0x2d80b0c4, 0x3ed04330, 0xccbbc033, 0xa24bb5a6,
	0x502036a5, 0x4370c551, 0xb11b4652, 0x65d122b9, 0x97baa1ba, 0x84ea524e, 0x7681d14d,
	0x2892ed69, 0xdaf96e6a, 0xc9a99d9e, 0x3bc21e9d, 0xef087a76, 0x1d63f975, 0x0e330a81,
	0xfc588982, 0xb21572c9, 0x407ef1ca, 0x532e023e, 0xa145813d, 0x758fe5d6, 0x87e466d5,
	0x94b49521, 0x66df1622, 0x38cc2a06, 0xcaa7a905, 0xd9f75af1, 0x2b9cd9f2, 0xff56bd19,
	0x0d3d3e1a, 0x1e6dcdee, 0xec064eed, 0xc38d26c4, 0x31e6a5c7, 0x22b65633, 0xd0ddd530,
	0x0417b1db, 0xf67c32d8, 0xe52cc12c, 0x1747422f, 0x49547e0b, 0xbb3ffd08, 0xa86f0efc,
	0x5a048dff, 0x8ecee914, 0x7ca56a17, 0x6ff599e3, 0x9d9e1ae0, 0xd3d3e1ab, 0x21b862a8,
	0x32e8915c, 0xc083125f, 0x144976b4, 0xe622f5b7, 0xf5720643, 0x07198540, 0x590ab964,
	0xab613a67, 0xb831c993, 0x4a5a4a90, 0x9e902e7b, 0x6cfbad78, 0x7fab5e8c, 0x8dc0dd8f,
	0xe330a81a, 0x115b2b19, 0x020bd8ed, 0xf0605bee, 0x24aa3f05, 0xd6c1bc06, 0xc5914ff2,
	0x37faccf1, 0x69e9f0d5, 0x9b8273d6, 0x88d28022, 0x7ab90321, 0xae7367ca, 0x5c18e4c9,
	0x4f48173d, 0xbd23943e, 0xf36e6f75, 0x0105ec76, 0x12551f82, 0xe03e9c81, 0x34f4f86a,
	0xc69f7b69, 0xd5cf889d, 0x27a40b9e, 0x79b737ba, 0x8bdcb4b9, 0x988c474d, 0x6ae7c44e,
	0xbe2da0a5, 0x4c4623a6, 0x5f16d052, 0xad7d5351,
};

uint32_t hm_journal_crc32c(uint32_t crc, const void *data, size_t n)
{
	const uint8_t *p = data;

	crc = ~crc;
	while (n--)
		crc = crc32c_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

static const struct sec_info sec_infos[] = {
	{ HM_JSEC_CONFIG, HM_JSEC_F_CRITICAL, "configuration" },
	{ HM_JSEC_FINGERPRINT, 0, "fingerprint" },
	{ HM_JSEC_EXIT, 0, "exit" },
	{ HM_JSEC_STREAM, HM_JSEC_F_CRITICAL, "stream" },
	{ HM_JSEC_KERNEL, 0, "kernel" },
	{ HM_JSEC_KERNEL_SUMMARY, 0, "kernel summary" },
	{ HM_JSEC_SCOPE, HM_JSEC_F_CRITICAL, "scope" },
	{ HM_JSEC_END, HM_JSEC_F_CRITICAL, "end" },
};

const struct sec_info *hm_journal_sec_info(uint16_t type)
{
	for (size_t i = 0; i < ARRAY_SIZE(sec_infos); i++)
		if (sec_infos[i].type == type)
			return &sec_infos[i];
	return NULL;
}

bool hm_journal_env_keeps_value(const char *name)
{
	return !strcmp(name, "TZ") || !strcmp(name, "PYTHONHASHSEED") || !strcmp(name, "LANG") ||
	       !strncmp(name, "LC_", 3);
}

/* --- building section payloads (writer side) ----------------------------------- */

struct obuf {
	uint8_t *p;
	size_t len, cap;
	int err;
};

static void ob_free(struct obuf *b)
{
	free(b->p);
}

static uint8_t *ob_room(struct obuf *b, size_t n)
{
	if (b->err)
		return NULL;
	if (n > HM_JOURNAL_MAX_SIZE || b->len > HM_JOURNAL_MAX_SIZE - n) {
		b->err = -EFBIG;
		return NULL;
	}
	if (b->cap - b->len < n) {
		size_t cap = b->cap ? b->cap : 256;
		uint8_t *p;

		while (cap - b->len < n)
			cap *= 2;
		p = realloc(b->p, cap);
		if (!p) {
			b->err = -ENOMEM;
			return NULL;
		}
		b->p = p;
		b->cap = cap;
	}
	return b->p + b->len;
}

static void ob_bytes(struct obuf *b, const void *d, size_t n)
{
	uint8_t *p = ob_room(b, n);

	if (!p)
		return;
	if (n)
		memcpy(p, d, n);
	b->len += n;
}

static void ob_le(struct obuf *b, uint64_t v, unsigned n)
{
	uint8_t tmp[8];

	for (unsigned i = 0; i < n; i++)
		tmp[i] = (uint8_t)(v >> (8 * i));
	ob_bytes(b, tmp, n);
}

static void ob_varint(struct obuf *b, uint64_t v)
{
	uint8_t tmp[10];
	size_t n = 0;

	while (v >= 0x80) {
		tmp[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	tmp[n++] = (uint8_t)v;
	ob_bytes(b, tmp, n);
}

static void ob_str(struct obuf *b, const char *s)
{
	size_t n = s ? strlen(s) : 0;

	ob_varint(b, n);
	ob_bytes(b, s, n);
}

/* --- writer --------------------------------------------------------------------- */

struct hm_journal_writer {
	ZSTD_CCtx *cctx;
	int fd;
	uint8_t *out;
	size_t out_cap;
	uint32_t crc;
	uint64_t size; /* payload bytes so far */
	uint32_t n_sections;
	uint64_t sec_left; /* bytes still owed to the open section */
	int err; /* sticky */
	bool finished;
};

/* Compress n payload bytes (and with end, close the frame) to fd. */
static int feed(struct hm_journal_writer *w, const void *data, size_t n, bool end)
{
	ZSTD_inBuffer in = { data, n, 0 };
	size_t rem;

	if (w->err)
		return w->err;
	if (n > HM_JOURNAL_MAX_SIZE - w->size)
		return w->err = -EFBIG;
	w->crc = hm_journal_crc32c(w->crc, data, n);
	w->size += n;
	do {
		ZSTD_outBuffer out = { w->out, w->out_cap, 0 };
		int r;

		rem = ZSTD_compressStream2(w->cctx, &out, &in, end ? ZSTD_e_end : ZSTD_e_continue);
		if (ZSTD_isError(rem))
			return w->err = -EIO;
		r = hm_write_all(w->fd, w->out, out.pos);
		if (r < 0)
			return w->err = r;
	} while (end ? rem != 0 : in.pos < in.size);
	return 0;
}

int hm_journal_writer_new(int fd, int level, struct hm_journal_writer **ret)
{
	struct hm_journal_writer *w;
	uint8_t hdr[HEADER_SIZE] = {};
	int r;

	if (fd < 0)
		return -EBADF;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->fd = fd;
	w->out_cap = ZSTD_CStreamOutSize();
	w->out = malloc(w->out_cap);
	w->cctx = ZSTD_createCCtx();
	if (!w->out || !w->cctx) {
		hm_journal_writer_free(w);
		return -ENOMEM;
	}
	if (level <= 0)
		level = DEFAULT_LEVEL;
	if (level > MAX_LEVEL)
		level = MAX_LEVEL;
	if (ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, level)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_checksumFlag, 1))) {
		hm_journal_writer_free(w);
		return -EIO;
	}
	memcpy(hdr, HM_JOURNAL_MAGIC, 8);
	hdr[8] = HM_JOURNAL_MAJOR & 0xff;
	hdr[9] = HM_JOURNAL_MAJOR >> 8;
	hdr[10] = HM_JOURNAL_MINOR & 0xff;
	hdr[11] = HM_JOURNAL_MINOR >> 8;
	r = feed(w, hdr, sizeof(hdr), false);
	if (r < 0) {
		hm_journal_writer_free(w);
		return r;
	}
	*ret = w;
	return 0;
}

void hm_journal_writer_free(struct hm_journal_writer *w)
{
	if (!w)
		return;
	ZSTD_freeCCtx(w->cctx);
	free(w->out);
	free(w);
}

int hm_journal_section_begin(struct hm_journal_writer *w, uint16_t type, uint16_t flags,
			     uint32_t len)
{
	uint8_t h[SEC_HEADER_SIZE];

	if (w->err)
		return w->err;
	if (w->finished || w->sec_left || type == HM_JSEC_END)
		return -EINVAL;
	h[0] = type & 0xff;
	h[1] = type >> 8;
	h[2] = flags & 0xff;
	h[3] = flags >> 8;
	for (unsigned i = 0; i < 4; i++)
		h[4 + i] = (uint8_t)(len >> (8 * i));
	w->sec_left = len;
	w->n_sections++;
	return feed(w, h, sizeof(h), false);
}

int hm_journal_section_append(struct hm_journal_writer *w, const void *bytes, size_t n)
{
	int r;

	if (w->err)
		return w->err;
	if (n > w->sec_left)
		return -EINVAL;
	r = feed(w, bytes, n, false);
	if (r < 0)
		return r;
	w->sec_left -= n;
	return 0;
}

static int write_section(struct hm_journal_writer *w, uint16_t type, const struct obuf *b)
{
	const struct sec_info *si = hm_journal_sec_info(type);
	int r;

	if (b->err)
		return b->err;
	if (b->len > UINT32_MAX)
		return -EFBIG;
	r = hm_journal_section_begin(w, type, si ? si->flags : 0, (uint32_t)b->len);
	if (r < 0)
		return r;
	return hm_journal_section_append(w, b->p, b->len);
}

int hm_journal_write_config(struct hm_journal_writer *w, const struct hm_journal_config *c)
{
	struct obuf b = {};
	const struct hm_config *k = &c->cfg;
	uint8_t flags = (k->seed_set ? CF_SEED_SET : 0) |
			(k->clock_virtual ? CF_CLOCK_VIRTUAL : 0) | (k->rng ? CF_RNG : 0) |
			(k->aslr ? CF_ASLR : 0) | (k->loopback ? CF_LOOPBACK : 0) |
			(k->unix_sockets ? CF_UNIX : 0);
	int r;

	if ((c->argc && !c->argv) || (c->n_opts && !c->opts))
		return -EINVAL;
	ob_le(&b, k->seed, 8);
	ob_le(&b, (uint64_t)k->now_ns, 8);
	ob_le(&b, k->tick_ns, 8);
	ob_le(&b, k->spin_limit, 8);
	ob_le(&b, flags, 1);
	ob_le(&b, k->network == HM_NETWORK_OFF ? 1 : k->network == HM_NETWORK_AUDIT ? 2 : 0, 1);
	ob_le(&b, c->run_id, 8);
	ob_le(&b, c->uid, 4);
	ob_le(&b, (uint64_t)c->started_ns, 8);
	ob_varint(&b, c->argc);
	for (size_t i = 0; i < c->argc; i++)
		ob_str(&b, c->argv[i]);
	ob_varint(&b, c->n_opts);
	for (size_t i = 0; i < c->n_opts; i++) {
		ob_str(&b, c->opts[i].key);
		ob_str(&b, c->opts[i].value);
	}
	r = write_section(w, HM_JSEC_CONFIG, &b);
	ob_free(&b);
	return r;
}

int hm_journal_write_fingerprint(struct hm_journal_writer *w,
				 const struct hm_journal_fingerprint *f)
{
	struct obuf b = {};
	int r;

	if ((f->n_fields && !f->fields) || (f->n_env && !f->env))
		return -EINVAL;
	ob_varint(&b, f->n_fields);
	for (size_t i = 0; i < f->n_fields; i++) {
		ob_str(&b, f->fields[i].key);
		ob_str(&b, f->fields[i].value);
	}
	ob_varint(&b, f->n_env);
	for (size_t i = 0; i < f->n_env; i++) {
		const char *name = f->env[i].key ? f->env[i].key : "";
		/* The secrecy rule is enforced here, whatever the caller collected. */
		bool keep = f->env[i].value && hm_journal_env_keeps_value(name);

		ob_str(&b, name);
		ob_le(&b, keep, 1);
		if (keep)
			ob_str(&b, f->env[i].value);
	}
	r = write_section(w, HM_JSEC_FINGERPRINT, &b);
	ob_free(&b);
	return r;
}

int hm_journal_write_exit(struct hm_journal_writer *w, const struct hm_journal_exit *e)
{
	struct obuf b = {};
	int r;

	ob_le(&b, (uint32_t)e->status, 4);
	ob_le(&b, (uint32_t)e->signal, 4);
	ob_le(&b, e->wall_ns, 8);
	ob_le(&b, e->stragglers, 4);
	r = write_section(w, HM_JSEC_EXIT, &b);
	ob_free(&b);
	return r;
}

bool hm_journal_scope_dir_valid(const char *dir)
{
	size_t n;

	if (!dir || !strcmp(dir, ".") || !strcmp(dir, ".."))
		return false;
	for (n = 0; dir[n]; n++)
		if (!((dir[n] >= 'a' && dir[n] <= 'z') || (dir[n] >= 'A' && dir[n] <= 'Z') ||
		      (dir[n] >= '0' && dir[n] <= '9') || dir[n] == '.' || dir[n] == '+' ||
		      dir[n] == '-'))
			return false;
	return n > 0 && n < 256;
}

bool hm_journal_scope_ok(const struct hm_journal_scope *sc)
{
	return sc->kind <= HM_JSCOPE_CONT && sc->status <= HM_SCOPE_STATUS_MAX &&
	       hm_journal_scope_dir_valid(sc->dir) && hm_lineage_valid(sc->root) && sc->name &&
	       (hm_scope_name_valid(sc->name) || (sc->kind == HM_JSCOPE_CONT && !sc->name[0]));
}

int hm_journal_write_scope(struct hm_journal_writer *w, const struct hm_journal_scope *sc)
{
	struct obuf b = {};
	int r;

	if (!hm_journal_scope_ok(sc))
		return -EINVAL;
	ob_le(&b, sc->kind, 1);
	ob_le(&b, sc->status, 1);
	ob_le(&b, sc->seed, 8);
	ob_le(&b, (uint64_t)sc->now_ns, 8);
	ob_le(&b, (uint64_t)sc->mono_ns, 8);
	ob_str(&b, sc->dir);
	ob_str(&b, sc->name);
	ob_str(&b, sc->root);
	r = write_section(w, HM_JSEC_SCOPE, &b);
	ob_free(&b);
	return r;
}

int hm_journal_write_stream(struct hm_journal_writer *w, const void *bytes, size_t len)
{
	struct hm_jstream_dec d;
	int r;

	if (hm_jstream_dec_init(&d, bytes, len) < 0)
		return -EINVAL;
	if (len > UINT32_MAX)
		return -EFBIG;
	r = hm_journal_section_begin(w, HM_JSEC_STREAM, HM_JSEC_F_CRITICAL, (uint32_t)len);
	if (r < 0)
		return r;
	return hm_journal_section_append(w, bytes, len);
}

int hm_journal_write_stream_fd(struct hm_journal_writer *w, int fd, size_t *ret_cut)
{
	_cleanup_free_ uint8_t *buf = NULL;
	struct hm_jstream_summary sum;
	const char *why = NULL;
	struct stat st;
	size_t n = 0, len;
	int r;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if ((uint64_t)st.st_size > UINT32_MAX || (uint64_t)st.st_size > HM_JOURNAL_MAX_SIZE)
		return -EFBIG;
	buf = malloc(st.st_size ? (size_t)st.st_size : 1);
	if (!buf)
		return -ENOMEM;
	while (n < (size_t)st.st_size) {
		ssize_t k = pread(fd, buf + n, (size_t)st.st_size - n, (off_t)n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		if (k == 0)
			break; /* shrank under us: what was read is what there is */
		n += (size_t)k;
	}
	r = hm_jstream_scan(buf, n, &sum, &why);
	if (r < 0 && sum.valid_len == 0)
		return -EINVAL;
	len = r < 0 ? sum.valid_len : n;
	r = hm_journal_write_stream(w, buf, len);
	if (r < 0)
		return r;
	if (ret_cut)
		*ret_cut = n - len;
	return 0;
}

int hm_journal_write_kernel(struct hm_journal_writer *w, uint32_t record_size, const void *records,
			    size_t n)
{
	uint8_t h[8] = {};
	uint64_t len;
	int r;

	if (record_size == 0 || record_size > HM_JOURNAL_KREC_MAX || (n && !records))
		return -EINVAL;
	if (n > (UINT32_MAX - sizeof(h)) / record_size)
		return -EFBIG;
	len = sizeof(h) + (uint64_t)n * record_size;
	for (unsigned i = 0; i < 4; i++)
		h[i] = (uint8_t)(record_size >> (8 * i));
	r = hm_journal_section_begin(w, HM_JSEC_KERNEL, 0, (uint32_t)len);
	if (r < 0)
		return r;
	r = hm_journal_section_append(w, h, sizeof(h));
	if (r < 0)
		return r;
	return hm_journal_section_append(w, records, (size_t)n * record_size);
}

int hm_journal_write_kernel_summary(struct hm_journal_writer *w, uint64_t events, uint64_t dropped)
{
	struct obuf b = {};
	int r;

	ob_le(&b, events, 8);
	ob_le(&b, dropped, 8);
	r = write_section(w, HM_JSEC_KERNEL_SUMMARY, &b);
	ob_free(&b);
	return r;
}

int hm_journal_writer_finish(struct hm_journal_writer *w)
{
	uint8_t e[SEC_HEADER_SIZE + END_SIZE] = {};
	uint32_t crc = w->crc;
	int r;

	if (w->err)
		return w->err;
	if (w->finished || w->sec_left)
		return -EINVAL;
	e[0] = 0xff;
	e[1] = 0xff;
	e[2] = HM_JSEC_F_CRITICAL;
	e[4] = END_SIZE;
	for (unsigned i = 0; i < 4; i++) {
		e[8 + i] = (uint8_t)(w->n_sections >> (8 * i));
		e[12 + i] = (uint8_t)(crc >> (8 * i));
	}
	r = feed(w, e, sizeof(e), true);
	if (r < 0)
		return r;
	w->finished = true;
	return 0;
}

/* --- saving: 0600 temporary file, fsync, rename ---------------------------------- */

int hm_journal_save(const char *dir, const char *name, uid_t uid, gid_t gid, int level,
		    hm_journal_fill_fn fill, void *userdata)
{
	_cleanup_close_ int dfd = -1, fd = -1;
	struct hm_journal_writer *w = NULL;
	char tmp[NAME_MAX + 1];
	int r;

	if (!dir || !name || !*name || name[0] == '.' || strchr(name, '/') ||
	    strlen(name) > NAME_MAX - 16 || !fill)
		return -EINVAL;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	/* O_EXCL on an unpredictable name: nobody can pre-create or redirect it
	 * (O_NOFOLLOW), and 0600 from the first instant, whatever the umask. */
	for (int tries = 0;; tries++) {
		uint64_t rnd = 0;

		if (getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) != sizeof(rnd))
			rnd = hm_now_ns() ^ ((uint64_t)getpid() << 32) ^ (uint64_t)tries;
		snprintf(tmp, sizeof(tmp), ".%s.%016llx", name, (unsigned long long)rnd);
		fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0)
			break;
		if (errno != EEXIST || tries >= 16)
			return -errno;
	}
	if (fchmod(fd, 0600) < 0) {
		r = -errno;
		goto fail;
	}
	/* The daemon writes as root for the enrolling user: hand the file over
	 * before any secret is in it. */
	if ((uid != (uid_t)-1 || gid != (gid_t)-1) && fchown(fd, uid, gid) < 0) {
		r = -errno;
		goto fail;
	}
	r = hm_journal_writer_new(fd, level, &w);
	if (r < 0)
		goto fail;
	r = fill(w, userdata);
	if (r >= 0)
		r = hm_journal_writer_finish(w);
	hm_journal_writer_free(w);
	if (r < 0)
		goto fail;
	if (fsync(fd) < 0) {
		r = -errno;
		goto fail;
	}
	r = close(steal_fd(&fd));
	if (r < 0) {
		r = -errno;
		goto fail;
	}
	if (renameat(dfd, tmp, dfd, name) < 0) {
		r = -errno;
		goto fail;
	}
	/* The rename itself must survive a crash. */
	if (fsync(dfd) < 0)
		return -errno;
	return 0;
fail:
	unlinkat(dfd, tmp, 0);
	return r;
}
