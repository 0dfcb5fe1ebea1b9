// SPDX-License-Identifier: MIT
/*
 * hermetic hunt [OPTIONS] -- CMD [ARGS...]
 * hermetic hunt merge REPORT.jsonl...
 *
 * Runs CMD under many seeds (each try a full enrolled run), groups its
 * failures, verifies each one's reproduction and names its cause. This file
 * parses, drives and reports; the tries, axes, statistics and analysis
 * live in hunt_*.c.
 */
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <sys/stat.h>
#include "util.h"
#include "config.h"
#include "cli.h"
#include "now.h"
#include "hunt.h"

#define PREFIX "hermetic hunt"
#define DEFAULT_RUNS 100
#define DEFAULT_VERIFY 3

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: hermetic hunt [OPTIONS] -- CMD [ARGS...]\n"
		"       hermetic hunt merge [--json] REPORT.jsonl...\n"
		"\n"
		"Run CMD under many seeds, each try a full enrolled run (network refused,\n"
		"virtual clock, seeded entropy), group its failures, verify each one's\n"
		"one-line reproduction by rerunning it and name its cause: the axis whose\n"
		"change alone makes the failing try pass (docs/hunting.md).\n"
		"\n"
		"  --runs N            tries (default %d)\n"
		"  --jobs J            tries at once (default: the CPU count)\n"
		"  --until-fail        stop starting tries at the first failure\n"
		"  --budget TIME       stop starting tries after TIME of real time (30s, 5m)\n"
		"  --timeout TIME      a try still running after TIME of real time is ended\n"
		"                      and counts as a failure of its own kind (timeout)\n"
		"  --fail-if REGEX     a try whose output has a line matching REGEX (POSIX\n"
		"                      extended) fails too, whatever its exit status\n"
		"  --hunt-seed S       the seed every try's settings derive from (default 0):\n"
		"                      the same hunt seed runs the same tries\n"
		"  --vary AXES         what each try draws from its seed, a comma list of\n"
		"                      entropy (the seed of every random byte), clock (the\n"
		"                      start: month ends, midnight, Feb 29, DST changes and\n"
		"                      anywhere within two years of the default start),\n"
		"                      tick, identity (one CPU or many, a time zone west\n"
		"                      of, at or east of UTC) and sched (each try under\n"
		"                      --sched chaos:SEED, or for 1 try in 4 serial:SEED;\n"
		"                      sched=chaos or sched=serial draws that mode only)\n"
		"                      (default entropy,clock)\n"
		"  --now TIME          the start when clock is not varied, and the centre\n"
		"                      of its window when it is (default: enroll's)\n"
		"  --tick DURATION     the tick when tick is not varied (default: enroll's)\n"
		"  --verify R          rerun each failure's reproduction R times (default %d)\n"
		"  --shard I/N         run the I-th (1..N) of N slices of the tries: the\n"
		"                      tries whose index is I-1 modulo N\n"
		"  --report FILE       write the hunt as JSON lines to FILE (a header, one\n"
		"                      line per try, one per analysed failure, an end line):\n"
		"                      'hermetic hunt merge' reads them back\n"
		"  --json              print the summary as one JSON document\n"
		"  --keep DIR          keep the outputs and journals of failing tries in DIR\n"
		"                      (default: a new directory under $TMPDIR, removed\n"
		"                      when nothing failed)\n"
		"  -h, --help          show this help\n"
		"\n"
		"Progress goes to stderr: one line rewritten in place on a terminal, else a\n"
		"line at every tenth of the runs. The summary goes to stdout.\n"
		"\n"
		"merge: print the summary of the reports of one hunt's shards, as the\n"
		"hunt over all their tries would print it (--json: as one JSON document).\n"
		"\n"
		"Exit status: 0 no failure found, 1 failures found, 2 bad usage, 65 a\n"
		"report cannot be merged (malformed, another command's hunt), 66 a report\n"
		"cannot be opened, 73 --report cannot be written; when a try cannot run,\n"
		"hermetic enroll's status: 126 CMD not executable, 127 CMD not found, 69\n"
		"hermeticd not reachable, 70 internal error.\n",
		DEFAULT_RUNS, DEFAULT_VERIFY);
}

