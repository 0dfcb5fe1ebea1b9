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

#define MAX_ARGS 4096

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: hermetic replay JOURNAL [--no-strict] [--scope NAME] [--yes]\n"
		"                       [--network block|audit|off] [--allow HOST[:PORT]]...\n"
		"                       [--no-daemon] [--journal-policy] [--sched chaos[:SEED]|serial[:SEED]|off]\n"
		"                       [-- CMD [ARGS...]]\n"
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
		"  --sched chaos[:SEED]|serial[:SEED]|off\n"
		"                      the replay's schedule, as enroll's (default: the\n"
		"                      journal's --sched, if it had one: a serial run's\n"
		"                      replay repeats its order, its sleeps blocking too)\n"
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

static void before_spawn(struct enroll *e, void *userdata)
{
	struct replay *rp = userdata;

	replay_warn_unfaithful(rp->j);
}

/* --- the run ---------------------------------------------------------------------------- */

/* The options of a run that a journal carries (enroll_parse records them);
 * anything else, --record or --help from a crafted journal, is not taken. */
static bool run_option(const char *name)
{
	static const char *const names[] = {
		"allow", "no-daemon", "grace", "fs", "temp-parent", "no-chdir", "env",
		"unset", "scrub-env", "keep-env", "print-boundary", "stragglers", "keep-root",
		"lag-bound", "identity", "dir-order", "sched",
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
	struct eng_error err;
	struct cli_fail f;
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
		} else if (!strcmp(argv[i], "--sched") || !strncmp(argv[i], "--sched=", 8)) {
			rp.sched = argv[i][7] == '=' ? argv[i] + 8 : i + 1 < argc ? argv[++i] : NULL;
			if (!rp.sched || !rp.sched[0])
				bad_usage("--sched needs chaos[:SEED], serial[:SEED] or off");
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
	rp.j = replay_load(&rp, rp.source);
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
		if (rp.sched && !strcmp(c->opts[i].key, "sched"))
			continue; /* this command line's, below */
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
	if (rp.sched)
		push_arg(args, &n, MAX_ARGS, xasprintf("--sched=%s", rp.sched));
	push_arg(args, &n, MAX_ARGS, "--");
	for (char **a = cmd ? cmd : c->argv; *a; a++)
		push_arg(args, &n, MAX_ARGS, *a);
	args[n] = NULL;
	if (enroll_parse(&e, (int)n, args, "hermetic replay", &f) < 0)
		enroll_die(&e, &f);
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
	e.caller.quiet_seed = true;

	/* From here a signal cancels the run (engine/signals.c): the streams'
	 * directory is removed on the way out, as after any run. */
	if (run_signals_arm(&e.sig, &err) < 0)
		die(EXIT_INTERNAL, "%s", err.msg);
	extract(&rp);
	e.caller.extra_env[e.caller.n_extra_env][0] = HM_ENV_REPLAY;
	e.caller.extra_env[e.caller.n_extra_env++][1] = rp.streams;
	e.caller.extra_env[e.caller.n_extra_env][0] = HM_ENV_REPLAY_STRICT;
	e.caller.extra_env[e.caller.n_extra_env++][1] = rp.strict ? "1" : "0";
	e.caller.extra_env[e.caller.n_extra_env][0] = HM_ENV_REPLAY_REPORT;
	e.caller.extra_env[e.caller.n_extra_env++][1] = rp.report;
	if (rp.scope) {
		e.caller.extra_env[e.caller.n_extra_env][0] = HM_ENV_REPLAY_SCOPE;
		e.caller.extra_env[e.caller.n_extra_env++][1] = rp.scope;
	}
	e.caller.quiet_repro = true;
	e.caller.before_spawn = before_spawn;
	e.caller.userdata = &rp;
	warnx_("replaying %s: seed %" PRIu64 ", recorded %s, %zu stream%s%s", rp.source,
	       c->cfg.seed, c->started_ns > 0 ? hm_format_time(c->started_ns, t, sizeof(t)) : "?",
	       rp.j->n_streams, rp.j->n_streams == 1 ? "" : "s",
	       rp.j->has_exit ? "" : " (the recorded run did not finish)");
	if (rp.j->has_exit && !cmd)
		warnx_("replay: the recorded run exited with status %" PRId32, rp.j->exit.status);

	if ((code = enroll_run(&e, &f)) < 0)
		enroll_die(&e, &f);
	if (!e.sig.cancel)
		code = replay_read_report(&rp, code);
	run_tmpdir_remove(&rp.dir);
	hm_journal_free(rp.j);
	return code;
}
