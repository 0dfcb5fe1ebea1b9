/* SPDX-License-Identifier: MIT */
/*
 * The ChaCha20 block function over LANES consecutive blocks side by side,
 * included by chacha20.c once per width (LANES 4: SSE2 or NEON, which every
 * x86-64 and arm64 has; LANES 8: AVX2 where the CPU has it). NAME, LANES
 * and ATTR are defined by the includer.
 *
 * x[w] holds word w of every lane's block, so each quarter round is the
 * same few vector operations on all lanes; lane l is block (block + l):
 * its low 32 bits the counter, its high 32 bits the first nonce word (a
 * lane may cross into the next high word), the other nonce words 0. The
 * output is the blocks one after another, as hm_chacha20_block makes them.
 */
ATTR static void NAME(const uint32_t key[8], uint64_t block, uint8_t *out)
{
	typedef uint32_t vec __attribute__((vector_size(LANES * 4)));
	typedef uint32_t vec4 __attribute__((vector_size(16)));
	static const uint32_t sigma[4] = { 0x61707865, 0x3320646e, 0x79622d32, 0x6b206574 };
	vec in[16], x[16];
	int i, l;

	for (i = 0; i < 4; i++)
		for (l = 0; l < LANES; l++)
			in[i][l] = sigma[i];
	for (i = 0; i < 8; i++)
		for (l = 0; l < LANES; l++)
			in[4 + i][l] = key[i];
	for (l = 0; l < LANES; l++) {
		in[12][l] = (uint32_t)(block + l);
		in[13][l] = (uint32_t)((block + l) >> 32);
		in[14][l] = 0;
		in[15][l] = 0;
	}
	memcpy(x, in, sizeof(x));
	for (i = 0; i < 10; i++) {
		VQR(x[0], x[4], x[8], x[12]);
		VQR(x[1], x[5], x[9], x[13]);
		VQR(x[2], x[6], x[10], x[14]);
		VQR(x[3], x[7], x[11], x[15]);
		VQR(x[0], x[5], x[10], x[15]);
		VQR(x[1], x[6], x[11], x[12]);
		VQR(x[2], x[7], x[8], x[13]);
		VQR(x[3], x[4], x[9], x[14]);
	}
	for (i = 0; i < 16; i++)
		x[i] += in[i];
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && (defined(__clang__) || __GNUC__ >= 12)
	/* Per group of four lanes h and of four words i..i+3: a 4x4 transpose
	 * puts those words of block h+l in one vector, stored as is (with
	 * __builtin_shufflevector: GCC 12 on, clang; else word by word). */
	for (int h = 0; h < LANES; h += 4) {
		for (i = 0; i < 16; i += 4) {
			vec4 a, b, c, d;

			memcpy(&a, (uint32_t *)&x[i] + h, 16);
			memcpy(&b, (uint32_t *)&x[i + 1] + h, 16);
			memcpy(&c, (uint32_t *)&x[i + 2] + h, 16);
			memcpy(&d, (uint32_t *)&x[i + 3] + h, 16);
			vec4 t0 = __builtin_shufflevector(a, b, 0, 4, 1, 5);
			vec4 t1 = __builtin_shufflevector(a, b, 2, 6, 3, 7);
			vec4 t2 = __builtin_shufflevector(c, d, 0, 4, 1, 5);
			vec4 t3 = __builtin_shufflevector(c, d, 2, 6, 3, 7);
			vec4 r[4] = {
				__builtin_shufflevector(t0, t2, 0, 1, 4, 5),
				__builtin_shufflevector(t0, t2, 2, 3, 6, 7),
				__builtin_shufflevector(t1, t3, 0, 1, 4, 5),
				__builtin_shufflevector(t1, t3, 2, 3, 6, 7),
			};

			for (l = 0; l < 4; l++)
				memcpy(out + (h + l) * HM_CHACHA_BLOCK_SIZE + 4 * i, &r[l], 16);
		}
	}
#else
	for (l = 0; l < LANES; l++)
		for (i = 0; i < 16; i++)
			put_le32(out + l * HM_CHACHA_BLOCK_SIZE + 4 * i, x[i][l]);
#endif
}
