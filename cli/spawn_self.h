/* SPDX-License-Identifier: MIT */
/*
 * Run this very hermetic binary (/proc/self/exe, even if the file was
 * replaced since) as a child, e.g. 'hermetic enroll ... -- CMD', with its
 * output in files of its own: nothing the child does (hermetic's own die()
 * included) can take the caller down. Used by hunt's tries and by
 * check-determinism's runs.
 */
#ifndef HERMETIC_CLI_SPAWN_SELF_H
#define HERMETIC_CLI_SPAWN_SELF_H

#include <stdbool.h>
#include <stdint.h>

/* Start args (args[0] is what the child sees as its name) with stdin
 * /dev/null, stdout to out_path and stderr to err_path (NULL: the same file
 * as stdout), both created or truncated 0644; wait for it, at most
 * timeout_ns of real time (0: for ever), then SIGTERM (enroll forwards it
 * to CMD and ends the run) and after a grace SIGKILL. Returns the wait
 * status (>= 0), or -errno when the child could not be started or waited
 * for; *ret_timed_out says whether it was cut. */
int cli_spawn_self(char *const *args, const char *out_path, const char *err_path,
		   uint64_t timeout_ns, bool *ret_timed_out);

#endif
