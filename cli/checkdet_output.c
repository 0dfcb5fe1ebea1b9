// SPDX-License-Identifier: MIT
/*
 * check-determinism's stdout comparison and its verdict (checkdet.h).
 *
 * Stdout is compared line by line. A line that differs only in numbers
 * that are the runs' own process or thread ids, each naming the same
 * process of its run (checkdet_pids.c), is no difference: the runs are
 * identical all the same, and a note names those lines and processes.
 */
#include <inttypes.h>
#include <json-c/json.h>
#include "util.h"
#include "cli.h"
#include "checkdet.h"
#include "journals.h"

/* Keep line n (compared with run k) for the note, once. */
static void note_line(struct checkdet *c, unsigned long n, unsigned k, const char *names)
{
	size_t i = 0;

	while (i < c->n_pidlines && c->pidlines[i].line < n)
		i++;
	if (i < c->n_pidlines && c->pidlines[i].line == n)
		return; /* another run's line: already noted */
	c->pidlines_total++;
	if (c->n_pidlines == CD_PIDLINES_MAX) {
		if (i == CD_PIDLINES_MAX)
			return; /* the first lines are kept */
		c->n_pidlines--;
	}
	memmove(&c->pidlines[i + 1], &c->pidlines[i], (c->n_pidlines - i) * sizeof(c->pidlines[0]));
	c->pidlines[i].line = n;
	c->pidlines[i].other = k;
	snprintf(c->pidlines[i].names, sizeof(c->pidlines[i].names), "%s", names);
	c->n_pidlines++;
}

/* Do run 1's line a and run k's line b differ only in the runs' ids? */
static bool pid_line(struct checkdet *c, unsigned k, const char *a, const char *b, char *names,
		     size_t size)
{
	int r = 0;

	if (!c->r[0].pids)
		r = cd_pids_make(c->r[0].j, &c->r[0].pids);
	if (!r && !c->r[k].pids)
		r = cd_pids_make(c->r[k].j, &c->r[k].pids);
	if (r < 0)
		die(EXIT_INTERNAL, "Failed to name the runs' processes: %s", strerror(-r));
	return cd_pids_same_line(c->r[0].pids, a, c->r[k].pids, b, names, size) == 1;
}

int cd_diff_stdout(struct checkdet *c, unsigned k, struct cd_diff *d)
{
	_cleanup_fclose_ FILE *fa = fopen(c->r[0].out, "re");
	_cleanup_fclose_ FILE *fb = fopen(c->r[k].out, "re");
	_cleanup_free_ char *la = NULL, *lb = NULL;
	size_t ca = 0, cb = 0;
	char names[256];

	if (!fa || !fb)
		return 0;
	for (unsigned long n = 1;; n++) {
		ssize_t na = getline(&la, &ca, fa), nb = getline(&lb, &cb, fb);

		if (na < 0 && nb < 0)
			return 0;
		if (na >= 0 && nb >= 0 && na == nb && !memcmp(la, lb, (size_t)na))
			continue;
		if (na > 0 && la[na - 1] == '\n')
			la[--na] = 0;
		if (nb > 0 && lb[nb - 1] == '\n')
			lb[--nb] = 0;
		/* a NUL inside a line: compared as bytes above, not as ids */
		if (na >= 0 && nb >= 0 && strlen(la) == (size_t)na && strlen(lb) == (size_t)nb &&
		    pid_line(c, k, la, lb, names, sizeof(names))) {
			note_line(c, n, k, names);
			continue;
		}
		d->line = n;
		snprintf(d->lines[0], sizeof(d->lines[0]), "%s", na < 0 ? "(none: the output ended)" : la);
		snprintf(d->lines[1], sizeof(d->lines[1]), "%s", nb < 0 ? "(none: the output ended)" : lb);
		return 1;
	}
}

static void print_pidlines(const struct checkdet *c)
{
	size_t shown = c->n_pidlines < CD_PIDLINES_TEXT ? c->n_pidlines : CD_PIDLINES_TEXT;

	if (!c->pidlines_total)
		return;
	printf("  note: %lu stdout line%s differed only in the runs' own process ids, each naming\n"
	       "  the same process of its run ([~K]: a process without values, by its fork):\n",
	       c->pidlines_total, c->pidlines_total == 1 ? "" : "s");
	for (size_t i = 0; i < shown; i++)
		printf("    line %lu: %s\n", c->pidlines[i].line, c->pidlines[i].names);
	if (c->pidlines_total > shown)
		printf("    and %lu more\n", c->pidlines_total - shown);
}

