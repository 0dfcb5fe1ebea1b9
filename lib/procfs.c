// SPDX-License-Identifier: MIT
/* /proc/PID/stat and status readers (procfs.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "util.h"
#include "procfs.h"

uint64_t hm_proc_start(pid_t pid)
{
	char path[64], buf[1024], *p;
	uint64_t v = 0;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	n = hm_read_file_at(AT_FDCWD, path, buf, sizeof(buf));
	if (n <= 0 || !(p = strrchr(buf, ')')))
		return 0;
	/* after ") ": state is field 3; starttime is field 22 */
	if (sscanf(p + 2,
		   "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %" SCNu64,
		   &v) != 1)
		return 0;
	return v;
}

ssize_t hm_proc_status(pid_t pid, char *buf, size_t size)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	return hm_read_file_at(AT_FDCWD, path, buf, size);
}

int hm_status_int(const char *buf, const char *key, int *ret)
{
	size_t klen = strlen(key);

	for (const char *line = buf, *nl; *line; line = nl + 1) {
		if (!strncmp(line, key, klen) && line[klen] == ':') {
			const char *num = line + klen + 1;
			char *end;
			long v;

			errno = 0;
			v = strtol(num, &end, 10);
			if (errno || end == num || v < INT_MIN || v > INT_MAX)
				return -EBADMSG;
			*ret = (int)v;
			return 0;
		}
		if (!(nl = strchr(line, '\n')))
			break;
	}
	return -ENOENT;
}
