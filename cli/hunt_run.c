// SPDX-License-Identifier: MIT
/*
 * hermetic hunt's tries. hunt_run_one is the one place a try is run: today
 * a child 'hermetic enroll --seed S --now T [--tick K] [--record DIR]
 * --report FILE -- CMD' (this very binary, /proc/self/exe, even if the file
 * was replaced since the hunt started, cli_spawn_self), whose output goes
 * to a file of its own, so that nothing one run does (hermetic's own die()
 * included) can take the hunt down. hunt_run_batch runs many, J at once,
 * each worker thread waiting for its own child.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <json-c/json.h>
#include "util.h"
#include "config.h"
#include "cli.h"
#include "hunt.h"
#include "enroll.h"
#include "spawn_self.h"
#include "run.h"

/* Lines of hermetic's own (the enroll around CMD): "hermetic: ..." and the
 * indented lines that continue it. */
static bool own_line(const char *line, bool *in_block)
{
	if (!strncmp(line, "hermetic: ", 10) || !strncmp(line, "hermetic enroll: ", 17)) {
		*in_block = true;
		return true;
	}
	if (*in_block && !strncmp(line, "  ", 2))
		return true;
	*in_block = false;
	return false;
}

/* The last non-empty line of CMD's output into r->last, and with --fail-if
 * the first matching line (returned true). */
static bool scan_output(const struct hunt *h, const char *path, struct hunt_result *r)
{
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;
	bool block = false, matched = false;
	ssize_t n;

	r->last[0] = 0;
	if (!f)
		return false;
	while ((n = getline(&line, &cap, f)) >= 0) {
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = 0;
		if (own_line(line, &block))
			continue;
		if (h->fail_if_src && !matched && !regexec(&h->fail_if, line, 0, NULL, 0)) {
			matched = true;
			snprintf(r->last, sizeof(r->last), "%s", line);
		}
		if (n && strspn(line, " \t") < (size_t)n && !matched)
			snprintf(r->last, sizeof(r->last), "%s", line);
	}
	return matched;
}

static void classify(const struct hunt *h, const char *report, const char *out, bool timed_out,
		     struct hunt_result *r)
{
	json_object *o = json_object_from_file(report), *v, *err;

	r->journal[0] = 0;
	if (o && json_object_object_get_ex(o, "journal", &v) && v &&
	    json_object_object_get_ex(v, "file", &v) && v)
		snprintf(r->journal, sizeof(r->journal), "%s", json_object_get_string(v));
	if (timed_out) {
		r->kind = HUNT_TIMEOUT;
		scan_output(h, out, r);
	} else if (!o) {
		r->kind = HUNT_ERROR;
		snprintf(r->error, sizeof(r->error),
			 "hermetic enroll wrote no report (exit status %d); its output: %.300s",
			 r->status, out);
	} else if (json_object_object_get_ex(o, "hermetic_error", &err) && err) {
		r->kind = HUNT_ERROR;
		snprintf(r->error, sizeof(r->error), "%s",
			 json_object_object_get_ex(err, "message", &v) && v
				 ? json_object_get_string(v)
				 : "hermetic failed");
	} else if (r->status != 0) {
		r->kind = HUNT_EXIT;
		scan_output(h, out, r);
	} else {
		r->kind = scan_output(h, out, r) ? HUNT_OUTPUT : HUNT_PASS;
	}
	if (o)
		json_object_put(o);
	hunt_key(r);
}

static void remove_dir(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.' || (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")))
			(void)unlinkat(dirfd(d), de->d_name, 0);
	closedir(d);
	(void)rmdir(path);
}

void hunt_run_cleanup(const struct hunt *h, const char *tag)
{
	char path[4352];

	snprintf(path, sizeof(path), "%s/%s.journal", h->dir, tag);
	remove_dir(path);
}

int hunt_run_one(const struct hunt *h, const struct hunt_settings *s, const char *tag, bool keep,
		 struct hunt_result *ret)
{
	char seed[32], now[64], tick[32], ident[96], sched[48], out[4352], report[4352], jdir[4352];
	char *args[32 + HUNT_MAX_ARGS];
	size_t n = 0;
	bool timed_out;
	uint64_t t0 = hm_now_ns();
	int st;

