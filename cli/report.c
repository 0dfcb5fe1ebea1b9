// SPDX-License-Identifier: MIT
/*
 * hermetic report --markdown FILE...
 *
 * Turns the JSON Lines of 'enroll --report' into a Markdown summary for a
 * CI job's page (GitHub's $GITHUB_STEP_SUMMARY, a merge request note): a
 * heading that counts runs, failures and hermetic's own errors, then one
 * table row per run, failures first, with the exit status, seed, refused
 * connections, coverage, the journal and the command line that repeats
 * the run. Offline: it reads only FILE ('-' for standard input).
 */
#include <getopt.h>
#include <inttypes.h>
#include <json-c/json.h>
#include "util.h"
#include "cli.h"

#define DEFAULT_MAX_ROWS 50
#define MAX_RUNS 100000

struct runs {
	json_object **v;
	size_t n, cap;
	size_t failed, errors;
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: hermetic report --markdown [--max-rows N] FILE...\n\n"
		"Print the runs of 'enroll --report FILE' (JSON Lines; '-' reads standard input)\n"
		"as a Markdown table, failed runs and hermetic's own errors first (the reports\n"
		"of 'hunt --report FILE': the hunt's failures, causes and reproductions), e.g. for\n"
		"  hermetic report --markdown hermetic-report.jsonl >>\"$GITHUB_STEP_SUMMARY\"\n\n"
		"Options:\n"
		"  --markdown     the output format (the only one)\n"
		"  --max-rows N   at most N rows (default %d); the rest are counted\n"
		"  -h, --help     show this help\n\n"
		"Exit status: 0 (whether or not runs failed), 2 bad usage, 65 a line that is\n"
		"not a report document, 66 a FILE that cannot be read.\n",
		DEFAULT_MAX_ROWS);
}

static json_object *get(json_object *o, const char *key)
{
	json_object *v = NULL;

	return o && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static bool is_error(json_object *run)
{
	return get(run, "hermetic_error") != NULL;
}

static bool is_failed(json_object *run)
{
	return !json_object_get_boolean(get(run, "passed"));
}

static int read_file(struct runs *r, const char *path)
{
	_cleanup_fclose_ FILE *f = strcmp(path, "-") ? fopen(path, "re") : NULL;
	FILE *in = strcmp(path, "-") ? f : stdin;
	_cleanup_free_ char *line = NULL;
	size_t size = 0;
	ssize_t len;
	unsigned lineno = 0;

	if (!in)
		die(EXIT_NOINPUT, "Failed to open '%s': %s", path, strerror(errno));
	while ((len = getline(&line, &size, in)) >= 0) {
		json_object *o;

		lineno++;
		if (strspn(line, " \t\r\n") == (size_t)len)
			continue;
		o = json_tokener_parse(line);
		if (!o || !json_object_is_type(o, json_type_object) || !get(o, "command") ||
		    !get(o, "exit_status"))
			die(EXIT_DATAERR, "%s:%u: not a line of 'hermetic enroll --report'", path, lineno);
		if (r->n == MAX_RUNS)
			die(EXIT_DATAERR, "%s: more than %d runs", path, MAX_RUNS);
		if (r->n == r->cap) {
			size_t cap = r->cap ? r->cap * 2 : 64;
			json_object **v = realloc(r->v, cap * sizeof(*v));

			if (!v)
				die(EXIT_INTERNAL, "out of memory");
			r->v = v;
			r->cap = cap;
		}
		r->v[r->n++] = o;
		r->errors += is_error(o);
		r->failed += is_failed(o) && !is_error(o);
	}
	if (ferror(in))
		die(EXIT_NOINPUT, "Failed to read '%s': %s", path, strerror(errno));
	return 0;
}

/* Errors first, then failures, then passes; file order within each. */
static int rank(json_object *run)
{
	return is_error(run) ? 0 : is_failed(run) ? 1 : 2;
}

static int by_rank(const void *a, const void *b)
{
	json_object *x = *(json_object *const *)a, *y = *(json_object *const *)b;
	int d = rank(x) - rank(y);

	/* qsort is not stable: the index stored below keeps file order. */
	if (d)
		return d;
	return json_object_get_int(get(x, "__index")) - json_object_get_int(get(y, "__index"));
}

/* Text for a table cell: one line, pipes escaped, HTML specials as entities. */
void report_md_text(const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '|':
			fputs("\\|", stdout);
			break;
		case '<':
			fputs("&lt;", stdout);
			break;
		case '>':
			fputs("&gt;", stdout);
			break;
		case '&':
			fputs("&amp;", stdout);
			break;
		case '\n':
		case '\r':
		case '\t':
			putchar(' ');
			break;
		default:
			putchar(*s);
		}
	}
}

