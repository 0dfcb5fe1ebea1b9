// SPDX-License-Identifier: MIT
#include <grp.h>
#include <sys/stat.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
#include "util.h"
#include "cli.h"
#include "client.h"

int cli_fail(struct cli_fail *f, int status, const char *fmt, ...)
{
	va_list ap;

	f->status = status;
	f->reason = NULL;
	va_start(ap, fmt);
	vsnprintf(f->msg, sizeof(f->msg), fmt, ap);
	va_end(ap);
	return -1;
}

void cli_fail_exit(const struct cli_fail *f)
{
	fprintf(stderr, "%s: %s\n", program_name, f->msg);
	exit(f->status);
}

void die(int code, const char *fmt, ...)
{
	struct cli_fail f = { .status = code };
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(f.msg, sizeof(f.msg), fmt, ap);
	va_end(ap);
	cli_fail_exit(&f);
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

int cli_connect_fail(struct cli_fail *f)
{
	const char *path = client_socket_path();
	int fd = client_connect();

	if (fd == -ENAMETOOLONG)
		return cli_fail(f, EXIT_USAGE, "socket path too long: %s", path);
	if (fd >= 0)
		return fd;
	errno = -fd;
	if (errno == EACCES || errno == EPERM) {
		struct stat st;
		struct group *g = stat(path, &st) == 0 && st.st_gid != 0 ? getgrgid(st.st_gid) : NULL;
		const char *user = getenv("USER");

		if (g)
			return cli_fail(f, EXIT_NODAEMON,
					"permission denied: hermeticd's socket %s is for root and the\n"
					"  group '%s'. Ask an administrator to add you (sudo usermod -aG %s %s),\n"
					"  then log in again or run 'newgrp %s'.",
					path, g->gr_name, g->gr_name, user && *user ? user : "$USER",
					g->gr_name);
		return cli_fail(f, EXIT_NODAEMON,
				"permission denied: hermeticd's socket %s is for root only. To let users\n"
				"  enroll, an administrator runs 'sudo groupadd --system hermetic' and\n"
				"  'sudo usermod -aG hermetic USER' and restarts hermeticd (or starts it\n"
				"  with --socket-group GROUP).",
				path);
	}
	return cli_fail(f, EXIT_NODAEMON,
			"cannot reach hermeticd at %s: %s\n"
			"  Start it with 'sudo systemctl enable --now hermeticd.socket' (or by hand,\n"
			"  'sudo hermeticd'), point HERMETIC_SOCKET at a running one, or use\n"
			"  'enroll --no-daemon' to run shim-only without the kernel's network refusal.",
			path, strerror(errno));
}

int cli_connect(void)
{
	struct cli_fail f;
	int fd = cli_connect_fail(&f);

	if (fd < 0)
		cli_fail_exit(&f);
	return fd;
}

/* A verb cannot go on without its answer: a failure of the transport (not
 * the daemon's own answer, which is the caller's to report) ends it. */
ssize_t cli_call(struct hm_client *c, uint16_t type, const void *req, uint32_t len, int send_fd,
		 uint16_t expect, void *rep, size_t rep_size, bool exact, int *ret_fd,
		 const char **ret_msg)
{
	ssize_t n = client_call(c, type, req, len, send_fd, expect, rep, rep_size, exact, ret_fd,
				ret_msg);

	if (n < 0 && !c->daemon_said)
		die(EXIT_INTERNAL, "%s", c->why);
	return n;
}
