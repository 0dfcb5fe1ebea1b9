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

/* /proc/PID/stat read into buf, from its command name's last ')' on (the
 * fields follow it after a space), or NULL when it cannot be read. */
static const char *stat_after_comm(pid_t pid, char *buf, size_t size)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (hm_read_file_at(AT_FDCWD, path, buf, size) <= 0)
		return NULL;
	return strrchr(buf, ')');
}

int hm_proc_state(pid_t pid)
{
	char buf[512];
	const char *p = stat_after_comm(pid, buf, sizeof(buf));

	if (!p)
		return -ESRCH;
	return p[1] == ' ' && p[2] ? p[2] : -EBADMSG;
}

uint64_t hm_proc_start(pid_t pid)
{
	char buf[1024];
	const char *p = stat_after_comm(pid, buf, sizeof(buf));
	uint64_t v = 0;

	if (!p)
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
