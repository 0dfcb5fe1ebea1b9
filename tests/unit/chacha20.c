// SPDX-License-Identifier: MIT
/* ChaCha20 against RFC 8439 test vectors, and the stream's chunking invariance. */
#include <stdint.h>
#include "chacha20.h"
#include "lineage.h"
#include "test.h"

static void hex(const char *s, uint8_t *out, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned v;

		while (*s == ' ' || *s == '\n' || *s == ':')
			s++;
		sscanf(s, "%2x", &v);
		out[i] = v;
		s += 2;
	}
}

int main(void)
{
	uint8_t key[32], nonce[12], out[64], want[64];
	uint8_t ct[114], want_ct[114];
	static const char sunscreen[] =
		"Ladies and Gentlemen of the class of '99: If I could offer you only one tip for "
		"the future, sunscreen would be it.";

	for (int i = 0; i < 32; i++)
		key[i] = i;

	/* §2.3.2: block function */
	hex("000000090000004a00000000", nonce, 12);
	hm_chacha20_block(key, 1, nonce, out);
	hex("10f1e7e4d13b5915500fdd1fa32071c4c7d1f4c733c068030422aa9ac3d46c4e"
	    "d2826446079faa0914c2d705d98b02a2b5129cd1de164eb9cbd083e8a2503c4e",
	    want, 64);
	CHECK("rfc8439 2.3.2 block", !memcmp(out, want, 64));

	/* §2.4.2: encryption */
	hex("000000000000004a00000000", nonce, 12);
	CHECK("rfc8439 2.4.2 plaintext length", sizeof(sunscreen) - 1 == 114);
	hm_chacha20_xor(key, 1, nonce, (const uint8_t *)sunscreen, ct, 114);
	hex("6e2e359a2568f98041ba0728dd0d6981e97e7aec1d4360c20a27afccfd9fae0b"
	    "f91b65c5524733ab8f593dabcd62b3571639d624e65152ab8f530c359f0861d8"
	    "07ca0dbf500d6a6156a38e088a22b65e52bc514d16ccf806818ce91ab7793736"
	    "5af90bbf74a35be6b40b8eedf2785e42874d",
	    want_ct, 114);
	CHECK("rfc8439 2.4.2 encryption", !memcmp(ct, want_ct, 114));
	hm_chacha20_xor(key, 1, nonce, ct, ct, 114);
	CHECK("rfc8439 2.4.2 decryption round-trips", !memcmp(ct, sunscreen, 114));

	/* A.1 test vector #1: zero key, zero nonce, counter 0 */
	memset(key, 0, 32);
	memset(nonce, 0, 12);
	hm_chacha20_block(key, 0, nonce, out);
	hex("76b8e0ada0f13d90405d6ae55386bd28bdd219b8a08ded1aa836efcc8b770dc7"
	    "da41597c5157488d7724e03fb8d84a376a43b8f41518a11cc387b669b2ee6586",
	    want, 64);
	CHECK("rfc8439 A.1 vector 1", !memcmp(out, want, 64));

	/* The stream is the keystream with nonce 0, however it is chunked, with
	 * the blocks made 4 or 8 at a time (8: AVX2; a CPU without it makes 4
	 * again, under the same names). */
	for (int w = 4; w <= 8; w += 4) {
		char name[80];

		hm_chacha20_width(w);

		{
			struct hm_chacha_stream a, b;
			uint8_t x[1300], y[1300], ks[1300];
			size_t off = 0, sizes[] = { 1, 3, 64, 5, 100, 7, 120, 256, 255, 2, 487 };

			for (int i = 0; i < 32; i++)
				key[i] = i * 7;
			hm_chacha_stream_init(&a, key);
			hm_chacha_stream_init(&b, key);
			hm_chacha_stream_read(&a, x, sizeof(x));
			for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
				hm_chacha_stream_read(&b, y + off, sizes[i]);
				off += sizes[i];
			}
			snprintf(name, sizeof(name), "stream chunking invariant (%d lanes)", w);
			CHECK(name, off == 1300 && !memcmp(x, y, 1300));
			memset(ks, 0, sizeof(ks));
			memset(nonce, 0, sizeof(nonce));
			hm_chacha20_xor(key, 0, nonce, ks, ks, sizeof(ks));
			snprintf(name, sizeof(name), "stream is keystream (%d lanes)", w);
			CHECK(name, !memcmp(x, ks, 1300));
		}

		/* The lanes carry the block number into the first nonce word. */
		{
			struct hm_chacha_stream a;
			uint8_t x[8 * 64], want[8 * 64];
			uint64_t first = (1ULL << 32) - 3;

			for (int i = 0; i < 32; i++)
				key[i] = 255 - i;
			hm_chacha_stream_init(&a, key);
			a.block = first;
			hm_chacha_stream_read(&a, x, 5);
			hm_chacha_stream_read(&a, x + 5, sizeof(x) - 5);
			for (int b = 0; b < 8; b++) {
				uint64_t n = first + b;

				memset(nonce, 0, 12);
				nonce[0] = n >> 32;
				hm_chacha20_block(key, (uint32_t)n, nonce, want + 64 * b);
			}
			snprintf(name, sizeof(name), "stream crosses the 2^32 block boundary (%d lanes)", w);
			CHECK(name, !memcmp(x, want, sizeof(x)));
		}
	}
	hm_chacha20_width(0);

	/* Stream keys depend on every input. */
	{
		uint8_t k1[32], k2[32];
		uint64_t img = hm_image_id(hm_proc_root(), "python3.11", 1);

		hm_stream_key(42, img, 0, k1);
		hm_stream_key(42, img, 0, k2);
		CHECK("stream key deterministic", !memcmp(k1, k2, 32));
		hm_stream_key(43, img, 0, k2);
		CHECK("stream key depends on seed", memcmp(k1, k2, 32));
		hm_stream_key(42, img + 1, 0, k2);
		CHECK("stream key depends on the image", memcmp(k1, k2, 32));
		hm_stream_key(42, img, 1, k2);
		CHECK("stream key depends on thread", memcmp(k1, k2, 32));
	}
	T_EXIT();
}
