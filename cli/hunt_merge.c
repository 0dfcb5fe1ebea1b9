// SPDX-License-Identifier: MIT
/*
 * hermetic hunt merge A.jsonl B.jsonl ...: the reports of the shards of one
 * hunt (hunt --shard I/N --report FILE) read back into one set of tries,
 * which print the summary one hunt over the same seeds prints. Reports of
 * another command or other hunt settings are refused: their seeds are not
 * slices of one seed space.
 */
#include <inttypes.h>
#include <json-c/json.h>
#include "util.h"
#include "config.h"
#include "cli.h"
#include "hunt.h"

static const char *get_str(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) && v ? json_object_get_string(v) : NULL;
}

static int64_t get_int(json_object *o, const char *key, int64_t def)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) && v ? json_object_get_int64(v) : def;
}

static int header(struct hunt *h, const char *path, json_object *o, char *why, size_t size)
{
	json_object *cmd = NULL;
	const char *axes = get_str(o, "vary");
	const char *s = json_object_to_json_string_ext(
		json_object_object_get_ex(o, "command", &cmd) ? cmd : NULL, JSON_C_TO_STRING_PLAIN);
	unsigned vary = 0;
	char w[256];

	if (!cmd || !json_object_is_type(cmd, json_type_array) || !json_object_array_length(cmd)) {
		snprintf(why, size, "%s: the header line names no command", path);
		return -EINVAL;
	}
	if (hunt_axes_parse(axes ? axes : "", &vary, w, sizeof(w)) < 0) {
		snprintf(why, size, "%s: %s", path, w);
		return -EINVAL;
	}
	if (h->command_json) {
		if (strcmp(h->command_json, s)) {
			snprintf(why, size,
				 "%s and %s are hunts of different commands (%s, %s): merge the "
				 "shards of one hunt",
				 h->first_report, path, h->command_json, s);
			return -EXDEV;
		}
		if ((uint64_t)get_int(o, "hunt_seed", 0) != h->hunt_seed || vary != h->vary) {
			snprintf(why, size,
				 "%s and %s are hunts with different --hunt-seed or --vary: their "
				 "seeds are not slices of one hunt",
				 h->first_report, path);
			return -EXDEV;
		}
		return 0;
	}
	h->command_json = strdup(s);
	h->first_report = path;
	h->argv = calloc(json_object_array_length(cmd) + 1, sizeof(char *));
	if (!h->command_json || !h->argv)
		return -ENOMEM;
	for (size_t i = 0; i < json_object_array_length(cmd); i++)
		if (!(h->argv[i] =
			      strdup(json_object_get_string(json_object_array_get_idx(cmd, i)))))
			return -ENOMEM;
	h->hunt_seed = (uint64_t)get_int(o, "hunt_seed", 0);
	h->vary = vary;
	h->runs = (uint64_t)get_int(o, "runs", 0);
	h->verify = (unsigned)get_int(o, "verify", 3);
	if (get_str(o, "now") && hm_parse_time(get_str(o, "now"), &h->base_now) < 0)
		h->base_now = 0;
	snprintf(h->zone, sizeof(h->zone), "%s", get_str(o, "zone") ? get_str(o, "zone") : "UTC");
	return 0;
}

static int run_line(struct hunt *h, json_object *o)
{
	uint64_t index = (uint64_t)get_int(o, "index", 0);
	struct hunt_try *t, *more;
	const char *kind = get_str(o, "kind");

	more = realloc(h->tries, (h->n_tries + 1) * sizeof(*more));
	if (!more)
		return -ENOMEM;
	h->tries = more;
	t = &h->tries[h->n_tries++];
	memset(t, 0, sizeof(*t));
	t->index = index;
	t->done = true;
	t->s.seed = (uint64_t)get_int(o, "seed", 0);
	t->s.now_ns = get_int(o, "now_ns", 0);
	t->s.tick_set = get_int(o, "tick_ns", -1) >= 0;
	t->s.tick_ns = t->s.tick_set ? (uint64_t)get_int(o, "tick_ns", 0) : 0;
	t->s.sched_set = get_int(o, "sched_seed", -1) >= 0;
	t->s.sched_seed = t->s.sched_set ? (uint64_t)get_int(o, "sched_seed", 0) : 0;
	t->s.sched_serial = get_str(o, "sched_mode") && !strcmp(get_str(o, "sched_mode"), "serial");
	t->r.kind = HUNT_ERROR;
	for (int k = HUNT_PASS; k <= HUNT_ERROR; k++)
		if (kind && !strcmp(kind, hunt_kind_name(k)))
			t->r.kind = k;
	t->r.status = (int)get_int(o, "exit_status", 0);
	t->r.duration_ms = (uint64_t)get_int(o, "duration_ms", 0);
	snprintf(t->r.last, sizeof(t->r.last), "%s",
		 get_str(o, "last_line") ? get_str(o, "last_line") : "");
	snprintf(t->r.journal, sizeof(t->r.journal), "%s",
		 get_str(o, "journal") ? get_str(o, "journal") : "");
	snprintf(t->r.output, sizeof(t->r.output), "%s",
		 get_str(o, "output") ? get_str(o, "output") : "");
	hunt_key(&t->r);
	return 0;
}

