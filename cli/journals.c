// SPDX-License-Identifier: MIT
/*
 * hermetic journals COMMAND: journals of recorded runs.
 *
 *   list [--json] [--dir DIR]        the store's journals (or DIR's index.json)
 *   show ID|FILE [--json] [--records] what a journal holds, as text or JSON
 *   fetch ID [-o FILE]               copy a journal out of the store
 *   rm ID...                         remove journals from the store
 *   gc [--older-than 14d]            remove old journals from the store
 *
 * Reading a journal needs no daemon: show works on any file, offline. The
 * store belongs to hermeticd (root); a user reaches only their own journals
 * through it, and the parsing of a journal always happens here, unprivileged.
 */
#include <getopt.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <fcntl.h>
#include <libgen.h>
#include <sys/stat.h>
#include <sys/random.h>
#include "util.h"
#include "config.h"
#include "journal.h"
#include "cli.h"
#include "record.h"

#ifndef EXIT_DATAERR
#define EXIT_DATAERR 65 /* sysexits EX_DATAERR: the journal is malformed */
#endif
#ifndef EXIT_NOINPUT
#define EXIT_NOINPUT 66 /* sysexits EX_NOINPUT: the journal cannot be opened */
#endif
#define EXIT_CANTCREAT 73 /* sysexits EX_CANTCREAT: fetch cannot write its output */

static int journals_list(int argc, char **argv);
static int journals_show(int argc, char **argv);
static int journals_fetch(int argc, char **argv);
static int journals_rm(int argc, char **argv);
static int journals_gc(int argc, char **argv);

static const struct sub {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
} subs[] = {
	{ "list", journals_list, "your journals in hermeticd's store, or in a --record directory" },
	{ "show", journals_show, "what a journal holds: configuration, machine, processes" },
	{ "fetch", journals_fetch, "copy a journal out of the store into a file" },
	{ "rm", journals_rm, "remove journals from the store" },
	{ "gc", journals_gc, "remove journals older than a duration from the store" },
};

static void usage(FILE *f)
{
	fprintf(f, "Usage: hermetic journals COMMAND [OPTIONS]\n\nCommands:\n");
	for (size_t i = 0; i < ARRAY_SIZE(subs); i++)
		fprintf(f, "  %-6s %s\n", subs[i].name, subs[i].summary);
	fprintf(f, "\nJournals of recorded runs (enroll --record) are kept per user in hermeticd's\n"
		   "store; you see and touch only your own. ID is a run id, as list shows it.\n"
		   "Run 'hermetic journals COMMAND --help' for a command's options.\n");
}

static void show_usage(FILE *f)
{
	fprintf(f, "Usage: hermetic journals show ID|FILE [--json] [--records]\n\n"
		   "Show what a journal holds: the run's configuration and command, the machine\n"
		   "it ran on, its processes as a tree by lineage key with how many values of\n"
		   "each kind the shim handed out, the kernel's events and how many were\n"
		   "dropped, the audit (processes that ran without the shim and syscalls\n"
		   "that bypassed it, with their getrandom calls and bytes), and the exit\n"
		   "status. A FILE works offline, without hermeticd; an\n"
		   "ID (a run id; a file of that name wins) is fetched from the store.\n\n"
		   "  --json      one JSON object, for scripts\n"
		   "  --records   also every value of every thread, in order, numbered as\n"
		   "              replay reports them (entropy shown up to 32 bytes)\n\n"
		   "Exit status: 0, 65 for a malformed, truncated or too new journal,\n"
		   "66 if FILE cannot be read or the store has no journal ID of yours,\n"
		   "69 if hermeticd cannot be reached.\n");
}

int cmd_journals(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	for (size_t i = 0; i < ARRAY_SIZE(subs); i++)
		if (!strcmp(argv[1], subs[i].name))
			return subs[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "%s: journals: unknown command '%s'\n", program_name, argv[1]);
	usage(stderr);
	return EXIT_USAGE;
}

/* --- formatting -------------------------------------------------------------------- */

static const char *fmt_ns(uint64_t ns, char *buf, size_t size)
{
	static const struct {
		uint64_t ns;
		const char *unit;
	} units[] = { { 3600000000000ULL, "h" }, { 60000000000ULL, "m" }, { 1000000000ULL, "s" },
		      { 1000000ULL, "ms" },	 { 1000ULL, "us" },	  { 1ULL, "ns" } };

	if (ns == 0) {
		snprintf(buf, size, "0");
		return buf;
	}
	for (size_t i = 0; i < ARRAY_SIZE(units); i++) {
		if (ns % units[i].ns == 0) {
			snprintf(buf, size, "%" PRIu64 "%s", ns / units[i].ns, units[i].unit);
			return buf;
		}
		if (ns >= units[i].ns && i >= 2) {
			snprintf(buf, size, "%.3g%s", (double)ns / (double)units[i].ns,
				 units[i].unit);
			return buf;
		}
	}
	snprintf(buf, size, "%" PRIu64 "ns", ns);
	return buf;
}

static const char *fmt_time(int64_t ns, char *buf, size_t size)
{
	/* Times far outside the calendar come from hostile or broken
	 * journals: show the number. */
	if (ns < 0)
		snprintf(buf, size, "@%" PRId64 "ns", ns);
	else
		hm_format_time(ns, buf, size);
	return buf;
}

static const char *fmt_bytes(uint64_t n, char *buf, size_t size)
{
	if (n < 10000)
		snprintf(buf, size, "%" PRIu64 " B", n);
	else if (n < 10000000)
		snprintf(buf, size, "%.1f kB", n / 1e3);
	else
		snprintf(buf, size, "%.1f MB", n / 1e6);
	return buf;
}

/* Print s so that a shell reads it back as one word. */
static void put_shell_word(const char *s)
{
	bool plain = *s;

	for (const char *p = s; *p; p++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./"
			    "=:,+-@%",
			    *p))
			plain = false;
	if (plain) {
		fputs(s, stdout);
		return;
	}
	putchar('\'');
	for (const char *p = s; *p; p++) {
		if (*p == '\'')
			fputs("'\\''", stdout);
		else if ((unsigned char)*p < ' ' || *p == 0x7f)
			printf("\\x%02x", (unsigned char)*p); /* keep the terminal sane */
		else
			putchar(*p);
	}
	putchar('\'');
}

/* Print a journal's string without letting it drive the terminal. */
static void put_safe(const char *s)
{
	for (const char *p = s; *p; p++) {
		if ((unsigned char)*p < ' ' || *p == 0x7f)
			printf("\\x%02x", (unsigned char)*p);
		else
			putchar(*p);
	}
}

