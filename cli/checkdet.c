// SPDX-License-Identifier: MIT
/*
 * hermetic check-determinism [-n N] [--json] [ENROLL OPTIONS] -- CMD
 *
 * Runs CMD N times as 'hermetic enroll --seed S --now T --record DIR
 * --keep-passing --report FILE [ENROLL OPTIONS] -- CMD' (a child of this
 * very binary, cli_spawn_self), one seed and one start pinned for every
 * run, each run's journal, stdout and stderr in a private temporary
 * directory. Then compares run 1 with each other run: the journals value by
 * value (journal_diff.c), the exit statuses, stdout line by line
 * (checkdet_output.c: a line that differs only in the runs' own process
 * ids, each naming the same process of its run, is no difference); and
 * says "identical" or names the first value that differed. The directory is
 * removed when the runs agree and kept (its path printed) when they do not:
 * its journals are what 'hermetic journals show' explains.
 */
#include <getopt.h>
#include <inttypes.h>
#include <json-c/json.h>
#include "util.h"
#include "cli.h"
#include "enroll.h"
#include "checkdet.h"
#include "journals.h"
#include "spawn_self.h"
#include "tmpdir.h"
#include "run.h"

#define PREFIX "hermetic check-determinism"
#define MAX_RUNS 1000
#define MAX_ARGS 2048

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: " PREFIX " [-n N] [--json] [ENROLL OPTIONS] -- COMMAND [ARG...]\n"
		"\n"
		"Run COMMAND N times under one seed and one start, each run recorded, and\n"
		"compare the runs' journals value by value, their exit statuses and stdout.\n"
		"Prints 'identical: N runs, V values, virtual duration D', or the first value\n"
		"that differed: which process (lineage key and executable) and thread, which\n"
		"call (clock reading, entropy bytes, wait outcome) and its number in that\n"
		"thread's stream, and what each run saw. The runs' journals and outputs are\n"
		"kept in a temporary directory when they differ (its path is printed).\n"
		"A stdout line that differs only in the runs' own process and thread ids,\n"
		"each naming the same process of its run (as the journals name them), is\n"
		"no difference: a note names those lines.\n"
		"\n"
		"Options:\n"
		"  -n, --runs N     how many runs (default 3, at least 2)\n"
		"      --json       one JSON document on stdout instead of text\n"
		"  -h, --help       show this help\n"
		"ENROLL OPTIONS are hermetic enroll's ('hermetic enroll --help'): --seed N,\n"
		"--now TIME, --tick, ... but not its recording and report options (record,\n"
		"keep-passing, journal-per-scope, report): this command sets those. Without\n"
		"--seed a seed is drawn once and printed; --now is pinned to one start for\n"
		"every run (enroll's default start without it, resolved once).\n"
		"\n"
		"Exit status: 0 identical, 1 the runs differed, 2 bad usage; when a run\n"
		"could not run, hermetic enroll's status (69 no daemon, 126 COMMAND not\n"
		"executable, 127 COMMAND not found, 70 internal error).\n");
}

static int bad(const char *fmt, const char *arg)
{
	fprintf(stderr, PREFIX ": ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry '" PREFIX " --help'.\n");
	return EXIT_USAGE;
}

/* Our options before "--"; everything else is enroll's. 0, or an exit code. */
static int parse(struct checkdet *c, int argc, char **argv)
{
	int i;

	c->runs = 3;
	c->pass = calloc((size_t)argc + 1, sizeof(char *));
	if (!c->pass)
		die(EXIT_INTERNAL, "out of memory");
	for (i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		const char *v = NULL;
		char *end;

		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			exit(0);
		} else if (!strcmp(argv[i], "--json")) {
			c->json = true;
			continue;
		} else if (!strcmp(argv[i], "-n") || !strcmp(argv[i], "--runs")) {
			if (++i == argc)
				return bad("option needs a value: '%s'", argv[i - 1]);
			v = argv[i];
		} else if (!strncmp(argv[i], "-n", 2) && strncmp(argv[i], "--", 2)) {
			v = argv[i] + 2;
		} else if (!strncmp(argv[i], "--runs=", 7)) {
			v = argv[i] + 7;
		} else {
			c->pass[c->n_pass++] = argv[i];
			continue;
		}
		errno = 0;
		unsigned long n = strtoul(v, &end, 10);
		if (!*v || *end || errno || *v == '-' || n < 2 || n > MAX_RUNS)
			return bad("-n %s: expected a number of runs from 2 to 1000", v);
		c->runs = (unsigned)n;
	}
	if (i >= argc - 1)
		return bad("%s", i >= argc ? "no command given: put it after '--'" : "no command given after '--'");
	c->cmd = argv + i + 1;
	return 0;
}

/* Enroll's own parser checks its options and resolves the seed and the
 * start once, so that every run gets the same. */
static int resolve(struct checkdet *c)
{
	size_t n = 0, max = c->n_pass + 2;
	struct enroll *e = calloc(1, sizeof(*e));
	struct cli_fail f;
	char **args;
	int code = 0;

	for (char **a = c->cmd; *a; a++)
		max++;
	args = calloc(max + 1, sizeof(char *));
	if (!e || !args)
		die(EXIT_INTERNAL, "out of memory");
	args[n++] = "check-determinism";
	for (size_t i = 0; i < c->n_pass; i++)
		args[n++] = c->pass[i];
	args[n++] = "--";
	for (char **a = c->cmd; *a; a++)
		args[n++] = *a;
	if (enroll_parse(e, (int)n, args, PREFIX, &f) < 0)
		cli_fail_exit(&f); /* (no --report here) */
	if (e->recording.on || e->report_out.path || e->recording.keep_passing || e->recording.per_scope)
		code = bad("%s", "--record, --keep-passing, --journal-per-scope and --report are this "
				 "command's own: each run is recorded to a directory of its own");
	c->seed = e->cfg.seed;
	c->seed_drawn = !e->cfg.seed_set;
	c->now_ns = e->cfg.now_ns;
	/* e was only parsed, never run: nothing but its options to free */
	hm_boundary_free(&e->bnd.opt);
	free(e);
	free(args);
	return code;
}

