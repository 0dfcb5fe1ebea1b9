/* SPDX-License-Identifier: MIT */
/*
 * SHA-256 (FIPS 180-4): what names a journal in the ledger of journals a
 * user recorded (engine/trust.c). Pure code: no allocation, no syscalls.
 */
#ifndef HERMETIC_SHA256_H
#define HERMETIC_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define HM_SHA256_SIZE 32
#define HM_SHA256_HEX (2 * HM_SHA256_SIZE + 1)

struct hm_sha256 {
	uint32_t h[8];
	uint64_t len; /* bytes hashed so far */
	uint8_t buf[64];
	size_t used; /* bytes in buf */
};

void hm_sha256_init(struct hm_sha256 *s);
void hm_sha256_update(struct hm_sha256 *s, const void *data, size_t len);
void hm_sha256_final(struct hm_sha256 *s, uint8_t out[HM_SHA256_SIZE]);
/* The digest of data as 64 lowercase hex digits. */
void hm_sha256_hex(const void *data, size_t len, char out[HM_SHA256_HEX]);

#endif
