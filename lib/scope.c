// SPDX-License-Identifier: MIT
#include <errno.h>
#include <string.h>
#include <linux/types.h>
#include "scope.h"
#include "hermetic/vclock.h"

uint64_t hm_scope_seed(uint64_t base, const char *name)
{
	struct hm_chain c;

	hm_chain_init(&c, "hermetic scope seed v1");
	hm_chain_u64(&c, base, "seed");
	hm_chain_str(&c, name);
	return hm_chain_word(&c);
}

void hm_scope_stream_key(uint64_t seed, const char *name, uint64_t image, uint32_t thread,
			 uint8_t out[HM_CHACHA_KEY_SIZE])
{
	struct hm_chain c;

	hm_chain_init(&c, "hermetic scope stream key v2");
	hm_chain_u64(&c, seed, "seed");
	hm_chain_str(&c, name);
	hm_chain_u64(&c, image, "imag");
	hm_chain_u64(&c, thread, "thrd");
	memcpy(out, c.key, HM_CHACHA_KEY_SIZE);
}

uint64_t hm_scope_proc(const char *rel_lineage)
{
	struct hm_chain c;
	uint64_t v;

	hm_chain_init(&c, "hermetic scope process v1");
	hm_chain_str(&c, rel_lineage);
	v = hm_chain_word(&c);
	return v ? v : 1;
}

/* splitmix64's finaliser: a seed's bits spread over the whole word. */
static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

int64_t hm_mono_start(uint64_t seed)
{
	return HM_VMONO_BASE + (int64_t)(mix64(seed) % 1000000000ULL);
}

bool hm_scope_name_valid(const char *name)
{
	size_t n;

	if (!name || !*name)
		return false;
	for (n = 0; name[n]; n++)
		if ((unsigned char)name[n] < 0x20 || name[n] == 0x7f || n + 1 >= HM_SCOPE_NAME_MAX)
			return false;
	return true;
}

static bool plain(unsigned char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       ch == '.' || ch == '_' || ch == '~' || ch == '-';
}

size_t hm_pct_encode(const char *in, char *out, size_t size)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = 0;

	for (; *in; in++) {
		unsigned char ch = *in;

		if (n + (plain(ch) ? 1 : 3) + 1 > size)
			return 0;
		if (plain(ch)) {
			out[n++] = ch;
		} else {
			out[n++] = '%';
			out[n++] = hex[ch >> 4];
			out[n++] = hex[ch & 15];
		}
	}
	if (n + 1 > size)
		return 0;
	out[n] = 0;
	return n;
}