static const char *end_name(const struct hm_jstream_summary *s)
{
	if (!s->ended)
		return "no end record";
	switch (s->end_reason) {
	case HM_JEND_EXIT:
		return "exit";
	case HM_JEND_EXEC:
		return "exec";
	case HM_JEND_THREAD_EXIT:
		return "thread exit";
	case HM_JEND_SCOPE:
		return "scope";
	}
	return "ended";
}

/* One process: the streams of one process id (its images and their
 * threads), contiguous in the journal's tree order. */
struct proc {
	const char *lineage;
	uint64_t id, parent; /* process, and the image that created it */
	size_t first, n; /* range in j->streams */
	uint64_t threads; /* streams: threads of all its images */
	uint64_t gens; /* images: the last image's gen + 1 */
	uint64_t clock, entropy, entropy_bytes, wait, timed_out, ext;
	const struct hm_jstream_summary *last_main; /* thread 0 of the last image */
};

static size_t group_procs(const struct hm_journal *j, struct proc *p)
{
	size_t np = 0;

	for (size_t i = 0; i < j->n_streams; i++) {
		const struct hm_jstream_summary *s = &j->streams[i].sum;
		struct proc *cur;

		if (!np || p[np - 1].id != s->hdr.proc)
			p[np++] = (struct proc){ .lineage = s->hdr.lineage, .id = s->hdr.proc,
						 .parent = s->hdr.parent, .first = i };
		cur = &p[np - 1];
		cur->n++;
		/* One stream per thread of each image. */
		cur->threads++;
		if ((uint64_t)s->hdr.gen + 1 > cur->gens)
			cur->gens = (uint64_t)s->hdr.gen + 1;
		cur->clock += s->clock;
		cur->entropy += s->entropy;
		cur->entropy_bytes += s->entropy_bytes;
		cur->wait += s->wait;
		cur->timed_out += s->wait_timed_out;
		cur->ext += s->ext;
		if (s->hdr.thread == 0 &&
		    (!cur->last_main || s->hdr.gen >= cur->last_main->hdr.gen))
			cur->last_main = s;
	}
	return np;
}

static json_object *jstr(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}

static json_object *jhex(uint64_t v)
{
	char b[24];

	snprintf(b, sizeof(b), "%016" PRIx64, v);
	return json_object_new_string(b);
}

/* What a process ran, image by image: "env bash x3 python3.11" (main
 * threads' streams, in order; a run of one name counted). */
static const char *proc_images(const struct hm_journal *j, const struct proc *p, char *buf,
			       size_t size)
{
	size_t used = 0;
	const char *last = NULL;
	unsigned run = 0;

	buf[0] = 0;
	for (size_t k = p->first; k <= p->first + p->n; k++) {
		const struct hm_jstream_header *h =
			k < p->first + p->n ? &j->streams[k].sum.hdr : NULL;

		if (h && h->thread)
			continue;
		if (h && last && !strcmp(last, h->exe)) {
			run++;
			continue;
		}
		if (last && used < size)
			used += snprintf(buf + used, size - used, "%s%s", used ? " " : "", last);
		if (last && run > 1 && used < size)
			used += snprintf(buf + used, size - used, " x%u", run);
		last = h ? h->exe : NULL;
		run = 1;
	}
	return buf;
}

/* --- records ------------------------------------------------------------------------- */

#define RECORD_HEX_MAX 32

static const char *clock_name(int32_t id)
{
	static const char *const names[] = {
		"CLOCK_REALTIME",
		"CLOCK_MONOTONIC",
		"CLOCK_PROCESS_CPUTIME_ID",
		"CLOCK_THREAD_CPUTIME_ID",
		"CLOCK_MONOTONIC_RAW",
		"CLOCK_REALTIME_COARSE",
		"CLOCK_MONOTONIC_COARSE",
		"CLOCK_BOOTTIME",
		"CLOCK_REALTIME_ALARM",
		"CLOCK_BOOTTIME_ALARM",
		NULL,
		"CLOCK_TAI",
	};

	return id >= 0 && (size_t)id < ARRAY_SIZE(names) && names[id] ? names[id] : NULL;
}

/* A reading: wall clocks as ISO 8601, the others as seconds. */
static const char *fmt_reading(int32_t id, int64_t ns, char *buf, size_t size)
{
	if (id == 0 || id == 5 || id == 8 || id == 11)
		return fmt_time(ns, buf, size);
	snprintf(buf, size, "%s%" PRIu64 ".%09" PRIu64, ns < 0 ? "-" : "",
		 (ns < 0 ? -(uint64_t)ns : (uint64_t)ns) / 1000000000u,
		 (ns < 0 ? -(uint64_t)ns : (uint64_t)ns) % 1000000000u);
	return buf;
}

static void hex(const uint8_t *p, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[p[i] >> 4];
		out[2 * i + 1] = digits[p[i] & 15];
	}
	out[2 * n] = 0;
}

static const char *end_reason_name(uint64_t reason)
{
	switch (reason) {
	case HM_JEND_EXIT:
		return "exit";
	case HM_JEND_EXEC:
		return "exec";
	case HM_JEND_THREAD_EXIT:
		return "thread exit";
	case HM_JEND_SCOPE:
		return "scope";
	}
	return "ended";
}

/* Every record of one stream: as text lines, or as a JSON array. The
 * journal was validated whole, so decoding cannot fail here. */