/* A code span in a table cell: fenced by one backtick more than the
 * longest run inside, pipes escaped (GitHub's tables split on them even
 * in code), newlines as spaces. */
void report_md_code(const char *s)
{
	size_t run = 0, longest = 0;

	if (!s || !*s) {
		fputs("-", stdout);
		return;
	}
	for (const char *c = s; *c; c++) {
		run = *c == '`' ? run + 1 : 0;
		if (run > longest)
			longest = run;
	}
	for (size_t i = 0; i <= longest; i++)
		putchar('`');
	putchar(' ');
	for (; *s; s++) {
		if (*s == '|')
			fputs("\\|", stdout);
		else if (*s == '\n' || *s == '\r' || *s == '\t')
			putchar(' ');
		else
			putchar(*s);
	}
	putchar(' ');
	for (size_t i = 0; i <= longest; i++)
		putchar('`');
}

static void put_command(json_object *cmd)
{
	char line[1024];
	size_t used = 0;
	size_t n = json_object_is_type(cmd, json_type_array) ? json_object_array_length(cmd) : 0;

	line[0] = 0;
	for (size_t i = 0; i < n && used < sizeof(line); i++)
		used += snprintf(line + used, sizeof(line) - used, "%s%s", i ? " " : "",
				 json_object_get_string(json_object_array_get_idx(cmd, i)));
	if (used >= sizeof(line))
		strcpy(line + sizeof(line) - 4, "...");
	report_md_code(line);
}

static void put_refusals(json_object *ref)
{
	json_object *first = get(ref, "first");
	size_t n = first ? json_object_array_length(first) : 0;

	if (!ref || !get(ref, "count")) {
		fputs("-", stdout);
		return;
	}
	printf("%" PRIu64, (uint64_t)json_object_get_uint64(get(ref, "count")));
	for (size_t i = 0; i < n && i < 3; i++) {
		json_object *f = json_object_array_get_idx(first, i);
		const char *proc = json_object_get_string(get(f, "process"));
		uint64_t count = json_object_get_uint64(get(f, "count"));

		fputs(i ? ", " : ": ", stdout);
		report_md_text(json_object_get_string(get(f, "destination")));
		if (proc) {
			fputs(" (", stdout);
			report_md_text(proc);
			putchar(')');
		}
		if (count > 1)
			printf(" x%" PRIu64, count);
	}
	if (n > 3)
		fputs(", ...", stdout);
}

/* "; 3 DNS lookups: pypi.org, ...", only when some were refused. */
static void put_dns(json_object *dns)
{
	json_object *names = get(dns, "names");
	uint64_t count = json_object_get_uint64(get(dns, "count"));
	size_t n = names ? json_object_array_length(names) : 0;

	if (!count)
		return;
	printf("; %" PRIu64 " DNS lookup%s", count, count == 1 ? "" : "s");
	for (size_t i = 0; i < n; i++) {
		fputs(i ? ", " : ": ", stdout);
		report_md_text(json_object_get_string(json_object_array_get_idx(names, i)));
	}
}

static void put_coverage(json_object *cov)
{
	if (!cov) {
		fputs("-", stdout);
		return;
	}
	if (json_object_get_boolean(get(cov, "complete"))) {
		fputs("complete", stdout);
		return;
	}
	printf("%" PRIu64 " without the shim, %" PRIu64 " syscalls bypassed",
	       (uint64_t)json_object_get_uint64(get(cov, "without_shim")),
	       (uint64_t)json_object_get_uint64(get(cov, "bypassed_syscalls")));
	if (json_object_get_uint64(get(cov, "dropped_events")))
		printf(", %" PRIu64 " events lost",
		       (uint64_t)json_object_get_uint64(get(cov, "dropped_events")));
}

