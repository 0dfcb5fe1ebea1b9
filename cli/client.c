// SPDX-License-Identifier: MIT
#include <sys/socket.h>
#include <sys/un.h>
#include <stdarg.h>
#include "util.h"
#include "cli.h"

void die(int code, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", program_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(code);
}

void warnx_(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", program_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

const char *cli_socket_path(void)
{
	const char *s = getenv("HERMETIC_SOCKET");

	return s && *s ? s : HM_DEFAULT_SOCKET;
}

int cli_connect(void)
{
	const char *path = cli_socket_path();
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		die(EXIT_USAGE, "socket path too long: %s", path);
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		die(EXIT_INTERNAL, "Failed to create socket: %s", strerror(errno));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		die(EXIT_NODAEMON,
		    "cannot reach hermeticd at %s: %s\n"
		    "  Start it with 'sudo systemctl enable --now hermeticd.socket' (or by hand,\n"
		    "  'sudo hermeticd'), point HERMETIC_SOCKET at a running one, or use\n"
		    "  'enroll --no-daemon' to run shim-only without the kernel's network refusal.",
		    path, strerror(errno));
	return fd;
}

ssize_t cli_call(int sock, uint16_t type, const void *req, uint32_t len, int send_fd,
		 uint16_t expect, void *rep, size_t rep_size, bool exact, int *ret_fd,
		 const char **ret_msg)
{
	static char buf[HM_MSG_MAX];
	static struct hm_error e;
	static uint32_t seq;
	struct hm_hdr *h;
	int fd = -1, r;
	ssize_t n;

	r = hm_send(sock, type, ++seq, req, len, send_fd);
	if (r < 0)
		die(EXIT_INTERNAL, "Failed to send request to hermeticd: %s", strerror(-r));
	n = hm_recv(sock, buf, sizeof(buf), &h, &fd);
	if (n == -ECONNRESET)
		die(EXIT_INTERNAL, "hermeticd closed the connection (did it stop?)");
	if (n < 0)
		die(EXIT_INTERNAL, "Failed to read reply from hermeticd: %s", strerror(-n));
	if (h->type == HM_REP_ERROR && (size_t)n == sizeof(e)) {
		if (fd >= 0)
			close(fd);
		memcpy(&e, buf + sizeof(*h), sizeof(e));
		e.msg[sizeof(e.msg) - 1] = 0;
		if (ret_msg)
			*ret_msg = e.msg;
		return e.err > 0 ? -e.err : -EPROTO;
	}
	if (h->type != expect || h->seq != seq || (rep && (size_t)n > rep_size) ||
	    (rep && exact && (size_t)n != rep_size))
		die(EXIT_INTERNAL, "unexpected reply from hermeticd (type %u, %zd bytes)", h->type, n);
	if (rep)
		memcpy(rep, buf + sizeof(*h), n);
	if (ret_fd)
		*ret_fd = fd;
	else if (fd >= 0)
		close(fd);
	return n;
}
