// SPDX-License-Identifier: MIT
/* cli_spawn_self: a child hermetic with its output in files (spawn_self.h). */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "util.h"
#include "spawn_self.h"

#define KILL_GRACE_MS 5000

extern char **environ;

/* Wait for pid, at most timeout_ns (0: for ever), then SIGTERM and after
 * a grace SIGKILL. The wait status, or -errno. */
static int wait_child(pid_t pid, uint64_t timeout_ns, bool *ret_timed_out)
{
	int fd = (int)syscall(SYS_pidfd_open, pid, 0), st = 0;
	struct pollfd p = { .fd = fd, .events = POLLIN };

	*ret_timed_out = false;
	if (fd >= 0 && timeout_ns) {
		int ms = (int)(timeout_ns / 1000000 ? timeout_ns / 1000000 : 1);

		if (poll(&p, 1, ms) == 0) {
			*ret_timed_out = true;
			(void)kill(pid, SIGTERM);
			if (poll(&p, 1, KILL_GRACE_MS) == 0)
				(void)kill(pid, SIGKILL);
		}
	}
	if (fd >= 0)
		close(fd);
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return st;
}

int cli_spawn_self(char *const *args, const char *out_path, const char *err_path,
		   uint64_t timeout_ns, bool *ret_timed_out)
{
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int r;

	*ret_timed_out = false;
	r = posix_spawn_file_actions_init(&fa);
	if (r)
		return -r;
	r = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	if (!r)
		r = posix_spawn_file_actions_addopen(&fa, 1, out_path, O_WRONLY | O_CREAT | O_TRUNC,
						     0644);
	if (!r && err_path)
		r = posix_spawn_file_actions_addopen(&fa, 2, err_path,
						     O_WRONLY | O_CREAT | O_TRUNC, 0644);
	else if (!r)
		r = posix_spawn_file_actions_adddup2(&fa, 1, 2);
	if (!r)
		r = posix_spawn(&pid, "/proc/self/exe", &fa, NULL, args, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (r)
		return -r;
	return wait_child(pid, timeout_ns, ret_timed_out);
}
