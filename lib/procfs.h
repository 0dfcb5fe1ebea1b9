/* SPDX-License-Identifier: MIT */
/*
 * A process's /proc/PID/stat and /proc/PID/status, read one way for the
 * daemon and the engine alike. status is read line by line, a field taken
 * only from the line that starts with its key (a name that holds "\nUid:"
 * cannot pass for the field); stat past the last ')' (the command name in
 * it may hold anything, ')' and spaces too). No logging, no allocation.
 */
#ifndef HERMETIC_PROCFS_H
#define HERMETIC_PROCFS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The start time of pid (field 22 of /proc/PID/stat, in clock ticks since
 * boot): with the pid, a name for the process no later one can take.
 * 0 when the process is gone or the file cannot be read. */
uint64_t hm_proc_start(pid_t pid);

/* The state letter of pid (field 3 of /proc/PID/stat: 'R' runnable, 'S',
 * 'D', ...), or -ESRCH when it cannot be read, -EBADMSG when malformed. */
int hm_proc_state(pid_t pid);

/* /proc/PID/status, whole, NUL-terminated in buf: its length, or -errno. */
ssize_t hm_proc_status(pid_t pid, char *buf, size_t size);

/* The number on the line "key:\t..." of status text (buf, NUL-terminated):
 * 0, or -ENOENT when no line starts with key and a colon, -EBADMSG when
 * what follows is not a number that fits an int. */
int hm_status_int(const char *buf, const char *key, int *ret);

#endif
