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

void hm_stream_key(uint64_t seed, const char *lineage, uint32_t thread, uint32_t gen,
		   uint8_t out[HM_CHACHA_KEY_SIZE])
{
	static const char label[HM_CHACHA_KEY_SIZE] = "hermetic stream key v1";
	uint8_t key[HM_CHACHA_KEY_SIZE], nonce[HM_CHACHA_NONCE_SIZE];
	size_t len = strlen(lineage), off;

	memcpy(key, label, sizeof(key));
	/* seed, and the lineage key's length */
	put_le(nonce, seed, 8);
	put_le(nonce + 8, len, 4);
	absorb(key, nonce);
	/* the lineage key, 12 bytes at a time, zero-padded */
	for (off = 0; off < len; off += HM_CHACHA_NONCE_SIZE) {
		size_t n = len - off < HM_CHACHA_NONCE_SIZE ? len - off : HM_CHACHA_NONCE_SIZE;

		memset(nonce, 0, sizeof(nonce));
		memcpy(nonce, lineage + off, n);
		absorb(key, nonce);
	}
	/* thread index and exec generation, with a domain tag */
	put_le(nonce, thread, 4);
	put_le(nonce + 4, gen, 4);
	memcpy(nonce + 8, "thrd", 4);
	absorb(key, nonce);
	memcpy(out, key, HM_CHACHA_KEY_SIZE);
}
