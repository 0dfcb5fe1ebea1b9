/* SPDX-License-Identifier: MIT */
/*
 * Which journals are yours: the ledger of the journals this user recorded
 * on this machine. enroll --record appends the SHA-256 of every journal it
 * keeps (a file in DIR, a scope's journal, the store's copy: the same
 * bytes) to $XDG_STATE_HOME/hermetic/recorded (default
 * ~/.local/state/hermetic/recorded), a 0600 file of the user's; replay
 * takes a journal as yours only when the digest of the very bytes it parsed
 * is there. A journal's own fields (uid, hostname) are not evidence: anyone
 * can write them. docs/reliability.md (Trust model) says what this covers.
 */
#ifndef HERMETIC_ENGINE_TRUST_H
#define HERMETIC_ENGINE_TRUST_H

#include <stdbool.h>
#include <stddef.h>
#include "sha256.h"

/* The ledger's path, or -errno (no home to keep it in). */
int trust_ledger_path(char *buf, size_t size);

/* Note the journal in fd (read whole with pread) as recorded by us: its
 * absolute path and its id in hermeticd's store, either "" when it has
 * none. Warns on failure: the journal is kept all the same, and replaying
 * it will ask. */
void trust_note_fd(int fd, const char *path, const char *store_id);

/* Is the journal whose bytes have this digest in our ledger? why gets a
 * reason when it is not (no ledger, a ledger not ours alone, not in it). */
bool trust_known(const char hex[HM_SHA256_HEX], char *why, size_t size);

/* The directories of the last journals we recorded that went to a
 * directory only (no store copy), newest first, at most max. Returns how
 * many. */
size_t trust_recent_dirs(char (*dirs)[4096], size_t max);

/* Read a journal file whole (a regular file of at most max bytes, opened
 * without following a FIFO's open). Returns 0 or -errno with err set. */
int trust_read_file(const char *path, size_t max, unsigned char **ret, size_t *ret_len, char *err,
		    size_t errlen);

#endif
