/* SPDX-License-Identifier: MIT */
/*
 * Lineage keys: a process's place in the run's process tree, independent of
 * pids. The first process is "1"; the n-th child (n counts from 1, in the
 * order the parent created them) of a process with key K is "K.n". Every
 * random stream is derived from (seed, lineage key, thread index, exec
 * generation). Pure code, no allocation: the shim calls it in vfork children.
 */
#ifndef HERMETIC_LINEAGE_H
#define HERMETIC_LINEAGE_H

#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>
#include "chacha20.h"

#define HM_LINEAGE_MAX 256 /* bytes, including the NUL */
#define HM_LINEAGE_ROOT "1"

/* A key is "1" or a key followed by ".N", N a decimal without leading zeros, N >= 1. */
bool hm_lineage_valid(const char *key);

/* Key of the n-th child (n >= 1) of parent into out (which may be parent). Returns 0, -EINVAL for
 * a bad parent or n == 0, -ENAMETOOLONG if it does not fit (out untouched). */
int hm_lineage_child(const char *parent, uint64_t n, char *out, size_t size);

/* Depth of a key: "1" is 1, "1.3" is 2. 0 for an invalid key. */
unsigned hm_lineage_depth(const char *key);

/*
 * The ChaCha20 key of one stream: a chain of ChaCha20 blocks, each keyed by
 * the previous one's first 32 bytes, absorbing the seed, then the lineage key,
 * then thread index and exec generation, 12 bytes per block as the nonce
 * (length-prefixed so no two inputs share a chain).
 */
void hm_stream_key(uint64_t seed, const char *lineage, uint32_t thread, uint32_t gen,
		   uint8_t out[HM_CHACHA_KEY_SIZE]);

/* Format/parse an unsigned decimal into/from a bounded buffer (libc-free
 * helpers the shim uses where snprintf/strtoull are unwelcome). fmt returns
 * the length written (without NUL), or 0 if it does not fit. parse returns
 * a pointer past the digits, or NULL if there are none or it overflows. */
size_t hm_fmt_u64(char *out, size_t size, uint64_t v);
size_t hm_fmt_i64(char *out, size_t size, int64_t v);
const char *hm_parse_dec_u64(const char *s, uint64_t *ret);
const char *hm_parse_dec_i64(const char *s, int64_t *ret);

#endif
