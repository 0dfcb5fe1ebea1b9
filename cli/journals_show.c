// SPDX-License-Identifier: MIT
/*
 * hermetic journals show ID|FILE: what a journal holds, as text or JSON.
 * Parsing happens here, unprivileged; a FILE needs no daemon.
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
#include "journals.h"

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

/* Does the journal's configuration carry the option (or note) key? */
static bool has_opt(const struct hm_journal *j, const char *key)
{
	for (size_t i = 0; j->has_config && i < j->config.n_opts; i++)
		if (!strcmp(j->config.opts[i].key, key))
			return true;
	return false;
}

static void show_text(const char *path, size_t fsize, const struct hm_journal *j, struct proc *p,
		      size_t np, bool records)
{
	const struct hm_journal_config *c = &j->config;
	const struct hm_journal_fingerprint *f = &j->fingerprint;
	char a[64], b[64];
	size_t names = 0, nthreads = 0;

	printf("journal    ");
	jl_put_safe(path);
	printf(" (format %u.%u, %s", j->major, j->minor, jl_fmt_bytes(fsize, a, sizeof(a)));
	printf(", %s uncompressed)\n", jl_fmt_bytes(j->size, b, sizeof(b)));
	if (c->run_id || c->started_ns)
		printf("run        %" PRIu64 " by uid %" PRIu32 ", started %s\n", c->run_id, c->uid,
		       jl_fmt_time(c->started_ns, a, sizeof(a)));
	printf("command   ");
	for (size_t i = 0; i < c->argc; i++) {
		putchar(' ');
		jl_put_shell_word(c->argv[i]);
	}
	printf("%s\n", c->argc ? "" : " (none recorded)");
	printf("seed       %" PRIu64 "%s\n", c->cfg.seed, c->cfg.seed_set ? "" : " (generated)");
	printf("clock      %s, now %s, tick %s\n",
	       c->cfg.clock_virtual ? "virtual" : "off (real values)",
	       jl_fmt_time(c->cfg.now_ns, a, sizeof(a)), jl_fmt_ns(c->cfg.tick_ns, b, sizeof(b)));
	printf("rng        %s\n", c->cfg.rng ? "seeded" : "off (real values)");
	printf("network    %s", c->cfg.network == HM_NETWORK_OFF     ? "off (not enforced)"
				 : c->cfg.network == HM_NETWORK_AUDIT ? "audit (reported, not refused)"
								      : "block");
	if (c->cfg.network != HM_NETWORK_OFF)
		printf(", loopback %s, unix sockets %s", c->cfg.loopback ? "allowed" : "refused",
		       c->cfg.unix_sockets ? "allowed" : "refused");
	printf("\naslr       %s\nspin limit %" PRIu64 "\n", c->cfg.aslr ? "on" : "off",
	       c->cfg.spin_limit);
	if (c->n_opts) {
		printf("options   ");
		for (size_t i = 0; i < c->n_opts; i++) {
			printf(" --");
			jl_put_safe(c->opts[i].key);
			if (c->opts[i].value) {
				putchar(' ');
				jl_put_shell_word(c->opts[i].value);
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
			jl_put_safe(v);
			putchar('\n');
		}
		printf("tz         ");
		jl_put_safe((v = hm_journal_fp_get(f, HM_FP_TZ)) ? v : "(unknown)");
		printf("\ngit        ");
		jl_put_safe((v = hm_journal_fp_get(f, HM_FP_GIT_COMMIT)) ? v
								      : "(not in a working tree)");
		printf("\nenv       ");
		for (size_t i = 0; i < f->n_env; i++) {
			if (!f->env[i].value) {
				names++;
				continue;
			}
			putchar(' ');
			jl_put_safe(f->env[i].key);
			putchar('=');
			jl_put_shell_word(f->env[i].value);
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
		       " entropy (%s)  %5" PRIu64 " wait (%" PRIu64 " timed out",
		       key, jl_proc_images(j, &p[i], images, sizeof(images)), p[i].threads,
		       p[i].threads == 1 ? " " : "s", p[i].clock, p[i].entropy,
		       jl_fmt_bytes(p[i].entropy_bytes, a, sizeof(a)), p[i].wait, p[i].timed_out);
		if (p[i].lag)
			printf(", %" PRIu64 " by the lag bound", p[i].lag);
		printf(")");
		if (p[i].ext)
			printf("  %" PRIu64 " unknown records", p[i].ext);
		printf("  %s\n",
		       p[i].last_main ? jl_end_name(p[i].last_main) : "no main thread stream");
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
	else if (has_opt(j, "no-daemon"))
		printf("; no kernel summary (recorded with --no-daemon: the kernel's view is hermeticd's)");
	else if (j->n_scopes) /* (replay reads it the same way) */
		printf("; none in a journal of scopes only (--journal-per-scope: the kernel's stream is "
		       "the whole run's)");
	else
		printf("; no kernel summary (hermeticd sent no kernel stream for the run)");
	putchar('\n');
	show_audit_text(j);
	if (j->has_exit) {
		printf("exit       ");
		if (j->exit.signal)
			printf("killed by signal %" PRId32, j->exit.signal);
		else
			printf("status %" PRId32, j->exit.status);
		printf(" after %s", jl_fmt_ns(j->exit.wall_ns, a, sizeof(a)));
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
		jl_show_records(&j->streams[i], false);
}

static void show_journal(const char *name, size_t fsize, struct hm_journal *j, bool json,
			 bool records);

int jl_journals_show(int argc, char **argv)
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

	opterr = 0;
	while ((c = getopt_long(argc, argv, "jrh", opts, NULL)) != -1) {
		if (c == 'j')
			json = true;
		else if (c == 'r')
			records = true;
		else if (c == 'h')
			return show_usage(stdout), 0;
		else
			return cli_bad_option("hermetic journals show", "jrh", argv);
	}
	if (optind != argc - 1)
		return show_usage(stderr), EXIT_USAGE;
	if (stat(argv[optind], &st) < 0 && errno == ENOENT && jl_is_id(argv[optind])) {
		/* Not a file but a run id: the journal comes from the store. */
		_cleanup_free_ uint8_t *data = NULL;
		uint64_t id = jl_parse_id(argv[optind]);
		size_t len;
		char name[64];

		data = jl_fetch_bytes(id, &len);
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
	np = jl_group_procs(j, procs);
	if (json)
		jl_show_json(name, fsize, j, procs, np, records);
	else
		show_text(name, fsize, j, procs, np, records);
	hm_journal_free(j);
}

