/* SPDX-License-Identifier: MIT */
/*
 * Scopes: a named part of a run (one test) whose clock restarts at the
 * run's start and whose random streams are keyed by (scope seed, scope
 * name, lineage within the scope) instead of by the run's lineage, so that
 * its values do not depend on what ran before it in the same process.
 *
 * A process enters a scope (preload/scope.c); the processes it starts from
 * then on inherit it through HERMETIC_SCOPE. Pure code, libc only, no
 * allocation: the shim uses it, in vfork children too.
 */
#ifndef HERMETIC_SCOPE_H
#define HERMETIC_SCOPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "chacha20.h"
#include "lineage.h"

#define HM_ENV_SCOPE "HERMETIC_SCOPE" /* the scope a process was started in */
/* Replay only inside scopes of this name, from <HERMETIC_REPLAY>/scope/. */
#define HM_ENV_REPLAY_SCOPE "HERMETIC_REPLAY_SCOPE"
#define HM_SCOPE_NAME_MAX 512 /* bytes of a name, with its NUL */
/* "v1" and 7 numbers, the root key, the name percent-encoded (3 bytes a byte) */
#define HM_SCOPE_ENV_MAX (64 + 8 * 21 + HM_LINEAGE_MAX + 3 * HM_SCOPE_NAME_MAX)
/* A spool or replay subdirectory (hm_scope_dirname, hm_scope_contname) */
#define HM_SCOPE_DIR_MAX (2 * HM_LINEAGE_MAX + 64)

/* Outcome a scope is left with (recorded, for journals per failing scope). */
enum hm_scope_status {
	HM_SCOPE_OPEN, /* not left (yet) */
	HM_SCOPE_PASSED,
	HM_SCOPE_FAILED,
	HM_SCOPE_SKIPPED,
	HM_SCOPE_STATUS_MAX = HM_SCOPE_SKIPPED,
};

/*
 * What a process inside a scope knows of it. The scope's root is the process
 * that entered it: lineage key root, having created children0 children and
 * run gen0 exec generations by then. A descendant's key within the scope is
 * its key relative to the root's, with the root's children numbered from 1
 * again ("1" for the root, "1.2" for the second child it started inside).
 */
struct hm_scope_spec {
	char name[HM_SCOPE_NAME_MAX];
	uint64_t seed; /* the scope's seed */
	int64_t mono; /* scope monotonic = run's monotonic + mono */
	int64_t wall; /* scope realtime = run's monotonic + wall */
	uint64_t children0;
	uint32_t gen0;
	uint32_t seq; /* the root image's scopes so far, this one included */
	char root[HM_LINEAGE_MAX];
};

/* HERMETIC_SCOPE's value: "v1:seed:mono:wall:children0:gen0:seq:root:name"
 * with the name percent-encoded. format returns the length, 0 if it does
 * not fit; parse returns 0 or -EINVAL. */
size_t hm_scope_format(const struct hm_scope_spec *s, char *out, size_t size);
int hm_scope_parse(const char *v, struct hm_scope_spec *s);

/* A name, valid: 1..HM_SCOPE_NAME_MAX-1 bytes, none of them a control byte. */
bool hm_scope_name_valid(const char *name);

/* Percent-encoding of everything but [A-Za-z0-9._~-] (out: 3 * len + 1
 * bytes); decoding into out (size bytes): length, or -EINVAL. */
size_t hm_pct_encode(const char *in, char *out, size_t size);
long hm_pct_decode(const char *in, size_t len, char *out, size_t size);

/* The seed of a scope named name in a run (or session) seeded base. */
uint64_t hm_scope_seed(uint64_t base, const char *name);

/* The ChaCha20 key of one stream inside a scope: (scope seed, name, image
 * within the scope, thread). */
void hm_scope_stream_key(uint64_t seed, const char *name, uint64_t image, uint32_t thread,
			 uint8_t out[HM_CHACHA_KEY_SIZE]);

/* A process's id within a scope, from its key there (never 0); its image
 * there is hm_image_id(that id, executable, count), as outside. */
uint64_t hm_scope_proc(const char *rel_lineage);

/* Where a run's (or scope's) monotonic clock starts for a seed: within a
 * second of HM_VMONO_BASE, depending on the seed. */
int64_t hm_mono_start(uint64_t seed);

/* Key of lineage within the scope rooted at (root, children0): 0, or
 * -ENOENT when lineage is not the root or a child it created after entering. */
int hm_scope_rel_lineage(const char *root, uint64_t children0, const char *lineage, char *out,
			 size_t size);

/* A scope's directory in a spool or replay directory: "scope.<root>-<gen0>-<seq>". */
void hm_scope_dirname(const struct hm_scope_spec *s, char out[HM_SCOPE_DIR_MAX]);
/* Where one image's streams continue after it left k scopes at this level:
 * "<dir>+<k>" inside a scope whose directory is dir, "cont.<lineage>-<gen>+<k>"
 * outside scopes (dir NULL or ""). */
void hm_scope_contname(const char *dir, const char *lineage, uint32_t gen, uint32_t k,
		       char out[HM_SCOPE_DIR_MAX]);

const char *hm_scope_status_name(enum hm_scope_status st);
/* "passed", "failed", "skipped", "open": the status, or -1. */
int hm_scope_status_parse(const char *s, size_t len);

#endif
