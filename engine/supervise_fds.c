// SPDX-License-Identifier: MIT
/*
 * Which descriptors of a supervised process wait on the real world
 * (supervise_wait.c): a timed wait on a set with one of the world's keeps
 * its real deadline; a wait on the run's alone is on the run's clock.
 *   - eventfds, files and directories are the run's (a file is always
 *     ready: Go's os.Open adds the /proc/sys file net.Listen reads to its
 *     poller's set while it reads it), and a pipe is unless the run's
 *     first process inherited it as 0, 1 or 2 (the page lists those);
 *   - a descriptor closed since its set was read is the world's for this
 *     wait only (the answer is not kept);
 *   - anything else (a socket, a terminal, a timerfd) is the world's.
 * Sockets stay the world's, also between processes of the run (the shim
 * tells those apart, preload/peers.c). The shim's rules were tried here
 * (loopback ports of supervised sockets marked in the page): the Go
 * suites of the matrix passed, but net/http's time did not improve
 * measurably (27 s against 18.5 bare, under load), and a Go test that
 * streams from its own server until a real deadline then keeps the run
 * busy with no wait on the world to move its clock; not landed without
 * a figure that shows it pays.
 */
#include <sys/stat.h>
#include "util.h"
#include "engine.h"
#include "supervise.h"
#include "hermetic/vclock.h"

/* A descriptor: its SV_FD_* */
static int fd_class(struct supervise *s, const char *path, const char *link, int tfd,
		    char *why, size_t wsize)
{
	struct stat st;
	bool out = false;

	if (!strcmp(link, "anon_inode:[eventfd]"))
		return SV_FD_RUN;
	if (stat(path, &st) < 0) {
		/* (closed since the set was read: not kept) */
		snprintf(why, wsize, "descriptor %d: %s: %s", tfd, link, strerror(errno));
		return SV_FD_GONE;
	}
	/* A file is always ready, as the shim has it: Go's os.Open adds the
	 * /proc/sys file its Listen reads to the poller's set, for as long as
	 * it reads it; a netpoller wait that began then was on real time, and
	 * stayed so until its 100 s ended (net/http's TestLinuxSendfile). */
	if (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))
		return SV_FD_RUN;
	if (strncmp(link, "pipe:[", 6))
		return SV_FD_WORLD;
	for (uint32_t i = 0; i < s->vc->n_outside && i < 8; i++)
		out |= s->vc->outside[i][0] == (uint64_t)st.st_dev &&
		       s->vc->outside[i][1] == (uint64_t)st.st_ino;
	if (out)
		snprintf(why, wsize, "descriptor %d: %s, the run's stdio from outside", tfd, link);
	return out ? SV_FD_WORLD : SV_FD_RUN;
}

int sv_fd_classify(struct supervise *s, struct sv_proc *p, int tfd, char *why, size_t wsize)
{
	char path[96], link[128];
	ssize_t l;

	snprintf(path, sizeof(path), "/proc/%d/fd/%d", p->pid, tfd);
	l = readlink(path, link, sizeof(link) - 1);
	link[l > 0 ? l : 0] = 0;
	snprintf(why, wsize, "descriptor %d: %s", tfd, l > 0 ? link : "gone");
	if (l <= 0)
		return SV_FD_GONE; /* closed since the set was read */
	return fd_class(s, path, link, tfd, why, wsize);
}
