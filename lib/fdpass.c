// SPDX-License-Identifier: MIT
/* SCM_RIGHTS send and receive (fdpass.h). No allocation, no logging. */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include "fdpass.h"

ssize_t hm_fdpass_send(int sock, const struct iovec *iov, int niov, const int *fds, int nfds)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * HM_FDPASS_ROOM)];
		struct cmsghdr align;
	} ctl;
	struct msghdr msg = { .msg_iov = (struct iovec *)iov, .msg_iovlen = niov };
	ssize_t r;

	if (nfds < 0 || nfds > HM_FDPASS_ROOM)
		return -EINVAL;
	if (nfds > 0) {
		struct cmsghdr *c;

		memset(&ctl, 0, sizeof(ctl));
		msg.msg_control = ctl.buf;
		msg.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
	}
	do
		r = sendmsg(sock, &msg, MSG_NOSIGNAL);
	while (r < 0 && errno == EINTR);
	return r < 0 ? -errno : r;
}

ssize_t hm_fdpass_recv(int sock, struct iovec *iov, int niov, int *fds, int max_fds, int *nfds,
		       int *flags, bool *ctl_data)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * HM_FDPASS_ROOM)];
		struct cmsghdr align;
	} ctl;
	struct msghdr msg = {
		.msg_iov = iov,
		.msg_iovlen = niov,
		.msg_control = ctl.buf,
		.msg_controllen = sizeof(ctl.buf),
	};
	ssize_t r;

	*nfds = 0;
	if (max_fds <= 0)
		msg.msg_control = NULL, msg.msg_controllen = 0;
	do
		r = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	/* Take every fd that arrived, keep at most max_fds, close the rest: a
	 * hostile peer must not be able to leak fds into the daemon. This
	 * comes before any other check, so that no path returns with a
	 * received descriptor left open (a zero-length packet can carry
	 * SCM_RIGHTS too). */
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < n; i++) {
			int f;

			memcpy(&f, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (*nfds < max_fds)
				fds[(*nfds)++] = f;
			else
				(void)close(f); /* not ours to keep; a close error changes nothing */
		}
	}
	*flags = msg.msg_flags;
	*ctl_data = msg.msg_controllen != 0;
	return r;
}
