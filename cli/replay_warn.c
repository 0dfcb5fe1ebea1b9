// SPDX-License-Identifier: MIT
/*
 * replay, before CMD starts: stderr names everything that makes the replay
 * less than faithful to the recording (replay.h): another machine or
 * environment, threads that may interleave otherwise, streams cut short, a
 * kernel view missing, processes that ran without the shim.
 */
#include <inttypes.h>
#include <limits.h>
#include "util.h"
#include "journal.h"
#include "cli.h"
#include "record.h"
#include "replay.h"

extern char **environ;

static const char *env_get(char *const *env, const char *name)
{
	size_t n = strlen(name);

	for (; env && *env; env++)
		if (!strncmp(*env, name, n) && (*env)[n] == '=')
			return *env + n + 1;
	return NULL;
}

static void warn_differs(const char *what, const char *then, const char *now)
{
	if (!then && !now)
		return;
	if (then && now && !strcmp(then, now))
		return;
	warnx_("replay: %s differs: recorded %s%s%s, now %s%s%s", what, then ? "'" : "",
	       then ? then : "(unset)", then ? "'" : "", now ? "'" : "", now ? now : "(unset)",
	       now ? "'" : "");
}

/* What the journal's --identity pins, replay restores (docs/identity.md):
 * the time zone (tz=: TZ and /etc/localtime) and the locale (locale=:
 * LANG, LC_ALL, LANGUAGE) are the recorded run's whatever this machine's. */
static bool identity_pins(const struct hm_journal *j, const char *what)
{
	const char *axis = !strcmp(what, "time zone") || !strcmp(what, "TZ") ? "tz="
			   : !strcmp(what, "LANG") || !strcmp(what, "LANGUAGE") ||
					   !strncmp(what, "LC_", 3)
				   ? "locale="
				   : NULL;

	for (size_t i = 0; axis && j->has_config && i < j->config.n_opts; i++) {
		const char *v = j->config.opts[i].value;

		if (strcmp(j->config.opts[i].key, "identity") || !v)
			continue;
		if (!strcmp(v, "fixed"))
			return true;
		for (const char *p = v; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
			if (!strncmp(p, axis, strlen(axis)))
				return true;
	}
	return false;
}

static void warn_fingerprint(const struct hm_journal *j)
{
	static const struct {
		const char *key, *what;
	} fields[] = {
		{ HM_FP_KERNEL, "kernel" }, { HM_FP_LIBC, "libc" }, { HM_FP_ARCH, "architecture" },
		{ HM_FP_TZ, "time zone" },  { HM_FP_GIT_COMMIT, "git commit" },
	};
	const struct hm_journal_fingerprint *rec = &j->fingerprint;
	struct hm_journal_fingerprint now = {};
	char cwd[PATH_MAX];

	if (!j->has_fingerprint) {
		warnx_("replay: the journal has no fingerprint of the machine it was recorded on");
		return;
	}
	/* The git commit of where replay was started, as record took it. */
	if (hm_journal_fingerprint_collect(&now, environ, getcwd(cwd, sizeof(cwd)) ? cwd : NULL) <
	    0)
		die(EXIT_INTERNAL, "out of memory");
	for (size_t i = 0; i < ARRAY_SIZE(fields); i++) {
		const char *a = hm_journal_fp_get(rec, fields[i].key);
		const char *b = hm_journal_fp_get(&now, fields[i].key);

		/* A recording outside a working tree says nothing about commits. */
		if ((!strcmp(fields[i].key, HM_FP_GIT_COMMIT) && !a) ||
		    identity_pins(j, fields[i].what))
			continue;
		warn_differs(fields[i].what, a, b);
	}
	/* The variables whose values change what programs do. */
	for (size_t i = 0; i < rec->n_env; i++) {
		const char *k = rec->env[i].key;

		if (hm_journal_env_keeps_value(k) && !identity_pins(j, k))
			warn_differs(k, rec->env[i].value, env_get(environ, k));
	}
	for (char **e = environ; *e; e++) {
		char name[256];
		size_t n = strcspn(*e, "=");
		bool recorded = false;

		if (n >= sizeof(name))
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)n, *e);
		if (!hm_journal_env_keeps_value(name) || identity_pins(j, name))
			continue;
		for (size_t k = 0; k < rec->n_env; k++)
			recorded |= !strcmp(rec->env[k].key, name);
		if (!recorded)
			warn_differs(name, NULL, *e + n + 1);
	}
	hm_journal_fingerprint_done(&now);
}