static int cause_line(struct hunt *h, json_object *o)
{
	struct hunt_cause_line *more = realloc(h->causes, (h->n_causes + 1) * sizeof(*more)), *l;
	json_object *fl, *tr;

	if (!more)
		return -ENOMEM;
	h->causes = more;
	l = &h->causes[h->n_causes++];
	memset(l, 0, sizeof(*l));
	snprintf(l->key, sizeof(l->key), "%s", get_str(o, "key") ? get_str(o, "key") : "");
	l->c.done = true;
	l->c.index = (uint64_t)get_int(o, "index", 0);
	l->c.verified = (unsigned)get_int(o, "verified", 0);
	l->c.verify_runs = (unsigned)get_int(o, "verify_runs", 0);
	l->c.state = (int)get_int(o, "state", -1);
	if (json_object_object_get_ex(o, "flips", &fl) &&
	    json_object_object_get_ex(o, "tried", &tr))
		for (size_t a = 0; a < HUNT_CAUSES; a++) {
			l->c.flips[a] =
				(unsigned)json_object_get_int(json_object_array_get_idx(fl, a));
			l->c.tried[a] =
				(unsigned)json_object_get_int(json_object_array_get_idx(tr, a));
		}
	snprintf(l->c.flipped_at, sizeof(l->c.flipped_at), "%s",
		 get_str(o, "flipped_at") ? get_str(o, "flipped_at") : "");
	snprintf(l->c.cause, sizeof(l->c.cause), "%s",
		 get_str(o, "cause") ? get_str(o, "cause") : "");
	return 0;
}

int hunt_report_read(struct hunt *h, const char *path, char *why, size_t size)
{
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	_cleanup_free_ char *line = NULL;
	size_t cap = 0, lineno = 0;
	int r = 0;

	if (!f) {
		r = -errno;
		snprintf(why, size, "Failed to open '%s': %s", path, strerror(-r));
		return r;
	}
	while (!r && getline(&line, &cap, f) >= 0) {
		json_object *o = json_tokener_parse(line);
		const char *what = o ? get_str(o, "hunt") : NULL;

		lineno++;
		if (!what) {
			snprintf(why, size, "%s:%zu: not a line of a hunt report", path, lineno);
			r = -EINVAL;
		} else if (lineno == 1 && strcmp(what, "header")) {
			snprintf(why, size, "%s: the first line is not a hunt report's header",
				 path);
			r = -EINVAL;
		} else if (!strcmp(what, "header")) {
			r = header(h, path, o, why, size);
		} else if (!strcmp(what, "run")) {
			r = run_line(h, o);
		} else if (!strcmp(what, "cause")) {
			r = cause_line(h, o);
		} else if (!strcmp(what, "end")) {
			uint64_t ms = (uint64_t)get_int(o, "elapsed_ms", 0);

			if (ms * 1000000 > h->elapsed_ns) /* shards run side by side */
				h->elapsed_ns = ms * 1000000;
		}
		if (o)
			json_object_put(o);
	}
	if (!r && !lineno) {
		snprintf(why, size, "%s: empty, not a hunt report", path);
		r = -EINVAL;
	}
	if (r == -ENOMEM)
		snprintf(why, size, "out of memory");
	return r;
}

static int by_index(const void *a, const void *b)
{
	const struct hunt_try *x = a, *y = b;

	return x->index < y->index ? -1 : x->index > y->index;
}

void hunt_merge_finish(struct hunt *h)
{
	size_t n = 0;

	if (h->n_tries)
		qsort(h->tries, h->n_tries, sizeof(*h->tries), by_index);
	/* A try in two reports (a shard given twice) counts once. */
	for (size_t i = 0; i < h->n_tries; i++)
		if (!n || h->tries[i].index != h->tries[n - 1].index)
			h->tries[n++] = h->tries[i];
	h->n_tries = n;
	hunt_group(h);
	for (size_t g = 0; g < h->n_groups; g++) {
		const struct hunt_cause_line *best = NULL;

		/* The analysis of the failure's first try: the one a single hunt made. */
		for (size_t i = 0; i < h->n_causes; i++)
			if (!strcmp(h->causes[i].key, h->groups[g].key) &&
			    (!best || h->causes[i].c.index < best->c.index))
				best = &h->causes[i];
		if (best)
			h->groups[g].c = best->c;
	}
}
