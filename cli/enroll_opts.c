// SPDX-License-Identifier: MIT
/*
 * hermetic enroll's options: parsing and checking them into struct enroll,
 * then the seed and the start time (--help is enroll_usage.c, resolving
 * --allow names enroll_allow.c).
 */
#include <getopt.h>
#include <stdarg.h>
#include <inttypes.h>
#include <sys/random.h>
#include "util.h"
#include "config.h"
#include "cli.h"
#include "isolate.h"
#include "enroll.h"
#include "now.h"
#include "enroll_opts.h"

static const char *usage_prefix = "hermetic enroll";

void bad_usage(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cli_vusage_error(usage_prefix, fmt, ap);
}

static void set_cfg(struct enroll *e, const char *name, const char *value)
{
	const char *why;
	int r = hm_config_set(&e->cfg, name, value, &why);

	if (r < 0)
		bad_usage("--%s %s: %s", name, value, why);
}

static void add_opt(struct enroll *e, const char *name, const char *value)
{
	if (e->n_opts == ENROLL_MAX_OPTS)
		bad_usage("at most %d options", ENROLL_MAX_OPTS);
	e->opts[e->n_opts++] = (struct enroll_opt){ .name = name, .value = value };
}

void enroll_add_opt(struct enroll *e, const char *name, const char *value)
{
	add_opt(e, name, value);
}

/* Is there a "--" among argv[from..argc)? */
static bool dashdash_follows(int argc, char **argv, int from)
{
	for (int i = from; i < argc; i++)
		if (!strcmp(argv[i], "--"))
			return true;
	return false;
}

enum {
	O_RECORD = 239, O_KEEP_PASSING, O_REPORT, O_JOURNAL_PER_SCOPE, O_CONFINE, O_SUPERVISE,
	O_CONNECTIONS, O_SCHED,
	O_AUDIT_SYSCALLS, O_RAW_SOCKETS, O_PASS_FD, O_IDENTITY, O_DIR_ORDER,
	O_NETWORK = 256, O_NO_LOOPBACK, O_NO_UNIX, O_ALLOW, O_NO_DAEMON, O_GRACE, O_SEED,
	O_NOW, O_TICK, O_CLOCK, O_RNG, O_SPIN, O_LAG, O_ASLR,
	/* boundary options (hm_boundary_set) from here on */
	O_BOUNDARY, O_FS = O_BOUNDARY, O_TEMP_PARENT, O_NO_CHDIR, O_ENV, O_UNSET, O_SCRUB_ENV,
	O_KEEP_ENV, O_PRINT_BOUNDARY, O_STRAGGLERS, O_KEEP_ROOT,
};

static const struct option opts[] = {
	{ "network", required_argument, NULL, O_NETWORK },
	{ "no-loopback", no_argument, NULL, O_NO_LOOPBACK },
	{ "no-unix", no_argument, NULL, O_NO_UNIX },
	{ "allow", required_argument, NULL, O_ALLOW },
	{ "no-daemon", no_argument, NULL, O_NO_DAEMON },
	{ "confine", required_argument, NULL, O_CONFINE },
	{ "raw-sockets", no_argument, NULL, O_RAW_SOCKETS },
	{ "pass-fd", required_argument, NULL, O_PASS_FD },
	{ "supervise", required_argument, NULL, O_SUPERVISE },
	{ "grace", required_argument, NULL, O_GRACE },
	{ "seed", required_argument, NULL, O_SEED },
	{ "now", required_argument, NULL, O_NOW },
	{ "tick", required_argument, NULL, O_TICK },
	{ "clock", required_argument, NULL, O_CLOCK },
	{ "rng", required_argument, NULL, O_RNG },
	{ "spin-limit", required_argument, NULL, O_SPIN },
	{ "lag-bound", required_argument, NULL, O_LAG },
	{ "aslr", required_argument, NULL, O_ASLR },
	{ "fs", required_argument, NULL, O_FS },
	{ "temp-parent", required_argument, NULL, O_TEMP_PARENT },
	{ "no-chdir", no_argument, NULL, O_NO_CHDIR },
	{ "env", required_argument, NULL, O_ENV },
	{ "unset", required_argument, NULL, O_UNSET },
	{ "scrub-env", no_argument, NULL, O_SCRUB_ENV },
	{ "keep-env", required_argument, NULL, O_KEEP_ENV },
	{ "print-boundary", no_argument, NULL, O_PRINT_BOUNDARY },
	{ "stragglers", required_argument, NULL, O_STRAGGLERS },
	{ "keep-root", no_argument, NULL, O_KEEP_ROOT },
	{ "record", optional_argument, NULL, O_RECORD },
	{ "keep-passing", no_argument, NULL, O_KEEP_PASSING },
	{ "journal-per-scope", no_argument, NULL, O_JOURNAL_PER_SCOPE },
	{ "report", required_argument, NULL, O_REPORT },
	{ "connections", required_argument, NULL, O_CONNECTIONS },
	{ "sched", required_argument, NULL, O_SCHED },
	{ "audit-syscalls", no_argument, NULL, O_AUDIT_SYSCALLS },
	{ "identity", required_argument, NULL, O_IDENTITY },
	{ "dir-order", required_argument, NULL, O_DIR_ORDER },
	{ "help", no_argument, NULL, 'h' },
	{},
};

