// SPDX-License-Identifier: MIT
#include <stdbool.h>
#include <string.h>
#include "chacha20.h"

#define ROTL(v, n) (((v) << (n)) | ((v) >> (32 - (n))))
#define QR(a, b, c, d)                                                                            \
	do {                                                                                       \
		a += b;                                                                            \
		d ^= a;                                                                            \
		d = ROTL(d, 16);                                                                   \
		c += d;                                                                            \
		b ^= c;                                                                            \
		b = ROTL(b, 12);                                                                   \
		a += b;                                                                            \
		d ^= a;                                                                            \
		d = ROTL(d, 8);                                                                    \
		c += d;                                                                            \
		b ^= c;                                                                            \
		b = ROTL(b, 7);                                                                    \
	} while (0)

static inline uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline void put_le32(uint8_t *p, uint32_t v)
{
	p[0] = v;
	p[1] = v >> 8;
	p[2] = v >> 16;
	p[3] = v >> 24;
}

void hm_chacha20_block(const uint8_t key[HM_CHACHA_KEY_SIZE], uint32_t counter,
		       const uint8_t nonce[HM_CHACHA_NONCE_SIZE], uint8_t out[HM_CHACHA_BLOCK_SIZE])
{
	uint32_t in[16], x[16];
	int i;

	in[0] = 0x61707865;
	in[1] = 0x3320646e;
	in[2] = 0x79622d32;
	in[3] = 0x6b206574;
	for (i = 0; i < 8; i++)
		in[4 + i] = le32(key + 4 * i);
	in[12] = counter;
	for (i = 0; i < 3; i++)
		in[13 + i] = le32(nonce + 4 * i);
	memcpy(x, in, sizeof(x));
	for (i = 0; i < 10; i++) {
		QR(x[0], x[4], x[8], x[12]);
		QR(x[1], x[5], x[9], x[13]);
		QR(x[2], x[6], x[10], x[14]);
		QR(x[3], x[7], x[11], x[15]);
		QR(x[0], x[5], x[10], x[15]);
		QR(x[1], x[6], x[11], x[12]);
		QR(x[2], x[7], x[8], x[13]);
		QR(x[3], x[4], x[9], x[14]);
	}
	for (i = 0; i < 16; i++)
		put_le32(out + 4 * i, x[i] + in[i]);
}

void hm_chacha20_xor(const uint8_t key[HM_CHACHA_KEY_SIZE], uint32_t counter,
		     const uint8_t nonce[HM_CHACHA_NONCE_SIZE], const uint8_t *in, uint8_t *out,
		     size_t len)
{
	uint8_t ks[HM_CHACHA_BLOCK_SIZE];

	while (len) {
		size_t n = len < sizeof(ks) ? len : sizeof(ks);

		hm_chacha20_block(key, counter++, nonce, ks);
		for (size_t i = 0; i < n; i++)
			out[i] = in[i] ^ ks[i];
		in += n;
		out += n;
		len -= n;
	}
}

/* The multi-block function, one copy per vector width (chacha20_lanes.h). */
#define VROTL(v, n) (((v) << (n)) | ((v) >> (32 - (n))))
#define VQR(a, b, c, d)                                                                           \
	do {                                                                                       \
		a += b;                                                                            \
		d ^= a;                                                                            \
		d = VROTL(d, 16);                                                                  \
		c += d;                                                                            \
		b ^= c;                                                                            \
		b = VROTL(b, 12);                                                                  \
		a += b;                                                                            \
		d ^= a;                                                                            \
		d = VROTL(d, 8);                                                                   \
		c += d;                                                                            \
		b ^= c;                                                                            \
		b = VROTL(b, 7);                                                                   \
	} while (0)

#define NAME blocks4
#define LANES 4
#define ATTR
#include "chacha20_lanes.h"
#undef NAME
#undef LANES
#undef ATTR

