// SPDX-License-Identifier: MIT
#include <grp.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
#include "util.h"
#include "cli.h"

void (*cli_die_hook)(int code, const char *msg);

void die(int code, const char *fmt, ...)
{
	void (*hook)(int, const char *) = cli_die_hook;
	char msg[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s: %s\n", program_name, msg);
	/* Once: a failure inside the hook exits without it. */
	cli_die_hook = NULL;
	if (hook)
		hook(code, msg);
	exit(code);
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (r < 0)
		die(EXIT_INTERNAL, "out of memory");
	return s;
}

void push_arg(char **args, size_t *n, size_t max, char *s)
{
	if (*n + 1 >= max)
		die(EXIT_DATAERR, "the journal holds too many options and arguments");
	args[(*n)++] = s;
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

void cli_vusage_error(const char *verb, const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: ", verb);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\nTry '%s --help'.\n", verb);
	exit(EXIT_USAGE);
}

int cli_bad_option(const char *verb, const char *shortopts, char **argv)
{
	/* getopt (opterr = 0) leaves optopt: 0 for an unknown long option, the
	 * character for an unknown short one or one that lacks its value, the
	 * option's value (a character, or >= 128) for a long one that lacks
	 * its value or was given one it does not take. */
	const char *arg = argv[optind - 1], *what = "unknown option";
	bool is_long = !strncmp(arg, "--", 2);
	char name[128];

	if (is_long)
		snprintf(name, sizeof(name), "%.*s", (int)strcspn(arg, "="), arg);
	else
		snprintf(name, sizeof(name), "-%c", optopt ? optopt : '?');
	if (optopt && is_long && strchr(arg, '='))
		what = "takes no value";
	else if (optopt && (optopt >= 128 || strchr(shortopts, optopt)))
		what = "needs a value";
	if (!optopt || !strcmp(what, "unknown option"))
		fprintf(stderr, "%s: unknown option '%s'\n", verb, is_long ? arg : name);
	else
		fprintf(stderr, "%s: option '%s' %s\n", verb, name, what);
	fprintf(stderr, "Try '%s --help'.\n", verb);
	return EXIT_USAGE;
}

/* Levenshtein distance, with a swap of two neighbours counted as one
 * edit, of two short words (longer ones are never near). */
#define MIN(a, b) ((a) < (b) ? (a) : (b))
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), d[33][33];

	if (la > 32 || lb > 32)
		return SIZE_MAX;
	for (size_t i = 0; i <= la; i++)
		for (size_t j = 0; j <= lb; j++) {
			size_t v = i + j;

			if (i && j) {
				v = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
				v = MIN(v, d[i - 1][j] + 1);
				v = MIN(v, d[i][j - 1] + 1);
				if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
					v = MIN(v, d[i - 2][j - 2] + 1);
			}
			d[i][j] = v;
		}
	return d[la][lb];
}
#undef MIN

const char *cli_near_miss(const char *word, const char *const *names, size_t n)
{
	const char *best = NULL;
	size_t best_d = 3;

	for (size_t i = 0; i < n; i++) {
		size_t d = edit_distance(word, names[i]);

		/* at most two edits, and fewer than the word is long */
		if (d < best_d && d < strlen(word)) {
			best = names[i];
			best_d = d;
		}
	}
	return best;
}

const char *cli_socket_path(void)
{
	const char *s = getenv("HERMETIC_SOCKET");

	return s && *s ? s : HM_DEFAULT_SOCKET;
}

bool cli_soft_errors;

int cli_try_connect(void)
{
	const char *path = cli_socket_path();
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
	prctl(PR_SET_DUMPABLE, 0);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
		return fd;
	err = -errno;
	close(fd);
	return err;
}

int cli_connect(void)
{
	const char *path = cli_socket_path();
	int fd = cli_try_connect();

	if (fd == -ENAMETOOLONG)
		die(EXIT_USAGE, "socket path too long: %s", path);
	if (fd >= 0)
		return fd;
	errno = -fd;
	if (errno == EACCES || errno == EPERM) {
		struct stat st;
		struct group *g = stat(path, &st) == 0 && st.st_gid != 0 ? getgrgid(st.st_gid) : NULL;
		const char *user = getenv("USER");

		if (g)
			die(EXIT_NODAEMON,
			    "permission denied: hermeticd's socket %s is for root and the\n"
			    "  group '%s'. Ask an administrator to add you (sudo usermod -aG %s %s),\n"
			    "  then log in again or run 'newgrp %s'.",
			    path, g->gr_name, g->gr_name, user && *user ? user : "$USER", g->gr_name);
		die(EXIT_NODAEMON,
		    "permission denied: hermeticd's socket %s is for root only. To let users\n"
		    "  enroll, an administrator runs 'sudo groupadd --system hermetic' and\n"
		    "  'sudo usermod -aG hermetic USER' and restarts hermeticd (or starts it\n"
		    "  with --socket-group GROUP).",
		    path);
	}
	die(EXIT_NODAEMON,
	    "cannot reach hermeticd at %s: %s\n"
	    "  Start it with 'sudo systemctl enable --now hermeticd.socket' (or by hand,\n"
	    "  'sudo hermeticd'), point HERMETIC_SOCKET at a running one, or use\n"
	    "  'enroll --no-daemon' to run shim-only without the kernel's network refusal.",
	    path, strerror(errno));
}

