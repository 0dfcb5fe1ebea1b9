// SPDX-License-Identifier: MIT
/* check-determinism's reading of process ids (cli/checkdet_pids.c) on
 * journals made here: ids named by streams and by the kernel stream's
 * forks, a derived name never equal to a stream's, a pid given twice
 * naming no one, and which numbers of a line count as ids. */
#include <linux/types.h>
#include <stdarg.h>
#include <stdlib.h>
#include "../../cli/checkdet_pids.c"
#include "test.h"
#include "die_stub.h"

/* A journal of up to 8 streams and 16 kernel events, no bytes behind them. */
struct fake {
	struct hm_journal j;
	struct hm_journal_stream s[8];
	struct hm_journal_kernel k;
	struct hm_trace_event ev[16];
};

static void stream(struct fake *f, const char *lineage, uint64_t proc, uint32_t thread, uint32_t pid,
		   uint32_t tid)
{
	struct hm_jstream_header *h = &f->s[f->j.n_streams++].sum.hdr;

	snprintf(h->lineage, sizeof(h->lineage), "%s", lineage);
	h->proc = proc;
	h->image = proc + 1000;
	h->thread = thread;
	h->pid = pid;
	h->tid = tid;
}

static void event(struct fake *f, uint32_t kind, uint32_t pid, uint32_t aux, uint64_t t)
{
	struct hm_trace_event *e = &f->ev[f->k.n_records++];

	memset(e, 0, sizeof(*e));
	e->kind = kind;
	e->pid = e->tid = pid;
	e->aux = aux;
	e->time_ns = t;
}

static void start(struct fake *f)
{
	memset(f, 0, sizeof(*f));
	f->j.streams = f->s;
	f->j.kernel = &f->k;
	f->j.n_kernel = 1;
	f->k.record_size = sizeof(struct hm_trace_event);
	f->k.records = (const uint8_t *)f->ev;
}

static struct cd_pids *make(struct fake *f)
{
	struct cd_pids *p = NULL;

	if (cd_pids_make(&f->j, &p) < 0) {
		printf("FAIL cd_pids_make\n");
		exit(1);
	}
	return p;
}

/* cd_pids_same_line(a, b) and the names it gives, against want (NULL: 0). */
static int same(struct cd_pids *pa, const char *a, struct cd_pids *pb, const char *b, const char *want)
{
	char names[256];
	int r = cd_pids_same_line(pa, a, pb, b, names, sizeof(names));

	if (!want ? r != 0 : r != 1 || strcmp(names, want)) {
		printf("# '%s' / '%s': %d '%s', want %s\n", a, b, r, r ? names : "", want ? want : "0");
		return 0;
	}
	return 1;
}

/*
 * Run A: the first process 100 (no stream) forks 101 (python, stream 1.1,
 * thread 1 as tid 110), then 102 (no stream), which forks 103. Run B: the
 * same tree as 200..203, but its records out of time order, and 204 a
 * stream named "1.2.1" where A's 103 is a derived [~1.2.1].
 */
static void runs(struct fake *a, struct fake *b)
{
	start(a);
	stream(a, "1.1", 11, 0, 101, 101);
	stream(a, "1.1", 11, 1, 101, 110);
	event(a, HM_EV_EXEC, 100, 0, 1);
	event(a, HM_EV_FORK, 100, 101, 2);
	event(a, HM_EV_FORK, 101, 110, 3);
	a->ev[a->k.n_records - 1].flags = 1; /* a thread: no process */
	event(a, HM_EV_FORK, 100, 102, 4);
	event(a, HM_EV_FORK, 102, 103, 5);
	start(b);
	stream(b, "1.1", 11, 0, 201, 201);
	stream(b, "1.1", 11, 1, 201, 210);
	stream(b, "1.2.1", 77, 0, 204, 204);
	event(b, HM_EV_EXEC, 200, 0, 1);
	event(b, HM_EV_FORK, 202, 203, 5); /* seen first, made later */
	event(b, HM_EV_FORK, 100 + 100, 201, 2);
	event(b, HM_EV_FORK, 200, 202, 4);
}