#if defined(__x86_64__) && (defined(__clang__) || __GNUC__ >= 12)
#include <cpuid.h>
#define NAME blocks8
#define LANES 8
#define ATTR __attribute__((target("avx2")))
#include "chacha20_lanes.h"
#undef NAME
#undef LANES
#undef ATTR

/* AVX2, and the kernel saves the YMM registers (XCR0 bits 1-2). cpuid and
 * xgetbv are instructions: no library, safe before anything is set up. */
static bool have_avx2(void)
{
	unsigned a, b, c, d, lo, hi;

	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_OSXSAVE) || !(c & bit_AVX))
		return false;
	__asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	if ((lo & 6) != 6)
		return false;
	return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & bit_AVX2);
}

/* 0: not asked yet, 1: no, 2: yes. Racing threads agree. */
static int avx2;

int hm_chacha20_width(int lanes)
{
	if (lanes == 4 || lanes == 8)
		__atomic_store_n(&avx2, lanes == 8 && have_avx2() ? 2 : 1, __ATOMIC_RELAXED);
	else if (lanes == 0)
		__atomic_store_n(&avx2, 0, __ATOMIC_RELAXED);
	return __atomic_load_n(&avx2, __ATOMIC_RELAXED) == 2 ? 8 : 4;
}

static void blocks(const uint32_t key[8], uint64_t block, uint8_t *out)
{
	int v = __atomic_load_n(&avx2, __ATOMIC_RELAXED);

	if (__builtin_expect(!v, 0)) {
		v = have_avx2() ? 2 : 1;
		__atomic_store_n(&avx2, v, __ATOMIC_RELAXED);
	}
	if (v == 2) {
		for (int i = 0; i < HM_CHACHA_LANES; i += 8)
			blocks8(key, block + i, out + i * HM_CHACHA_BLOCK_SIZE);
		return;
	}
	for (int i = 0; i < HM_CHACHA_LANES; i += 4)
		blocks4(key, block + i, out + i * HM_CHACHA_BLOCK_SIZE);
}
#else
int hm_chacha20_width(int lanes)
{
	return 4;
}

static void blocks(const uint32_t key[8], uint64_t block, uint8_t *out)
{
	for (int i = 0; i < HM_CHACHA_LANES; i += 4)
		blocks4(key, block + i, out + i * HM_CHACHA_BLOCK_SIZE);
}
#endif

void hm_chacha20_blocks(const uint8_t key[HM_CHACHA_KEY_SIZE], uint64_t block,
			uint8_t out[HM_CHACHA_BUF])
{
	uint32_t k[8];

	for (int i = 0; i < 8; i++)
		k[i] = le32(key + 4 * i);
	blocks(k, block, out);
}

void hm_chacha_stream_init(struct hm_chacha_stream *s, const uint8_t key[HM_CHACHA_KEY_SIZE])
{
	memcpy(s->key, key, HM_CHACHA_KEY_SIZE);
	s->block = 0;
	s->pos = HM_CHACHA_BUF;
}

void hm_chacha_stream_read_slow(struct hm_chacha_stream *s, void *out, size_t len)
{
	uint8_t *p = out;
	size_t n = HM_CHACHA_BUF - s->pos;

	/* What is left of buf first. */
	if (n > len)
		n = len;
	memcpy(p, s->buf + s->pos, n);
	s->pos += n;
	p += n;
	len -= n;
	/* Whole groups of blocks straight into the caller's buffer. */
	while (len >= HM_CHACHA_BUF) {
		hm_chacha20_blocks(s->key, s->block, p);
		s->block += HM_CHACHA_LANES;
		p += HM_CHACHA_BUF;
		len -= HM_CHACHA_BUF;
	}
	if (len) {
		hm_chacha20_blocks(s->key, s->block, s->buf);
		s->block += HM_CHACHA_LANES;
		memcpy(p, s->buf, len);
		s->pos = len;
	}
}