static json_object *show_records(const struct hm_journal_stream *st, bool json)
{
	json_object *arr = json ? json_object_new_array() : NULL;
	char a[64], h[2 * RECORD_HEX_MAX + 1], id[32];
	struct hm_jstream_dec d;
	struct hm_jrec r;

	if (hm_jstream_dec_init(&d, st->data, st->len) < 0)
		return arr;
	if (!json) {
		printf("\nstream %s thread %" PRIu32 ": %s #%" PRIu32 ", image %016" PRIx64
		       " (pid %" PRIu32 ", tid %" PRIu32 "): %" PRIu64 " records\n",
		       d.hdr.lineage, d.hdr.thread, d.hdr.exe, d.hdr.exe_count, d.hdr.image,
		       d.hdr.pid, d.hdr.tid, st->sum.records);
	}
	while (hm_jstream_next(&d, &r) > 0) {
		const char *call = hm_jrec_call_name(r.type, r.call);
		json_object *o = json ? json_object_new_object() : NULL;

		if (o) {
			json_object_object_add(o, "n", json_object_new_uint64(r.index));
			json_object_object_add(o, "kind", jstr(hm_jrec_type_name(r.type)));
			if (r.type != HM_JREC_END && r.type != HM_JREC_EXT)
				json_object_object_add(o, "call", jstr(call));
		} else {
			printf("  #%-8" PRIu64 " ", r.index);
		}
		switch (r.type) {
		case HM_JREC_CLOCK:
			if (!clock_name(r.clock.id))
				snprintf(id, sizeof(id), "clock %" PRId32, r.clock.id);
			fmt_reading(r.clock.id, r.clock.ns, a, sizeof(a));
			if (o) {
				json_object_object_add(o, "clock",
						       json_object_new_int64(r.clock.id));
				json_object_object_add(o, "ns", json_object_new_int64(r.clock.ns));
			} else {
				printf("%-22s %-24s %s\n", call,
				       clock_name(r.clock.id) ? clock_name(r.clock.id) : id, a);
			}
			break;
		case HM_JREC_ENTROPY: {
			size_t n = r.entropy.len < RECORD_HEX_MAX ? r.entropy.len : RECORD_HEX_MAX;

			hex(r.entropy.bytes, n, h);
			if (o) {
				json_object_object_add(o, "bytes",
						       json_object_new_uint64(r.entropy.len));
				json_object_object_add(o, "hex", jstr(h));
			} else {
				printf("%-22s %-24s %s%s\n", call,
				       fmt_bytes(r.entropy.len, a, sizeof(a)), h,
				       r.entropy.len > n ? "..." : "");
			}
			break;
		}
		case HM_JREC_WAIT:
			if (o) {
				json_object_object_add(o, "timed_out",
						       json_object_new_boolean(r.wait.timed_out));
				json_object_object_add(o, "result",
						       json_object_new_int64(r.wait.result));
				json_object_object_add(o, "vtime_ns",
						       json_object_new_uint64(r.wait.vtime_ns));
			} else {
				printf("%-22s %-24s returned %" PRId64 ", monotonic %s\n", call,
				       r.wait.timed_out ? "timed out" : "woken", r.wait.result,
				       fmt_reading(1, (int64_t)r.wait.vtime_ns, a, sizeof(a)));
			}
			break;
		case HM_JREC_END:
			if (o)
				json_object_object_add(o, "reason",
						       jstr(end_reason_name(r.end.reason)));
			else
				printf("%-22s %s\n", "end", end_reason_name(r.end.reason));
			break;
		case HM_JREC_EXT:
			if (o) {
				json_object_object_add(o, "ext_kind",
						       json_object_new_int64(r.ext.kind));
				json_object_object_add(o, "bytes",
						       json_object_new_uint64(r.ext.len));
			} else {
				printf("%-22s kind %u, %zu bytes (from a newer hermetic)\n",
				       "extension", r.ext.kind, r.ext.len);
			}
			break;
		}
		if (o)
			json_object_array_add(arr, o);
	}
	return arr;
}

/* --- text --------------------------------------------------------------------------- */

/* The audit: what the kernel saw that the shim did not control, the same
 * way enroll's coverage line and the daemon count it (lib/audit.c). */
static void show_audit_text(const struct hm_journal *j)
{
	struct hm_audit_acc a;

	if (!j->n_kernel)
		return;
	if (journal_audit(j, &a) < 0)
		die(EXIT_INTERNAL, "out of memory");
	_cleanup_free_ struct hm_audit_proc *p = a.procs;
	uint64_t escaped = 0, bypassed = 0;

	for (uint32_t i = 0; i < a.n_procs; i++) {
		escaped += hm_audit_escaped(&p[i]);
		bypassed += hm_audit_bypassed(&p[i]);
	}
	printf("audit      %" PRIu64 " processes, %" PRIu64 " without the shim, %" PRIu64
	       " with syscalls that bypassed it\n",
	       a.sum.processes, escaped, bypassed);
	for (uint32_t i = 0; i < a.n_procs; i++) {
		if (!hm_audit_escaped(&p[i]) && !hm_audit_bypassed(&p[i]))
			continue;
		printf("  pid %-7u %s %s: %u getrandom, %" PRIu64 " bytes, %u /dev/urandom reads, "
		       "%u clock syscalls\n",
		       p[i].pid, hm_audit_escaped(&p[i]) ? "without the shim" : "bypassed the shim",
		       p[i].path[0] ? p[i].path : p[i].comm, p[i].getrandom, p[i].getrandom_bytes,
		       p[i].random_reads, p[i].clock);
	}
	if (a.untracked)
		printf("  (%" PRIu64 " more processes counted, not listed)\n", a.untracked);
}

static json_object *audit_json(const struct hm_journal *j)
{
	struct hm_audit_acc a;
	json_object *o = json_object_new_object(), *list = json_object_new_array();

	if (journal_audit(j, &a) < 0)
		die(EXIT_INTERNAL, "out of memory");
	_cleanup_free_ struct hm_audit_proc *p = a.procs;
	uint64_t escaped = 0;

	for (uint32_t i = 0; i < a.n_procs; i++) {
		json_object *e;

		if (!hm_audit_escaped(&p[i]) && !hm_audit_bypassed(&p[i]))
			continue;
		escaped += hm_audit_escaped(&p[i]);
		e = json_object_new_object();
		json_object_object_add(e, "pid", json_object_new_int64(p[i].pid));
		json_object_object_add(e, "shim", json_object_new_boolean(p[i].shim));
		json_object_object_add(e, "path", jstr(p[i].path));
		json_object_object_add(e, "comm", jstr(p[i].comm));
		json_object_object_add(e, "getrandom", json_object_new_int64(p[i].getrandom));
		json_object_object_add(e, "getrandom_bytes",
				       json_object_new_uint64(p[i].getrandom_bytes));
		json_object_object_add(e, "random_reads", json_object_new_int64(p[i].random_reads));
		json_object_object_add(e, "clock_syscalls", json_object_new_int64(p[i].clock));
		json_object_array_add(list, e);
	}
	json_object_object_add(o, "processes", json_object_new_uint64(a.sum.processes));
	json_object_object_add(o, "without_shim", json_object_new_uint64(escaped));
	json_object_object_add(o, "untracked", json_object_new_uint64(a.untracked));
	json_object_object_add(o, "escaped", list);
	return o;
}

