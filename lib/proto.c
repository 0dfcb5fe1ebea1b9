// SPDX-License-Identifier: MIT
#include <sys/socket.h>
#include <sys/uio.h>
#include <arpa/inet.h>
#include "util.h"
#include "proto.h"

int hm_send(int sock, uint16_t type, uint32_t seq, const void *payload, uint32_t len, int fd)
{
	return hm_send_fds(sock, type, seq, payload, len, &fd, fd >= 0 ? 1 : 0);
}

int hm_send_fds(int sock, uint16_t type, uint32_t seq, const void *payload, uint32_t len,
		const int *fds, int nfds)
{
	struct hm_hdr hdr = {
		.magic = HM_PROTO_MAGIC,
		.version = HM_PROTO_VERSION,
		.type = type,
		.len = len,
		.seq = seq,
	};
	struct iovec iov[2] = {
		{ .iov_base = &hdr, .iov_len = sizeof(hdr) },
		{ .iov_base = (void *)payload, .iov_len = len },
	};
	union {
		char buf[CMSG_SPACE(sizeof(int) * HM_MSG_MAX_FDS)];
		struct cmsghdr align;
	} ctl;
	struct msghdr msg = { .msg_iov = iov, .msg_iovlen = len ? 2 : 1 };
	ssize_t r;

	if (sizeof(hdr) + (size_t)len > HM_MSG_MAX)
		return -EMSGSIZE;
	if (nfds < 0 || nfds > HM_MSG_MAX_FDS)
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
	if (r < 0)
		return -errno;
	return (size_t)r == sizeof(hdr) + len ? 0 : -EIO;
}

int hm_msg_parse(const void *buf, size_t n, const struct hm_hdr **ret_hdr)
{
	const struct hm_hdr *hdr = buf;

	if (n > HM_MSG_MAX)
		return -EMSGSIZE;
	if (n < sizeof(*hdr) || hdr->magic != HM_PROTO_MAGIC || hdr->version != HM_PROTO_VERSION ||
	    hdr->len != n - sizeof(*hdr))
		return -EBADMSG;
	*ret_hdr = hdr;
	return 0;
}

ssize_t hm_recv(int sock, void *buf, size_t size, struct hm_hdr **ret_hdr, int *ret_fd)
{
	return hm_recv_fds(sock, buf, size, ret_hdr, ret_fd, ret_fd ? 1 : 0);
}

ssize_t hm_recv_fds(int sock, void *buf, size_t size, struct hm_hdr **ret_hdr, int *ret_fds,
		    int max_fds)
{
	struct iovec iov = { .iov_base = buf, .iov_len = size };
	union {
		char buf[CMSG_SPACE(sizeof(int) * 4)];
		struct cmsghdr align;
	} ctl;
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = ctl.buf,
		.msg_controllen = sizeof(ctl.buf),
	};
	const struct hm_hdr *hdr;
	int fds[HM_MSG_MAX_FDS], nfd = 0, err, resets = 0;
	ssize_t r;

	if (max_fds > HM_MSG_MAX_FDS)
		max_fds = HM_MSG_MAX_FDS;
	for (int i = 0; i < max_fds; i++)
		ret_fds[i] = -1;
	if (max_fds <= 0)
		msg.msg_control = NULL, msg.msg_controllen = 0;
	/* A peer that closed with our message unread leaves a pending
	 * ECONNRESET that is reported before the messages it sent us first
	 * (the daemon's answer to a connection it refused): read on once. */
	do
		r = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	while (r < 0 && (errno == EINTR || (errno == ECONNRESET && !resets++)));
	if (r < 0)
		return -errno;

	/* Take every fd that arrived, keep at most max_fds, close the rest: a
	 * hostile peer must not be able to leak fds into the daemon. This
	 * comes before any other check, so that no path returns with a
	 * received descriptor left open (a zero-length packet can carry
	 * SCM_RIGHTS too). The kernel itself closes what did not fit. */
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < n; i++) {
			int f;

			memcpy(&f, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (nfd < max_fds)
				fds[nfd++] = f;
			else
				close(f);
		}
	}
	/* End of file has no control data; an empty packet that carried
	 * some is a malformed message, not a hang-up. */
	if (r == 0 && !msg.msg_controllen && !(msg.msg_flags & MSG_CTRUNC))
		return -ECONNRESET;
	if (r == 0)
		err = -EBADMSG;
	else if (msg.msg_flags & MSG_TRUNC || (max_fds > 0 && msg.msg_flags & MSG_CTRUNC) ||
		 size < HM_MSG_MAX)
		err = -EMSGSIZE;
	else
		err = hm_msg_parse(buf, r, &hdr);
	if (err < 0) {
		for (int i = 0; i < nfd; i++)
			close(fds[i]);
		return err;
	}
	*ret_hdr = (struct hm_hdr *)hdr;
	for (int i = 0; i < nfd; i++)
		ret_fds[i] = fds[i];
	return hdr->len;
}

const char *hm_addr_str(const uint8_t addr[16], uint16_t port, char *buf, size_t size)
{
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	char a[INET6_ADDRSTRLEN];

	if (!memcmp(addr, mapped, 12)) {
		inet_ntop(AF_INET, addr + 12, a, sizeof(a));
		if (port)
			snprintf(buf, size, "%s:%u", a, port);
		else
			snprintf(buf, size, "%s", a);
	} else {
		inet_ntop(AF_INET6, addr, a, sizeof(a));
		if (port)
			snprintf(buf, size, "[%s]:%u", a, port);
		else
			snprintf(buf, size, "%s", a);
	}
	return buf;
}