static void bad_usage(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void bad_usage(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cli_vusage_error(PREFIX, fmt, ap);
}

static uint64_t parse_count(const char *opt, const char *v, uint64_t min)
{
	uint64_t n;

	if (hm_parse_u64(v, &n) < 0 || n < min)
		bad_usage("%s %s: expected a whole number of at least %" PRIu64, opt, v, min);
	return n;
}

static uint64_t parse_time(const char *opt, const char *v)
{
	uint64_t ns;

	if (hm_parse_duration(v, &ns) < 0 || !ns)
		bad_usage("%s %s: expected a duration such as 500ms, 30s or 5m", opt, v);
	return ns;
}

static void parse_shard(struct hunt *h, const char *v)
{
	uint64_t i, n;
	const char *slash = strchr(v, '/');
	char first[32];

	if (!slash || (size_t)(slash - v) >= sizeof(first))
		bad_usage("--shard %s: expected I/N, such as 1/4", v);
	snprintf(first, sizeof(first), "%.*s", (int)(slash - v), v);
	if (hm_parse_u64(first, &i) < 0 || hm_parse_u64(slash + 1, &n) < 0 || !n || n > 100000)
		bad_usage("--shard %s: expected I/N, such as 1/4 (N from 1 to 100000)", v);
	if (i < 1 || i > n)
		bad_usage("--shard %s: shard %" PRIu64 " is out of range: shards of %" PRIu64
			  " are numbered 1 to %" PRIu64,
			  v, i, n, n);
	h->shard_i = (unsigned)i;
	h->shard_n = (unsigned)n;
}

static void parse(struct hunt *h, int argc, char **argv)
{
	enum { O_RUNS = 256, O_JOBS, O_UNTIL, O_BUDGET, O_TIMEOUT, O_FAIL_IF, O_HSEED, O_VARY,
	       O_VERIFY, O_SHARD, O_REPORT, O_JSON, O_KEEP, O_NOW, O_TICK };
	static const struct option opts[] = {
		{ "runs", required_argument, NULL, O_RUNS },
		{ "jobs", required_argument, NULL, O_JOBS },
		{ "until-fail", no_argument, NULL, O_UNTIL },
		{ "budget", required_argument, NULL, O_BUDGET },
		{ "timeout", required_argument, NULL, O_TIMEOUT },
		{ "fail-if", required_argument, NULL, O_FAIL_IF },
		{ "hunt-seed", required_argument, NULL, O_HSEED },
		{ "vary", required_argument, NULL, O_VARY },
		{ "verify", required_argument, NULL, O_VERIFY },
		{ "shard", required_argument, NULL, O_SHARD },
		{ "report", required_argument, NULL, O_REPORT },
		{ "json", no_argument, NULL, O_JSON },
		{ "keep", required_argument, NULL, O_KEEP },
		{ "now", required_argument, NULL, O_NOW },
		{ "tick", required_argument, NULL, O_TICK },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	char why[256];
	bool now_set = false;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int c, r;

	h->runs = DEFAULT_RUNS;
	h->jobs = cpus > 0 ? (unsigned)cpus : 1;
	h->vary = HUNT_AX_DEFAULT;
	h->verify = DEFAULT_VERIFY;
	h->shard_i = h->shard_n = 1;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage(stdout);
			exit(0);
		case O_RUNS:
			h->runs = parse_count("--runs", optarg, 1);
			break;
		case O_JOBS:
			h->jobs = (unsigned)parse_count("--jobs", optarg, 1);
			break;
		case O_UNTIL:
			h->until_fail = true;
			break;
		case O_BUDGET:
			h->budget_ns = parse_time("--budget", optarg);
			break;
		case O_TIMEOUT:
			h->timeout_ns = parse_time("--timeout", optarg);
			break;
		case O_FAIL_IF:
			r = regcomp(&h->fail_if, optarg, REG_EXTENDED | REG_NOSUB);
			if (r) {
				regerror(r, &h->fail_if, why, sizeof(why));
				bad_usage("--fail-if %s: %s", optarg, why);
			}
			h->fail_if_src = optarg;
			break;
		case O_HSEED:
			h->hunt_seed = parse_count("--hunt-seed", optarg, 0);
			break;
		case O_VARY:
			r = hunt_axes_parse(optarg, &h->vary, why, sizeof(why));
			if (r < 0)
				bad_usage("%s", why);
			break;
		case O_VERIFY:
			h->verify = (unsigned)parse_count("--verify", optarg, 0);
			if (h->verify > 100)
				bad_usage("--verify %s: at most 100 reruns", optarg);
			break;
		case O_SHARD:
			parse_shard(h, optarg);
			break;
		case O_REPORT:
			h->report_path = optarg;
			break;
		case O_JSON:
			h->json = true;
			break;
		case O_KEEP:
			snprintf(h->dir, sizeof(h->dir), "%s", optarg);
			h->dir_given = true;
			break;
		case O_NOW:
			if (hm_parse_time(optarg, &h->base_now) < 0)
				bad_usage("--now %s: expected ISO 8601 (2027-02-28T23:59:00Z) or "
					  "@EPOCH", optarg);
			now_set = true;
			break;
		case O_TICK:
			if (hm_parse_duration(optarg, &h->base_tick) < 0)
				bad_usage("--tick %s: expected a duration such as 0, 1us or 1ms",
					  optarg);
			h->base_tick_set = true;
			break;
		default:
			exit(cli_bad_option(PREFIX, "+h", argv));
		}
	}
	if (optind >= argc)
		bad_usage("no command given (hermetic hunt [OPTIONS] -- CMD [ARGS...])");
	h->argv = argv + optind;
	if (argc - optind > HUNT_MAX_ARGS)
		bad_usage("CMD has %d arguments; a hunt takes at most %d", argc - optind,
			  HUNT_MAX_ARGS);
	if (!now_set) {
		enum now_source src;

		if (now_default(&h->base_now, &src, why, sizeof(why)) < 0)
			bad_usage("%s", why);
	}
}