void cd_print_text(const struct checkdet *c, int found, const struct cd_diff *d)
{
	const struct jdiff *v = &d->v;
	char buf[64];

	if (!found) {
		printf("identical: %u runs, %" PRIu64 " values, virtual duration %s\n", c->runs,
		       jdiff_values(c->r[0].j), jl_fmt_ns(jdiff_virtual_ns(c->r[0].j), buf, sizeof(buf)));
		print_pidlines(c);
		return;
	}
	printf("differed: run 1 and run %u\n", d->other + 1);
	if (d->value) {
		printf("  first value that differed: %s%s%sprocess %s (%s), thread %" PRIu32, v->scope[0] ? "in scope " : "",
		       v->scope, v->scope[0] ? ", " : "", v->lineage, v->exe, v->thread);
		if (v->index)
			printf(", call #%" PRIu64 ", %s", v->index, v->kind);
		else
			printf(", its %s", v->kind);
		printf("\n    run 1: %s\n    run %u: %s\n", v->saw[0], d->other + 1, v->saw[1]);
	}
	if (d->status)
		printf("  exit status: run 1 %d, run %u %d\n", c->r[0].status, d->other + 1,
		       c->r[d->other].status);
	if (d->output)
		printf("  stdout line %lu:\n    run 1: %s\n    run %u: %s\n", d->line, d->lines[0],
		       d->other + 1, d->lines[1]);
	if (!d->value)
		printf("  every journaled value was identical: what differed came from outside\n"
		       "  them (an id of no process of the run, the order in which processes\n"
		       "  wrote, a file's contents, ...)\n");
	print_pidlines(c);
	printf("  journals and outputs kept in %s\n", c->dir.path);
}

/* [{"line": N, "run": K, "processes": ["1.2", "[~1]"]}, ...] */
static json_object *pidlines_json(const struct checkdet *c)
{
	json_object *a = json_object_new_array();

	for (size_t i = 0; i < c->n_pidlines; i++) {
		const struct cd_pidline *l = &c->pidlines[i];
		json_object *o = json_object_new_object(), *names = json_object_new_array();
		char buf[sizeof(l->names)], *save = NULL;

		snprintf(buf, sizeof(buf), "%s", l->names);
		for (char *s = strtok_r(buf, ",", &save); s; s = strtok_r(NULL, ",", &save))
			json_object_array_add(names, json_object_new_string(s + (*s == ' ')));
		json_object_object_add(o, "line", json_object_new_uint64(l->line));
		json_object_object_add(o, "run", json_object_new_int((int)l->other + 1));
		json_object_object_add(o, "processes", names);
		json_object_array_add(a, o);
	}
	return a;
}

void cd_print_json(const struct checkdet *c, int found, const struct cd_diff *d)
{
	json_object *o = json_object_new_object(), *x = NULL, *y;
	char now[64];

	json_object_object_add(o, "identical", json_object_new_boolean(!found));
	json_object_object_add(o, "runs", json_object_new_int((int)c->runs));
	json_object_object_add(o, "seed", json_object_new_uint64(c->seed));
	json_object_object_add(o, "now", json_object_new_string(hm_format_time(c->now_ns, now, sizeof(now))));
	json_object_object_add(o, "values", json_object_new_uint64(jdiff_values(c->r[0].j)));
	json_object_object_add(o, "virtual_ns", json_object_new_uint64(jdiff_virtual_ns(c->r[0].j)));
	json_object_object_add(o, "pid_lines", pidlines_json(c));
	json_object_object_add(o, "pid_lines_total", json_object_new_uint64(c->pidlines_total));
	if (found) {
		x = json_object_new_object();
		json_object_object_add(x, "run", json_object_new_int((int)d->other + 1));
		y = json_object_new_array();
		json_object_array_add(y, json_object_new_int(c->r[0].status));
		json_object_array_add(y, json_object_new_int(c->r[d->other].status));
		json_object_object_add(x, "exit_status", d->status ? y : (json_object_put(y), NULL));
		y = NULL;
		if (d->value) {
			y = json_object_new_object();
			json_object_object_add(y, "scope", json_object_new_string(d->v.scope));
			json_object_object_add(y, "process", json_object_new_string(d->v.lineage));
			json_object_object_add(y, "executable", json_object_new_string(d->v.exe));
			json_object_object_add(y, "thread", json_object_new_uint64(d->v.thread));
			json_object_object_add(y, "call", json_object_new_uint64(d->v.index));
			json_object_object_add(y, "kind", json_object_new_string(d->v.kind));
			json_object_object_add(y, "first", json_object_new_string(d->v.saw[0]));
			json_object_object_add(y, "other", json_object_new_string(d->v.saw[1]));
		}
		json_object_object_add(x, "value", y);
		y = NULL;
		if (d->output) {
			y = json_object_new_object();
			json_object_object_add(y, "line", json_object_new_uint64(d->line));
			json_object_object_add(y, "first", json_object_new_string(d->lines[0]));
			json_object_object_add(y, "other", json_object_new_string(d->lines[1]));
		}
		json_object_object_add(x, "stdout", y);
		json_object_object_add(x, "kept", json_object_new_string(c->dir.path));
	}
	json_object_object_add(o, "differed", x);
	printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
}