static void show_text(const char *path, size_t fsize, const struct hm_journal *j, struct proc *p,
		      size_t np, bool records)
{
	const struct hm_journal_config *c = &j->config;
	const struct hm_journal_fingerprint *f = &j->fingerprint;
	char a[64], b[64];
	size_t names = 0, nthreads = 0;

	printf("journal    ");
	put_safe(path);
	printf(" (format %u.%u, %s", j->major, j->minor, fmt_bytes(fsize, a, sizeof(a)));
	printf(", %s uncompressed)\n", fmt_bytes(j->size, b, sizeof(b)));
	if (c->run_id || c->started_ns)
		printf("run        %" PRIu64 " by uid %" PRIu32 ", started %s\n", c->run_id, c->uid,
		       fmt_time(c->started_ns, a, sizeof(a)));
	printf("command   ");
	for (size_t i = 0; i < c->argc; i++) {
		putchar(' ');
		put_shell_word(c->argv[i]);
	}
	printf("%s\n", c->argc ? "" : " (none recorded)");
	printf("seed       %" PRIu64 "%s\n", c->cfg.seed, c->cfg.seed_set ? "" : " (generated)");
	printf("clock      %s, now %s, tick %s\n",
	       c->cfg.clock_virtual ? "virtual" : "off (real values)",
	       fmt_time(c->cfg.now_ns, a, sizeof(a)), fmt_ns(c->cfg.tick_ns, b, sizeof(b)));
	printf("rng        %s\n", c->cfg.rng ? "seeded" : "off (real values)");
	printf("network    %s", c->cfg.network == HM_NETWORK_OFF ? "off (not enforced)" : "block");
	if (c->cfg.network != HM_NETWORK_OFF)
		printf(", loopback %s, unix sockets %s", c->cfg.loopback ? "allowed" : "refused",
		       c->cfg.unix_sockets ? "allowed" : "refused");
	printf("\naslr       %s\nspin limit %" PRIu64 "\n", c->cfg.aslr ? "on" : "off",
	       c->cfg.spin_limit);
	if (c->n_opts) {
		printf("options   ");
		for (size_t i = 0; i < c->n_opts; i++) {
			printf(" --");
			put_safe(c->opts[i].key);
			if (c->opts[i].value) {
				putchar(' ');
				put_shell_word(c->opts[i].value);
			}
		}
		putchar('\n');
	}
	if (j->has_fingerprint) {
		static const char *const keys[] = { HM_FP_HOSTNAME, HM_FP_KERNEL, HM_FP_ARCH,
						    HM_FP_LIBC };
		static const char *const labels[] = { "host", "kernel", "arch", "libc" };
		const char *v;

		for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
			if (!(v = hm_journal_fp_get(f, keys[i])))
				continue;
			printf("%-10s ", labels[i]);
			put_safe(v);
			putchar('\n');
		}
		printf("tz         ");
		put_safe((v = hm_journal_fp_get(f, HM_FP_TZ)) ? v : "(unknown)");
		printf("\ngit        ");
		put_safe((v = hm_journal_fp_get(f, HM_FP_GIT_COMMIT)) ? v
								      : "(not in a working tree)");
		printf("\nenv       ");
		for (size_t i = 0; i < f->n_env; i++) {
			if (!f->env[i].value) {
				names++;
				continue;
			}
			putchar(' ');
			put_safe(f->env[i].key);
			putchar('=');
			put_shell_word(f->env[i].value);
		}
		if (names)
			printf(" (+%zu names, values not recorded)", names);
		putchar('\n');
	} else {
		printf("machine    (no fingerprint recorded)\n");
	}
	for (size_t i = 0; i < np; i++)
		nthreads += p[i].threads;
	printf("processes  %zu, %zu thread%s\n", np, nthreads, nthreads == 1 ? "" : "s");
	for (size_t i = 0; i < np; i++) {
		unsigned depth = hm_lineage_depth(p[i].lineage);
		char key[HM_LINEAGE_MAX + 64], images[256];

		snprintf(key, sizeof(key), "%*s%s", (int)(depth > 1 ? 2 * (depth - 1) : 0), "",
			 p[i].lineage);
		printf("  %-14s %-16s %3" PRIu64 " thread%s  %8" PRIu64 " clock  %6" PRIu64
		       " entropy (%s)  %5" PRIu64 " wait (%" PRIu64 " timed out)",
		       key, proc_images(j, &p[i], images, sizeof(images)), p[i].threads,
		       p[i].threads == 1 ? " " : "s", p[i].clock, p[i].entropy,
		       fmt_bytes(p[i].entropy_bytes, a, sizeof(a)), p[i].wait, p[i].timed_out);
		if (p[i].ext)
			printf("  %" PRIu64 " unknown records", p[i].ext);
		printf("  %s\n",
		       p[i].last_main ? end_name(p[i].last_main) : "no main thread stream");
	}
	printf("kernel     %" PRIu64 " records in %zu chunk%s", j->kernel_records, j->n_kernel,
	       j->n_kernel == 1 ? "" : "s");
	if (j->has_kernel_summary) {
		/* Events the daemon received but did not keep (its memory caps)
		 * are the difference between events and records. */
		uint64_t not_kept = j->kernel_events > j->kernel_records
					    ? j->kernel_events - j->kernel_records
					    : 0;

		printf("; %" PRIu64 " events, %" PRIu64 " dropped", j->kernel_events,
		       j->kernel_dropped);
		if (not_kept)
			printf(", %" PRIu64 " not kept by hermeticd", not_kept);
		if (j->kernel_dropped || not_kept)
			printf(" (the kernel's view is incomplete)");
	}
	else
		printf("; no kernel summary (recorded without hermeticd?)");
	putchar('\n');
	show_audit_text(j);
	if (j->has_exit) {
		printf("exit       ");
		if (j->exit.signal)
			printf("killed by signal %" PRId32, j->exit.signal);
		else
			printf("status %" PRId32, j->exit.status);
		printf(" after %s", fmt_ns(j->exit.wall_ns, a, sizeof(a)));
		if (j->exit.stragglers)
			printf(", %" PRIu32 " stragglers killed", j->exit.stragglers);
		putchar('\n');
	} else {
		printf("exit       (not recorded: the run did not finish)\n");
	}
	journals_scopes_text(j);
	if (j->n_skipped)
		printf("note       %zu sections of a newer format were skipped\n", j->n_skipped);
	for (size_t i = 0; records && i < j->n_streams; i++)
		show_records(&j->streams[i], false);
}

/* --- JSON ------------------------------------------------------------------------------- */

