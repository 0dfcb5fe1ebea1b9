/* SPDX-License-Identifier: MIT */
/*
 * Lineage keys: a process's place in the run's process tree, independent of
 * pids. The first process is "1"; the n-th child (n counts from 1, in the
 * order the parent's current image created them) of a process with key K is
 * "K.n". The key names a place for people; streams are keyed by image ids
 * (below), which also tell apart the children of a wrapper's earlier images.
 * Pure code, no allocation: the shim calls it in vfork children.
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
 * Identities that do not depend on exec hops or a wrapper's helper forks.
 * A process is the run's first (hm_proc_root) or the n-th child one image
 * created (hm_proc_child(image, n)); an image is a process running one
 * executable for the count-th time (hm_image_id), count 0 for a fork child
 * still running its parent's image. So "python3 -c P", "sh -c 'exec python3
 * -c P'", "env python3 -c P" and a version manager's shim script that forks
 * helpers and then execs python all give python the same image, and every
 * image of a run a different one. 64-bit, never 0 (0 is "no parent"); each a
 * chain of ChaCha20 blocks over length-prefixed, tagged inputs.
 */
/* A chain of ChaCha20 blocks, each keyed by the previous one's first 32
 * bytes, absorbing 12 bytes at a time as the nonce: a label, then tagged
 * numbers and length-prefixed strings, so no two inputs share a chain.
 * Every id and key of lineage.c and scope.c is one. */
struct hm_chain {
	uint8_t key[HM_CHACHA_KEY_SIZE];
};
void hm_chain_init(struct hm_chain *c, const char *label);
void hm_chain_u64(struct hm_chain *c, uint64_t v, const char tag[4]);
void hm_chain_str(struct hm_chain *c, const char *s);
uint64_t hm_chain_word(const struct hm_chain *c); /* the key's first 8 bytes, LE */

uint64_t hm_proc_root(void);
uint64_t hm_proc_child(uint64_t parent_image, uint64_t n);
uint64_t hm_image_id(uint64_t proc, const char *exe, uint32_t count);

/* The ChaCha20 key of one thread's stream: (seed, image, thread index).
 * HM_STREAM_AT_RANDOM: no thread's, the 16 bytes of a supervised image's
 * AT_RANDOM (engine/supervise_exec.c). */
#define HM_STREAM_AT_RANDOM 0xffffffffu
void hm_stream_key(uint64_t seed, uint64_t image, uint32_t thread,
		   uint8_t out[HM_CHACHA_KEY_SIZE]);

/* The name an executable goes by in image ids and journals: the basename of
 * path, bytes outside [A-Za-z0-9._+-] as '_', at most HM_EXE_MAX - 1 bytes,
 * "?" for none. hm_exe_valid: a name hm_exe_name could have made. */
#define HM_EXE_MAX 64
void hm_exe_name(const char *path, char out[HM_EXE_MAX]);
bool hm_exe_valid(const char *name);

/* How many times a process ran each executable, as "name=count,..." (the
 * names are hm_exe_name's, so they hold no '=' or ','). get: name's count,
 * 0 when absent. bump: the list with name's count one higher, into out;
 * -ENAMETOOLONG (out undefined) when it does not fit in size bytes. */
uint32_t hm_runs_get(const char *list, const char *name);
int hm_runs_bump(const char *list, const char *name, char *out, size_t size);

/* Format/parse an unsigned decimal into/from a bounded buffer (libc-free
 * helpers the shim uses where snprintf/strtoull are unwelcome). fmt returns
 * the length written (without NUL), or 0 if it does not fit. parse returns
 * a pointer past the digits, or NULL if there are none or it overflows. */
size_t hm_fmt_u64(char *out, size_t size, uint64_t v);
size_t hm_fmt_i64(char *out, size_t size, int64_t v);
const char *hm_parse_dec_u64(const char *s, uint64_t *ret);
const char *hm_parse_dec_i64(const char *s, int64_t *ret);

#endif