static void put_row(json_object *run)
{
	json_object *err = get(run, "hermetic_error"), *journal = get(run, "journal");
	const char *file = json_object_get_string(get(journal, "file"));
	const char *id = json_object_get_string(get(journal, "id"));
	json_object *sig = get(run, "signal");

	fputs("| ", stdout);
	fputs(err ? "**hermetic error**" : is_failed(run) ? "**failed**" : "passed", stdout);
	fputs(" | ", stdout);
	put_command(get(run, "command"));
	printf(" | %d", json_object_get_int(get(run, "exit_status")));
	if (sig)
		printf(" (signal %d)", json_object_get_int(sig));
	fputs(" | ", stdout);
	if (err) {
		report_md_text(json_object_get_string(get(err, "reason")));
		fputs(": ", stdout);
		report_md_text(json_object_get_string(get(err, "message")));
	} else {
		put_refusals(get(run, "refusals"));
		put_dns(get(run, "dns_refusals"));
		fputs("; coverage ", stdout);
		put_coverage(get(run, "coverage"));
		if (get(run, "daemon_restart")) {
			fputs("; ", stdout);
			report_md_text(json_object_get_string(get(get(run, "daemon_restart"), "note")));
		}
	}
	fputs(" | ", stdout);
	if (file)
		report_md_code(file);
	else if (id)
		report_md_code(id);
	else
		fputs("-", stdout);
	fputs(" | ", stdout);
	report_md_code(json_object_get_string(get(run, "repro")));
	fputs(" |\n", stdout);
}

int cmd_report(int argc, char **argv)
{
	enum { O_MARKDOWN = 256, O_MAX_ROWS };
	static const struct option opts[] = {
		{ "markdown", no_argument, NULL, O_MARKDOWN },
		{ "max-rows", required_argument, NULL, O_MAX_ROWS },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	struct runs r = {};
	uint64_t max_rows = DEFAULT_MAX_ROWS;
	bool markdown = false;
	size_t shown;
	int c;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage(stdout);
			return 0;
		case O_MARKDOWN:
			markdown = true;
			break;
		case O_MAX_ROWS:
			if (hm_parse_u64(optarg, &max_rows) < 0 || max_rows == 0)
				goto bad;
			break;
		default:
		bad:
			fprintf(stderr, "hermetic report: %s '%s'\nTry 'hermetic report --help'.\n",
				c == O_MAX_ROWS ? "--max-rows needs a number above 0, not" : "unknown option",
				c == O_MAX_ROWS ? optarg : argv[optind - 1]);
			return EXIT_USAGE;
		}
	}
	if (!markdown || optind >= argc) {
		fprintf(stderr, "hermetic report: %s\nTry 'hermetic report --help'.\n",
			!markdown ? "say the format: --markdown" : "no report file given");
		return EXIT_USAGE;
	}
	/* The reports of a hunt (hunt --report): the hunt's summary. */
	if (hunt_is_report(argv[optind]))
		return hunt_markdown(argc - optind, argv + optind);
	for (int i = optind; i < argc; i++)
		read_file(&r, argv[i]);
	for (size_t i = 0; i < r.n; i++)
		json_object_object_add(r.v[i], "__index", json_object_new_int((int)i));
	if (r.n) /* (r.v is NULL when no file had a run) */
		qsort(r.v, r.n, sizeof(*r.v), by_rank);

	printf("### hermetic: %zu run%s, %zu failed", r.n, r.n == 1 ? "" : "s", r.failed);
	if (r.errors)
		printf(", %zu hermetic error%s", r.errors, r.errors == 1 ? "" : "s");
	printf("\n\n");
	if (!r.n) {
		printf("No runs reported.\n");
		goto out;
	}
	printf("| Result | Command | Exit | Refused connections, coverage | Journal | Repeat with |\n"
	       "|---|---|---|---|---|---|\n");
	shown = r.n < max_rows ? r.n : (size_t)max_rows;
	for (size_t i = 0; i < shown; i++)
		put_row(r.v[i]);
	if (shown < r.n)
		printf("\n%zu more run%s not shown (--max-rows %" PRIu64 ").\n", r.n - shown,
		       r.n - shown == 1 ? "" : "s", max_rows);
	if (r.failed || r.errors)
		printf("\nReplay a failed run's journal with `hermetic replay FILE`; the repeat line\n"
		       "runs it again with the same seed and start time.\n");
out:
	for (size_t i = 0; i < r.n; i++)
		json_object_put(r.v[i]);
	free(r.v);
	return fflush(stdout) == 0 ? 0 : EXIT_INTERNAL;
}
