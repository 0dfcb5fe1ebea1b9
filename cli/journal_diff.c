// SPDX-License-Identifier: MIT
/*
 * check-determinism's comparison of two journals (journal_diff.h).
 *
 * What is compared: every record of every thread stream (clock readings
 * with their call and clock id, entropy bytes with their source, wait
 * outcomes with their call, flags, result and virtual time, end records
 * with their reason, "exit" and "thread exit" alike for a thread other than
 * the first: thread_end), and which streams exist (scope, image, thread).
 *
 * What is not, because it differs between two runs of a perfectly
 * deterministic program and is not a value the program was handed:
 * - the stream headers' pid, tid (real ids, for matching kernel events)
 *   and gen (how many exec hops preceded the image: for people; the image
 *   id already covers the executable and its run count);
 * - the configuration's run id, real start time and uid, the exit
 *   section's real duration and straggler count (real-time dependent);
 * - the fingerprint (the same machine, and environment values are not
 *   kept) and the kernel stream (real pids, real CLOCK_MONOTONIC times,
 *   event order across CPUs).
 * Exit statuses and output are compared by the verb (checkdet.c).
 */
#include <inttypes.h>
#include "util.h"
#include "journal_diff.h"
#include "journals.h"
#include "scope.h"

#define HEX_SHOWN 24 /* entropy bytes shown per value */

static const char *scope_dir(const struct hm_journal *j, const struct hm_journal_stream *s)
{
	return s->scope < 0 ? "" : j->scopes[s->scope].dir;
}

/* b's stream named as s of a is: the same scope directory, image, thread. */
static const struct hm_journal_stream *match(const struct hm_journal *a,
					     const struct hm_journal_stream *s,
					     const struct hm_journal *b)
{
	const char *dir = scope_dir(a, s);

	for (size_t i = 0; i < b->n_streams; i++) {
		const struct hm_journal_stream *t = &b->streams[i];

		if (t->sum.hdr.image == s->sum.hdr.image && t->sum.hdr.thread == s->sum.hdr.thread &&
		    !strcmp(scope_dir(b, t), dir))
			return t;
	}
	return NULL;
}

static const char *kind_name(enum hm_jrec_type t)
{
	switch (t) {
	case HM_JREC_CLOCK:
		return "clock reading";
	case HM_JREC_ENTROPY:
		return "entropy bytes";
	case HM_JREC_WAIT:
		return "wait outcome";
	case HM_JREC_END:
		return "end of stream";
	default:
		return "extension record";
	}
}

/* One record for people: "clock_gettime(CLOCK_MONOTONIC) = 10.000001000". */
static void describe(const struct hm_jrec *r, char *buf, size_t size)
{
	char v[64], hex[2 * HEX_SHOWN + 1];

	switch (r->type) {
	case HM_JREC_CLOCK:
		snprintf(buf, size, "%s(%s) = %s", hm_jrec_call_name(r->type, r->call),
			 jl_clock_name(r->clock.id), jl_fmt_reading(r->clock.id, r->clock.ns, v, sizeof(v)));
		break;
	case HM_JREC_ENTROPY:
		jl_hex(r->entropy.bytes, r->entropy.len < HEX_SHOWN ? r->entropy.len : HEX_SHOWN, hex);
		snprintf(buf, size, "%s, %zu bytes: %s%s", hm_jrec_call_name(r->type, r->call),
			 r->entropy.len, hex, r->entropy.len > HEX_SHOWN ? "..." : "");
		break;
	case HM_JREC_WAIT:
		snprintf(buf, size, "%s %s, returned %" PRId64 ", monotonic %s after it",
			 hm_jrec_call_name(r->type, r->call),
			 !r->wait.timed_out ? "woken" : r->wait.lag ? "timed out (lag bound)" : "timed out",
			 r->wait.result, jl_fmt_reading(1, (int64_t)r->wait.vtime_ns, v, sizeof(v)));
		break;
	case HM_JREC_END:
		snprintf(buf, size, "end (%s)", jl_end_reason_name(r->end.reason));
		break;
	default:
		snprintf(buf, size, "extension record of kind %u, %zu bytes", r->ext.kind, r->ext.len);
	}
}

/* A thread's stream ends with "thread exit" when the thread's own return
 * closed it and with "exit" when the process's exit closed it first: which
 * came first is real time (Python's join returns once the thread has
 * released its lock, before the thread's own end), never a value handed to
 * the program. Either says the thread drew nothing more: one end for a
 * thread other than the first. */
static bool thread_end(enum hm_jend_reason r)
{
	return r == HM_JEND_EXIT || r == HM_JEND_THREAD_EXIT;
}

static bool same(const struct hm_jrec *x, const struct hm_jrec *y, bool thread)
{
	if (x->type != y->type || x->call != y->call)
		return false;
	switch (x->type) {
	case HM_JREC_CLOCK:
		return x->clock.id == y->clock.id && x->clock.ns == y->clock.ns;
	case HM_JREC_ENTROPY:
		return x->entropy.len == y->entropy.len &&
		       !memcmp(x->entropy.bytes, y->entropy.bytes, x->entropy.len);
	case HM_JREC_WAIT:
		return x->wait.timed_out == y->wait.timed_out && x->wait.lag == y->wait.lag &&
		       x->wait.result == y->wait.result && x->wait.vtime_ns == y->wait.vtime_ns;
	case HM_JREC_END:
		return x->end.reason == y->end.reason ||
		       (thread && thread_end(x->end.reason) && thread_end(y->end.reason));
	default:
		return x->ext.kind == y->ext.kind && x->ext.len == y->ext.len &&
		       !memcmp(x->ext.bytes, y->ext.bytes, x->ext.len);
	}
}

