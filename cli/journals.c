// SPDX-License-Identifier: MIT
/*
 * hermetic journals COMMAND: journals of recorded runs.
 *
 *   show FILE [--json] [--records]   what a journal holds, as text or JSON
 *
 * Reading a journal needs no daemon: show works on any file, offline.
 * The commands that work on the daemon's store (list, fetch, rm, gc) come
 * with the store; they go into the table below.
 */
#include <getopt.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <sys/stat.h>
#include "util.h"
#include "config.h"
#include "journal.h"
#include "cli.h"

#define EXIT_DATAERR 65 /* sysexits EX_DATAERR: the journal is malformed */
#define EXIT_NOINPUT 66 /* sysexits EX_NOINPUT: the journal cannot be opened */

static int journals_show(int argc, char **argv);

static const struct sub {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
} subs[] = {
	{ "show", journals_show, "what a journal file holds: configuration, machine, processes" },
};

static void usage(FILE *f)
{
	fprintf(f, "Usage: hermetic journals COMMAND [OPTIONS]\n\nCommands:\n");
	for (size_t i = 0; i < ARRAY_SIZE(subs); i++)
		fprintf(f, "  %-6s %s\n", subs[i].name, subs[i].summary);
	fprintf(f, "\nRun 'hermetic journals COMMAND --help' for a command's options.\n");
}

static void show_usage(FILE *f)
{
	fprintf(f, "Usage: hermetic journals show FILE [--json] [--records]\n\n"
		   "Show what a journal holds: the run's configuration and command, the machine\n"
		   "it ran on, its processes as a tree by lineage key with how many values of\n"
		   "each kind the shim handed out, the kernel's events and how many were\n"
		   "dropped, and the exit status. Works offline, without hermeticd.\n\n"
		   "  --json      one JSON object, for scripts\n"
		   "  --records   also every value of every thread, in order, numbered as\n"
		   "              replay reports them (entropy shown up to 32 bytes)\n\n"
		   "Exit status: 0, 65 for a malformed, truncated or too new journal,\n"
		   "66 if FILE cannot be read.\n");
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
	}
	return "ended";
}

/* One process: the streams of one lineage key (threads and exec generations). */
struct proc {
	const char *lineage;
	size_t first, n; /* range in j->streams */
	uint64_t threads; /* streams: threads of all its images */
	uint64_t gens; /* images: the last exec generation + 1 */
	uint64_t clock, entropy, entropy_bytes, wait, timed_out, ext;
	const struct hm_jstream_summary *last_main; /* thread 0 of the last generation */
};

static size_t group_procs(const struct hm_journal *j, struct proc *p)
{
	size_t np = 0;

	for (size_t i = 0; i < j->n_streams; i++) {
		const struct hm_jstream_summary *s = &j->streams[i].sum;
		struct proc *cur;

		if (!np || strcmp(p[np - 1].lineage, s->hdr.lineage))
			p[np++] = (struct proc){ .lineage = s->hdr.lineage, .first = i };
		cur = &p[np - 1];
		cur->n++;
		/* One stream per thread of each image (exec generation). */
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
		printf("\nstream %s thread %" PRIu32 " image %" PRIu32 " (pid %" PRIu32
		       ", tid %" PRIu32 "): %" PRIu64 " records\n",
		       d.hdr.lineage, d.hdr.thread, d.hdr.gen, d.hdr.pid, d.hdr.tid,
		       st->sum.records);
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
		char key[HM_LINEAGE_MAX + 64];

		snprintf(key, sizeof(key), "%*s%s", (int)(depth > 1 ? 2 * (depth - 1) : 0), "",
			 p[i].lineage);
		printf("  %-14s %3" PRIu64 " thread%s  %8" PRIu64 " clock  %6" PRIu64
		       " entropy (%s)  %5" PRIu64 " wait (%" PRIu64 " timed out)",
		       key, p[i].threads, p[i].threads == 1 ? " " : "s", p[i].clock, p[i].entropy,
		       fmt_bytes(p[i].entropy_bytes, a, sizeof(a)), p[i].wait, p[i].timed_out);
		if (p[i].gens > 1)
			printf("  %" PRIu64 " images", p[i].gens);
		if (p[i].ext)
			printf("  %" PRIu64 " unknown records", p[i].ext);
		printf("  %s\n",
		       p[i].last_main ? end_name(p[i].last_main) : "no main thread stream");
	}
	printf("kernel     %" PRIu64 " records in %zu chunk%s", j->kernel_records, j->n_kernel,
	       j->n_kernel == 1 ? "" : "s");
	if (j->has_kernel_summary)
		printf("; %" PRIu64 " events, %" PRIu64 " dropped%s", j->kernel_events,
		       j->kernel_dropped,
		       j->kernel_dropped ? " (the kernel's view is incomplete)" : "");
	else
		printf("; no kernel summary (recorded without hermeticd?)");
	putchar('\n');
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

static int journals_show(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "records", no_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	_cleanup_free_ struct proc *procs = NULL;
	struct hm_journal *j = NULL;
	bool json = false, records = false;
	char err[256] = "";
	struct stat st;
	size_t np;
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
	r = hm_journal_read_file(argv[optind], 0, &j, err, sizeof(err));
	if (r == -EBADMSG || r == -EFBIG || r == -EPROTONOSUPPORT)
		die(EXIT_DATAERR, "Failed to read journal '%s': %s", argv[optind], err);
	if (r < 0)
		die(r == -ENOMEM ? EXIT_INTERNAL : EXIT_NOINPUT, "Failed to read journal '%s': %s",
		    argv[optind], err[0] ? err : strerror(-r));
	if (stat(argv[optind], &st) < 0)
		st.st_size = 0;
	procs = calloc(j->n_streams ? j->n_streams : 1, sizeof(*procs));
	if (!procs)
		die(EXIT_INTERNAL, "out of memory");
	np = group_procs(j, procs);
	if (json)
		show_json(argv[optind], st.st_size, j, procs, np, records);
	else
		show_text(argv[optind], st.st_size, j, procs, np, records);
	hm_journal_free(j);
	return 0;
}
