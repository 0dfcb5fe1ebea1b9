/* SPDX-License-Identifier: MIT */
/* Small helpers shared by daemon, CLI and shim: cleanup attributes,
 * errno-returning wrappers. No logging here: callers log at the boundary. */
#ifndef HERMETIC_UTIL_H
#define HERMETIC_UTIL_H

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <stdio.h>
#include <string.h>
#include <stdint.h>
#include <stddef.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define _unused_ __attribute__((unused))

static inline void freep(void *p)
{
	free(*(void **)p);
}

static inline void closep(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;

		close(*fd);
		errno = saved;
	}
}

static inline void fclosep(FILE **f)
{
	if (*f)
		fclose(*f);
}

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)
#define _cleanup_fclose_ _cleanup_(fclosep)

/* Take ownership away from a cleanup variable. */
#define steal_pointer(pp)                                                                         \
	({                                                                                         \
		__typeof__(*(pp)) _p = *(pp);                                                      \
		*(pp) = NULL;                                                                      \
		_p;                                                                                \
	})
#define steal_fd(fdp)                                                                             \
	({                                                                                         \
		int _fd = *(fdp);                                                                  \
		*(fdp) = -1;                                                                       \
		_fd;                                                                               \
	})

/* Read a whole small file (at most max-1 bytes) into buf, NUL-terminated.
 * dirfd may be AT_FDCWD. Returns bytes read or -errno. */
ssize_t hm_read_file_at(int dirfd, const char *path, char *buf, size_t max);

/* Write a string to a file (e.g. a cgroup control file). Returns 0 or -errno. */
int hm_write_file_at(int dirfd, const char *path, const char *s);

/* The cgroup v2 path in the text of /proc/PID/cgroup (buf, NUL-terminated):
 * the one line that starts with "0::", whole (ending in a newline) and
 * starting with '/'. A cgroup-v1 line ("N:controllers:/path") may hold "0::"
 * anywhere in its path, so only a line's start counts. Cgroup names cannot
 * hold a newline (the kernel refuses them at mkdir), so one line is one
 * hierarchy. Returns 0; -ENOENT without such a line; -EBADMSG with two, a
 * cut-off one or one not starting with '/'; -ENAMETOOLONG when it does not
 * fit in size bytes. */
int hm_cgroup_v2_path(const char *buf, char *ret, size_t size);

/* The "populated" key of a cgroup.events text (buf, NUL-terminated), matched
 * at a line's start: 1 or 0; -EBADMSG when the line is missing or its value
 * is neither (never "empty" for what cannot be read). */
int hm_cgroup_events_populated(const char *buf);

/* write(2) all n bytes, retrying short writes and EINTR. Returns 0 or -errno
 * (-EIO if the fd takes nothing). */
int hm_write_all(int fd, const void *p, size_t n);

/* Parse an unsigned decimal; the whole string must be a number.
 * Returns 0 or -EINVAL/-ERANGE. */
int hm_parse_u64(const char *s, uint64_t *ret);

/* Parse a duration: "250ms", "1us", "5s", "2m", "1h", "3d", "0", or a bare
 * number of seconds. Returns nanoseconds in *ret_ns, 0 or -EINVAL/-ERANGE. */
int hm_parse_duration(const char *s, uint64_t *ret_ns);

/* Monotonic time in ns (real, never virtual). */
uint64_t hm_now_ns(void);

#endif