static void warn_streams(const struct hm_journal *j)
{
	uint64_t threads = 0, threaded_procs = 0, cut = 0, last = 0;
	const char *first_cut = NULL;
	bool counted = false;

	for (size_t i = 0; i < j->n_streams; i++) {
		const struct hm_jstream_summary *s = &j->streams[i].sum;

		if (last != s->hdr.image)
			counted = false;
		last = s->hdr.image;
		if (s->hdr.thread > 0) {
			threads++;
			if (!counted)
				threaded_procs++;
			counted = true;
		}
		if (!s->ended) {
			if (!cut)
				first_cut = s->hdr.lineage;
			cut++;
		}
	}
	if (threads)
		warnx_("replay: the recording ran %" PRIu64 " thread%s besides main threads in %" PRIu64
		       " process%s: each thread gets its own values back in the order it asked, but "
		       "threads that share state may interleave differently",
		       threads, threads == 1 ? "" : "s", threaded_procs,
		       threaded_procs == 1 ? "" : "es");
	if (cut)
		warnx_("replay: %" PRIu64 " stream%s ended without an end record (process %s first: "
		       "killed, or cut at a torn write); past its end a process runs on live values",
		       cut, cut == 1 ? "" : "s", first_cut);
	if (!j->has_kernel_summary && j->n_scopes)
		warnx_("replay: the journal holds scopes (tests) only, not the run's kernel view: "
		       "processes that ran without the shim cannot be named");
	else if (!j->has_kernel_summary)
		warnx_("replay: the journal has no kernel view (recorded without hermeticd): "
		       "processes that ran without the shim cannot be named");
	else if (j->kernel_dropped)
		warnx_("replay: the kernel's view of the recording is incomplete: %" PRIu64
		       " of %" PRIu64 " events were lost",
		       j->kernel_dropped, j->kernel_events + j->kernel_dropped);
}

/* Processes the kernel saw without the shim: their values were never the
 * shim's to record, so they are live in the replay too. */
static void warn_unshimmed(const struct hm_journal *j)
{
	struct hm_audit_acc a;
	char line[1024] = "";
	size_t used = 0, count = 0;

	if (journal_audit(j, &a) < 0)
		die(EXIT_INTERNAL, "out of memory");
	_cleanup_free_ struct hm_audit_proc *p = a.procs;
	for (uint32_t i = 0; i < a.n_procs; i++) {
		if (!hm_audit_escaped(&p[i]))
			continue;
		if (count++ < 4 && used < sizeof(line))
			used += snprintf(line + used, sizeof(line) - used,
					 "%s%s (pid %u, %" PRIu64 " getrandom, %" PRIu64
					 " bytes, %u clock syscalls)",
					 used ? "; " : "", p[i].path[0] ? p[i].path : p[i].comm,
					 p[i].pid, (uint64_t)p[i].getrandom + p[i].random_reads,
					 p[i].getrandom_bytes,
					 p[i].clock);
	}
	if (count)
		warnx_("replay: %zu process%s ran without the shim in the recording; %s values "
		       "are not replayable (the kernel's records keep what %s received): %s%s",
		       count, count == 1 ? "" : "es", count == 1 ? "its" : "their",
		       count == 1 ? "it" : "they", line, count > 4 ? "; ..." : "");
}

void replay_warn_unfaithful(const struct hm_journal *j)
{
	warn_fingerprint(j);
	warn_streams(j);
	warn_unshimmed(j);
}