int main(void)
{
	struct fake *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	struct cd_pids *pa, *pb;

	runs(a, b);
	pa = make(a);
	pb = make(b);
	CHECK("a stream's pid: its lineage", same(pa, "pid 101", pb, "pid 201", "1.1"));
	CHECK("a stream's thread id: its image and index", same(pa, "tid 110.", pb, "tid 210.", "1.1 thread 1"));
	CHECK("the first process without a stream: [~1]", same(pa, "100", pb, "200", "[~1]"));
	CHECK("a fork of a process without a stream, in time order: [~1.2.1]",
	      same(pa, "103 of 102 of 100", pb, "203 of 202 of 200", "[~1.2.1], [~1.2], [~1]"));
	CHECK("names listed once", same(pa, "100 100 101", pb, "200 200 201", "[~1], 1.1"));
	CHECK("a derived name is no stream's name", same(pa, "103", pb, "204", NULL));
	CHECK("other processes differ", same(pa, "101", pb, "202", NULL));
	CHECK("a number of no process of the run differs", same(pa, "101 5", pb, "201 6", NULL));
	CHECK("a number of no process of one run differs", same(pa, "99", pb, "200", NULL));
	CHECK("the same number is the same", same(pa, "101 7", pb, "201 7", "1.1"));
	CHECK("other text differs", same(pa, "101 a", pb, "201 b", NULL));
	CHECK("identical lines are no pid line", same(pa, "101", pb, "101", NULL));
	CHECK("a line that ended differs", same(pa, "101", pb, "201 ", NULL));
	CHECK("a fraction's digits are no id", same(pa, "0.101", pb, "0.201", NULL));
	CHECK("a number before a fraction is no id", same(pa, "101.5", pb, "201.5", NULL));
	CHECK("digits in a word are no id", same(pa, "x101", pb, "x201", NULL));
	CHECK("digits after a word and '_' are an id",
	      same(pa, "cwd: /t/test_python_101\xc3\xa6", pb, "cwd: /t/test_python_201\xc3\xa6", "1.1"));
	CHECK("an id before '_'", same(pa, "tmp_101_x", pb, "tmp_201_x", "1.1"));
	CHECK("digits before a letter are no id", same(pa, "_101x", pb, "_201x", NULL));
	CHECK("a leading 0 is no id", same(pa, "0101", pb, "0201", NULL));
	CHECK("punctuation around an id", same(pa, "[101]: (pid=101), 101.", pb, "[201]: (pid=201), 201.", "1.1"));
	cd_pids_free(pa);
	cd_pids_free(pb);

	/* a pid the kernel gave twice in run B (202 forked again): no one's */
	event(b, HM_EV_FORK, 201, 202, 9);
	pa = make(a);
	pb = make(b);
	CHECK("a pid two processes had names no one", same(pa, "102", pb, "202", NULL));
	CHECK("its children keep their names", same(pa, "101", pb, "201", "1.1"));
	cd_pids_free(pa);
	cd_pids_free(pb);

	/* a kernel stream that lost events: nothing derived from it */
	a->j.kernel_dropped = 1;
	pa = make(a);
	pb = make(b);
	CHECK("a kernel stream with lost events names nothing", same(pa, "100", pb, "200", NULL));
	CHECK("streams still name theirs despite lost events", same(pa, "101", pb, "201", "1.1"));
	cd_pids_free(pa);
	cd_pids_free(pb);
	a->j.kernel_dropped = 0;

	/* records of another size are not this hermetic's: nothing derived */
	a->k.record_size = 24;
	a->k.n_records = 1;
	pa = make(a);
	pb = make(b);
	CHECK("a kernel stream of other records names nothing", same(pa, "100", pb, "200", NULL));
	CHECK("streams still name theirs", same(pa, "101", pb, "201", "1.1"));
	cd_pids_free(pa);
	cd_pids_free(pb);
	free(a);
	free(b);
	T_EXIT();
}
