// SPDX-License-Identifier: MIT
#include <sys/socket.h>
#include <sys/uio.h>
#include <arpa/inet.h>
#include "util.h"
#include "proto.h"
#include "fdpass.h"

_Static_assert(HM_MSG_MAX_FDS <= HM_FDPASS_ROOM, "a message's descriptors fit one receive");

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
	ssize_t r;

	if (sizeof(hdr) + (size_t)len > HM_MSG_MAX)
		return -EMSGSIZE;
	if (nfds < 0 || nfds > HM_MSG_MAX_FDS)
		return -EINVAL;
	r = hm_fdpass_send(sock, iov, len ? 2 : 1, fds, nfds);
	if (r < 0)
		return (int)r;
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
	const struct hm_hdr *hdr;
	int fds[HM_MSG_MAX_FDS], nfd = 0, flags = 0, err, resets = 0;
	bool ctl = false;
	ssize_t r;

	if (max_fds > HM_MSG_MAX_FDS)
		max_fds = HM_MSG_MAX_FDS;
	for (int i = 0; i < max_fds; i++)
		ret_fds[i] = -1;
	/* A peer that closed with our message unread leaves a pending
	 * ECONNRESET that is reported before the messages it sent us first
	 * (the daemon's answer to a connection it refused): read on once.
	 * Every descriptor that came and is not kept is closed by then. */
	do
		r = hm_fdpass_recv(sock, &iov, 1, fds, max_fds, &nfd, &flags, &ctl);
	while (r == -ECONNRESET && !resets++);
	if (r < 0)
		return r;
	/* End of file has no control data; an empty packet that carried
	 * some is a malformed message, not a hang-up. */
	if (r == 0 && !ctl && !(flags & MSG_CTRUNC))
		return -ECONNRESET;
	if (r == 0)
		err = -EBADMSG;
	else if (flags & MSG_TRUNC || (max_fds > 0 && flags & MSG_CTRUNC) || size < HM_MSG_MAX)
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