static json_object *stream_json(const struct hm_jstream_summary *s)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "thread", json_object_new_int64(s->hdr.thread));
	json_object_object_add(o, "generation", json_object_new_int64(s->hdr.gen));
	json_object_object_add(o, "image", jhex(s->hdr.image));
	json_object_object_add(o, "exe", jstr(s->hdr.exe));
	json_object_object_add(o, "exe_count", json_object_new_int64(s->hdr.exe_count));
	json_object_object_add(o, "pid", json_object_new_int64(s->hdr.pid));
	json_object_object_add(o, "tid", json_object_new_int64(s->hdr.tid));
	json_object_object_add(o, "records", json_object_new_uint64(s->records));
	json_object_object_add(o, "clock", json_object_new_uint64(s->clock));
	json_object_object_add(o, "entropy", json_object_new_uint64(s->entropy));
	json_object_object_add(o, "entropy_bytes", json_object_new_uint64(s->entropy_bytes));
	json_object_object_add(o, "wait", json_object_new_uint64(s->wait));
	json_object_object_add(o, "wait_timed_out", json_object_new_uint64(s->wait_timed_out));
	json_object_object_add(o, "unknown_records", json_object_new_uint64(s->ext));
	json_object_object_add(o, "end", s->ended ? jstr(end_name(s)) : NULL);
	return o;
}

static void show_json(const char *path, size_t fsize, const struct hm_journal *j, struct proc *p,
		      size_t np, bool records)
{
	const struct hm_journal_config *c = &j->config;
	json_object *o = json_object_new_object(), *cfg = json_object_new_object(), *arr, *m,
		    *procs;
	char buf[64];

	json_object_object_add(o, "file", jstr(path));
	snprintf(buf, sizeof(buf), "%u.%u", j->major, j->minor);
	json_object_object_add(o, "format", jstr(buf));
	json_object_object_add(o, "size", json_object_new_uint64(fsize));
	json_object_object_add(o, "uncompressed_size", json_object_new_uint64(j->size));

	json_object_object_add(cfg, "seed", json_object_new_uint64(c->cfg.seed));
	json_object_object_add(cfg, "seed_given", json_object_new_boolean(c->cfg.seed_set));
	json_object_object_add(cfg, "now", jstr(fmt_time(c->cfg.now_ns, buf, sizeof(buf))));
	json_object_object_add(cfg, "now_ns", json_object_new_int64(c->cfg.now_ns));
	json_object_object_add(cfg, "tick_ns", json_object_new_uint64(c->cfg.tick_ns));
	json_object_object_add(cfg, "clock", jstr(c->cfg.clock_virtual ? "virtual" : "off"));
	json_object_object_add(cfg, "rng", jstr(c->cfg.rng ? "all" : "off"));
	json_object_object_add(cfg, "network",
			       jstr(c->cfg.network == HM_NETWORK_OFF ? "off" : "block"));
	json_object_object_add(cfg, "loopback", json_object_new_boolean(c->cfg.loopback));
	json_object_object_add(cfg, "unix_sockets", json_object_new_boolean(c->cfg.unix_sockets));
	json_object_object_add(cfg, "aslr", json_object_new_boolean(c->cfg.aslr));
	json_object_object_add(cfg, "spin_limit", json_object_new_uint64(c->cfg.spin_limit));
	json_object_object_add(cfg, "run_id", json_object_new_uint64(c->run_id));
	json_object_object_add(cfg, "uid", json_object_new_int64(c->uid));
	json_object_object_add(cfg, "started", jstr(fmt_time(c->started_ns, buf, sizeof(buf))));
	arr = json_object_new_array();
	for (size_t i = 0; i < c->argc; i++)
		json_object_array_add(arr, jstr(c->argv[i]));
	json_object_object_add(cfg, "argv", arr);
	m = json_object_new_object();
	for (size_t i = 0; i < c->n_opts; i++)
		json_object_object_add(m, c->opts[i].key, jstr(c->opts[i].value));
	json_object_object_add(cfg, "options", m);
	json_object_object_add(o, "config", cfg);

	if (j->has_fingerprint) {
		json_object *fp = json_object_new_object(), *fields = json_object_new_object(),
			    *env = json_object_new_object();

		for (size_t i = 0; i < j->fingerprint.n_fields; i++)
			json_object_object_add(fields, j->fingerprint.fields[i].key,
					       jstr(j->fingerprint.fields[i].value));
		/* null: the variable was set, its value is not recorded. */
		for (size_t i = 0; i < j->fingerprint.n_env; i++)
			json_object_object_add(env, j->fingerprint.env[i].key,
					       jstr(j->fingerprint.env[i].value));
		json_object_object_add(fp, "fields", fields);
		json_object_object_add(fp, "env", env);
		json_object_object_add(o, "fingerprint", fp);
	} else {
		json_object_object_add(o, "fingerprint", NULL);
	}

	procs = json_object_new_array();
	for (size_t i = 0; i < np; i++) {
		json_object *po = json_object_new_object(), *streams = json_object_new_array();
		char parent[HM_LINEAGE_MAX];
		char *dot;

		snprintf(parent, sizeof(parent), "%s", p[i].lineage);
		dot = strrchr(parent, '.');
		if (dot)
			*dot = 0;
		json_object_object_add(po, "lineage", jstr(p[i].lineage));
		json_object_object_add(po, "parent", dot ? jstr(parent) : NULL);
		json_object_object_add(po, "process", jhex(p[i].id));
		json_object_object_add(po, "parent_image", p[i].parent ? jhex(p[i].parent) : NULL);
		json_object_object_add(po, "threads", json_object_new_uint64(p[i].threads));
		json_object_object_add(po, "images", json_object_new_uint64(p[i].gens));
		json_object_object_add(po, "clock", json_object_new_uint64(p[i].clock));
		json_object_object_add(po, "entropy", json_object_new_uint64(p[i].entropy));
		json_object_object_add(po, "entropy_bytes",
				       json_object_new_uint64(p[i].entropy_bytes));
		json_object_object_add(po, "wait", json_object_new_uint64(p[i].wait));
		json_object_object_add(po, "wait_timed_out",
				       json_object_new_uint64(p[i].timed_out));
		json_object_object_add(po, "end",
				       p[i].last_main && p[i].last_main->ended
					       ? jstr(end_name(p[i].last_main))
					       : NULL);
		for (size_t k = p[i].first; k < p[i].first + p[i].n; k++) {
			json_object *so = stream_json(&j->streams[k].sum);

			if (records)
				json_object_object_add(so, "values",
						       show_records(&j->streams[k], true));
			json_object_array_add(streams, so);
		}
		json_object_object_add(po, "streams", streams);
		json_object_array_add(procs, po);
	}
	json_object_object_add(o, "processes", procs);
	json_object_object_add(o, "scopes", journals_scopes_json(j));

	m = json_object_new_object();
	json_object_object_add(m, "records", json_object_new_uint64(j->kernel_records));
	json_object_object_add(m, "chunks", json_object_new_uint64(j->n_kernel));
	json_object_object_add(m, "events",
			       j->has_kernel_summary ? json_object_new_uint64(j->kernel_events)
						     : NULL);
	json_object_object_add(m, "dropped",
			       j->has_kernel_summary ? json_object_new_uint64(j->kernel_dropped)
						     : NULL);
	json_object_object_add(o, "kernel", m);
	json_object_object_add(o, "audit", audit_json(j));

	if (j->has_exit) {
		m = json_object_new_object();
		json_object_object_add(m, "status", json_object_new_int64(j->exit.status));
		json_object_object_add(m, "signal", json_object_new_int64(j->exit.signal));
		json_object_object_add(m, "wall_ns", json_object_new_uint64(j->exit.wall_ns));
		json_object_object_add(m, "stragglers", json_object_new_int64(j->exit.stragglers));
		json_object_object_add(o, "exit", m);
	} else {
		json_object_object_add(o, "exit", NULL);
	}
	json_object_object_add(o, "skipped_sections", json_object_new_uint64(j->n_skipped));
	puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
						       JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}