/* One run into c->r[i]. 0, or the exit code that ends the check. */
static int run_one(struct checkdet *c, unsigned i)
{
	struct cd_run *r = &c->r[i];
	char seed[32], now[64], jerr[512];
	char *args[MAX_ARGS];
	size_t n = 0;
	json_object *o, *v;
	const char *file = NULL;
	bool timed_out;
	int st, code = 0;

	snprintf(r->dir, sizeof(r->dir), "%s/run-%u", c->dir.path, i + 1);
	snprintf(r->out, sizeof(r->out), "%s/run-%u.stdout", c->dir.path, i + 1);
	snprintf(r->err, sizeof(r->err), "%s/run-%u.stderr", c->dir.path, i + 1);
	snprintf(r->report, sizeof(r->report), "%s/run-%u.report", c->dir.path, i + 1);
	snprintf(seed, sizeof(seed), "%" PRIu64, c->seed);
	hm_format_time(c->now_ns, now, sizeof(now));
	const char *fixed[] = { "hermetic", "enroll", "--seed", seed, "--now", now, "--record",
				r->dir, "--keep-passing", "--report", r->report };
	for (size_t k = 0; k < ARRAY_SIZE(fixed); k++)
		push_arg(args, &n, MAX_ARGS, (char *)fixed[k]);
	for (size_t k = 0; k < c->n_pass; k++)
		push_arg(args, &n, MAX_ARGS, c->pass[k]);
	push_arg(args, &n, MAX_ARGS, "--");
	for (char **a = c->cmd; *a; a++)
		push_arg(args, &n, MAX_ARGS, *a);
	args[n] = NULL;
	st = cli_spawn_self(args, r->out, r->err, 0, &timed_out);
	if (st < 0)
		die(EXIT_INTERNAL, "Failed to run hermetic enroll: %s", strerror(-st));
	r->status = run_status_code(st);
	o = json_object_from_file(r->report);
	if (o && json_object_object_get_ex(o, "journal", &v) && v &&
	    json_object_object_get_ex(v, "file", &v) && v)
		file = json_object_get_string(v);
	if (!o || (json_object_object_get_ex(o, "hermetic_error", &v) && v) || !file) {
		/* hermetic's own failure (no daemon, CMD not found...): its words */
		_cleanup_fclose_ FILE *f = fopen(r->err, "re");
		char line[1024];

		while (f && fgets(line, sizeof(line), f))
			fputs(line, stderr);
		fprintf(stderr, PREFIX ": run %u of %u could not be checked (hermetic enroll exited %d)\n",
			i + 1, c->runs, r->status);
		code = r->status ? r->status : EXIT_INTERNAL;
	} else if (hm_journal_read_file(file, 0, &r->j, jerr, sizeof(jerr)) < 0) {
		fprintf(stderr, PREFIX ": run %u's journal %s: %s\n", i + 1, file, jerr);
		code = EXIT_INTERNAL;
	}
	if (o)
		json_object_put(o);
	return code;
}

/* Run 1 against each other run: the first that differs into d. 0 (all
 * agree), 1, or -EBADMSG. */
static int compare(struct checkdet *c, struct cd_diff *d)
{
	for (unsigned k = 1; k < c->runs; k++) {
		int r;

		memset(d, 0, sizeof(*d));
		r = jdiff_compare(c->r[0].j, c->r[k].j, &d->v);
		if (r < 0)
			return r;
		d->other = k;
		d->value = r == 1;
		d->status = c->r[0].status != c->r[k].status;
		d->output = cd_diff_stdout(c, k, d) == 1;
		if (d->value || d->status || d->output)
			return 1;
	}
	return 0;
}

int cmd_check_determinism(int argc, char **argv)
{
	struct checkdet c = { 0 };
	struct eng_error err;
	struct cd_diff d;
	char now[64];
	int code, found;

	code = parse(&c, argc, argv);
	if (!code)
		code = resolve(&c);
	if (code) {
		free(c.pass);
		return code;
	}
	c.r = calloc(c.runs, sizeof(*c.r));
	if (!c.r)
		die(EXIT_INTERNAL, "out of memory");
	if (run_tmpdir_make(&c.dir, "hermetic-checkdet", "a directory for the runs", &err) < 0)
		die(EXIT_INTERNAL, "%s", err.msg);
	fprintf(stderr, PREFIX ": %u runs, seed %" PRIu64 "%s, start %s\n", c.runs, c.seed,
		c.seed_drawn ? " (drawn)" : "", hm_format_time(c.now_ns, now, sizeof(now)));
	for (unsigned i = 0; i < c.runs && !code; i++)
		code = run_one(&c, i);
	if (code)
		goto cleanup;
	found = compare(&c, &d);
	if (found < 0) {
		fprintf(stderr, PREFIX ": a journal's stream does not decode\n");
		code = EXIT_INTERNAL;
		goto cleanup;
	}
	c.dir.keep = found == 1;
	if (c.json)
		cd_print_json(&c, found, &d);
	else
		cd_print_text(&c, found, &d);
	code = found ? 1 : 0;
cleanup:
	for (unsigned i = 0; i < c.runs; i++) {
		if (c.r[i].j)
			hm_journal_free(c.r[i].j);
		cd_pids_free(c.r[i].pids);
	}
	free(c.r);
	free(c.pass);
	run_tmpdir_remove(&c.dir);
	return code;
}
