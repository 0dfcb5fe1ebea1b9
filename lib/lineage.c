// SPDX-License-Identifier: MIT
#include <errno.h>
#include <string.h>
#include "lineage.h"

bool hm_lineage_valid(const char *key)
{
	const char *p = key;

	if (!key || (strcmp(key, HM_LINEAGE_ROOT) && strncmp(key, HM_LINEAGE_ROOT ".", 2)))
		return false;
	if (strlen(key) >= HM_LINEAGE_MAX)
		return false;
	p = key + 1;
	while (*p) {
		uint64_t n;
		const char *end;

		if (*p != '.' || p[1] == '0')
			return false;
		end = hm_parse_dec_u64(p + 1, &n);
		if (!end || n == 0)
			return false;
		p = end;
	}
	return true;
}

unsigned hm_lineage_depth(const char *key)
{
	unsigned d = 1;

	if (!hm_lineage_valid(key))
		return 0;
	for (; *key; key++)
		d += *key == '.';
	return d;
}

size_t hm_fmt_u64(char *out, size_t size, uint64_t v)
{
	char tmp[20];
	size_t n = 0, i;

	do {
		tmp[n++] = '0' + v % 10;
		v /= 10;
	} while (v);
	if (n + 1 > size)
		return 0;
	for (i = 0; i < n; i++)
		out[i] = tmp[n - 1 - i];
	out[n] = 0;
	return n;
}

size_t hm_fmt_i64(char *out, size_t size, int64_t v)
{
	size_t n;

	if (v >= 0)
		return hm_fmt_u64(out, size, (uint64_t)v);
	if (size < 2)
		return 0;
	out[0] = '-';
	n = hm_fmt_u64(out + 1, size - 1, -(uint64_t)v);
	return n ? n + 1 : 0;
}

const char *hm_parse_dec_u64(const char *s, uint64_t *ret)
{
	uint64_t v = 0;
	const char *p = s;

	if (!s || *p < '0' || *p > '9')
		return NULL;
	for (; *p >= '0' && *p <= '9'; p++) {
		unsigned d = *p - '0';

		if (v > (UINT64_MAX - d) / 10)
			return NULL;
		v = v * 10 + d;
	}
	*ret = v;
	return p;
}

const char *hm_parse_dec_i64(const char *s, int64_t *ret)
{
	uint64_t v;
	bool neg = s && *s == '-';
	const char *end = hm_parse_dec_u64(neg ? s + 1 : s, &v);

	if (!end || v > (uint64_t)INT64_MAX + neg)
		return NULL;
	*ret = neg ? (int64_t)(0 - v) : (int64_t)v;
	return end;
}

int hm_lineage_child(const char *parent, uint64_t n, char *out, size_t size)
{
	char num[21];
	size_t plen, nlen;

	if (n == 0 || !hm_lineage_valid(parent))
		return -EINVAL;
	plen = strlen(parent);
	nlen = hm_fmt_u64(num, sizeof(num), n);
	if (plen + 1 + nlen + 1 > size || plen + 1 + nlen + 1 > HM_LINEAGE_MAX)
		return -ENAMETOOLONG;
	memmove(out, parent, plen); /* out may be parent */
	out[plen] = '.';
	memcpy(out + plen + 1, num, nlen + 1);
	return 0;
}

static void absorb(uint8_t key[HM_CHACHA_KEY_SIZE], const uint8_t nonce[HM_CHACHA_NONCE_SIZE])
{
	uint8_t block[HM_CHACHA_BLOCK_SIZE];

	hm_chacha20_block(key, 0, nonce, block);
	memcpy(key, block, HM_CHACHA_KEY_SIZE);
}

static void put_le(uint8_t *p, uint64_t v, int bytes)
{
	for (int i = 0; i < bytes; i++)
		p[i] = v >> (8 * i);
}

void hm_chain_init(struct hm_chain *c, const char *label)
{
	memset(c->key, 0, sizeof(c->key));
	memcpy(c->key, label, strlen(label) < sizeof(c->key) ? strlen(label) : sizeof(c->key));
}

void hm_chain_u64(struct hm_chain *c, uint64_t v, const char tag[4])
{
	uint8_t nonce[HM_CHACHA_NONCE_SIZE];

	put_le(nonce, v, 8);
	memcpy(nonce + 8, tag, 4);
	absorb(c->key, nonce);
}