static bool is_id(const char *s);
static uint64_t parse_id(const char *s);
static uint8_t *fetch_bytes(uint64_t id, size_t *ret_len);
static void show_journal(const char *name, size_t fsize, struct hm_journal *j, bool json,
			 bool records);

static int journals_show(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "records", no_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	struct hm_journal *j = NULL;
	bool json = false, records = false;
	char err[256] = "";
	struct stat st;
	int c, r;

	while ((c = getopt_long(argc, argv, "jrh", opts, NULL)) != -1) {
		if (c == 'j')
			json = true;
		else if (c == 'r')
			records = true;
		else if (c == 'h')
			return show_usage(stdout), 0;
		else
			return show_usage(stderr), EXIT_USAGE;
	}
	if (optind != argc - 1)
		return show_usage(stderr), EXIT_USAGE;
	if (stat(argv[optind], &st) < 0 && errno == ENOENT && is_id(argv[optind])) {
		/* Not a file but a run id: the journal comes from the store. */
		_cleanup_free_ uint8_t *data = NULL;
		uint64_t id = parse_id(argv[optind]);
		size_t len;
		char name[64];

		data = fetch_bytes(id, &len);
		snprintf(name, sizeof(name), "store:%" PRIu64, id);
		r = hm_journal_read(data, len, 0, &j, err, sizeof(err));
		if (r == -EBADMSG || r == -EFBIG || r == -EPROTONOSUPPORT)
			die(EXIT_DATAERR, "Failed to read journal %" PRIu64 " from the store: %s", id,
			    err);
		if (r < 0)
			die(EXIT_INTERNAL, "Failed to read journal %" PRIu64 ": %s", id,
			    err[0] ? err : strerror(-r));
		show_journal(name, len, j, json, records);
		return 0;
	}
	r = hm_journal_read_file(argv[optind], 0, &j, err, sizeof(err));
	if (r == -EBADMSG || r == -EFBIG || r == -EPROTONOSUPPORT)
		die(EXIT_DATAERR, "Failed to read journal '%s': %s", argv[optind], err);
	if (r < 0)
		die(r == -ENOMEM ? EXIT_INTERNAL : EXIT_NOINPUT, "Failed to read journal '%s': %s",
		    argv[optind], err[0] ? err : strerror(-r));
	if (stat(argv[optind], &st) < 0)
		st.st_size = 0;
	show_journal(argv[optind], st.st_size, j, json, records);
	return 0;
}

/* Print and free a parsed journal. */
static void show_journal(const char *name, size_t fsize, struct hm_journal *j, bool json,
			 bool records)
{
	_cleanup_free_ struct proc *procs = NULL;
	size_t np;

	procs = calloc(j->n_streams ? j->n_streams : 1, sizeof(*procs));
	if (!procs)
		die(EXIT_INTERNAL, "out of memory");
	np = group_procs(j, procs);
	if (json)
		show_json(name, fsize, j, procs, np, records);
	else
		show_text(name, fsize, j, procs, np, records);
	hm_journal_free(j);
}

/* --- the store (hermeticd) ------------------------------------------------------------- */

static bool is_id(const char *s)
{
	uint64_t v;

	return hm_parse_u64(s, &v) == 0;
}

static uint64_t parse_id(const char *s)
{
	uint64_t v;

	if (hm_parse_u64(s, &v) < 0)
		die(EXIT_USAGE, "not a journal id: '%s' (a run id, as 'hermetic journals list' shows)",
		    s);
	return v;
}

/* An error reply of a store request: the exit code says what kind. */
static void __attribute__((noreturn)) store_die(int err, const char *msg, const char *what)
{
	if (err == -ENOENT)
		die(EXIT_NOINPUT, "%s", msg);
	if (err == -EOPNOTSUPP)
		die(EXIT_INTERNAL, "Failed to %s: this hermeticd has no journal store (%s)", what,
		    msg);
	die(EXIT_INTERNAL, "Failed to %s: %s", what, msg);
}

/* An fd of journal ID from the store, its size in *ret_size. */
static int fetch_fd(uint64_t id, uint64_t *ret_size)
{
	struct hm_journal_ref ref = { .id = id };
	struct hm_journal_info info;
	const char *msg = "";
	int sock = cli_connect(), fd = -1;
	ssize_t n;

	n = cli_call(sock, HM_REQ_JOURNAL_FETCH, &ref, sizeof(ref), -1, HM_REP_JOURNAL, &info,
		     sizeof(info), true, &fd, &msg);
	close(sock);
	if (n < 0)
		store_die(n, msg, "fetch the journal");
	if (fd < 0)
		die(EXIT_INTERNAL, "hermeticd sent no file for journal %" PRIu64, id);
	*ret_size = info.size;
	return fd;
}