	memset(ret, 0, sizeof(*ret));
	snprintf(seed, sizeof(seed), "%" PRIu64, s->seed);
	hm_format_time(s->now_ns, now, sizeof(now));
	snprintf(tick, sizeof(tick), "%" PRIu64 "ns", s->tick_ns);
	snprintf(out, sizeof(out), "%s/%s.out", h->dir, tag);
	snprintf(report, sizeof(report), "%s/%s.report", h->dir, tag);
	snprintf(jdir, sizeof(jdir), "%s/%s.journal", h->dir, tag);
	args[n++] = (char *)h->self;
	args[n++] = "enroll";
	args[n++] = "--seed";
	args[n++] = seed;
	args[n++] = "--now";
	args[n++] = now;
	if (s->tick_set) {
		args[n++] = "--tick";
		args[n++] = tick;
	}
	hunt_identity_spec(s, ident, sizeof(ident));
	if (ident[0]) {
		args[n++] = "--identity";
		args[n++] = ident;
	}
	if (s->sched_set) {
		snprintf(sched, sizeof(sched), "%s:%" PRIu64, hunt_sched_mode(s), s->sched_seed);
		args[n++] = "--sched";
		args[n++] = sched;
	}
	if (keep) {
		args[n++] = "--record";
		args[n++] = jdir;
		if (h->fail_if_src) /* a failure by its output exits 0 */
			args[n++] = "--keep-passing";
	}
	args[n++] = "--report";
	args[n++] = report;
	args[n++] = "--";
	for (char **a = h->argv; *a && n < ARRAY_SIZE(args) - 1; a++)
		args[n++] = *a;
	args[n] = NULL;
	(void)unlink(report);
	st = cli_spawn_self(args, out, NULL, h->timeout_ns, &timed_out);
	if (st < 0)
		return st; /* not started, or not waited for */
	ret->status = run_status_code(st);
	ret->duration_ms = (hm_now_ns() - t0) / 1000000;
	classify(h, report, out, timed_out, ret);
	(void)unlink(report);
	if (keep && ret->kind != HUNT_PASS && ret->kind != HUNT_ERROR) {
		snprintf(ret->output, sizeof(ret->output), "%.4000s", out);
		return 0;
	}
	ret->journal[0] = 0;
	(void)unlink(out); /* a hermetic error's message is in ret->error */
	hunt_run_cleanup(h, tag);
	return 0;
}

/* The batch the workers share. */
struct batch {
	struct hunt *h;
	struct hunt_try *tries;
	size_t n, next, done;
	uint64_t failures;
	bool stoppable, stop;
	pthread_mutex_t lock;
	pthread_cond_t cond;
};

static void *worker(void *p)
{
	struct batch *b = p;
	struct hunt *h = b->h;

	pthread_mutex_lock(&b->lock);
	while (!b->stop && b->next < b->n) {
		struct hunt_try *t = &b->tries[b->next++];
		char tag[64];
		int r;

		if (b->stoppable && h->budget_ns && hm_now_ns() - h->started_ns >= h->budget_ns) {
			b->next--;
			b->stop = true;
			h->stop_reason = "--budget";
			break;
		}
		pthread_mutex_unlock(&b->lock);
		snprintf(tag, sizeof(tag), "%s%06" PRIu64, t->keep ? "run-" : "rerun-", t->index);
		r = hunt_run_one(h, &t->s, tag, t->keep, &t->r);
		if (r < 0) {
			t->r.kind = HUNT_ERROR;
			t->r.status = EXIT_INTERNAL;
			snprintf(t->r.error, sizeof(t->r.error), "Failed to start '%.400s': %s",
				 h->self, strerror(-r));
		}
		pthread_mutex_lock(&b->lock);
		t->done = true;
		b->done++;
		if (t->r.kind != HUNT_PASS && t->r.kind != HUNT_ERROR)
			b->failures++;
		if (t->r.kind == HUNT_ERROR)
			b->stop = true;
		if (b->stoppable && h->until_fail && t->r.kind != HUNT_PASS && !b->stop) {
			b->stop = true;
			h->stop_reason = "--until-fail";
		}
		pthread_cond_broadcast(&b->cond);
	}
	pthread_mutex_unlock(&b->lock);
	return NULL;
}

/* One progress line: on a terminal rewritten in place every 250 ms;
 * otherwise a line at every tenth of the runs. */
static void progress(struct batch *b, bool tty, size_t *last_tenth)
{
	double secs = (hm_now_ns() - b->h->started_ns) / 1e9;
	double rate = secs > 0 ? b->done / secs : 0;
	size_t tenth = b->n ? b->done * 10 / b->n : 10;

	if (!tty && tenth == *last_tenth)
		return;
	*last_tenth = tenth;
	fprintf(stderr, "%shunt: %zu/%zu runs, %" PRIu64 " failing, %.1f runs/s, ~%.0fs left%s",
		tty ? "\r\033[K" : "", b->done, b->n, b->failures, rate,
		rate > 0 ? (b->n - b->done) / rate : 0.0, tty ? "" : "\n");
	fflush(stderr);
}

size_t hunt_run_batch(struct hunt *h, struct hunt_try *tries, size_t n, bool show, bool stoppable)
{
	struct batch b = { .h = h, .tries = tries, .n = n, .stoppable = stoppable };
	pthread_t th[256];
	unsigned jobs = h->jobs < ARRAY_SIZE(th) ? h->jobs : ARRAY_SIZE(th), started = 0;
	bool tty = show && isatty(STDERR_FILENO);
	size_t last_tenth = 0;

	pthread_mutex_init(&b.lock, NULL);
	pthread_cond_init(&b.cond, NULL);
	for (unsigned i = 0; i < jobs && i < n; i++) {
		if (pthread_create(&th[i], NULL, worker, &b))
			break;
		started++;
	}
	if (!started)
		worker(&b); /* no thread: run them here */
	pthread_mutex_lock(&b.lock);
	while (started && b.done < b.n && !(b.stop && b.done == b.next)) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 250000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&b.cond, &b.lock, &ts);
		if (show)
			progress(&b, tty, &last_tenth);
	}
	pthread_mutex_unlock(&b.lock);
	for (unsigned i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	if (tty) {
		fprintf(stderr, "\r\033[K");
		fflush(stderr);
	}
	if (b.stop && h->stop_reason && stoppable)
		h->stopped = true;
	pthread_mutex_destroy(&b.lock);
	pthread_cond_destroy(&b.cond);
	return b.done;
}
