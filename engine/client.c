// SPDX-License-Identifier: MIT
/*
 * The transport to hermeticd (client.h): a SOCK_SEQPACKET connection, one
 * request and its reply at a time, the reply's descriptors passed along.
 * The daemon trusts the kernel's credentials of the connection, not what we
 * send; this side trusts a reply only when it is the type and sequence
 * number asked for, and no longer than the buffer it goes to.
 */
#include <stdarg.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include "util.h"
#include "client.h"

const char *client_socket_path(void)
{
	const char *s = getenv("HERMETIC_SOCKET");

	return s && *s ? s : HM_DEFAULT_SOCKET;
}

int client_connect(void)
{
	const char *path = client_socket_path();
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, err;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* Anything holding a daemon connection is not dumpable: processes of
	 * a run (same uid, maybe root with reduced capabilities) must not
	 * ptrace it or take the connection with pidfd_getfd, which the kernel
	 * allows only for dumpable processes or with CAP_SYS_PTRACE. The
	 * command itself becomes dumpable again at its exec. */
	if (prctl(PR_SET_DUMPABLE, 0) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
		return fd;
	err = -errno;
	close(fd);
	return err;
}

static void close_fds(int *fds)
{
	for (int i = 0; i < HM_MSG_MAX_FDS; i++)
		if (fds[i] >= 0) {
			close(fds[i]);
			fds[i] = -1;
		}
}

/* The failure of the last call, in c; its message through ret_msg. */
static ssize_t failed(struct hm_client *c, ssize_t r, bool broken, const char **ret_msg,
		      const char *msg, const char *fmt, ...)
{
	va_list ap;

	c->broken = broken;
	va_start(ap, fmt);
	vsnprintf(c->why, sizeof(c->why), fmt, ap);
	va_end(ap);
	if (ret_msg)
		*ret_msg = msg ? msg : c->why;
	return r;
}

int client_send(struct hm_client *c, uint16_t type, const void *req, uint32_t len, int send_fd)
{
	int r;

	c->daemon_said = c->broken = false;
	if (c->sock < 0)
		return -ENOTCONN;
	r = hm_send(c->sock, type, ++c->seq, req, len, send_fd);
	/* A daemon that refused the connection (a limit) said why before it
	 * closed it: that answer counts, not the failed send. */
	if (r < 0 && r != -EPIPE && r != -ECONNRESET)
		return (int)failed(c, r, true, NULL, NULL, "Failed to send request to hermeticd: %s",
				   strerror(-r));
	return r;
}

/* The daemon's HM_REP_ERROR, from the reply's payload. */
static ssize_t daemon_error(struct hm_client *c, const char *payload, const char **ret_msg)
{
	memcpy(&c->rep_err, payload, sizeof(c->rep_err));
	c->rep_err.msg[sizeof(c->rep_err.msg) - 1] = 0;
	c->daemon_said = true;
	if (ret_msg)
		*ret_msg = c->rep_err.msg;
	return c->rep_err.err > 0 ? -c->rep_err.err : -EPROTO;
}

/* client_recv of the reply to request seq (not necessarily the last). */
static ssize_t recv_seq(struct hm_client *c, uint32_t seq, int sent, uint16_t expect, void *rep,
			size_t rep_size, bool exact, int ret_fds[HM_MSG_MAX_FDS],
			const char **ret_msg)
{
	_cleanup_free_ char *buf = malloc(HM_MSG_MAX);
	int fds[HM_MSG_MAX_FDS];
	struct hm_hdr *h;
	ssize_t n;

	if (c->sock < 0 && sent == -ENOTCONN)
		return failed(c, -ENOTCONN, false, ret_msg, NULL, "not connected to hermeticd");
	if (sent < 0 && c->broken)
		return sent; /* client_send said why */
	if (!buf)
		return failed(c, -ENOMEM, true, ret_msg, NULL, "out of memory");
	n = hm_recv_fds(c->sock, buf, HM_MSG_MAX, &h, fds, HM_MSG_MAX_FDS);
	if (n >= 0 && h->type == HM_REP_ERROR && (size_t)n == sizeof(struct hm_error)) {
		close_fds(fds);
		return daemon_error(c, buf + sizeof(*h), ret_msg);
	}
	/* A send that failed (the daemon closed the connection) with no
	 * answer to read: like a closed connection. */
	if (sent < 0) {
		if (n >= 0)
			close_fds(fds);
		return failed(c, -ECONNRESET, false, ret_msg, "hermeticd closed the connection",
			      "Failed to send request to hermeticd: %s", strerror(-sent));
	}
	if (n < 0)
		return failed(c, n == -ECONNRESET || n == -EPIPE ? -ECONNRESET : n, false, ret_msg,
			      "hermeticd closed the connection",
			      n == -ECONNRESET ? "hermeticd closed the connection (did it stop?)"
					       : "Failed to read reply from hermeticd: %s",
			      strerror((int)-n));
	if (h->type == HM_REP_ERROR || h->type != expect || h->seq != seq ||
	    (rep && (size_t)n > rep_size) || (rep && exact && (size_t)n != rep_size)) {
		close_fds(fds);
		return failed(c, -EPROTO, true, ret_msg, NULL,
			      "unexpected reply from hermeticd (type %u, %zd bytes)", h->type, n);
	}
	if (rep)
		memcpy(rep, buf + sizeof(*h), n);
	for (int i = 0; i < HM_MSG_MAX_FDS; i++)
		if (ret_fds)
			ret_fds[i] = fds[i];
		else if (fds[i] >= 0)
			close(fds[i]);
	return n;
}

ssize_t client_recv(struct hm_client *c, int sent, uint16_t expect, void *rep, size_t rep_size,
		    bool exact, int ret_fds[HM_MSG_MAX_FDS], const char **ret_msg)
{
	return recv_seq(c, c->seq, sent, expect, rep, rep_size, exact, ret_fds, ret_msg);
}

void client_batch(struct hm_client *c, struct client_req *r, int n)
{
	uint32_t first = c->seq + 1;
	int sent = 0;

	/* All sent before any answer is read: hermeticd answers a
	 * connection's requests one at a time, in the order they came (a
	 * level-triggered epoll: the next is read once the last is answered),
	 * so the replies come back in order, each with its request's seq. */
	for (; sent < n; sent++)
		if (client_send(c, r[sent].type, r[sent].req, r[sent].len, -1) < 0)
			break;
	for (int i = 0; i < n; i++) {
		r[i].msg = NULL;
		/* Not sent (or its send failed): asked again by the caller on a
		 * new connection, as after a closed one. */
		r[i].ret = i < sent ? recv_seq(c, first + (uint32_t)i, 0, r[i].expect, r[i].rep,
					      r[i].rep_size, r[i].exact, NULL, &r[i].msg)
				    : -ECONNRESET;
	}
}

ssize_t client_call_fds(struct hm_client *c, uint16_t type, const void *req, uint32_t len,
			int send_fd, uint16_t expect, void *rep, size_t rep_size, bool exact,
			int ret_fds[HM_MSG_MAX_FDS], const char **ret_msg)
{
	int sent = client_send(c, type, req, len, send_fd);

	return client_recv(c, sent, expect, rep, rep_size, exact, ret_fds, ret_msg);
}

ssize_t client_call(struct hm_client *c, uint16_t type, const void *req, uint32_t len,
		    int send_fd, uint16_t expect, void *rep, size_t rep_size, bool exact, int *ret_fd,
		    const char **ret_msg)
{
	int fds[HM_MSG_MAX_FDS];
	ssize_t n = client_call_fds(c, type, req, len, send_fd, expect, rep, rep_size, exact,
				    ret_fd ? fds : NULL, ret_msg);

	if (ret_fd)
		*ret_fd = n >= 0 ? fds[0] : -1;
	for (int i = 1; ret_fd && n >= 0 && i < HM_MSG_MAX_FDS; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	return n;
}

int client_store_journal(struct hm_client *c, const struct hm_journal_store *req, int fd,
			 const char **ret_msg)
{
	struct hm_journal_upload up;
	struct stat st;
	char buf[65536];
	off_t off = 0;
	ssize_t n;
	int mfd = -1;

	/* The daemon takes no descriptor from us: it hands out a buffer of its
	 * own, we copy the journal in, and it seals and stores that. */
	if (fstat(fd, &st) < 0)
		return -errno;
	up.size = st.st_size;
	n = client_call(c, HM_REQ_JOURNAL_UPLOAD, &up, sizeof(up), -1, HM_REP_UPLOAD, &up,
			sizeof(up), true, &mfd, ret_msg);
	if (n < 0)
		return (int)n;
	if (mfd < 0)
		return (int)failed(c, -EPROTO, true, ret_msg, NULL,
				   "hermeticd sent no upload buffer");
	while (off < st.st_size) {
		n = pread(fd, buf, sizeof(buf), off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || pwrite(mfd, buf, n, off) != n) {
			int err = n < 0 ? -errno : -EIO;

			close(mfd);
			*ret_msg = NULL;
			return err;
		}
		off += n;
	}
	close(mfd);
	n = client_call(c, HM_REQ_JOURNAL_STORE, req, sizeof(*req), -1, HM_REP_OK, NULL, 0,
			false, NULL, ret_msg);
	return n < 0 ? (int)n : 0;
}
