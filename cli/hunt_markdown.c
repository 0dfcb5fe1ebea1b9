// SPDX-License-Identifier: MIT
/*
 * hermetic report --markdown HUNT.jsonl...: the reports of a hunt (or of its
 * shards, merged as 'hunt merge' does) as Markdown for a CI job's page: a
 * heading with the runs and failures, then a row per distinct failure with
 * its rate, cause, verification, reproduction and journal.
 */
#include <inttypes.h>
#include <json-c/json.h>
#include "util.h"
#include "config.h"
#include "cli.h"
#include "hunt.h"

bool hunt_is_report(const char *path)
{
	_cleanup_fclose_ FILE *f = strcmp(path, "-") ? fopen(path, "re") : NULL;
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;
	json_object *o, *v;
	bool yes;

	if (!f || getline(&line, &cap, f) < 0)
		return false;
	o = json_tokener_parse(line);
	yes = o && json_object_object_get_ex(o, "hunt", &v) && v &&
	      !strcmp(json_object_get_string(v), "header");
	if (o)
		json_object_put(o);
	return yes;
}

static void row(const struct hunt *h, const struct hunt_group *g)
{
	char buf[8192], cmd[8192] = "";
	double lo, hi;

	hunt_wilson(g->count, h->runs_done, &lo, &hi);
	printf("| ");
	report_md_code(g->key);
	printf(" | %" PRIu64 " of %" PRIu64 ": %.1f%% (%.1f%%-%.1f%%) | ", g->count, h->runs_done,
	       100.0 * g->count / h->runs_done, lo * 100, hi * 100);
	report_md_text(g->c.done ? g->c.cause : "not analysed");
	if (g->c.done)
		printf(" | %u of %u | ", g->c.verified, g->c.verify_runs);
	else
		printf(" | - | ");
	hunt_repro(h, &g->first->s, buf, sizeof(buf));
	report_md_code(buf);
	printf(" | ");
	if (g->first->r.journal[0]) {
		char q[4096], line[16384];

		for (char **a = h->argv; *a; a++) {
			hunt_quote(*a, q, sizeof(q));
			snprintf(cmd + strlen(cmd), sizeof(cmd) - strlen(cmd), " %s", q);
		}
		hunt_quote(g->first->r.journal, q, sizeof(q));
		snprintf(line, sizeof(line), "hermetic replay %s --%s", q, cmd);
		report_md_code(line);
	} else {
		printf("-");
	}
	printf(" |\n");
}

int hunt_markdown(int n, char **paths)
{
	struct hunt h = { .vary = HUNT_AX_DEFAULT };
	char why[8192], axes[64], cmd[8192] = "";
	double lo, hi;

	for (int i = 0; i < n; i++) {
		int r = hunt_report_read(&h, paths[i], why, sizeof(why));

		if (r < 0) {
			fprintf(stderr, "hermetic report: %s\n", why);
			return r == -ENOENT || r == -EACCES ? EXIT_NOINPUT : EXIT_DATAERR;
		}
	}
	hunt_merge_finish(&h);
	hunt_axes_name(h.vary, axes, sizeof(axes));
	for (char **a = h.argv; *a; a++) {
		char q[4096];

		hunt_quote(*a, q, sizeof(q));
		snprintf(cmd + strlen(cmd), sizeof(cmd) - strlen(cmd), "%s%s",
			 a == h.argv ? "" : " ", q);
	}
	if (h.failures)
		printf("### hermetic hunt: %zu distinct failure%s in %" PRIu64 " of %" PRIu64
		       " runs\n\n",
		       h.n_groups, h.n_groups == 1 ? "" : "s", h.failures, h.runs_done);
	else
		printf("### hermetic hunt: no failure in %" PRIu64 " runs\n\n", h.runs_done);
	report_md_code(cmd);
	printf(" under axes %s, hunt seed %" PRIu64 ", in %.1f s\n\n", axes, h.hunt_seed,
	       h.elapsed_ns / 1e9);
	if (!h.failures) {
		hunt_wilson(0, h.runs_done, &lo, &hi);
		printf("No failure in %" PRIu64 " runs: the failure rate is below %.1f%% "
		       "(95%% upper bound).\n",
		       h.runs_done, hi * 100);
		return 0;
	}
	printf("| Failure | Rate (95%% interval) | Cause | Verified | Reproduce | Journal |\n"
	       "|---|---|---|---|---|---|\n");
	for (size_t i = 0; i < h.n_groups; i++)
		row(&h, &h.groups[i]);
	return 0;
}
