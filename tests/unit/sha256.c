// SPDX-License-Identifier: MIT
/* SHA-256 against the FIPS 180-4 / NIST example vectors, fed whole and in odd chunks. */
#include <stdint.h>
#include "sha256.h"
#include "test.h"

static void chunked(const char *msg, size_t len, size_t step, char out[HM_SHA256_HEX])
{
	struct hm_sha256 s;
	uint8_t d[HM_SHA256_SIZE];

	hm_sha256_init(&s);
	for (size_t i = 0; i < len; i += step)
		hm_sha256_update(&s, msg + i, len - i < step ? len - i : step);
	hm_sha256_final(&s, d);
	for (int i = 0; i < HM_SHA256_SIZE; i++)
		snprintf(out + 2 * i, 3, "%02x", d[i]);
}

int main(void)
{
	static const char two_blocks[] = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	static char million[1000000];
	char out[HM_SHA256_HEX];

	hm_sha256_hex("abc", 3, out);
	CHECK("sha256 'abc'",
	      !strcmp(out, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
	hm_sha256_hex("", 0, out);
	CHECK("sha256 of nothing",
	      !strcmp(out, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
	hm_sha256_hex(two_blocks, strlen(two_blocks), out);
	CHECK("sha256 of 448 bits (padding in a second block)",
	      !strcmp(out, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"));
	chunked(two_blocks, strlen(two_blocks), 7, out);
	CHECK("sha256 fed in 7-byte chunks",
	      !strcmp(out, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"));
	memset(million, 'a', sizeof(million));
	chunked(million, sizeof(million), 4093, out);
	CHECK("sha256 of a million 'a'",
	      !strcmp(out, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"));
	T_EXIT();
}
