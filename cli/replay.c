// SPDX-License-Identifier: MIT
/*
 * hermetic replay JOURNAL [--no-strict] [-- CMD [ARGS...]]
 *
 * Enrolls a new run under the journal's recorded configuration (it wins
 * over everything local; CMD defaults to the recorded argv) and feeds every
 * process's recorded values back, per lineage key and thread: the shim reads
 * the streams from a private directory (HERMETIC_REPLAY) and appends what
 * happened to a report file (HERMETIC_REPLAY_REPORT). Before CMD starts,
 * stderr names everything that makes the replay less than faithful.
 */
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <sys/stat.h>
#include "util.h"
#include "config.h"
#include "journal.h"
#include "cli.h"
#include "enroll.h"
#include "record.h"
#include "tmpdir.h"
#include "trust.h"
#include "replay.h"
#include "scope.h"

extern char **environ;

#define MAX_ARGS 4096
#define REPORT_SHOW 8

struct replay {
	const char *source; /* the file or store id as given */
	struct hm_journal *j;
	unsigned char *bytes; /* the journal's file as parsed (its digest says whose it is) */
	size_t len;
	struct replay_policy pol;
	bool strict;
	const char *scope; /* --scope NAME */
	int32_t chosen; /* its occurrence in the journal (j->scopes), -1 none */
	struct run_tmpdir dir; /* private: streams/ and report */
	char streams[PATH_MAX + 16];
	char report[PATH_MAX + 16];
};


static void usage(FILE *f)
{
	fprintf(f,
		"Usage: hermetic replay JOURNAL [--no-strict] [--scope NAME] [--yes]\n"
		"                       [--network block|audit|off] [--allow HOST[:PORT]]...\n"
		"                       [--no-daemon] [--journal-policy] [-- CMD [ARGS...]]\n"
		"\n"
		"Run a recorded command again on the values its journal holds: the same\n"
		"clock readings and random bytes, process by process (lineage key) and\n"
		"thread by thread. JOURNAL is a file ('enroll --record=DIR') or the id of\n"
		"a journal in hermeticd's store ('hermetic journals list').\n"
		"\n"
		"The run is enrolled under the journal's configuration (seed, clock, rng,\n"
		"filesystem and environment options); it wins over local ones. Not the\n"
		"network: it is blocked unless this command line opens it; the journal's\n"
		"--no-loopback and --no-unix are kept. CMD defaults to the recorded\n"
		"command. Before CMD starts, stderr names what makes the replay less than\n"
		"faithful: another kernel, libc, TZ, locale, PYTHONHASHSEED or\n"
		"architecture, threads, lost events, processes that ran without the shim.\n"
		"\n"
		"A journal you did not record on this machine (its SHA-256 is not in\n"
		"$XDG_STATE_HOME/hermetic/recorded, default ~/.local/state/hermetic/recorded,\n"
		"where enroll --record notes every journal it keeps) is shown first: its\n"
		"command, network and options; it runs after 'y' on a terminal, or with\n"
		"--yes.\n"
		"\n"
		"  --no-strict         when a process asks for more or other values than\n"
		"                      were recorded, continue on live values and say how many\n"
		"  --scope NAME        replay one scope (a test: pytest's node id) of the\n"
		"                      journal: its values are fed back wherever a process\n"
		"                      enters a scope of that name; everything outside it runs\n"
		"                      on live values. Of several, the first one left failed\n"
		"                      (else the first)\n"
		"  --yes, -y           run a journal you did not record without asking\n"
		"  --network block|audit|off\n"
		"                      the replay's network, as enroll's (default block,\n"
		"                      whatever the journal says)\n"
		"  --allow HOST[:PORT] open this destination (repeatable), as enroll's\n"
		"  --no-daemon         shim only, as enroll's: NO kernel network refusal\n"
		"  --journal-policy    take the journal's --network off or audit, --allow\n"
		"                      and --no-daemon as recorded\n"
		"  -h, --help          show this help\n"
		"\n"
		"Exit status: CMD's own; 87 when a process asked for a value the journal\n"
		"does not hold (strict, the default: the mismatch is named on stderr);\n"
		"79 a journal you did not record, not run (no terminal to ask on and no\n"
		"--yes, or the answer was not 'y'); 65 a malformed, truncated or too new\n"
		"journal; 66 a journal that cannot be read or fetched; and enroll's own\n"
		"(2, 68, 69, 70, 77, 126, 127).\n");
}