static int read_all(int fd, void *buf, size_t len)
{
	size_t off = 0;

	while (off < len) {
		ssize_t n = read(fd, (char *)buf + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		off += n;
	}
	return 0;
}

static uint8_t *fetch_bytes(uint64_t id, size_t *ret_len)
{
	uint64_t size;
	_cleanup_close_ int fd = fetch_fd(id, &size);
	uint8_t *data;
	int r;

	if (size > HM_JOURNAL_MAX_SIZE)
		die(EXIT_DATAERR, "journal %" PRIu64 " is larger than a journal can be", id);
	data = malloc(size ? size : 1);
	if (!data)
		die(EXIT_INTERNAL, "out of memory");
	if ((r = read_all(fd, data, size)) < 0)
		die(EXIT_INTERNAL, "Failed to read journal %" PRIu64 ": %s", id, strerror(-r));
	*ret_len = size;
	return data;
}

/* Every journal of the caller in the store, newest first (paged: one
 * reply holds what fits in a message). */
static json_object *store_list(void)
{
	json_object *all = json_object_new_array();
	int sock = cli_connect();

	for (;;) {
		static char buf[HM_MSG_MAX];
		struct hm_journal_list req = { .skip = json_object_array_length(all) };
		const char *msg = "";
		json_object *page;
		ssize_t n;
		size_t k;

		n = cli_call(sock, HM_REQ_JOURNAL_LIST, &req, sizeof(req), -1, HM_REP_JOURNALS, buf,
			     sizeof(buf) - 1, false, NULL, &msg);
		if (n < 0)
			store_die(n, msg, "list journals");
		buf[n] = 0;
		page = json_tokener_parse(buf);
		if (!page || !json_object_is_type(page, json_type_array))
			die(EXIT_INTERNAL, "hermeticd sent a malformed journal list");
		k = json_object_array_length(page);
		for (size_t i = 0; i < k; i++)
			json_object_array_add(all, json_object_get(json_object_array_get_idx(page, i)));
		json_object_put(page);
		if (!k)
			break;
	}
	close(sock);
	return all;
}

static const char *jget_str(json_object *o, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !v)
		return NULL;
	return json_object_get_string(v);
}

static void print_row(const char *id, const char *time, const char *exit, const char *size,
		      const char *seed, const char *cmd, const char *file)
{
	printf("%-15s %-21s %4s %9s %-20s ", id, time, exit, size, seed);
	put_safe(cmd);
	if (file) {
		printf("  ");
		put_safe(file);
	}
	putchar('\n');
}

static void list_usage(FILE *f)
{
	fprintf(f, "Usage: hermetic journals list [--json] [--dir DIR]\n\n"
		   "List your journals in hermeticd's store, newest first: id, the run's start\n"
		   "time, exit status, size, seed and command. With --dir, list the journals\n"
		   "'enroll --record=DIR' copied to DIR, from DIR/index.json (no daemon needed).\n\n"
		   "  --json      a JSON array, for scripts\n"
		   "  --dir DIR   read DIR/index.json instead of the store\n\n"
		   "Exit status: 0; 65 if index.json is malformed, 66 if it is missing;\n"
		   "69 if hermeticd cannot be reached.\n");
}

static int list_dir(const char *dir, bool json)
{
	char path[4096], sz[32], st_buf[32], seed[32], id[32];
	json_object *arr;
	size_t n;

	if ((size_t)snprintf(path, sizeof(path), "%s/index.json", dir) >= sizeof(path))
		die(EXIT_USAGE, "directory name too long: %s", dir);
	if (access(path, R_OK) < 0)
		die(EXIT_NOINPUT, "Failed to read '%s': %s", path, strerror(errno));
	arr = json_object_from_file(path);
	if (!arr || !json_object_is_type(arr, json_type_array))
		die(EXIT_DATAERR, "'%s' is not a JSON array of journals", path);
	n = json_object_array_length(arr);
	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(arr, i);
		const char *file = e ? jget_str(e, "file") : NULL;
		struct stat st;

		if (!e || !json_object_is_type(e, json_type_object))
			die(EXIT_DATAERR, "'%s': entry %zu is not an object", path, i);
		/* Sizes from the files themselves; a name is one component. */
		if (file && !strchr(file, '/') && (size_t)snprintf(path, sizeof(path), "%s/%s",
								   dir, file) < sizeof(path) &&
		    lstat(path, &st) == 0 && S_ISREG(st.st_mode))
			json_object_object_add(e, "size", json_object_new_int64(st.st_size));
		else
			json_object_object_add(e, "size", NULL);
	}
	if (json) {
		puts(json_object_to_json_string_ext(arr, JSON_C_TO_STRING_PRETTY |
							 JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(arr);
		return 0;
	}
	print_row("RUN", "TIME", "EXIT", "SIZE", "SEED", "COMMAND", "FILE");
	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(arr, i), *v;
		const char *t = jget_str(e, "time"), *cmd = jget_str(e, "command");

		snprintf(id, sizeof(id), "%s", jget_str(e, "run_id") ?: "-");
		snprintf(st_buf, sizeof(st_buf), "%s", jget_str(e, "exit_status") ?: "-");
		snprintf(seed, sizeof(seed), "%s", jget_str(e, "seed") ?: "-");
		if (json_object_object_get_ex(e, "size", &v) && v)
			fmt_bytes(json_object_get_int64(v), sz, sizeof(sz));
		else
			snprintf(sz, sizeof(sz), "missing");
		print_row(id, t ? t : "-", st_buf, sz, seed, cmd ? cmd : "",
			  jget_str(e, "file") ?: "-");
	}
	json_object_put(arr);
	return 0;
}

static int journals_list(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "dir", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	const char *dir = NULL;
	bool json = false;
	json_object *arr;
	size_t n;
	int c;

	while ((c = getopt_long(argc, argv, "jd:h", opts, NULL)) != -1) {
		if (c == 'j')
			json = true;
		else if (c == 'd')
			dir = optarg;
		else if (c == 'h')
			return list_usage(stdout), 0;
		else
			return list_usage(stderr), EXIT_USAGE;
	}
	if (optind != argc)
		return list_usage(stderr), EXIT_USAGE;
	if (dir)
		return list_dir(dir, json);
	arr = store_list();
	n = json_object_array_length(arr);
	if (json) {
		puts(json_object_to_json_string_ext(arr, JSON_C_TO_STRING_PRETTY |
							 JSON_C_TO_STRING_NOSLASHESCAPE));
	} else if (!n) {
		printf("no journals in the store (record one with 'hermetic enroll --record')\n");
	} else {
		print_row("ID", "TIME", "EXIT", "SIZE", "SEED", "COMMAND", NULL);
		for (size_t i = 0; i < n; i++) {
			json_object *e = json_object_array_get_idx(arr, i), *v;
			const char *t = jget_str(e, "time"), *cmd = jget_str(e, "command");
			char sz[32] = "-";

			if (json_object_object_get_ex(e, "size", &v) && v)
				fmt_bytes(json_object_get_int64(v), sz, sizeof(sz));
			print_row(jget_str(e, "id") ?: "-", t ? t : "-",
				  jget_str(e, "exit_status") ?: "-", sz, jget_str(e, "seed") ?: "-",
				  cmd ? cmd : "", NULL);
		}
	}
	json_object_put(arr);
	return 0;
}