static int hexval(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

long hm_pct_decode(const char *in, size_t len, char *out, size_t size)
{
	size_t n = 0;

	for (size_t i = 0; i < len; i++) {
		int ch = (unsigned char)in[i];

		if (ch == '%') {
			int hi, lo;

			if (i + 2 >= len)
				return -EINVAL;
			hi = hexval(in[i + 1]);
			lo = hexval(in[i + 2]);
			if (hi < 0 || lo < 0)
				return -EINVAL;
			ch = hi << 4 | lo;
			i += 2;
		}
		if (ch == 0 || n + 1 >= size)
			return -EINVAL;
		out[n++] = ch;
	}
	out[n] = 0;
	return n;
}

static char *put_num(char *p, char *end, int64_t v, bool neg_ok)
{
	size_t n;

	if (!p)
		return NULL;
	n = neg_ok ? hm_fmt_i64(p, end - p, v) : hm_fmt_u64(p, end - p, (uint64_t)v);
	if (!n || p + n + 1 >= end)
		return NULL;
	p[n] = ':';
	return p + n + 1;
}

size_t hm_scope_format(const struct hm_scope_spec *s, char *out, size_t size)
{
	char *p = out, *end = out + size;
	size_t n;

	if (size < 4)
		return 0;
	memcpy(p, "v1:", 3);
	p += 3;
	p = put_num(p, end, (int64_t)s->seed, false);
	p = put_num(p, end, s->mono, true);
	p = put_num(p, end, s->wall, true);
	p = put_num(p, end, (int64_t)s->children0, false);
	p = put_num(p, end, s->gen0, false);
	p = put_num(p, end, s->seq, false);
	if (!p || (size_t)(end - p) < strlen(s->root) + 2)
		return 0;
	memcpy(p, s->root, strlen(s->root));
	p += strlen(s->root);
	*p++ = ':';
	n = hm_pct_encode(s->name, p, end - p);
	if (!n)
		return 0;
	return p + n - out;
}

int hm_scope_parse(const char *v, struct hm_scope_spec *s)
{
	uint64_t seed, c0, gen0, seq;
	int64_t mono, wall;
	const char *colon;
	long n;

	if (!v || strncmp(v, "v1:", 3))
		return -EINVAL;
	v += 3;
	if (!(v = hm_parse_dec_u64(v, &seed)) || *v++ != ':' ||
	    !(v = hm_parse_dec_i64(v, &mono)) || *v++ != ':' ||
	    !(v = hm_parse_dec_i64(v, &wall)) || *v++ != ':' ||
	    !(v = hm_parse_dec_u64(v, &c0)) || *v++ != ':' ||
	    !(v = hm_parse_dec_u64(v, &gen0)) || *v++ != ':' ||
	    !(v = hm_parse_dec_u64(v, &seq)) || *v++ != ':' || gen0 > UINT32_MAX ||
	    seq > UINT32_MAX)
		return -EINVAL;
	colon = strchr(v, ':');
	if (!colon || (size_t)(colon - v) >= HM_LINEAGE_MAX)
		return -EINVAL;
	memcpy(s->root, v, colon - v);
	s->root[colon - v] = 0;
	if (!hm_lineage_valid(s->root))
		return -EINVAL;
	n = hm_pct_decode(colon + 1, strlen(colon + 1), s->name, sizeof(s->name));
	if (n < 0 || !hm_scope_name_valid(s->name))
		return -EINVAL;
	s->seed = seed;
	s->mono = mono;
	s->wall = wall;
	s->children0 = c0;
	s->gen0 = gen0;
	s->seq = seq;
	return 0;
}

int hm_scope_rel_lineage(const char *root, uint64_t children0, const char *lineage, char *out,
			 size_t size)
{
	size_t rl = strlen(root);
	uint64_t k;
	const char *rest;
	char num[24];
	size_t nl;

	if (!strcmp(root, lineage)) {
		if (size < 2)
			return -ENAMETOOLONG;
		memcpy(out, HM_LINEAGE_ROOT, 2);
		return 0;
	}
	if (strncmp(root, lineage, rl) || lineage[rl] != '.')
		return -ENOENT;
	rest = hm_parse_dec_u64(lineage + rl + 1, &k);
	if (!rest || k <= children0)
		return -ENOENT;
	nl = hm_fmt_u64(num, sizeof(num), k - children0);
	if (2 + nl + strlen(rest) + 1 > size)
		return -ENAMETOOLONG;
	memcpy(out, HM_LINEAGE_ROOT ".", 2);
	memcpy(out + 2, num, nl);
	memcpy(out + 2 + nl, rest, strlen(rest) + 1);
	return 0;
}

void hm_scope_dirname(const struct hm_scope_spec *s, char out[HM_SCOPE_DIR_MAX])
{
	size_t n = 0;

	memcpy(out, "scope.", 6);
	n = 6;
	memcpy(out + n, s->root, strlen(s->root));
	n += strlen(s->root);
	out[n++] = '-';
	n += hm_fmt_u64(out + n, 12, s->gen0);
	out[n++] = '-';
	n += hm_fmt_u64(out + n, 12, s->seq);
	out[n] = 0;
}

void hm_scope_contname(const char *dir, const char *lineage, uint32_t gen, uint32_t k,
		       char out[HM_SCOPE_DIR_MAX])
{
	size_t n;

	if (dir && *dir) {
		n = strlen(dir);
		memcpy(out, dir, n);
	} else {
		memcpy(out, "cont.", 5);
		n = 5;
		memcpy(out + n, lineage, strlen(lineage));
		n += strlen(lineage);
		out[n++] = '-';
		n += hm_fmt_u64(out + n, 12, gen);
	}
	out[n++] = '+';
	n += hm_fmt_u64(out + n, 12, k);
	out[n] = 0;
}

static const char *const status_names[] = { "open", "passed", "failed", "skipped" };

const char *hm_scope_status_name(enum hm_scope_status st)
{
	return (unsigned)st <= HM_SCOPE_STATUS_MAX ? status_names[st] : "?";
}

int hm_scope_status_parse(const char *s, size_t len)
{
	for (int i = 0; i <= HM_SCOPE_STATUS_MAX; i++)
		if (strlen(status_names[i]) == len && !strncmp(s, status_names[i], len))
			return i;
	return -1;
}
