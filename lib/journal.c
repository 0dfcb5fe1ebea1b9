// SPDX-License-Identifier: MIT
/*
 * The journal codec: a streaming zstd writer of typed sections, and a reader
 * over untrusted bytes that checks every length, count and varint against
 * what remains, caps what it decompresses and what it allocates, and says in
 * one line what was wrong. docs/journal-format.md is the specification.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <zstd.h>
#include <inttypes.h>
#include "journal.h"
#include "scope.h"
#include "util.h"

#define HEADER_SIZE 16
#define SEC_HEADER_SIZE 8
#define END_SIZE 8
#define DEFAULT_LEVEL 3
#define MAX_LEVEL 19 /* levels above use windows larger than readers accept */

/* Config flag bits. */
#define CF_SEED_SET 0x01
#define CF_CLOCK_VIRTUAL 0x02
#define CF_RNG 0x04
#define CF_ASLR 0x08
#define CF_LOOPBACK 0x10
#define CF_UNIX 0x20
#define CF_KNOWN 0x3f

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

static uint32_t crc32c_update(uint32_t crc, const void *data, size_t n)
{
	const uint8_t *p = data;

	crc = ~crc;
	while (n--)
		crc = crc32c_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

static const struct sec_info {
	uint16_t type;
	uint16_t flags;
	const char *name;
} sec_infos[] = {
	{ HM_JSEC_CONFIG, HM_JSEC_F_CRITICAL, "configuration" },
	{ HM_JSEC_FINGERPRINT, 0, "fingerprint" },
	{ HM_JSEC_EXIT, 0, "exit" },
	{ HM_JSEC_STREAM, HM_JSEC_F_CRITICAL, "stream" },
	{ HM_JSEC_KERNEL, 0, "kernel" },
	{ HM_JSEC_KERNEL_SUMMARY, 0, "kernel summary" },
	{ HM_JSEC_SCOPE, HM_JSEC_F_CRITICAL, "scope" },
	{ HM_JSEC_END, HM_JSEC_F_CRITICAL, "end" },
};

static const struct sec_info *sec_info(uint16_t type)
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
	w->crc = crc32c_update(w->crc, data, n);
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
	const struct sec_info *si = sec_info(type);
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
	ob_le(&b, k->network == HM_NETWORK_OFF ? 1 : 0, 1);
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

static bool scope_valid(const struct hm_journal_scope *sc)
{
	return sc->kind <= HM_JSCOPE_CONT && sc->status <= HM_SCOPE_STATUS_MAX &&
	       hm_journal_scope_dir_valid(sc->dir) && hm_lineage_valid(sc->root) && sc->name &&
	       (hm_scope_name_valid(sc->name) || (sc->kind == HM_JSCOPE_CONT && !sc->name[0]));
}

int hm_journal_write_scope(struct hm_journal_writer *w, const struct hm_journal_scope *sc)
{
	struct obuf b = {};
	int r;

	if (!scope_valid(sc))
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

static int fail_msg(char *err, size_t errlen, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail_msg(char *err, size_t errlen, int code, const char *fmt, ...)
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
		return fail_msg(x->err, x->errlen, code, "out of memory");
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (!x->name)
		return fail_msg(x->err, x->errlen, code, "malformed journal: %s", what);
	return fail_msg(x->err, x->errlen, code,
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
	if (net > 1)
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
	k->cfg.network = net ? HM_NETWORK_OFF : HM_NETWORK_BLOCK;
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
	if (kind > HM_JSCOPE_CONT || status > HM_SCOPE_STATUS_MAX || !scope_valid(sc))
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
		if (crc != crc32c_update(0, j->buf, at))
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
	uint64_t major, minor, flags;
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
		return fail_msg(
			x->err, x->errlen, -EPROTONOSUPPORT,
			"journal format %llu.%llu is newer than this hermetic reads (%d.x): "
			"upgrade hermetic",
			(unsigned long long)major, (unsigned long long)minor, HM_JOURNAL_MAJOR);
	if (major < HM_JOURNAL_MAJOR)
		return fail_msg(
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
		si = sec_info((uint16_t)type);
		if (!si) {
			if (sflags & HM_JSEC_F_CRITICAL)
				return fail_msg(
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
static int parse_owned(uint8_t *payload, size_t len, struct hm_journal **ret, char *err,
		       size_t errlen)
{
	struct hm_journal *j = calloc(1, sizeof(*j));
	struct pctx x = { .j = j, .err = err, .errlen = errlen, .scope = -1 };
	int r;

	if (!j) {
		free(payload);
		return fail_msg(err, errlen, -ENOMEM, "out of memory");
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
		return fail_msg(err, errlen, -ENOMEM, "out of memory");
	if (len)
		memcpy(copy, payload, len);
	return parse_owned(copy, len, ret, err, errlen);
}

const char *hm_journal_fp_get(const struct hm_journal_fingerprint *f, const char *key)
{
	for (size_t i = 0; i < f->n_fields; i++)
		if (f->fields[i].key && !strcmp(f->fields[i].key, key))
			return f->fields[i].value;
	return NULL;
}

/* --- reading: bounded decompression --------------------------------------------- */

static int decompress(const uint8_t *src, size_t len, size_t max, uint8_t **ret, size_t *ret_len,
		      char *err, size_t errlen)
{
	static const uint8_t zmagic[4] = { 0x28, 0xb5, 0x2f, 0xfd };
	unsigned long long csize;
	ZSTD_DCtx *dctx = NULL;
	ZSTD_inBuffer in = { src, len, 0 };
	ZSTD_outBuffer out = {};
	size_t limit = max + 1, cap, zr = 1;
	uint8_t *buf = NULL;
	int r;

	if (len < 4 || memcmp(src, zmagic, 4)) {
		if (len >= 8 && !memcmp(src, HM_JOURNAL_MAGIC, 8))
			return fail_msg(
				err, errlen, -EBADMSG,
				"not compressed: a bare journal payload, not a journal file");
		return fail_msg(err, errlen, -EBADMSG,
				"not a hermetic journal (no zstd frame at the start)");
	}
	csize = ZSTD_getFrameContentSize(src, len);
	if (csize == ZSTD_CONTENTSIZE_ERROR)
		return fail_msg(err, errlen, -EBADMSG, "corrupted journal: bad zstd frame header");
	if (csize != ZSTD_CONTENTSIZE_UNKNOWN && csize > max)
		return fail_msg(
			err, errlen, -EFBIG,
			"journal claims %llu bytes uncompressed, more than the limit of %zu", csize,
			max);
	/* Start from what the input can plausibly hold, not from what the
	 * frame claims, and grow by doubling up to the limit. */
	cap = len < limit / 8 ? len * 8 + 65536 : limit;
	if (csize != ZSTD_CONTENTSIZE_UNKNOWN && csize + 1 < cap)
		cap = (size_t)csize + 1;
	if (cap > limit)
		cap = limit;
	dctx = ZSTD_createDCtx();
	buf = malloc(cap);
	if (!dctx || !buf) {
		r = fail_msg(err, errlen, -ENOMEM, "out of memory");
		goto out;
	}
	/* A hostile frame header must not make us allocate a huge window. */
	if (ZSTD_isError(
		    ZSTD_DCtx_setParameter(dctx, ZSTD_d_windowLogMax, HM_JOURNAL_WINDOW_LOG_MAX))) {
		r = fail_msg(err, errlen, -EIO, "zstd refused the window limit");
		goto out;
	}
	out = (ZSTD_outBuffer){ buf, cap, 0 };
	for (;;) {
		if (out.pos == out.size) {
			uint8_t *p;

			if (cap >= limit) {
				r = fail_msg(
					err, errlen, -EFBIG,
					"journal decompresses to more than the limit of %zu bytes",
					max);
				goto out;
			}
			cap = cap > limit / 2 ? limit : cap * 2;
			p = realloc(buf, cap);
			if (!p) {
				r = fail_msg(err, errlen, -ENOMEM, "out of memory");
				goto out;
			}
			buf = p;
			out.dst = buf;
			out.size = cap;
		}
		if (in.pos == in.size && zr == 0)
			break;
		zr = ZSTD_decompressStream(dctx, &out, &in);
		if (ZSTD_isError(zr)) {
			r = fail_msg(err, errlen, -EBADMSG, "corrupted journal: zstd: %s",
				     ZSTD_getErrorName(zr));
			goto out;
		}
		if (in.pos == in.size && zr != 0 && out.pos < out.size) {
			r = fail_msg(err, errlen, -EBADMSG,
				     "truncated journal: the zstd frame is incomplete");
			goto out;
		}
	}
	if (out.pos > max) {
		r = fail_msg(err, errlen, -EFBIG,
			     "journal decompresses to more than the limit of %zu bytes", max);
		goto out;
	}
	*ret = steal_pointer(&buf);
	*ret_len = out.pos;
	r = 0;
out:
	free(buf);
	ZSTD_freeDCtx(dctx);
	return r;
}

int hm_journal_read(const void *data, size_t len, size_t max_size, struct hm_journal **ret,
		    char *err, size_t errlen)
{
	_cleanup_free_ uint8_t *payload = NULL;
	size_t plen = 0;
	int r;

	if (!max_size)
		max_size = HM_JOURNAL_MAX_SIZE;
	if (!data && len)
		return fail_msg(err, errlen, -EINVAL, "no data");
	r = decompress(data, len, max_size, &payload, &plen, err, errlen);
	if (r < 0)
		return r;
	return parse_owned(steal_pointer(&payload), plen, ret, err, errlen);
}

int hm_journal_read_file(const char *path, size_t max_size, struct hm_journal **ret, char *err,
			 size_t errlen)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ uint8_t *data = NULL;
	struct stat st;
	size_t n = 0;

	if (!max_size)
		max_size = HM_JOURNAL_MAX_SIZE;
	/* O_NONBLOCK: a FIFO given as a journal must not hang the open. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return fail_msg(err, errlen, -errno, "%s", strerror(errno));
	if (fstat(fd, &st) < 0)
		return fail_msg(err, errlen, -errno, "%s", strerror(errno));
	if (!S_ISREG(st.st_mode))
		return fail_msg(err, errlen, -EINVAL, "not a regular file");
	if ((uint64_t)st.st_size > max_size)
		return fail_msg(err, errlen, -EFBIG, "file is larger than the limit of %zu bytes",
				max_size);
	data = malloc(st.st_size ? (size_t)st.st_size : 1);
	if (!data)
		return fail_msg(err, errlen, -ENOMEM, "out of memory");
	while (n < (size_t)st.st_size) {
		ssize_t k = read(fd, data + n, (size_t)st.st_size - n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return fail_msg(err, errlen, -errno, "%s", strerror(errno));
		if (k == 0)
			break;
		n += (size_t)k;
	}
	return hm_journal_read(data, n, max_size, ret, err, errlen);
}
