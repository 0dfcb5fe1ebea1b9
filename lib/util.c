// SPDX-License-Identifier: MIT
#include <fcntl.h>
#include <time.h>
#include <ctype.h>
#include <sys/syscall.h>
#include "util.h"

ssize_t hm_read_file_at(int dirfd, const char *path, char *buf, size_t max)
{
	_cleanup_close_ int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
	size_t n = 0;

	if (fd < 0)
		return -errno;
	if (max == 0)
		return -EINVAL;
	while (n < max - 1) {
		ssize_t r = read(fd, buf + n, max - 1 - n);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			break;
		n += r;
	}
	buf[n] = 0;
	return n;
}

int hm_cgroup_v2_path(const char *buf, char *ret, size_t size)
{
	const char *line = buf, *found = NULL;
	size_t len = 0;

	while (*line) {
		const char *nl = strchr(line, '\n');

		if (!nl)
			return -EBADMSG; /* a last line cut off (a short read) */
		if (!strncmp(line, "0::", 3)) {
			if (found)
				return -EBADMSG;
			found = line + 3;
			len = nl - found;
		}
		line = nl + 1;
	}
	if (!found)
		return -ENOENT;
	if (len == 0 || *found != '/')
		return -EBADMSG;
	if (len >= size)
		return -ENAMETOOLONG;
	memcpy(ret, found, len);
	ret[len] = 0;
	return 0;
}

int hm_write_file_at(int dirfd, const char *path, const char *s)
{
	_cleanup_close_ int fd = openat(dirfd, path, O_WRONLY | O_CLOEXEC);
	size_t len = strlen(s);
	ssize_t r;

	if (fd < 0)
		return -errno;
	r = write(fd, s, len);
	if (r < 0)
		return -errno;
	return (size_t)r == len ? 0 : -EIO;
}

int hm_write_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t r = write(fd, c, n);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			return -EIO;
		c += r;
		n -= (size_t)r;
	}
	return 0;
}

int hm_parse_u64(const char *s, uint64_t *ret)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno == ERANGE)
		return -ERANGE;
	if (*end)
		return -EINVAL;
	*ret = v;
	return 0;
}

int hm_parse_duration(const char *s, uint64_t *ret_ns)
{
	static const struct {
		const char *suffix;
		uint64_t ns;
	} units[] = {
		{ "ns", 1ULL },	       { "us", 1000ULL },	  { "ms", 1000000ULL },
		{ "s", 1000000000ULL }, { "m", 60000000000ULL }, { "h", 3600000000000ULL },
		{ "d", 86400000000000ULL }, { "", 1000000000ULL },
	};
	char *end;
	unsigned long long v;

	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno == ERANGE)
		return -ERANGE;
	for (size_t i = 0; i < ARRAY_SIZE(units); i++) {
		if (strcmp(end, units[i].suffix))
			continue;
		if (v && units[i].ns > UINT64_MAX / v)
			return -ERANGE;
		*ret_ns = v * units[i].ns;
		return 0;
	}
	return -EINVAL;
}

uint64_t hm_now_ns(void)
{
	struct timespec ts;

	/* Raw syscall: this also runs inside the shim, where clock_gettime
	 * is virtual. */
	syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

int hm_cgroup_events_populated(const char *buf)
{
	for (const char *line = buf; *line;) {
		const char *end = strchrnul(line, '\n');

		if (!strncmp(line, "populated ", 10) && end - line == 11) {
			if (line[10] == '1')
				return 1;
			if (line[10] == '0')
				return 0;
			return -EBADMSG;
		}
		line = *end ? end + 1 : end;
	}
	return -EBADMSG;
}