static void name_stream(const struct hm_journal *j, const struct hm_journal_stream *s,
			struct jdiff *d)
{
	snprintf(d->scope, sizeof(d->scope), "%s", s->scope < 0 ? "" : j->scopes[s->scope].name);
	snprintf(d->lineage, sizeof(d->lineage), "%s", s->sum.hdr.lineage);
	snprintf(d->exe, sizeof(d->exe), "%s", s->sum.hdr.exe);
	d->thread = s->sum.hdr.thread;
}

/* Records of x and y in lockstep: 0 when equal, 1 with d filled, -EBADMSG. */
static int compare_stream(const struct hm_journal_stream *x, const struct hm_journal_stream *y,
			  struct jdiff *d)
{
	struct hm_jstream_dec dx, dy;
	struct hm_jrec rx, ry;

	if (hm_jstream_dec_init(&dx, x->data, x->len) < 0 || hm_jstream_dec_init(&dy, y->data, y->len) < 0)
		return -EBADMSG;
	for (;;) {
		int nx = hm_jstream_next(&dx, &rx), ny = hm_jstream_next(&dy, &ry);

		if (nx < 0 || ny < 0)
			return -EBADMSG;
		if (!nx && !ny)
			return 0;
		if (nx && ny && same(&rx, &ry, x->sum.hdr.thread > 0))
			continue;
		d->index = nx ? rx.index : ry.index;
		snprintf(d->kind, sizeof(d->kind), "%s", kind_name(nx ? rx.type : ry.type));
		if (nx && ny && rx.type != ry.type)
			snprintf(d->kind, sizeof(d->kind), "%s / %s", kind_name(rx.type),
				 kind_name(ry.type));
		if (nx)
			describe(&rx, d->saw[0], sizeof(d->saw[0]));
		else
			snprintf(d->saw[0], sizeof(d->saw[0]), "nothing: the stream was cut short (killed)");
		if (ny)
			describe(&ry, d->saw[1], sizeof(d->saw[1]));
		else
			snprintf(d->saw[1], sizeof(d->saw[1]), "nothing: the stream was cut short (killed)");
		return 1;
	}
}

static void missing(const struct hm_journal *j, const struct hm_journal_stream *s, int side,
		    struct jdiff *d)
{
	name_stream(j, s, d);
	d->index = 0;
	snprintf(d->kind, sizeof(d->kind), "thread stream");
	snprintf(d->saw[side], sizeof(d->saw[side]), "%" PRIu64 " values", s->sum.records);
	snprintf(d->saw[!side], sizeof(d->saw[!side]), "no such process or thread");
}

int jdiff_compare(const struct hm_journal *a, const struct hm_journal *b, struct jdiff *ret)
{
	memset(ret, 0, sizeof(*ret));
	for (size_t i = 0; i < a->n_streams; i++) {
		const struct hm_journal_stream *s = &a->streams[i], *t = match(a, s, b);
		int r;

		if (!t) {
			missing(a, s, 0, ret);
			return 1;
		}
		r = compare_stream(s, t, ret);
		if (r) {
			name_stream(a, s, ret);
			return r;
		}
	}
	for (size_t i = 0; i < b->n_streams; i++) {
		if (!match(b, &b->streams[i], a)) {
			missing(b, &b->streams[i], 1, ret);
			return 1;
		}
	}
	return 0;
}

uint64_t jdiff_values(const struct hm_journal *j)
{
	uint64_t n = 0;

	for (size_t i = 0; i < j->n_streams; i++)
		n += j->streams[i].sum.clock + j->streams[i].sum.entropy + j->streams[i].sum.wait;
	return n;
}

/* Past the start of its clock: wall readings against the wall start,
 * monotonic ones and wait times against the monotonic start. */
static uint64_t past(const struct hm_jrec *r, int64_t wall0, int64_t mono0)
{
	int64_t v;

	if (r->type == HM_JREC_WAIT)
		v = (int64_t)r->wait.vtime_ns - mono0;
	else if (r->type != HM_JREC_CLOCK)
		return 0;
	else if (r->clock.id == 0 || r->clock.id == 5) /* REALTIME, REALTIME_COARSE */
		v = r->clock.ns - wall0;
	else if (r->clock.id == 1 || r->clock.id == 4 || r->clock.id == 6) /* MONOTONIC(_RAW, _COARSE) */
		v = r->clock.ns - mono0;
	else
		return 0;
	return v > 0 ? (uint64_t)v : 0;
}

uint64_t jdiff_virtual_ns(const struct hm_journal *j)
{
	uint64_t max = 0;

	for (size_t i = 0; i < j->n_streams; i++) {
		const struct hm_journal_stream *s = &j->streams[i];
		const struct hm_journal_scope *sc = s->scope < 0 ? NULL : &j->scopes[s->scope];
		int64_t wall0 = sc ? sc->now_ns : j->config.cfg.now_ns;
		int64_t mono0 = sc ? sc->mono_ns : hm_mono_start(j->config.cfg.seed);
		struct hm_jstream_dec d;
		struct hm_jrec r;

		if (hm_jstream_dec_init(&d, s->data, s->len) < 0)
			continue;
		while (hm_jstream_next(&d, &r) > 0) {
			uint64_t v = past(&r, wall0, mono0);

			if (v > max)
				max = v;
		}
	}
	return max;
}