ssize_t cli_call(int sock, uint16_t type, const void *req, uint32_t len, int send_fd,
		 uint16_t expect, void *rep, size_t rep_size, bool exact, int *ret_fd,
		 const char **ret_msg)
{
	int fds[HM_MSG_MAX_FDS];
	ssize_t n = cli_call_fds(sock, type, req, len, send_fd, expect, rep, rep_size, exact,
				 ret_fd ? fds : NULL, ret_msg);

	if (ret_fd)
		*ret_fd = n >= 0 ? fds[0] : -1;
	for (int i = 1; ret_fd && n >= 0 && i < HM_MSG_MAX_FDS; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	return n;
}

static void close_fds(int *fds)
{
	for (int i = 0; i < HM_MSG_MAX_FDS; i++)
		if (fds[i] >= 0) {
			close(fds[i]);
			fds[i] = -1;
		}
}

static uint32_t seq; /* of the request sent last */

int cli_send_req(int sock, uint16_t type, const void *req, uint32_t len, int send_fd)
{
	int r;

	if (sock < 0 && cli_soft_errors)
		return -ENOTCONN;
	r = hm_send(sock, type, ++seq, req, len, send_fd);
	/* A daemon that refused the connection (a limit) said why before it
	 * closed it: that answer counts, not the failed send. */
	if (r < 0 && r != -EPIPE && r != -ECONNRESET)
		die(EXIT_INTERNAL, "Failed to send request to hermeticd: %s", strerror(-r));
	return r;
}

ssize_t cli_recv_rep(int sock, int sent, uint16_t expect, void *rep, size_t rep_size, bool exact,
		     int ret_fds[HM_MSG_MAX_FDS], const char **ret_msg)
{
	static char buf[HM_MSG_MAX];
	static struct hm_error e;
	struct hm_hdr *h;
	int fds[HM_MSG_MAX_FDS], r = sent;
	ssize_t n;

	if (sock < 0 && r == -ENOTCONN) {
		if (ret_msg)
			*ret_msg = "not connected to hermeticd";
		return -ENOTCONN;
	}
	n = hm_recv_fds(sock, buf, sizeof(buf), &h, fds, HM_MSG_MAX_FDS);
	/* A send that failed (the daemon closed the connection) with no
	 * answer to read: soft, like a closed connection, when asked to be.
	 * (This dying first was why enroll exited 70 when the daemon went
	 * away while it read the run's report.) */
	if (cli_soft_errors && r < 0 && !(n >= 0 && h->type == HM_REP_ERROR)) {
		if (n >= 0)
			close_fds(fds);
		n = -ECONNRESET;
	}
	if (r < 0 && !cli_soft_errors && !(n >= 0 && h->type == HM_REP_ERROR))
		die(EXIT_INTERNAL, "Failed to send request to hermeticd: %s", strerror(-r));
	if (n < 0 && cli_soft_errors) {
		/* (enroll: the daemon went away; the caller carries on) */
		if (ret_msg)
			*ret_msg = "hermeticd closed the connection";
		return n == -ECONNRESET || n == -EPIPE ? -ECONNRESET : n;
	}
	if (n == -ECONNRESET)
		die(EXIT_INTERNAL, "hermeticd closed the connection (did it stop?)");
	if (n < 0)
		die(EXIT_INTERNAL, "Failed to read reply from hermeticd: %s", strerror(-n));
	if (h->type == HM_REP_ERROR && (size_t)n == sizeof(e)) {
		close_fds(fds);
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
	for (int i = 0; i < HM_MSG_MAX_FDS; i++)
		if (ret_fds)
			ret_fds[i] = fds[i];
		else if (fds[i] >= 0)
			close(fds[i]);
	return n;
}

ssize_t cli_call_fds(int sock, uint16_t type, const void *req, uint32_t len, int send_fd,
		     uint16_t expect, void *rep, size_t rep_size, bool exact,
		     int ret_fds[HM_MSG_MAX_FDS], const char **ret_msg)
{
	int sent = cli_send_req(sock, type, req, len, send_fd);

	return cli_recv_rep(sock, sent, expect, rep, rep_size, exact, ret_fds, ret_msg);
}

int cli_store_journal(int sock, const struct hm_journal_store *req, int fd, const char **ret_msg)
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
	n = cli_call(sock, HM_REQ_JOURNAL_UPLOAD, &up, sizeof(up), -1, HM_REP_UPLOAD, &up, sizeof(up),
		     true, &mfd, ret_msg);
	if (n < 0)
		return n;
	if (mfd < 0)
		die(EXIT_INTERNAL, "hermeticd sent no upload buffer");
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
	n = cli_call(sock, HM_REQ_JOURNAL_STORE, req, sizeof(*req), -1, HM_REP_OK, NULL, 0, false,
		     NULL, ret_msg);
	return n < 0 ? (int)n : 0;
}