static void make_dir(struct hunt *h)
{
	const char *tmp = getenv("TMPDIR");

	if (h->dir_given) {
		char abs[PATH_MAX];

		if (mkdir(h->dir, 0755) < 0 && errno != EEXIST)
			die(EXIT_USAGE, "--keep %s: %s", h->dir, strerror(errno));
		/* absolute: the paths in the report outlive this directory */
		if (!realpath(h->dir, abs) || strlen(abs) >= sizeof(h->dir))
			die(EXIT_USAGE, "--keep %s: %s", h->dir,
			    strerror(errno ? errno : ENAMETOOLONG));
		memcpy(h->dir, abs, strlen(abs) + 1);
		return;
	}
	snprintf(h->dir, sizeof(h->dir), "%s/hermetic-hunt.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(h->dir))
		die(EXIT_INTERNAL, "Failed to create '%s': %s", h->dir, strerror(errno));
}

static int finish(struct hunt *h)
{
	if (h->json)
		hunt_print_json(h, stdout);
	else
		hunt_print(h, stdout);
	fflush(stdout);
	if (h->report_path) {
		int r = hunt_report_write(h, h->report_path);

		if (r < 0) {
			fprintf(stderr, "hermetic hunt: Failed to write '%s': %s\n", h->report_path,
				strerror(-r));
			return 73;
		}
	}
	return h->failures ? 1 : 0;
}

static int merge(int argc, char **argv)
{
	struct hunt h = { .vary = HUNT_AX_DEFAULT };
	char why[8192];

	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		usage(stdout);
		return 0;
	}
	if (argc >= 2 && !strcmp(argv[1], "--json")) {
		h.json = true;
		argc--;
		argv++;
	}
	if (argc < 2)
		bad_usage("merge: no report given (hermetic hunt merge [--json] A.jsonl "
			  "B.jsonl ...)");
	for (int i = 1; i < argc; i++) {
		int r = hunt_report_read(&h, argv[i], why, sizeof(why));

		if (r < 0) {
			fprintf(stderr, "hermetic hunt merge: %s\n", why);
			return r == -ENOENT || r == -EACCES ? EXIT_NOINPUT : EXIT_DATAERR;
		}
	}
	hunt_merge_finish(&h);
	return finish(&h);
}

int cmd_hunt(int argc, char **argv)
{
	struct hunt h = {};
	char **before;
	const struct hunt_try *err = NULL;
	size_t n = 0;
	ssize_t len;
	int code;

	if (argc >= 2 && !strcmp(argv[1], "merge"))
		return merge(argc - 1, argv + 1);
	parse(&h, argc, argv);
	len = readlink("/proc/self/exe", h.self, sizeof(h.self) - 1);
	if (len <= 0)
		die(EXIT_INTERNAL, "Failed to read /proc/self/exe: %s", strerror(errno));
	h.self[len] = 0;
	hunt_axes_init(&h);
	make_dir(&h);
	h.tries = calloc(h.runs / h.shard_n + 1, sizeof(*h.tries));
	if (!h.tries)
		die(EXIT_INTERNAL, "out of memory");
	for (uint64_t i = h.shard_i - 1; i < h.runs; i += h.shard_n) {
		h.tries[n].index = i;
		h.tries[n].keep = true;
		hunt_draw(&h, i, &h.tries[n++].s);
	}
	h.n_tries = n;
	before = hunt_cwd_names();
	h.started_ns = hm_now_ns();
	hunt_run_batch(&h, h.tries, n, true, true);
	h.elapsed_ns = hm_now_ns() - h.started_ns;
	for (size_t i = 0; i < n && !err; i++)
		if (h.tries[i].done && h.tries[i].r.kind == HUNT_ERROR)
			err = &h.tries[i];
	if (err) {
		fprintf(stderr, "hermetic hunt: a try could not run, so the hunt stops: %s\n",
			err->r.error);
		hunt_cwd_new(&h, before);
		if (!h.dir_given) /* (kept when earlier tries failed and left files) */
			(void)rmdir(h.dir);
		return err->r.status ? err->r.status : EXIT_INTERNAL;
	}
	hunt_cwd_new(&h, before);
	hunt_group(&h);
	hunt_analyse(&h);
	code = finish(&h);
	if (!h.failures && !h.dir_given)
		(void)rmdir(h.dir);
	else if (h.failures && !h.json)
		fprintf(stderr, "hermetic hunt: outputs and journals of failing tries kept in %s\n",
			h.dir);
	return code;
}