static void __attribute__((noreturn)) bad_usage(const char *what)
{
	fprintf(stderr, "hermetic replay: %s\nTry 'hermetic replay --help'.\n", what);
	exit(EXIT_USAGE);
}

/* --- loading -------------------------------------------------------------------------- */

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

/* A journal from hermeticd's store: it hands its owner a read-only fd. */
static struct hm_journal *fetch(struct replay *rp, const char *id_s, char *err, size_t errlen,
				int *ret)
{
	struct hm_journal_ref ref = {};
	struct hm_journal_info info;
	struct hm_journal *j = NULL;
	const char *msg = NULL;
	_cleanup_free_ uint8_t *buf = NULL;
	_cleanup_close_ int sock = -1;
	int fd = -1;
	size_t got = 0;
	struct stat st;
	ssize_t n;

	if (hm_parse_u64(id_s, &ref.id) < 0)
		die(EXIT_NOINPUT, "Failed to read journal '%s': not a file, nor a store id", id_s);
	sock = cli_connect();
	n = cli_call(sock, HM_REQ_JOURNAL_FETCH, &ref, sizeof(ref), -1, HM_REP_JOURNAL, &info,
		     sizeof(info), true, &fd, &msg);
	if (n < 0)
		die(EXIT_NOINPUT, "Failed to fetch journal %s from hermeticd: %s", id_s, msg);
	if (fd < 0)
		die(EXIT_INTERNAL, "hermeticd sent no journal descriptor");
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > HM_JOURNAL_MAX_SIZE)
		die(EXIT_NOINPUT, "Failed to fetch journal %s: not a regular file of sane size", id_s);
	buf = malloc(st.st_size ? st.st_size : 1);
	if (!buf)
		die(EXIT_INTERNAL, "out of memory");
	while (got < (size_t)st.st_size) {
		n = pread(fd, buf + got, st.st_size - got, got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += n;
	}
	close(fd);
	*ret = hm_journal_read(buf, got, 0, &j, err, errlen);
	rp->bytes = buf;
	rp->len = got;
	buf = NULL;
	return j;
}

static struct hm_journal *load(struct replay *rp, const char *src)
{
	struct hm_journal *j = NULL;
	char err[256] = "";
	struct stat st;
	int r;

	if (stat(src, &st) == 0 || !all_digits(src)) {
		/* The very bytes parsed are the ones whose digest is checked. */
		r = trust_read_file(src, HM_JOURNAL_MAX_SIZE, &rp->bytes, &rp->len, err, sizeof(err));
		if (r == 0)
			r = hm_journal_read(rp->bytes, rp->len, 0, &j, err, sizeof(err));
	} else {
		j = fetch(rp, src, err, sizeof(err), &r);
	}
	if (r == -EBADMSG || r == -EFBIG || r == -EPROTONOSUPPORT)
		die(EXIT_DATAERR, "Failed to read journal '%s': %s", src, err);
	if (r < 0)
		die(r == -ENOMEM ? EXIT_INTERNAL : EXIT_NOINPUT, "Failed to read journal '%s': %s",
		    src, err[0] ? err : strerror(-r));
	return j;
}

/* --- the replay directory -------------------------------------------------------------- */