/* One option of getopt_long's (c; name is its long name, NULL for -h and
 * errors): into e, or a usage error (exits); -1 with f filled when out of
 * memory. */
static int take_option(struct enroll *e, int c, const char *name, int argc, char **argv,
		       struct cli_fail *f)
{
	const char *why;
	int r;

	switch (c) {
	case 'h':
		enroll_usage(stdout);
		exit(0);
	case O_RECORD:
		e->recording.on = true;
		/* "--record DIR -- CMD": before "--" a bare word is no command. */
		if (!optarg && optind < argc && argv[optind][0] != '-' &&
		    dashdash_follows(argc, argv, optind + 1))
			optarg = argv[optind++];
		if (optarg && !*optarg)
			bad_usage("--record=DIR: empty directory name");
		e->recording.dir = optarg;
		break;
	case O_KEEP_PASSING:
		e->recording.keep_passing = true;
		break;
	case O_JOURNAL_PER_SCOPE:
		e->recording.per_scope = true;
		break;
	case O_REPORT:
		if (!*optarg)
			bad_usage("--report FILE: empty file name");
		e->report_out.path = optarg;
		break;
	case O_CONNECTIONS:
		if (!*optarg)
			bad_usage("--connections FILE: empty file name");
		e->connlog.path = optarg;
		break;
	case O_SCHED: {
		char why[128];

		if (enroll_sched_parse(optarg, &e->sched, why, sizeof(why)) < 0)
			bad_usage("--sched %s: %s", optarg, why);
		add_opt(e, name, optarg); /* the journal keeps it: replay's schedule */
		break;
	}
	case O_AUDIT_SYSCALLS:
		e->audit_syscalls = true;
		break;
	case O_IDENTITY:
	case O_DIR_ORDER:
		if (enroll_identity_option(e, name, optarg) < 0)
			return cli_fail(f, EXIT_INTERNAL, "out of memory");
		break;
	case O_NO_LOOPBACK:
		e->cfg.loopback = false;
		break;
	case O_NO_UNIX:
		e->cfg.unix_sockets = false;
		break;
	case O_ALLOW:
		if (e->allow.n_specs == HM_RUN_MAX_ALLOW)
			bad_usage("at most %d --allow options", HM_RUN_MAX_ALLOW);
		e->allow.specs[e->allow.n_specs++] = optarg;
		add_opt(e, name, optarg);
		break;
	case O_NOW:
		set_cfg(e, name, optarg);
		e->now_src = NOW_OPTION;
		break;
	case O_NO_DAEMON:
		e->no_daemon = true;
		add_opt(e, name, NULL);
		break;
	case O_CONFINE:
		if (strcmp(optarg, "on") && strcmp(optarg, "off"))
			bad_usage("--confine %s: expected on or off", optarg);
		e->unconfined = !strcmp(optarg, "off");
		add_opt(e, name, optarg);
		break;
	case O_RAW_SOCKETS:
		e->raw_sockets = true;
		add_opt(e, name, NULL);
		break;
	case O_PASS_FD: {
		char *end;
		long fd = strtol(optarg, &end, 10);

		if (*end || end == optarg || fd < 0 || fd > 1 << 20)
			bad_usage("--pass-fd %s: expected a descriptor number", optarg);
		if (e->inh.n_pass == (int)ARRAY_SIZE(e->inh.pass))
			bad_usage("at most %zu --pass-fd options", ARRAY_SIZE(e->inh.pass));
		e->inh.pass[e->inh.n_pass++] = (int)fd;
		add_opt(e, name, optarg);
		break;
	}
	case O_SUPERVISE:
		if (strcmp(optarg, "on") && strcmp(optarg, "off") && strcmp(optarg, "waits") &&
		    strcmp(optarg, "clock"))
			bad_usage("--supervise %s: expected on, clock or off", optarg);
		e->no_supervise = !strcmp(optarg, "off");
		e->supervise_nowaits = !strcmp(optarg, "clock");
		add_opt(e, name, optarg);
		break;
	case O_GRACE:
		if (hm_parse_duration(optarg, &e->grace_ns) < 0)
			bad_usage("--grace %s: expected a duration such as 500ms or 2s", optarg);
		add_opt(e, name, optarg);
		break;
	case '?':
		exit(cli_bad_option(usage_prefix, "+h", argv));
	default:
		if (c < O_BOUNDARY) {
			set_cfg(e, name, optarg);
			if (c == O_LAG) /* the journal keeps it: replay's live waits */
				add_opt(e, name, optarg);
			break;
		}
		r = hm_boundary_set(&e->bnd.opt, name, optarg, &why);
		if (r == -ENOMEM)
			return cli_fail(f, EXIT_INTERNAL, "out of memory");
		if (r < 0)
			bad_usage("--%s%s%s: %s", name, optarg ? " " : "",
				  optarg ? optarg : "", why);
		add_opt(e, name, optarg);
	}
	return 0;
}

