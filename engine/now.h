/* SPDX-License-Identifier: MIT */
/* The default --now (now.c): SOURCE_DATE_EPOCH, git HEAD, the working
 * directory's newest entry, this release's date. */
#ifndef HERMETIC_ENGINE_NOW_H
#define HERMETIC_ENGINE_NOW_H

#include <stddef.h>
#include <stdint.h>

enum now_source {
	NOW_OPTION, /* --now */
	NOW_SOURCE_DATE_EPOCH,
	NOW_GIT_HEAD, /* committer time of HEAD of the checkout holding the cwd */
	NOW_RELEASE, /* HM_RELEASE_TIME_S */
};

/* The date of this release (HERMETIC_VERSION): the time of the newest entry
 * of packaging/debian/changelog, 2026-12-01T10:00:00Z. Bump both with
 * VERSION; tests/integration/defaults.sh checks that they agree. Not the
 * build time: two builds of one release start runs at the same time. */
#define HM_RELEASE_TIME_S 1796119200LL

/* "--now", "SOURCE_DATE_EPOCH", "the commit time of HEAD", ... (the seed line's words). */
const char *now_source_name(enum now_source s);

/* The start time when --now is not given, and where it came from. Returns
 * 0, or -EINVAL for a malformed SOURCE_DATE_EPOCH (why says so). Runs git
 * in the current directory: call it before the run exists. */
int now_default(int64_t *ret_ns, enum now_source *ret_src, char *why, size_t size);

/* now_git.c: HEAD's commit object of the checkout at top (holding cwd),
 * read from its files as `git cat-file commit HEAD` would print it (up to
 * size - 1 bytes, NUL-terminated). 0, or -EAGAIN where only git can say. */
int now_git_read(const char *cwd, const char *top, char *out, size_t size);

#endif
