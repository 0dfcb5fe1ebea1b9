// SPDX-License-Identifier: MIT
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

void hm_chacha_stream_init(struct hm_chacha_stream *s, const uint8_t key[HM_CHACHA_KEY_SIZE])
{
	memcpy(s->key, key, HM_CHACHA_KEY_SIZE);
	s->block = 0;
	s->pos = HM_CHACHA_BLOCK_SIZE;
}

static void stream_block(struct hm_chacha_stream *s, uint8_t out[HM_CHACHA_BLOCK_SIZE])
{
	uint8_t nonce[HM_CHACHA_NONCE_SIZE] = { 0 };

	put_le32(nonce, (uint32_t)(s->block >> 32));
	hm_chacha20_block(s->key, (uint32_t)s->block, nonce, out);
	s->block++;
}

void hm_chacha_stream_read(struct hm_chacha_stream *s, void *out, size_t len)
{
	uint8_t *p = out;

	/* Leftover bytes of the current block first. */
	if (s->pos < HM_CHACHA_BLOCK_SIZE) {
		size_t n = HM_CHACHA_BLOCK_SIZE - s->pos;

		if (n > len)
			n = len;
		memcpy(p, s->buf + s->pos, n);
		s->pos += n;
		p += n;
		len -= n;
	}
	/* Whole blocks straight into the caller's buffer. */
	while (len >= HM_CHACHA_BLOCK_SIZE) {
		stream_block(s, p);
		p += HM_CHACHA_BLOCK_SIZE;
		len -= HM_CHACHA_BLOCK_SIZE;
	}
	if (len) {
		stream_block(s, s->buf);
		memcpy(p, s->buf, len);
		s->pos = len;
	}
}