/* --scope NAME: which of the journal's scopes of that name. */
static void choose_scope(struct replay *rp)
{
	const struct hm_journal *j = rp->j;
	char names[1024] = "";
	size_t used = 0, count = 0;

	rp->chosen = -1;
	for (size_t i = 0; i < j->n_scopes; i++) {
		const struct hm_journal_scope *sc = &j->scopes[i];

		if (sc->kind != HM_JSCOPE_SCOPE)
			continue;
		if (!strcmp(sc->name, rp->scope)) {
			count++;
			if (rp->chosen < 0 || (sc->status == HM_SCOPE_FAILED &&
					       j->scopes[rp->chosen].status != HM_SCOPE_FAILED))
				rp->chosen = (int32_t)i;
		} else if (used < sizeof(names) - 1) {
			used += snprintf(names + used, sizeof(names) - used, "%s'%s'", used ? ", " : "",
					 sc->name);
		}
	}
	if (rp->chosen < 0)
		die(EXIT_DATAERR, "journal '%s' has no scope named '%s'%s%s", rp->source, rp->scope,
		    names[0] ? "; its scopes: " : " (it has no scopes)", names);
	if (count > 1)
		warnx_("replay: the journal has %zu scopes named '%s'; replaying the %s one", count,
		       rp->scope, j->scopes[rp->chosen].status == HM_SCOPE_FAILED ? "first failed" : "first");
}

/* Every stream as "<lineage>.<thread>.<image>.hjs" (image in 16 hex digits,
 * as the shim names them) in a 0700 directory of our own (the streams hold
 * secrets), and an empty report file. */
static void extract(struct replay *rp)
{
	_cleanup_close_ int sfd = -1;
	struct eng_error err;
	int fd;

	if (run_tmpdir_make(&rp->dir, "hermetic-replay", "a replay directory", &err) < 0)
		die(EXIT_INTERNAL, "%s", err.msg);
	snprintf(rp->streams, sizeof(rp->streams), "%s/streams", rp->dir.path);
	snprintf(rp->report, sizeof(rp->report), "%s/report", rp->dir.path);
	if (mkdir(rp->streams, 0700) < 0)
		die(EXIT_INTERNAL, "Failed to create '%s': %s", rp->streams, strerror(errno));
	sfd = open(rp->streams, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sfd < 0)
		die(EXIT_INTERNAL, "Failed to open '%s': %s", rp->streams, strerror(errno));
	for (size_t i = 0; i < rp->j->n_streams; i++) {
		const struct hm_journal_stream *s = &rp->j->streams[i];
		char name[HM_LINEAGE_MAX + 48], sub[300] = "";
		const char *dir = s->scope >= 0 ? rp->j->scopes[s->scope].dir : NULL;
		int k;

		/* --scope: that scope's streams only, in "scope" ("scope+<k>" for
		 * its continuations), where the shim looks for them. */
		if (rp->scope) {
			const char *chosen = rp->j->scopes[rp->chosen].dir, *plus;

			if (!dir || strncmp(dir, chosen, strlen(chosen)) ||
			    (dir[strlen(chosen)] && dir[strlen(chosen)] != '+'))
				continue;
			plus = dir + strlen(chosen);
			snprintf(sub, sizeof(sub), "scope%s/", plus);
		} else if (dir) {
			snprintf(sub, sizeof(sub), "%s/", dir); /* the reader checked its bytes */
		}
		if (sub[0]) {
			sub[strlen(sub) - 1] = 0;
			if (mkdirat(sfd, sub, 0700) < 0 && errno != EEXIST)
				die(EXIT_INTERNAL, "Failed to create '%s/%s': %s", rp->streams, sub,
				    strerror(errno));
			sub[strlen(sub)] = '/';
		}
		/* The reader validated the lineage key: digits and dots only. */
		snprintf(name, sizeof(name), "%s%s.%" PRIu32 ".%016" PRIx64 ".hjs", sub,
			 s->sum.hdr.lineage, s->sum.hdr.thread, s->sum.hdr.image);
		fd = openat(sfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0)
			die(EXIT_INTERNAL, "Failed to create '%s/%s': %s", rp->streams, name,
			    strerror(errno));
		k = hm_write_all(fd, s->data, s->len);
		if (k < 0 || close(fd) < 0)
			die(EXIT_INTERNAL, "Failed to write '%s/%s': %s", rp->streams, name,
			    strerror(k < 0 ? -k : errno));
	}
	fd = open(rp->report, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		die(EXIT_INTERNAL, "Failed to create '%s': %s", rp->report, strerror(errno));
	close(fd);
}

/* --- what makes the replay less than faithful ------------------------------------------ */

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
		if (!strcmp(fields[i].key, HM_FP_GIT_COMMIT) && !a)
			continue;
		warn_differs(fields[i].what, a, b);
	}
	/* The variables whose values change what programs do. */
	for (size_t i = 0; i < rec->n_env; i++) {
		const char *k = rec->env[i].key;

		if (hm_journal_env_keeps_value(k))
			warn_differs(k, rec->env[i].value, env_get(environ, k));
	}
	for (char **e = environ; *e; e++) {
		char name[256];
		size_t n = strcspn(*e, "=");
		bool recorded = false;

		if (n >= sizeof(name))
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)n, *e);
		if (!hm_journal_env_keeps_value(name))
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

