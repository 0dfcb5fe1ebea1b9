// SPDX-License-Identifier: MIT
/*
 * hermetic hunt's reports: the summary (text or --json), the one-line
 * reproduction, and --report FILE.jsonl (a header line with the command
 * and settings, a line per run, a line per analysed failure, an end line),
 * which 'hunt merge' reads back into the same summary.
 */
#include <inttypes.h>
#include <json-c/json.h>
#include "util.h"
#include "config.h"
#include "cli.h"
#include "hunt.h"

static const char *const kinds[] = { "pass", "exit", "timeout", "output", "error" };

const char *hunt_kind_name(enum hunt_kind k)
{
	return (unsigned)k < ARRAY_SIZE(kinds) ? kinds[k] : "error";
}

const char *hunt_format_now(int64_t ns, char *buf, size_t size)
{
	return hm_format_time(ns, buf, size);
}

/* arg for a POSIX shell: as it is when plainly safe, else single-quoted. */
void hunt_quote(const char *a, char *buf, size_t size)
{
	size_t o = 0;

	if (*a &&
	    strspn(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%") ==
		    strlen(a)) {
		snprintf(buf, size, "%s", a);
		return;
	}
	if (size < 3) {
		buf[0] = 0;
		return;
	}
	buf[o++] = '\'';
	for (; *a && o + 5 < size; a++) {
		if (*a == '\'') {
			memcpy(buf + o, "'\\''", 4);
			o += 4;
		} else {
			buf[o++] = *a;
		}
	}
	buf[o++] = '\'';
	buf[o] = 0;
}

static void append_cmd(char **argv, char *buf, size_t size)
{
	size_t used = strlen(buf);

	for (char **a = argv; *a && used + 1 < size; a++) {
		char q[4096];

		hunt_quote(*a, q, sizeof(q));
		used += snprintf(buf + used, size - used, " %s", q);
	}
}

void hunt_repro(const struct hunt *h, const struct hunt_settings *s, char *buf, size_t size)
{
	char now[64], ident[96];

	hunt_format_now(s->now_ns, now, sizeof(now));
	snprintf(buf, size, "hermetic enroll --seed %" PRIu64 " --now %s", s->seed, now);
	if (s->tick_set)
		snprintf(buf + strlen(buf), size - strlen(buf), " --tick %" PRIu64 "ns",
			 s->tick_ns);
	hunt_identity_spec(s, ident, sizeof(ident));
	if (ident[0])
		snprintf(buf + strlen(buf), size - strlen(buf), " --identity %s", ident);
	if (s->sched_set)
		snprintf(buf + strlen(buf), size - strlen(buf), " --sched %s:%" PRIu64,
			 hunt_sched_mode(s), s->sched_seed);
	snprintf(buf + strlen(buf), size - strlen(buf), " --");
	append_cmd(h->argv, buf, size);
}

static double elapsed_s(const struct hunt *h)
{
	return h->elapsed_ns / 1e9;
}

void hunt_print(const struct hunt *h, FILE *f)
{
	char axes[64], cmd[8192] = "", line[8192];
	double lo, hi, secs = elapsed_s(h);

	append_cmd(h->argv, cmd, sizeof(cmd));
	hunt_axes_name(h->vary, axes, sizeof(axes));
	fprintf(f, "hermetic hunt:%s\n", cmd);
	fprintf(f,
		"  %" PRIu64 " runs (axes: %s; hunt seed %" PRIu64
		"%s%s) in %.1f s, %.0f runs/min\n",
		h->runs_done, axes, h->hunt_seed, h->stopped ? "; stopped by " : "",
		h->stopped ? h->stop_reason : "", secs, secs > 0 ? h->runs_done * 60 / secs : 0.0);
	if (!h->failures) {
		hunt_wilson(0, h->runs_done, &lo, &hi);
		fprintf(f,
			"no failure in %" PRIu64 " runs (axes: %s) in %.1f s; the failure rate is "
			"below %.1f%% (95%% upper bound)\n",
			h->runs_done, axes, secs, hi * 100);
		return;
	}
	fprintf(f, "%zu distinct failure%s in %" PRIu64 " of %" PRIu64 " runs\n", h->n_groups,
		h->n_groups == 1 ? "" : "s", h->failures, h->runs_done);
	for (size_t i = 0; i < h->n_groups; i++) {
		const struct hunt_group *g = &h->groups[i];
		const struct hunt_cause *c = &g->c;

		hunt_wilson(g->count, h->runs_done, &lo, &hi);
		fprintf(f, "\nfailure %zu: %s\n", i + 1, g->key);
		fprintf(f, "  last line: %s\n", g->last);
		fprintf(f,
			"  rate: %" PRIu64 " of %" PRIu64
			" runs, %.1f%% (95%% interval %.1f%%-%.1f%%)\n",
			g->count, h->runs_done, 100.0 * g->count / h->runs_done, lo * 100,
			hi * 100);
		fprintf(f, "  seeds:");
		for (unsigned k = 0; k < g->n_seeds; k++)
			fprintf(f, "%s %" PRIu64, k ? "," : "", g->seeds[k]);
		fprintf(f, "%s\n", g->count > g->n_seeds ? ", ..." : "");
		hunt_repro(h, &g->first->s, line, sizeof(line));
		fprintf(f, "  reproduce: %s\n", line);
		if (c->done) {
			fprintf(f, "  verified: %u of %u reruns fail the same way%s\n", c->verified,
				c->verify_runs,
				c->verified == c->verify_runs ? "" : " (NOT every rerun)");
			fprintf(f, "  cause: %s\n", c->cause);
		}
		if (g->first->r.journal[0]) {
			char q[4352], cmdline[8192] = "";

			hunt_quote(g->first->r.journal, q, sizeof(q));
			append_cmd(h->argv, cmdline, sizeof(cmdline));
			fprintf(f, "  journal: hermetic replay %s --%s\n", q, cmdline);
		}
		if (g->first->r.output[0])
			fprintf(f, "  output: %s\n", g->first->r.output);
	}
}

static json_object *str_or_null(const char *s)
{
	return s && *s ? json_object_new_string(s) : NULL;
}

static json_object *argv_json(char **argv)
{
	json_object *a = json_object_new_array();

	for (char **p = argv; *p; p++)
		json_object_array_add(a, json_object_new_string(*p));
	return a;
}

void hunt_print_json(const struct hunt *h, FILE *f)
{
	json_object *o = json_object_new_object(), *fs = json_object_new_array();
	char axes[64], line[8192];
	double lo, hi;

	json_object_object_add(o, "command", argv_json(h->argv));
	json_object_object_add(o, "hunt_seed", json_object_new_uint64(h->hunt_seed));
	json_object_object_add(o, "axes",
			       json_object_new_string(hunt_axes_name(h->vary, axes, sizeof(axes))));
	json_object_object_add(o, "runs", json_object_new_uint64(h->runs_done));
	json_object_object_add(o, "failures", json_object_new_uint64(h->failures));
	json_object_object_add(o, "elapsed_s", json_object_new_double(elapsed_s(h)));
	json_object_object_add(o, "stopped", str_or_null(h->stopped ? h->stop_reason : NULL));
	hunt_wilson(h->failures, h->runs_done, &lo, &hi);
	json_object_object_add(o, "rate_upper", json_object_new_double(hi));
	for (size_t i = 0; i < h->n_groups; i++) {
		const struct hunt_group *g = &h->groups[i];
		json_object *j = json_object_new_object(), *seeds = json_object_new_array();

		hunt_wilson(g->count, h->runs_done, &lo, &hi);
		json_object_object_add(j, "key", json_object_new_string(g->key));
		json_object_object_add(j, "kind", json_object_new_string(hunt_kind_name(g->kind)));
		json_object_object_add(j, "exit_status", json_object_new_int(g->status));
		json_object_object_add(j, "last_line", json_object_new_string(g->last));
		json_object_object_add(j, "count", json_object_new_uint64(g->count));
		json_object_object_add(j, "rate",
				       json_object_new_double((double)g->count / h->runs_done));
		json_object_object_add(j, "rate_low", json_object_new_double(lo));
		json_object_object_add(j, "rate_high", json_object_new_double(hi));
		for (unsigned k = 0; k < g->n_seeds; k++)
			json_object_array_add(seeds, json_object_new_uint64(g->seeds[k]));
		json_object_object_add(j, "seeds", seeds);
		hunt_repro(h, &g->first->s, line, sizeof(line));
		json_object_object_add(j, "reproduce", json_object_new_string(line));
		json_object_object_add(j, "verified",
				       g->c.done ? json_object_new_int((int)g->c.verified) : NULL);
		json_object_object_add(j, "verify_runs",
				       g->c.done ? json_object_new_int((int)g->c.verify_runs)
						 : NULL);
		json_object_object_add(j, "cause", str_or_null(g->c.done ? g->c.cause : NULL));
		json_object_object_add(j, "journal", str_or_null(g->first->r.journal));
		json_object_object_add(j, "output", str_or_null(g->first->r.output));
		json_object_array_add(fs, j);
	}
	json_object_object_add(o, "distinct_failures", fs);
	fprintf(f, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
}

static int put_line(FILE *f, json_object *o)
{
	int r = fprintf(f, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));

	json_object_put(o);
	return r < 0 ? -EIO : 0;
}

int hunt_report_write(const struct hunt *h, const char *path)
{
	_cleanup_fclose_ FILE *f = fopen(path, "we");
	char axes[64], now[64];
	json_object *o;
	int r = 0;

	if (!f)
		return -errno;
	o = json_object_new_object();
	json_object_object_add(o, "hunt", json_object_new_string("header"));
	json_object_object_add(o, "hermetic", json_object_new_string(HERMETIC_VERSION));
	json_object_object_add(o, "command", argv_json(h->argv));
	json_object_object_add(o, "hunt_seed", json_object_new_uint64(h->hunt_seed));
	json_object_object_add(o, "runs", json_object_new_uint64(h->runs));
	json_object_object_add(o, "shard_index", json_object_new_int((int)h->shard_i));
	json_object_object_add(o, "shard_count", json_object_new_int((int)h->shard_n));
	json_object_object_add(o, "vary",
			       json_object_new_string(hunt_axes_name(h->vary, axes, sizeof(axes))));
	json_object_object_add(
		o, "now", json_object_new_string(hunt_format_now(h->base_now, now, sizeof(now))));
	json_object_object_add(o, "tick_ns",
			       h->base_tick_set ? json_object_new_uint64(h->base_tick) : NULL);
	json_object_object_add(o, "fail_if", str_or_null(h->fail_if_src));
	json_object_object_add(o, "timeout_ms", json_object_new_uint64(h->timeout_ns / 1000000));
	json_object_object_add(o, "verify", json_object_new_int((int)h->verify));
	json_object_object_add(o, "zone", json_object_new_string(h->zone));
	r = put_line(f, o);
	for (size_t i = 0; i < h->n_tries && !r; i++) {
		const struct hunt_try *t = &h->tries[i];
		char ident[96];

		if (!t->done)
			continue;
		o = json_object_new_object();
		json_object_object_add(o, "hunt", json_object_new_string("run"));
		json_object_object_add(o, "index", json_object_new_uint64(t->index));
		json_object_object_add(o, "seed", json_object_new_uint64(t->s.seed));
		json_object_object_add(
			o, "now",
			json_object_new_string(hunt_format_now(t->s.now_ns, now, sizeof(now))));
		json_object_object_add(o, "now_ns", json_object_new_int64(t->s.now_ns));
		json_object_object_add(o, "tick_ns",
				       t->s.tick_set ? json_object_new_uint64(t->s.tick_ns) : NULL);
		hunt_identity_spec(&t->s, ident, sizeof(ident));
		json_object_object_add(o, "identity", str_or_null(ident));
		json_object_object_add(o, "sched_seed", t->s.sched_set
								? json_object_new_uint64(t->s.sched_seed)
								: NULL);
		json_object_object_add(o, "sched_mode",
				       t->s.sched_set ? json_object_new_string(hunt_sched_mode(&t->s))
						      : NULL);
		json_object_object_add(o, "kind",
				       json_object_new_string(hunt_kind_name(t->r.kind)));
		json_object_object_add(o, "exit_status", json_object_new_int(t->r.status));
		json_object_object_add(o, "last_line", json_object_new_string(t->r.last));
		json_object_object_add(o, "key", json_object_new_string(t->r.key));
		json_object_object_add(o, "journal", str_or_null(t->r.journal));
		json_object_object_add(o, "output", str_or_null(t->r.output));
		json_object_object_add(o, "duration_ms", json_object_new_uint64(t->r.duration_ms));
		r = put_line(f, o);
	}
	for (size_t i = 0; i < h->n_groups && !r; i++) {
		const struct hunt_cause *c = &h->groups[i].c;
		json_object *fl = json_object_new_array(), *tr = json_object_new_array();

		if (!c->done) {
			json_object_put(fl);
			json_object_put(tr);
			continue;
		}
		for (int a = 0; a < HUNT_CAUSES; a++) {
			json_object_array_add(fl, json_object_new_int((int)c->flips[a]));
			json_object_array_add(tr, json_object_new_int((int)c->tried[a]));
		}
		o = json_object_new_object();
		json_object_object_add(o, "hunt", json_object_new_string("cause"));
		json_object_object_add(o, "key", json_object_new_string(h->groups[i].key));
		json_object_object_add(o, "index", json_object_new_uint64(c->index));
		json_object_object_add(o, "verified", json_object_new_int((int)c->verified));
		json_object_object_add(o, "verify_runs", json_object_new_int((int)c->verify_runs));
		json_object_object_add(o, "flips", fl);
		json_object_object_add(o, "tried", tr);
		json_object_object_add(o, "state", json_object_new_int(c->state));
		json_object_object_add(o, "flipped_at", json_object_new_string(c->flipped_at));
		json_object_object_add(o, "cause", json_object_new_string(c->cause));
		r = put_line(f, o);
	}
	if (!r) {
		o = json_object_new_object();
		json_object_object_add(o, "hunt", json_object_new_string("end"));
		json_object_object_add(o, "elapsed_ms",
				       json_object_new_uint64(h->elapsed_ns / 1000000));
		json_object_object_add(o, "stopped",
				       str_or_null(h->stopped ? h->stop_reason : NULL));
		r = put_line(f, o);
	}
	if (!r && fflush(f) != 0)
		r = -errno;
	return r;
}
