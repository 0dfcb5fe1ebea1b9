/* SPDX-License-Identifier: MIT */
/* The default --now (now.c): SOURCE_DATE_EPOCH, git HEAD, 2020-01-01. */
#ifndef HERMETIC_CLI_NOW_H
#define HERMETIC_CLI_NOW_H

#include <stddef.h>
#include <stdint.h>

enum now_source {
	NOW_OPTION, /* --now */
	NOW_SOURCE_DATE_EPOCH,
	NOW_GIT_HEAD, /* committer time of HEAD of the checkout holding the cwd */
	NOW_BUILTIN, /* HM_DEFAULT_NOW_NS */
};

/* "--now", "SOURCE_DATE_EPOCH", "the commit time of HEAD", "the default". */
const char *now_source_name(enum now_source s);

/* The start time when --now is not given, and where it came from. Returns
 * 0, or -EINVAL for a malformed SOURCE_DATE_EPOCH (why says so). Runs git
 * in the current directory: call it before the run exists. */
int now_default(int64_t *ret_ns, enum now_source *ret_src, char *why, size_t size);

#endif