static void before_spawn(struct enroll *e, void *userdata)
{
	struct replay *rp = userdata;

	warn_fingerprint(rp->j);
	warn_streams(rp->j);
	warn_unshimmed(rp->j);
}

/* --- the report ------------------------------------------------------------------------ */

/* What the recording's image ran: the binary the kernel saw its recorded
 * pid exec, else the executable's name the stream holds, else nothing. */
static void proc_name(const struct hm_journal *j, const struct hm_audit_proc *kp, uint32_t nkp,
		      uint64_t image, unsigned thread, char *buf, size_t size)
{
	const struct hm_journal_stream *s = hm_journal_find_stream(j, image, thread);

	buf[0] = 0;
	if (!s)
		s = hm_journal_find_stream(j, image, 0);
	if (!s)
		return;
	snprintf(buf, size, " (%s)", s->sum.hdr.exe);
	for (uint32_t i = 0; i < nkp; i++) {
		if (kp[i].pid != s->sum.hdr.pid)
			continue;
		if (kp[i].path[0] || kp[i].comm[0])
			snprintf(buf, size, " (%s)", kp[i].path[0] ? kp[i].path : kp[i].comm);
		return;
	}
}

/* Read what the shim appended: mismatches (strict) and live values. */
static int read_report(struct replay *rp, int code)
{
	struct hm_audit_acc a = {};
	_cleanup_free_ struct hm_audit_proc *kp = journal_audit(rp->j, &a) < 0 ? NULL : a.procs;
	uint32_t nkp = kp ? a.n_procs : 0;
	_cleanup_fclose_ FILE *f = fopen(rp->report, "re");
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;
	uint64_t live = 0, live_threads = 0, mismatches = 0;

	while (f && getline(&line, &cap, f) > 0) {
		char lineage[HM_LINEAGE_MAX + 1], asked[64], recorded[64];
		unsigned thread;
		uint64_t call, count, image;

		line[strcspn(line, "\n")] = 0;
		if (sscanf(line, "mismatch %255s %u %16" SCNx64 " %" SCNu64 " %63s %63s", lineage,
			   &thread, &image, &call, asked, recorded) == 6) {
			char what[160];

			proc_name(rp->j, kp, nkp, image, thread, what, sizeof(what));
			if (mismatches++ < REPORT_SHOW)
				warnx_("replay mismatch: process %s%s thread %u, call #%" PRIu64
				       ": asked %s, recorded %s",
				       lineage, what, thread, call, asked, recorded);
		} else if (sscanf(line, "live %255s %u %16" SCNx64 " %" SCNu64, lineage, &thread,
				  &image, &count) == 4) {
			live += count;
			live_threads++;
		}
	}
	if (mismatches > REPORT_SHOW)
		warnx_("replay: %" PRIu64 " more mismatches", mismatches - REPORT_SHOW);
	if (mismatches) {
		warnx_("replay failed: the program asked for values the journal does not hold "
		       "(--no-strict continues on live values)");
		return EXIT_REPLAY;
	}
	if (rp->strict && code == EXIT_REPLAY) {
		warnx_("replay failed: a process stopped at a replay mismatch (see above)");
		return EXIT_REPLAY;
	}
	if (code) {
		char net[2048] = "";
		size_t used = 0;

		/* The network as this replay had it (the journal's is not taken). */
		if (rp->pol.network)
			used += snprintf(net + used, sizeof(net) - used, " --network=%s", rp->pol.network);
		for (size_t i = 0; i < rp->pol.n_allow && used < sizeof(net); i++)
			used += snprintf(net + used, sizeof(net) - used, " --allow=%s", rp->pol.allow[i]);
		if (rp->pol.no_daemon && used < sizeof(net))
			used += snprintf(net + used, sizeof(net) - used, " --no-daemon");
		if (rp->pol.journal_policy && used < sizeof(net))
			snprintf(net + used, sizeof(net) - used, " --journal-policy");
		warnx_("command exited with status %d; replay again with:\n  hermetic replay %s%s%s%s%s%s",
		       code, rp->strict ? "" : "--no-strict ", rp->source, rp->scope ? " --scope '" : "",
		       rp->scope ? rp->scope : "", rp->scope ? "'" : "", net);
	}
	if (!rp->strict) {
		if (live)
			warnx_("replay: %" PRIu64 " value%s %s live (not in the journal), in %" PRIu64
			       " thread%s",
			       live, live == 1 ? "" : "s", live == 1 ? "was" : "were", live_threads,
			       live_threads == 1 ? "" : "s");
		else
			warnx_("replay: every value came from the journal");
	}
	return code;
}