void hm_chain_str(struct hm_chain *c, const char *s)
{
	uint8_t nonce[HM_CHACHA_NONCE_SIZE];
	size_t len = strlen(s);

	hm_chain_u64(c, len, "strl");
	for (size_t off = 0; off < len; off += HM_CHACHA_NONCE_SIZE) {
		size_t n = len - off < HM_CHACHA_NONCE_SIZE ? len - off : HM_CHACHA_NONCE_SIZE;

		memset(nonce, 0, sizeof(nonce));
		memcpy(nonce, s + off, n);
		absorb(c->key, nonce);
	}
}

uint64_t hm_chain_word(const struct hm_chain *c)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v |= (uint64_t)c->key[i] << (8 * i);
	return v;
}

static uint64_t chain_u64_out(const struct hm_chain *c)
{
	uint64_t v = hm_chain_word(c);

	return v ? v : 1; /* 0 means "none" (the run's first process has no parent) */
}

uint64_t hm_proc_root(void)
{
	return hm_proc_child(0, 1);
}

uint64_t hm_proc_child(uint64_t parent_image, uint64_t n)
{
	struct hm_chain c;

	hm_chain_init(&c, "hermetic process v2");
	hm_chain_u64(&c, parent_image, "pimg");
	hm_chain_u64(&c, n, "chld");
	return chain_u64_out(&c);
}

uint64_t hm_image_id(uint64_t proc, const char *exe, uint32_t count)
{
	struct hm_chain c;

	hm_chain_init(&c, "hermetic image v2");
	hm_chain_u64(&c, proc, "proc");
	hm_chain_str(&c, exe);
	hm_chain_u64(&c, count, "runs");
	return chain_u64_out(&c);
}

void hm_stream_key(uint64_t seed, uint64_t image, uint32_t thread,
		   uint8_t out[HM_CHACHA_KEY_SIZE])
{
	struct hm_chain c;

	hm_chain_init(&c, "hermetic stream key v2");
	hm_chain_u64(&c, seed, "seed");
	hm_chain_u64(&c, image, "imag");
	hm_chain_u64(&c, thread, "thrd");
	memcpy(out, c.key, HM_CHACHA_KEY_SIZE);
}

static bool exe_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       ch == '.' || ch == '_' || ch == '+' || ch == '-';
}

void hm_exe_name(const char *path, char out[HM_EXE_MAX])
{
	const char *base = path ? strrchr(path, '/') : NULL;
	size_t n = 0;

	base = base ? base + 1 : path ? path : "";
	for (; base[n] && n < HM_EXE_MAX - 1; n++)
		out[n] = exe_char(base[n]) ? base[n] : '_';
	out[n] = 0;
	if (!n)
		memcpy(out, "?", 2);
}

bool hm_exe_valid(const char *name)
{
	size_t n = 0;

	if (!name || !strcmp(name, "?"))
		return name != NULL;
	for (; name[n]; n++)
		if (!exe_char(name[n]) || n >= HM_EXE_MAX - 1)
			return false;
	return n > 0;
}

/* "name=count,name=count": the count of name, 0 when absent. */
uint32_t hm_runs_get(const char *list, const char *name)
{
	size_t len = strlen(name);
	uint64_t v;

	for (const char *p = list; p && *p;) {
		const char *eq = strchr(p, '='), *end;

		if (!eq)
			return 0;
		end = hm_parse_dec_u64(eq + 1, &v);
		if (!end)
			return 0;
		if ((size_t)(eq - p) == len && !strncmp(p, name, len))
			return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
		p = *end == ',' ? end + 1 : end;
	}
	return 0;
}

int hm_runs_bump(const char *list, const char *name, char *out, size_t size)
{
	uint32_t have = hm_runs_get(list, name);
	size_t len = strlen(name), used = 0;
	char num[24];

	/* The others as they were, then name with its new count, last. */
	for (const char *p = list; p && *p;) {
		const char *comma = strchr(p, ','), *end = comma ? comma : p + strlen(p);
		const char *eq = memchr(p, '=', end - p);

		if (eq && !((size_t)(eq - p) == len && !strncmp(p, name, len))) {
			if (used + (end - p) + 2 > size)
				return -ENAMETOOLONG;
			if (used)
				out[used++] = ',';
			memcpy(out + used, p, end - p);
			used += end - p;
		}
		p = comma ? comma + 1 : end;
	}
	hm_fmt_u64(num, sizeof(num), (uint64_t)have + 1);
	if (used + len + strlen(num) + 3 > size)
		return -ENAMETOOLONG;
	if (used)
		out[used++] = ',';
	memcpy(out + used, name, len);
	used += len;
	out[used++] = '=';
	memcpy(out + used, num, strlen(num) + 1);
	return 0;
}