static void fetch_usage(FILE *f)
{
	fprintf(f, "Usage: hermetic journals fetch ID [-o FILE]\n\n"
		   "Copy journal ID from hermeticd's store into FILE (default ./ID.hjournal),\n"
		   "created 0600 under a temporary name and renamed when complete: journals hold\n"
		   "secrets (the entropy a test turned into keys).\n\n"
		   "  -o, --output FILE   where to write it\n\n"
		   "Exit status: 0; 66 if the store has no journal ID of yours, 69 if hermeticd\n"
		   "cannot be reached, 73 if FILE cannot be written.\n");
}

static int journals_fetch(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	char out_buf[64], tmp[4096], dirbuf[4096], *dir;
	const char *out = NULL;
	_cleanup_close_ int in = -1, fd = -1, dfd = -1;
	static char buf[1 << 16];
	uint64_t id, size, rnd = 0, copied = 0;
	int c, r = 0;

	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		if (c == 'o')
			out = optarg;
		else if (c == 'h')
			return fetch_usage(stdout), 0;
		else
			return fetch_usage(stderr), EXIT_USAGE;
	}
	if (optind != argc - 1)
		return fetch_usage(stderr), EXIT_USAGE;
	id = parse_id(argv[optind]);
	if (!out) {
		snprintf(out_buf, sizeof(out_buf), "%" PRIu64 HM_JOURNAL_SUFFIX, id);
		out = out_buf;
	}
	in = fetch_fd(id, &size);

	/* A temporary 0600 file next to the destination, renamed when whole. */
	snprintf(dirbuf, sizeof(dirbuf), "%s", out);
	dir = dirname(dirbuf);
	if (getrandom(&rnd, sizeof(rnd), 0) != sizeof(rnd))
		rnd = hm_now_ns() ^ getpid();
	{
		char base[4096];

		snprintf(base, sizeof(base), "%s", out);
		if ((size_t)snprintf(tmp, sizeof(tmp), "%s/.%s.%016" PRIx64, dir, basename(base),
				     rnd) >= sizeof(tmp))
			die(EXIT_USAGE, "output path too long: %s", out);
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		die(EXIT_CANTCREAT, "Failed to create '%s': %s", tmp, strerror(errno));
	if (fchmod(fd, 0600) < 0)
		r = -errno;
	while (!r) {
		ssize_t n = read(in, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			break;
		}
		if (n == 0)
			break;
		for (ssize_t off = 0; off < n && !r;) {
			ssize_t w = write(fd, buf + off, n - off);

			if (w < 0 && errno != EINTR)
				r = -errno;
			else if (w > 0)
				off += w;
		}
		copied += n;
	}
	if (!r && copied != size)
		r = -EIO;
	if (!r && fsync(fd) < 0)
		r = -errno;
	if (!r && rename(tmp, out) < 0)
		r = -errno;
	if (r < 0) {
		unlink(tmp);
		die(EXIT_CANTCREAT, "Failed to write '%s': %s", out, strerror(-r));
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0)
		fsync(dfd);
	printf("%s\n", out);
	return 0;
}

static void rm_usage(FILE *f)
{
	fprintf(f, "Usage: hermetic journals rm ID...\n\n"
		   "Remove your journals ID... from hermeticd's store.\n\n"
		   "Exit status: 0; 66 if one of them is not in the store (the others are\n"
		   "removed all the same), 69 if hermeticd cannot be reached.\n");
}

static int journals_rm(int argc, char **argv)
{
	int sock, rc = 0;

	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")))
		return rm_usage(stdout), 0;
	if (argc < 2 || argv[1][0] == '-')
		return rm_usage(stderr), EXIT_USAGE;
	for (int i = 1; i < argc; i++)
		parse_id(argv[i]);
	sock = cli_connect();
	for (int i = 1; i < argc; i++) {
		struct hm_journal_ref ref = { .id = parse_id(argv[i]) };
		struct hm_journal_count cnt;
		const char *msg = "";
		ssize_t n = cli_call(sock, HM_REQ_JOURNAL_RM, &ref, sizeof(ref), -1, HM_REP_COUNT,
				     &cnt, sizeof(cnt), true, NULL, &msg);

		if (n == -ENOENT) {
			warnx_("%s", msg);
			rc = EXIT_NOINPUT;
			continue;
		}
		if (n < 0)
			store_die(n, msg, "remove the journal");
		printf("removed journal %" PRIu64 "\n", ref.id);
	}
	close(sock);
	return rc;
}

static void gc_usage(FILE *f)
{
	fprintf(f, "Usage: hermetic journals gc [--older-than DURATION]\n\n"
		   "Remove your journals stored more than DURATION ago (default 14d; 30m, 12h,\n"
		   "7d, 0 for all) from hermeticd's store. The store also keeps at most a number\n"
		   "of journals and bytes per user, removing the oldest first (hermeticd(8)).\n\n"
		   "Exit status: 0, 69 if hermeticd cannot be reached.\n");
}

static int journals_gc(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "older-than", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	struct hm_journal_gc req = { .older_than_s = 14 * 86400 };
	struct hm_journal_count cnt;
	const char *msg = "";
	uint64_t ns;
	char b[32];
	ssize_t n;
	int c, sock;

	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		if (c == 'o') {
			if (hm_parse_duration(optarg, &ns) < 0)
				die(EXIT_USAGE, "--older-than: not a duration: '%s' (e.g. 14d, 12h, 0)",
				    optarg);
			req.older_than_s = ns / 1000000000ULL;
		} else if (c == 'h') {
			return gc_usage(stdout), 0;
		} else {
			return gc_usage(stderr), EXIT_USAGE;
		}
	}
	if (optind != argc)
		return gc_usage(stderr), EXIT_USAGE;
	sock = cli_connect();
	n = cli_call(sock, HM_REQ_JOURNAL_GC, &req, sizeof(req), -1, HM_REP_COUNT, &cnt,
		     sizeof(cnt), true, NULL, &msg);
	close(sock);
	if (n < 0)
		store_die(n, msg, "remove old journals");
	printf("removed %" PRIu64 " journal%s (%s)\n", cnt.removed, cnt.removed == 1 ? "" : "s",
	       fmt_bytes(cnt.bytes, b, sizeof(b)));
	return 0;
}