/* The options hang together (after all of them were read). */
static void check_options(struct enroll *e)
{
	char msg[1024];

	if (e->cfg.network == HM_NETWORK_OFF && (e->allow.n_specs || !e->cfg.loopback || !e->cfg.unix_sockets))
		bad_usage("--allow, --no-loopback and --no-unix need --network block or audit");
	if (e->no_daemon && (e->allow.n_specs || !e->cfg.loopback || !e->cfg.unix_sockets))
		bad_usage("--allow, --no-loopback and --no-unix need the daemon (not --no-daemon)");
	if (e->no_daemon && e->connlog.path)
		bad_usage("--connections needs the daemon (not --no-daemon): the kernel hooks see "
			  "the connections");
	if (e->no_daemon && e->sched.mode)
		bad_usage("--sched needs the daemon (not --no-daemon): it sets the run's "
			  "real-time priorities");
	if (e->recording.keep_passing && !e->recording.on)
		bad_usage("--keep-passing needs --record");
	if (e->recording.per_scope && !e->recording.dir)
		bad_usage("--journal-per-scope needs --record=DIR: the journals of failing scopes go to DIR");
	if (e->recording.on && e->no_daemon && !e->recording.dir)
		bad_usage("--record with --no-daemon needs a directory (--record=DIR): the\n"
			  "  journal store is hermeticd's");
	if (boundary_validate(&e->bnd, msg, sizeof(msg)) < 0)
		bad_usage("%s", msg);
}

/* What the options leave open, settled: --allow names resolved, the start
 * time, a seed drawn. A failure of its own (-1, f) gets a --report line. */
static int settle(struct enroll *e, struct cli_fail *f)
{
	const char *sde = getenv("SOURCE_DATE_EPOCH");
	char msg[1024];

	for (int i = 0; i < e->allow.n_specs; i++)
		enroll_resolve_allow(e, e->allow.specs[i]);
	/* HEAD's commit time (a file or two, inflated) can wait until the
	 * run is asked for: enroll reads it while hermeticd makes the run
	 * (enroll_settle_now). SOURCE_DATE_EPOCH, which can be wrong, is read
	 * here, for a usage error before anything is asked of the daemon. */
	e->now_pending = e->now_later && e->now_src != NOW_OPTION && !(sde && *sde);
	if (e->now_src != NOW_OPTION && !e->now_pending &&
	    now_default(&e->cfg.now_ns, &e->now_src, msg, sizeof(msg)) < 0)
		bad_usage("%s", msg);
	if (!e->cfg.seed_set) {
		uint64_t s;

		if (getrandom(&s, sizeof(s), 0) != sizeof(s))
			return cli_fail(f, EXIT_INTERNAL, "Failed to generate a seed: %s",
					strerror(errno));
		/* Short enough to retype from a CI log. */
		e->cfg.seed = s % 1000000000ULL;
	}
	return 0;
}

void enroll_settle_now(struct enroll *e)
{
	char msg[1024];

	if (!e->now_pending)
		return;
	e->now_pending = false;
	/* (cannot fail: only a SOURCE_DATE_EPOCH can be refused, and settle()
	 * saw none; without HEAD it is the release's time) */
	(void)now_default(&e->cfg.now_ns, &e->now_src, msg, sizeof(msg));
}

int enroll_parse(struct enroll *e, int argc, char **argv, const char *prefix, struct cli_fail *f)
{
	int c, idx;

	usage_prefix = prefix;
	e->report_out.fd = -1;
	e->connlog.fd = -1;
	hm_config_init(&e->cfg);
	e->now_src = NOW_RELEASE;
	boundary_init(&e->bnd);
	e->grace_ns = DEFAULT_GRACE_NS;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+h", opts, &idx)) != -1)
		if (take_option(e, c, c >= O_RECORD ? opts[idx].name : NULL, argc, argv, f) < 0)
			return -1; /* not armed yet: no --report line */
	if (optind >= argc)
		bad_usage("no command given");
	e->argv = argv + optind;
	check_options(e);
	/* Usage errors above get no --report line; what fails from here on does. */
	enroll_json_arm(e);
	if (settle(e, f) < 0)
		return -1;
	e->parsed = true;
	return 0;
}
