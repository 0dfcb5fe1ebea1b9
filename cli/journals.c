// SPDX-License-Identifier: MIT
/*
 * hermetic journals COMMAND: journals of recorded runs.
 *
 *   list [--json] [--dir DIR]        the store's journals (or DIR's index.json)
 *   show ID|FILE [--json] [--records] what a journal holds, as text or JSON
 *   fetch ID [-o FILE]               copy a journal out of the store
 *   rm ID...                         remove journals from the store
 *   gc [--older-than 14d]            remove old journals from the store
 *
 * Reading a journal needs no daemon: show works on any file, offline. The
 * store belongs to hermeticd (root); a user reaches only their own journals
 * through it, and the parsing of a journal always happens here, unprivileged.
 */
#include <getopt.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <fcntl.h>
#include <libgen.h>
#include <sys/stat.h>
#include <sys/random.h>
#include "util.h"
#include "config.h"
#include "journal.h"
#include "cli.h"
#include "client.h"
#include "record.h"
#include "journals.h"
#include "trust.h"

static int journals_fetch(int argc, char **argv);
static int journals_rm(int argc, char **argv);
static int journals_gc(int argc, char **argv);

static const struct sub {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
} subs[] = {
	{ "list", jl_journals_list, "your journals in hermeticd's store, or in a --record directory" },
	{ "show", jl_journals_show, "what a journal holds: configuration, machine, processes" },
	{ "fetch", journals_fetch, "copy a journal out of the store into a file" },
	{ "rm", journals_rm, "remove journals from the store" },
	{ "gc", journals_gc, "remove journals older than a duration from the store" },
};

static void usage(FILE *f)
{
	fprintf(f, "Usage: hermetic journals COMMAND [OPTIONS]\n\nCommands:\n");
	for (size_t i = 0; i < ARRAY_SIZE(subs); i++)
		fprintf(f, "  %-6s %s\n", subs[i].name, subs[i].summary);
	fprintf(f, "\nJournals of recorded runs (enroll --record) are kept per user in hermeticd's\n"
		   "store; you see and touch only your own. ID is a run id, as list shows it.\n"
		   "Run 'hermetic journals COMMAND --help' for a command's options.\n");
}