/* --- the run ---------------------------------------------------------------------------- */

/* The options of a run that a journal carries (enroll_parse records them);
 * anything else, --record or --help from a crafted journal, is not taken. */
static bool run_option(const char *name)
{
	static const char *const names[] = {
		"allow", "no-daemon", "grace", "fs", "temp-parent", "no-chdir", "env",
		"unset", "scrub-env", "keep-env", "print-boundary", "stragglers", "keep-root",
		"lag-bound",
	};

	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (!strcmp(name, names[i]))
			return true;
	return false;
}

int cmd_replay(int argc, char **argv)
{
	static struct replay rp = { .strict = true };
	static struct enroll e;
	static char *args[MAX_ARGS];
	const struct hm_journal_config *c;
	struct hm_config net;
	char **cmd = NULL, t[64];
	size_t n = 0;
	uint64_t lag;
	int code;

	run_clock_mark_start(); /* the file-time line B, first (engine/vclock.c) */
	program_name = "hermetic";
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			cmd = argv + i + 1;
			if (!*cmd)
				bad_usage("no command after '--'");
			break;
		} else if (!strcmp(argv[i], "--no-strict")) {
			rp.strict = false;
		} else if (!strcmp(argv[i], "--strict")) {
			rp.strict = true;
		} else if (!strcmp(argv[i], "--scope") || !strncmp(argv[i], "--scope=", 8)) {
			rp.scope = argv[i][7] == '=' ? argv[i] + 8 : i + 1 < argc ? argv[++i] : NULL;
			if (!rp.scope || !rp.scope[0])
				bad_usage("--scope needs the name of a scope (a test's node id)");
		} else if (replay_policy_option(&rp.pol, argc, argv, &i)) {
			continue;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "hermetic replay: unknown option '%s'\n", argv[i]);
			bad_usage("options of the run come from the journal (the network from this "
				  "command line); CMD follows '--'");
		} else if (rp.source) {
			bad_usage("one journal only; put a command after '--'");
		} else {
			rp.source = argv[i];
		}
	}
	if (!rp.source)
		bad_usage("no journal given");
	rp.j = load(&rp, rp.source);
	c = &rp.j->config;
	if (rp.scope)
		choose_scope(&rp);
	if (!cmd && !c->argc)
		die(EXIT_DATAERR, "journal '%s' records no command; give one after '--'", rp.source);

	/* The journal's configuration, as enroll's own options. */
	push_arg(args, &n, MAX_ARGS, "replay");
	push_arg(args, &n, MAX_ARGS, xasprintf("--seed=%" PRIu64, c->cfg.seed));
	push_arg(args, &n, MAX_ARGS, xasprintf("--now=%s", hm_format_time(c->cfg.now_ns, t, sizeof(t))));
	replay_policy_push(&rp.pol, c, args, &n, MAX_ARGS);
	for (size_t i = 0; i < c->n_opts; i++) {
		if (!strcmp(c->opts[i].key, "daemon_restart") || replay_policy_key(c->opts[i].key))
			continue; /* a note of the recorded run; the network (replay_policy_push) */
		if (!run_option(c->opts[i].key)) {
			const char *k = c->opts[i].key;

			/* A name from the journal reaches the terminal only if plain. */
			warnx_("replay: ignoring option --%s of the journal (not one this hermetic "
			       "replays)",
			       k[strspn(k, "abcdefghijklmnopqrstuvwxyz0123456789-_")] ? "(unprintable)"
										 : k);
			continue;
		}
		push_arg(args, &n, MAX_ARGS,
			 c->opts[i].value ? xasprintf("--%s=%s", c->opts[i].key, c->opts[i].value)
						  : xasprintf("--%s", c->opts[i].key));
	}
	push_arg(args, &n, MAX_ARGS, "--");
	for (char **a = cmd ? cmd : c->argv; *a; a++)
		push_arg(args, &n, MAX_ARGS, *a);
	args[n] = NULL;
	enroll_parse(&e, (int)n, args, "hermetic replay");
	net = e.cfg;
	/* (the lag bound is one of the journal's options, not of its fixed
	 * configuration) */
	lag = e.cfg.lag_milli;
	e.cfg = c->cfg; /* exactly as recorded, now and tick included */
	e.cfg.lag_milli = lag;
	e.cfg.network = net.network; /* ... but the network as replay_policy_push says */
	e.cfg.loopback = net.loopback;
	e.cfg.unix_sockets = net.unix_sockets;
	/* Nothing has run yet: a journal not ours is shown and confirmed. */
	replay_policy_confirm(&rp.pol, rp.source, rp.j, rp.bytes, rp.len, &e);
	free(rp.bytes);
	rp.bytes = NULL;
	e.fs_start_ns = c->started_ns; /* file times as the recorded run saw them */
	e.quiet_seed = true;

	extract(&rp);
	e.extra_env[e.n_extra_env][0] = HM_ENV_REPLAY;
	e.extra_env[e.n_extra_env++][1] = rp.streams;
	e.extra_env[e.n_extra_env][0] = HM_ENV_REPLAY_STRICT;
	e.extra_env[e.n_extra_env++][1] = rp.strict ? "1" : "0";
	e.extra_env[e.n_extra_env][0] = HM_ENV_REPLAY_REPORT;
	e.extra_env[e.n_extra_env++][1] = rp.report;
	if (rp.scope) {
		e.extra_env[e.n_extra_env][0] = HM_ENV_REPLAY_SCOPE;
		e.extra_env[e.n_extra_env++][1] = rp.scope;
	}
	e.quiet_repro = true;
	e.before_spawn = before_spawn;
	e.userdata = &rp;
	warnx_("replaying %s: seed %" PRIu64 ", recorded %s, %zu stream%s%s", rp.source,
	       c->cfg.seed, c->started_ns > 0 ? hm_format_time(c->started_ns, t, sizeof(t)) : "?",
	       rp.j->n_streams, rp.j->n_streams == 1 ? "" : "s",
	       rp.j->has_exit ? "" : " (the recorded run did not finish)");
	if (rp.j->has_exit && !cmd)
		warnx_("replay: the recorded run exited with status %" PRId32, rp.j->exit.status);

	code = enroll_run(&e);
	code = read_report(&rp, code);
	run_tmpdir_remove(&rp.dir);
	hm_journal_free(rp.j);
	return code;
}
