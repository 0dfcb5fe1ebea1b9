/* SPDX-License-Identifier: MIT */
/*
 * ChaCha20 (RFC 8439) as a deterministic stream generator: the block
 * function, and a keyed stream that hands out bytes in order. Pure code:
 * no allocation, no syscalls, safe in any context (signal handlers, vfork
 * children), so the shim can call it anywhere.
 */
#ifndef HERMETIC_CHACHA20_H
#define HERMETIC_CHACHA20_H

#include <stdint.h>
#include <stddef.h>

#define HM_CHACHA_KEY_SIZE 32
#define HM_CHACHA_NONCE_SIZE 12
#define HM_CHACHA_BLOCK_SIZE 64

/* One block: key (32 bytes), 32-bit block counter, nonce (12 bytes). */
void hm_chacha20_block(const uint8_t key[HM_CHACHA_KEY_SIZE], uint32_t counter,
		       const uint8_t nonce[HM_CHACHA_NONCE_SIZE], uint8_t out[HM_CHACHA_BLOCK_SIZE]);

/* RFC 8439 §2.4 encryption: out = in XOR keystream starting at counter.
 * in and out may be the same buffer. */
void hm_chacha20_xor(const uint8_t key[HM_CHACHA_KEY_SIZE], uint32_t counter,
		     const uint8_t nonce[HM_CHACHA_NONCE_SIZE], const uint8_t *in, uint8_t *out,
		     size_t len);

/*
 * A stream: the keystream of (key, nonce = 0) read in order. The 64-bit
 * block position is split over the 32-bit counter and the first nonce word,
 * so a stream never repeats within 2^70 bytes.
 *
 * The stream keeps HM_CHACHA_LANES blocks of keystream ahead, made at once
 * by a block function that runs the blocks side by side in vector
 * registers (4 at a time with SSE2/NEON, 8 with AVX2 where the CPU has it),
 * so a short read is a copy out of buf.
 * The bytes are those of hm_chacha20_block for blocks 0, 1, 2... whatever
 * the buffering: how reads are chunked never changes what they return.
 */
#define HM_CHACHA_LANES 8
#define HM_CHACHA_BUF (HM_CHACHA_LANES * HM_CHACHA_BLOCK_SIZE)

struct hm_chacha_stream {
	uint32_t pos; /* bytes of buf already handed out; HM_CHACHA_BUF = empty */
	uint64_t block; /* the next block to generate (the one after buf) */
	uint8_t key[HM_CHACHA_KEY_SIZE];
	uint8_t buf[HM_CHACHA_BUF] __attribute__((aligned(64)));
};

/* Tests: make blocks 4 (SSE2/NEON) or 8 (AVX2, when the CPU has it) at a
 * time, or 0: as the CPU allows (asked again at the next refill); returns
 * the width in use (4 until asked). The bytes are the same either way. */
int hm_chacha20_width(int lanes);

/* HM_CHACHA_LANES consecutive blocks of (key, nonce 0) from block on. */
void hm_chacha20_blocks(const uint8_t key[HM_CHACHA_KEY_SIZE], uint64_t block,
			uint8_t out[HM_CHACHA_BUF]);

void hm_chacha_stream_init(struct hm_chacha_stream *s, const uint8_t key[HM_CHACHA_KEY_SIZE]);
/* A read that buf cannot answer alone (refills, whole blocks). */
void hm_chacha_stream_read_slow(struct hm_chacha_stream *s, void *out, size_t len);

static inline void hm_chacha_stream_read(struct hm_chacha_stream *s, void *out, size_t len)
{
	uint32_t pos = s->pos;

	/* (pos is at most HM_CHACHA_BUF; saying so lets the compiler see the
	 * copy in bounds) */
	if (__builtin_expect(pos <= HM_CHACHA_BUF && len <= HM_CHACHA_BUF - pos, 1)) {
		__builtin_memcpy(out, s->buf + pos, len);
		s->pos = pos + len;
		return;
	}
	hm_chacha_stream_read_slow(s, out, len);
}

#endif