int cmd_journals(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	for (size_t i = 0; i < ARRAY_SIZE(subs); i++)
		if (!strcmp(argv[1], subs[i].name))
			return subs[i].fn(argc - 1, argv + 1);
	{
		const char *names[ARRAY_SIZE(subs)], *near;

		for (size_t i = 0; i < ARRAY_SIZE(subs); i++)
			names[i] = subs[i].name;
		near = cli_near_miss(argv[1], names, ARRAY_SIZE(subs));
		fprintf(stderr, "%s: journals: unknown command '%s'%s%s%s\n", program_name, argv[1],
			near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
	}
	usage(stderr);
	return EXIT_USAGE;
}


/* --- the store (hermeticd) ------------------------------------------------------------- */

bool jl_is_id(const char *s)
{
	uint64_t v;

	return hm_parse_u64(s, &v) == 0;
}

uint64_t jl_parse_id(const char *s)
{
	uint64_t v;

	if (hm_parse_u64(s, &v) < 0)
		die(EXIT_USAGE, "not a journal id: '%s' (a run id, as 'hermetic journals list' shows)",
		    s);
	return v;
}

/* An error reply of a store request: the exit code says what kind. */
void jl_store_die(int err, const char *msg, const char *what)
{
	if (err == -ENOENT)
		die(EXIT_NOINPUT, "%s", msg);
	if (err == -EOPNOTSUPP)
		die(EXIT_INTERNAL, "Failed to %s: this hermeticd has no journal store (%s)", what,
		    msg);
	die(EXIT_INTERNAL, "Failed to %s: %s", what, msg);
}

/* An fd of journal ID from the store, its size in *ret_size. */
static int fetch_fd(uint64_t id, uint64_t *ret_size)
{
	struct hm_journal_ref ref = { .id = id };
	struct hm_journal_info info;
	const char *msg = "";
	struct hm_client conn = { .sock = cli_connect() };
	int fd = -1;
	ssize_t n;

	n = cli_call(&conn, HM_REQ_JOURNAL_FETCH, &ref, sizeof(ref), -1, HM_REP_JOURNAL, &info,
		     sizeof(info), true, &fd, &msg);
	close(conn.sock);
	if (n < 0)
		jl_store_die(n, msg, "fetch the journal");
	if (fd < 0)
		die(EXIT_INTERNAL, "hermeticd sent no file for journal %" PRIu64, id);
	*ret_size = info.size;
	return fd;
}

static int read_all(int fd, void *buf, size_t len)
{
	size_t off = 0;

	while (off < len) {
		ssize_t n = read(fd, (char *)buf + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		off += n;
	}
	return 0;
}

uint8_t *jl_fetch_bytes(uint64_t id, size_t *ret_len)
{
	uint64_t size;
	_cleanup_close_ int fd = fetch_fd(id, &size);
	uint8_t *data;
	int r;

	if (size > HM_JOURNAL_MAX_SIZE)
		die(EXIT_DATAERR, "journal %" PRIu64 " is larger than a journal can be", id);
	data = malloc(size ? size : 1);
	if (!data)
		die(EXIT_INTERNAL, "out of memory");
	if ((r = read_all(fd, data, size)) < 0)
		die(EXIT_INTERNAL, "Failed to read journal %" PRIu64 ": %s", id, strerror(-r));
	*ret_len = size;
	return data;
}

/* Every journal of the caller in the store, newest first (paged: one
 * reply holds what fits in a message). */
static void fetch_usage(FILE *f)
{
	fprintf(f, "Usage: hermetic journals fetch ID [-o FILE]\n\n"
		   "Copy journal ID from hermeticd's store into FILE (default ./ID.hjournal),\n"
		   "created 0600 under a temporary name and renamed when complete: journals hold\n"
		   "secrets (the entropy a test turned into keys).\n\n"
		   "  -o, --output FILE   where to write it\n\n"
		   "Exit status: 0; 66 if the store has no journal ID of yours, 69 if hermeticd\n"
		   "cannot be reached, 73 if FILE cannot be written.\n");
}

static int journals_fetch(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	char out_buf[64], tmp[4096], dirbuf[4096], *dir;
	const char *out = NULL;
	_cleanup_close_ int in = -1, fd = -1, dfd = -1;
	static char buf[1 << 16];
	uint64_t id, size, rnd = 0, copied = 0;
	int c, r = 0;

	opterr = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		if (c == 'o')
			out = optarg;
		else if (c == 'h')
			return fetch_usage(stdout), 0;
		else
			return cli_bad_option("hermetic journals fetch", "o:h", argv);
	}
	if (optind != argc - 1)
		return fetch_usage(stderr), EXIT_USAGE;
	id = jl_parse_id(argv[optind]);
	if (!out) {
		snprintf(out_buf, sizeof(out_buf), "%" PRIu64 HM_JOURNAL_SUFFIX, id);
		out = out_buf;
	}
	in = fetch_fd(id, &size);

	/* A temporary 0600 file next to the destination, renamed when whole. */
	snprintf(dirbuf, sizeof(dirbuf), "%s", out);
	dir = dirname(dirbuf);
	if (getrandom(&rnd, sizeof(rnd), 0) != sizeof(rnd))
		rnd = hm_now_ns() ^ getpid();
	{
		char base[4096];

		snprintf(base, sizeof(base), "%s", out);
		if ((size_t)snprintf(tmp, sizeof(tmp), "%s/.%s.%016" PRIx64, dir, basename(base),
				     rnd) >= sizeof(tmp))
			die(EXIT_USAGE, "output path too long: %s", out);
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		die(EXIT_CANTCREAT, "Failed to create '%s': %s", tmp, strerror(errno));
	if (fchmod(fd, 0600) < 0)
		r = -errno;
	while (!r) {
		ssize_t n = read(in, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			break;
		}
		if (n == 0)
			break;
		for (ssize_t off = 0; off < n && !r;) {
			ssize_t w = write(fd, buf + off, n - off);

			if (w < 0 && errno != EINTR)
				r = -errno;
			else if (w > 0)
				off += w;
		}
		copied += n;
	}
	if (!r && copied != size)
		r = -EIO;
	if (!r && fsync(fd) < 0)
		r = -errno;
	if (!r && rename(tmp, out) < 0)
		r = -errno;
	if (r < 0) {
		unlink(tmp);
		die(EXIT_CANTCREAT, "Failed to write '%s': %s", out, strerror(-r));
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0)
		fsync(dfd);
	printf("%s\n", out);
	return 0;
}

static void rm_usage(FILE *f)
{
	fprintf(f, "Usage: hermetic journals rm ID...\n\n"
		   "Remove your journals ID... from hermeticd's store.\n\n"
		   "Exit status: 0; 66 if one of them is not in the store (the others are\n"
		   "removed all the same), 69 if hermeticd cannot be reached.\n");
}

static int journals_rm(int argc, char **argv)
{
	struct hm_client conn;
	int rc = 0;

	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")))
		return rm_usage(stdout), 0;
	if (argc < 2 || argv[1][0] == '-')
		return rm_usage(stderr), EXIT_USAGE;
	for (int i = 1; i < argc; i++)
		jl_parse_id(argv[i]);
	conn = (struct hm_client){ .sock = cli_connect() };
	for (int i = 1; i < argc; i++) {
		struct hm_journal_ref ref = { .id = jl_parse_id(argv[i]) };
		struct hm_journal_count cnt;
		const char *msg = "";
		ssize_t n = cli_call(&conn, HM_REQ_JOURNAL_RM, &ref, sizeof(ref), -1, HM_REP_COUNT,
				     &cnt, sizeof(cnt), true, NULL, &msg);

		if (n == -ENOENT) {
			warnx_("%s", msg);
			rc = EXIT_NOINPUT;
			continue;
		}
		if (n < 0)
			jl_store_die(n, msg, "remove the journal");
		printf("removed journal %" PRIu64 "\n", ref.id);
	}
	close(conn.sock);
	return rc;
}

static void gc_usage(FILE *f)
{
	fprintf(f, "Usage: hermetic journals gc [--older-than DURATION]\n\n"
		   "Remove your journals stored more than DURATION ago (default 14d; 30m, 12h,\n"
		   "7d, 0 for all) from hermeticd's store. The store also keeps at most a number\n"
		   "of journals and bytes per user, removing the oldest first (hermeticd(8)).\n\n"
		   "Exit status: 0, 69 if hermeticd cannot be reached.\n");
}

static int journals_gc(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "older-than", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	struct hm_journal_gc req = { .older_than_s = 14 * 86400 };
	struct hm_journal_count cnt;
	const char *msg = "";
	uint64_t ns;
	char b[32];
	ssize_t n;
	struct hm_client conn;
	int c;

	opterr = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		if (c == 'o') {
			if (hm_parse_duration(optarg, &ns) < 0)
				die(EXIT_USAGE, "--older-than: not a duration: '%s' (e.g. 14d, 12h, 0)",
				    optarg);
			req.older_than_s = ns / 1000000000ULL;
		} else if (c == 'h') {
			return gc_usage(stdout), 0;
		} else {
			return cli_bad_option("hermetic journals gc", "o:h", argv);
		}
	}
	if (optind != argc)
		return gc_usage(stderr), EXIT_USAGE;
	conn = (struct hm_client){ .sock = cli_connect() };
	n = cli_call(&conn, HM_REQ_JOURNAL_GC, &req, sizeof(req), -1, HM_REP_COUNT, &cnt,
		     sizeof(cnt), true, NULL, &msg);
	close(conn.sock);
	if (n < 0)
		jl_store_die(n, msg, "remove old journals");
	printf("removed %" PRIu64 " journal%s (%s)\n", cnt.removed, cnt.removed == 1 ? "" : "s",
	       jl_fmt_bytes(cnt.bytes, b, sizeof(b)));
	return 0;
}
