// SPDX-License-Identifier: MIT
/*
 * hermetic enroll [OPTIONS] [--] CMD [ARGS...]
 *
 * Asks hermeticd for a run, starts CMD inside the run's cgroup before its
 * first instruction, forwards signals, waits until the cgroup is provably
 * empty, reports refusals and exits with CMD's status.
 */
#include <getopt.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <netdb.h>
#include <inttypes.h>
#include <arpa/inet.h>
#include <linux/sched.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include "util.h"
#include "config.h"
#include "cli.h"
#include "isolate.h"
#include "enroll.h"
#include "record.h"
#include "now.h"

#define KILL_WAIT_MS 5000

static const char *usage_prefix = "hermetic enroll";

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: hermetic enroll [OPTIONS] [--] CMD [ARGS...]\n"
		"\n"
		"Run CMD with a seeded clock and entropy and no network: every process of\n"
		"CMD's tree runs in its own cgroup, where the kernel refuses traffic that is\n"
		"not allowed, and loads the hermetic shim.\n"
		"\n"
		"Network (enforced by the kernel through hermeticd):\n"
		"  --network block|off     refuse all but loopback and unix sockets (default\n"
		"                          block), or enforce nothing\n"
		"  --no-loopback           refuse loopback (127.0.0.0/8, ::1) too\n"
		"  --no-unix               refuse unix socket connect/sendmsg too\n"
		"  --allow HOST[:PORT]     open exactly this destination (repeatable); a host\n"
		"                          name is resolved now, outside the run, IPv4 and\n"
		"                          IPv6; no port opens every port; [V6ADDR]:PORT\n"
		"  --no-daemon             shim only: NO kernel network refusal, no kernel view\n"
		"\n"
		"Record (hermetic replay feeds a journal back):\n"
		"  --record[=DIR]          journal every value the shim hands out and the\n"
		"                          kernel's view; keep the journal in hermeticd's\n"
		"                          store and, with DIR, in DIR (with DIR/index.json).\n"
		"                          '--record DIR' works when CMD follows '--'\n"
		"  --keep-passing          keep the journal when CMD exits 0 too (default:\n"
		"                          only failing runs keep one)\n"
		"\n"
		"Clock and entropy (the shim):\n"
		"  --seed N                seed of every random byte (default: generated, printed)\n"
		"  --now TIME              virtual wall clock at start: ISO 8601 or @EPOCH\n"
		"                          (default: $SOURCE_DATE_EPOCH, else the commit time\n"
		"                          of HEAD when the working directory is in a git\n"
		"                          checkout, else 2020-01-01T00:00:00Z)\n"
		"  --tick DURATION         monotonic advance per reading (default 1us; 0 freezes)\n"
		"  --clock virtual|off     virtual clock (default) or the real one\n"
		"  --rng all|off           seeded entropy (default) or real entropy\n"
		"  --spin-limit N          end a process that reads a frozen clock N times\n"
		"                          without sleeping (default %llu; 0 = never)\n"
		"  --aslr on|off           address-space randomisation (default off)\n"
		"\n"
		"Filesystem and environment (set up before CMD's first instruction):\n"
		"  --fs isolate|none       isolate: a fresh root under the temp parent holds\n"
		"                          HOME, TMPDIR, the XDG dirs, language caches and\n"
		"                          CMD's working directory (default none)\n"
		"  --temp-parent DIR       where the root is made (default $TMPDIR, else /tmp);\n"
		"                          refused inside any git working tree\n"
		"  --no-chdir              keep the current directory as CMD's\n"
		"  --env KEY=VALUE         set a variable (repeatable; applied last, in order)\n"
		"  --unset KEY             remove a variable (repeatable)\n"
		"  --scrub-env             keep only PATH, LANG, LC_*, TZ, TERM, USER, LOGNAME,\n"
		"                          SHELL (and what hermetic sets)\n"
		"  --keep-env GLOB         with --scrub-env, keep these too (repeatable)\n"
		"  --print-boundary        print the root and every variable hermetic set as\n"
		"                          one JSON line on stderr before CMD starts\n"
		"\n"
		"Run end:\n"
		"  --grace DURATION        after CMD exits, how long processes it left behind\n"
		"                          may run before they are killed (default 2s)\n"
		"  --stragglers kill|keep  kill what outlives CMD after --grace and name it\n"
		"                          (default), or leave it running and keep the root\n"
		"  --keep-root             do not remove the root\n"
		"  -h, --help              show this help\n"
		"\n"
		"The root is removed only when no process of the run is left; whenever it is\n"
		"kept, stderr says so in one line: 'hermetic: kept root: PATH'.\n"
		"\n"
		"Exit status: CMD's own, or 128+N when it died of signal N. hermetic's own\n"
		"failures: 2 bad usage, 68 an --allow host does not resolve, 69 hermeticd\n"
		"not reachable, 70 internal error, 77 already inside a run, 126 CMD not\n"
		"executable, 127 CMD not found.\n",
		(unsigned long long)HM_DEFAULT_SPIN_LIMIT);
}

static void bad_usage(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void bad_usage(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", usage_prefix);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '%s --help'.\n", usage_prefix);
	exit(EXIT_USAGE);
}

/* Split "HOST[:PORT]", "[V6]:PORT" or a bare IPv6 address. */
static void split_host_port(const char *spec, char *host, size_t hsize, uint16_t *ret_port)
{
	const char *colon = NULL, *end;
	uint64_t port = 0;

	if (spec[0] == '[') {
		end = strchr(spec, ']');
		if (!end || (end[1] && end[1] != ':'))
			bad_usage("--allow %s: expected [IPV6]:PORT", spec);
		snprintf(host, hsize, "%.*s", (int)(end - spec - 1), spec + 1);
		colon = end[1] ? end + 1 : NULL;
	} else {
		colon = strchr(spec, ':');
		if (colon && strchr(colon + 1, ':'))
			colon = NULL; /* a bare IPv6 address */
		snprintf(host, hsize, "%.*s", colon ? (int)(colon - spec) : (int)strlen(spec), spec);
	}
	if (!*host)
		bad_usage("--allow %s: no host", spec);
	if (colon && (hm_parse_u64(colon + 1, &port) < 0 || port == 0 || port > 65535))
		bad_usage("--allow %s: port must be 1-65535", spec);
	*ret_port = port;
}

static void add_allow(struct enroll *e, const uint8_t addr[16], uint16_t port)
{
	for (uint32_t i = 0; i < e->n_allow; i++)
		if (!memcmp(e->allow[i].addr, addr, 16) && e->allow[i].port == port)
			return;
	if (e->n_allow == HM_RUN_MAX_ALLOW)
		bad_usage("at most %d --allow destinations (after resolving names)", HM_RUN_MAX_ALLOW);
	memcpy(e->allow[e->n_allow].addr, addr, 16);
	e->allow[e->n_allow++].port = port;
}

/* Resolve now, outside the run: the run itself cannot resolve names. */
static void resolve_allow(struct enroll *e, const char *spec)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
	struct addrinfo *res, *ai;
	char host[256];
	uint16_t port;
	int r;

	split_host_port(spec, host, sizeof(host), &port);
	r = getaddrinfo(host, NULL, &hints, &res);
	if (r)
		die(EXIT_NOHOST, "--allow %s: cannot resolve '%s': %s", spec, host,
		    r == EAI_SYSTEM ? strerror(errno) : gai_strerror(r));
	for (ai = res; ai; ai = ai->ai_next) {
		uint8_t a[16] = {};

		if (ai->ai_family == AF_INET) {
			a[10] = a[11] = 0xff;
			memcpy(a + 12, &((struct sockaddr_in *)ai->ai_addr)->sin_addr, 4);
		} else if (ai->ai_family == AF_INET6) {
			memcpy(a, &((struct sockaddr_in6 *)ai->ai_addr)->sin6_addr, 16);
		} else {
			continue;
		}
		add_allow(e, a, port);
	}
	freeaddrinfo(res);
	/* A name (not an address literal) may also be looked up inside the
	 * run: the shim lets these through to the real resolver. */
	struct in6_addr tmp;
	if (inet_pton(AF_INET, host, &tmp) != 1 && inet_pton(AF_INET6, host, &tmp) != 1) {
		size_t used = strlen(e->dns_allow);

		if (used + strlen(host) + 2 >= sizeof(e->dns_allow))
			bad_usage("too many --allow host names");
		snprintf(e->dns_allow + used, sizeof(e->dns_allow) - used, "%s%s", used ? "," : "",
			 host);
	}
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

/* Is there a "--" among argv[from..argc)? */
static bool dashdash_follows(int argc, char **argv, int from)
{
	for (int i = from; i < argc; i++)
		if (!strcmp(argv[i], "--"))
			return true;
	return false;
}

void enroll_parse(struct enroll *e, int argc, char **argv, const char *prefix)
{
	enum {
		O_RECORD = 240, O_KEEP_PASSING,
		O_NETWORK = 256, O_NO_LOOPBACK, O_NO_UNIX, O_ALLOW, O_NO_DAEMON, O_GRACE, O_SEED,
		O_NOW, O_TICK, O_CLOCK, O_RNG, O_SPIN, O_ASLR,
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
		{ "grace", required_argument, NULL, O_GRACE },
		{ "seed", required_argument, NULL, O_SEED },
		{ "now", required_argument, NULL, O_NOW },
		{ "tick", required_argument, NULL, O_TICK },
		{ "clock", required_argument, NULL, O_CLOCK },
		{ "rng", required_argument, NULL, O_RNG },
		{ "spin-limit", required_argument, NULL, O_SPIN },
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
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	int c, idx, r;
	const char *why;
	char msg[1024];

	usage_prefix = prefix;
	hm_config_init(&e->cfg);
	e->now_src = NOW_BUILTIN;
	boundary_init(&e->bnd);
	e->grace_ns = DEFAULT_GRACE_NS;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+h", opts, &idx)) != -1) {
		switch (c) {
		case 'h':
			usage(stdout);
			exit(0);
		case O_RECORD:
			e->record = true;
			/* "--record DIR -- CMD": before "--" a bare word is no command. */
			if (!optarg && optind < argc && argv[optind][0] != '-' &&
			    dashdash_follows(argc, argv, optind + 1))
				optarg = argv[optind++];
			if (optarg && !*optarg)
				bad_usage("--record=DIR: empty directory name");
			e->record_dir = optarg;
			break;
		case O_KEEP_PASSING:
			e->keep_passing = true;
			break;
		case O_NO_LOOPBACK:
			e->cfg.loopback = false;
			break;
		case O_NO_UNIX:
			e->cfg.unix_sockets = false;
			break;
		case O_ALLOW:
			if (e->n_allow_specs == HM_RUN_MAX_ALLOW)
				bad_usage("at most %d --allow options", HM_RUN_MAX_ALLOW);
			e->allow_specs[e->n_allow_specs++] = optarg;
			add_opt(e, opts[idx].name, optarg);
			break;
		case O_NOW:
			set_cfg(e, opts[idx].name, optarg);
			e->now_src = NOW_OPTION;
			break;
		case O_NO_DAEMON:
			e->no_daemon = true;
			add_opt(e, opts[idx].name, NULL);
			break;
		case O_GRACE:
			if (hm_parse_duration(optarg, &e->grace_ns) < 0)
				bad_usage("--grace %s: expected a duration such as 500ms or 2s", optarg);
			add_opt(e, opts[idx].name, optarg);
			break;
		case '?':
			if (optopt)
				bad_usage("option '%s' needs a value", argv[optind - 1]);
			bad_usage("unknown option '%s'", argv[optind - 1]);
		default:
			if (c < O_BOUNDARY) {
				set_cfg(e, opts[idx].name, optarg);
				break;
			}
			r = hm_boundary_set(&e->bnd.opt, opts[idx].name, optarg, &why);
			if (r == -ENOMEM)
				die(EXIT_INTERNAL, "out of memory");
			if (r < 0)
				bad_usage("--%s%s%s: %s", opts[idx].name, optarg ? " " : "",
					  optarg ? optarg : "", why);
			add_opt(e, opts[idx].name, optarg);
		}
	}
	if (optind >= argc)
		bad_usage("no command given");
	e->argv = argv + optind;
	if (e->cfg.network == HM_NETWORK_OFF && (e->n_allow_specs || !e->cfg.loopback || !e->cfg.unix_sockets))
		bad_usage("--allow, --no-loopback and --no-unix need --network block");
	if (e->no_daemon && (e->n_allow_specs || !e->cfg.loopback || !e->cfg.unix_sockets))
		bad_usage("--allow, --no-loopback and --no-unix need the daemon (not --no-daemon)");
	if (e->keep_passing && !e->record)
		bad_usage("--keep-passing needs --record");
	if (e->record && e->no_daemon && !e->record_dir)
		bad_usage("--record with --no-daemon needs a directory (--record=DIR): the\n"
			  "  journal store is hermeticd's");
	if (boundary_validate(&e->bnd, msg, sizeof(msg)) < 0)
		bad_usage("%s", msg);
	for (int i = 0; i < e->n_allow_specs; i++)
		resolve_allow(e, e->allow_specs[i]);
	if (e->now_src != NOW_OPTION && now_default(&e->cfg.now_ns, &e->now_src, msg, sizeof(msg)) < 0)
		bad_usage("%s", msg);
	if (!e->cfg.seed_set) {
		uint64_t s;

		if (getrandom(&s, sizeof(s), 0) != sizeof(s))
			die(EXIT_INTERNAL, "Failed to generate a seed: %s", strerror(errno));
		/* Short enough to retype from a CI log. */
		e->cfg.seed = s % 1000000000ULL;
	}
}

/* The shim next to this binary (build tree) or in ../lib/hermetic (installed). */
static int find_shim(char *buf, size_t size)
{
	static const char *rel[] = { "libhermetic-preload.so", "../lib/hermetic/libhermetic-preload.so" };
	char exe[4096], *slash;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return -errno;
	exe[n] = 0;
	slash = strrchr(exe, '/');
	if (!slash)
		return -ENOENT;
	*slash = 0;
	for (size_t i = 0; i < ARRAY_SIZE(rel); i++) {
		char path[4096 + 64];

		snprintf(path, sizeof(path), "%s/%s", exe, rel[i]);
		if (access(path, R_OK) == 0 && realpath(path, buf) && strlen(buf) < size)
			return 0;
	}
	return -ENOENT;
}

static void export_env(struct enroll *e)
{
	char shim[4096], v[64];
	const char *old;
	int r;

	r = hm_config_export(&e->cfg);
	if (r < 0)
		die(EXIT_INTERNAL, "Failed to set the environment: %s", strerror(-r));
	if (e->no_daemon)
		snprintf(v, sizeof(v), "none");
	else
		snprintf(v, sizeof(v), "%" PRIu64, e->run.run_id);
	setenv(HM_ENV_RUN, v, 1);
	setenv(HM_ENV_LINEAGE, "1", 1);
	unsetenv(HM_ENV_VCLOCK);
	if (e->dns_allow[0])
		setenv(HM_ENV_DNS_ALLOW, e->dns_allow, 1);
	else
		unsetenv(HM_ENV_DNS_ALLOW);
	/* Record and replay directories come only from this run. */
	unsetenv(HM_ENV_RECORD);
	unsetenv(HM_ENV_REPLAY);
	unsetenv(HM_ENV_REPLAY_STRICT);
	unsetenv(HM_ENV_REPLAY_REPORT);
	if (e->rec)
		record_export_env(e);
	for (size_t i = 0; i < e->n_extra_env; i++)
		setenv(e->extra_env[i][0], e->extra_env[i][1], 1);
	if (find_shim(shim, sizeof(shim)) < 0) {
		if (e->cfg.clock_virtual || e->cfg.rng)
			die(EXIT_INTERNAL,
			    "cannot find libhermetic-preload.so next to %s or in ../lib/hermetic;\n"
			    "  reinstall hermetic, or pass --clock off --rng off to run without it",
			    program_name);
		return;
	}
	setenv(HM_ENV_PRELOAD, shim, 1);
	old = getenv("LD_PRELOAD");
	if (old && *old) {
		_cleanup_free_ char *both = NULL;

		if (asprintf(&both, "%s:%s", shim, old) < 0)
			die(EXIT_INTERNAL, "out of memory");
		setenv("LD_PRELOAD", both, 1);
	} else {
		setenv("LD_PRELOAD", shim, 1);
	}
}

static void create_run(struct enroll *e)
{
	struct {
		struct hm_run_create c;
		struct hm_allow a[HM_RUN_MAX_ALLOW];
	} req = {};
	const char *msg = NULL;
	ssize_t n;

	req.c.flags = 0;
	if (e->cfg.network == HM_NETWORK_BLOCK)
		req.c.flags |= HM_RUN_NET_ENFORCE;
	if (e->cfg.loopback)
		req.c.flags |= HM_RUN_NET_LOOPBACK;
	if (e->cfg.unix_sockets)
		req.c.flags |= HM_RUN_NET_UNIX;
	if (e->record)
		req.c.flags |= HM_RUN_RECORD;
	req.c.n_allow = e->n_allow;
	memcpy(req.a, e->allow, e->n_allow * sizeof(struct hm_allow));
	snprintf(req.c.label, sizeof(req.c.label), "%s", e->argv[0]);
	e->sock = cli_connect();
	n = cli_call(e->sock, HM_REQ_RUN_CREATE, &req,
		     sizeof(req.c) + e->n_allow * sizeof(struct hm_allow), -1, HM_REP_RUN, &e->run,
		     sizeof(e->run), true, &e->cgroup_fd, &msg);
	if (n == -EPERM)
		die(EXIT_NESTED, "cannot enroll: %s", msg);
	if (n < 0)
		die(EXIT_INTERNAL, "hermeticd refused the run: %s", msg);
	if (e->cgroup_fd < 0)
		die(EXIT_INTERNAL, "hermeticd sent no cgroup descriptor");
	e->run.cgroup_path[sizeof(e->run.cgroup_path) - 1] = 0;
	e->events_fd = openat(e->cgroup_fd, "cgroup.events", O_RDONLY | O_CLOEXEC);
	if (e->events_fd < 0)
		die(EXIT_INTERNAL, "Failed to open '%s/cgroup.events': %s", e->run.cgroup_path,
		    strerror(errno));
}

static void run_ref_call(struct enroll *e, uint16_t type)
{
	struct hm_run_ref ref = { .run_id = e->run.run_id };
	const char *msg = NULL;

	if (cli_call(e->sock, type, &ref, sizeof(ref), -1, HM_REP_OK, NULL, 0, false, NULL, &msg) < 0)
		warnx_("hermeticd: %s", msg);
}

/* In the child, between fork/clone3 and exec: only async-signal-safe calls. */
static void __attribute__((noreturn)) child_exec(struct enroll *e, const sigset_t *oldmask, int go_fd,
						  int err_fd)
{
	int err;
	char b;

	sigprocmask(SIG_SETMASK, oldmask, NULL);
	signal(SIGPIPE, SIG_DFL);
	if (go_fd >= 0) {
		/* Wait until the daemon has moved us into the run. */
		if (read(go_fd, &b, 1) != 1)
			_exit(EXIT_INTERNAL);
	}
	/* ASLR off before the first exec, inherited by the whole tree:
	 * programs mix addresses into their random state. */
	if (!e->cfg.aslr)
		personality(ADDR_NO_RANDOMIZE);
	execvp(e->bnd.exec_file, e->argv);
	err = errno;
	if (write(err_fd, &err, sizeof(err)) < 0) {
		/* the parent will see a plain exit */
	}
	_exit(err == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_EXEC);
}

static void spawn(struct enroll *e, const sigset_t *oldmask)
{
	int errp[2], gop[2] = { -1, -1 }, err = 0;
	ssize_t n;

	if (pipe2(errp, O_CLOEXEC) < 0)
		die(EXIT_INTERNAL, "pipe: %s", strerror(errno));
	e->child = -1;
	if (!e->no_daemon) {
		/* Preferred: the child is born inside the run's cgroup. This needs
		 * write access to cgroup.procs of the common ancestor (root). */
		struct clone_args args = {
			.flags = CLONE_INTO_CGROUP,
			.exit_signal = SIGCHLD,
			.cgroup = (uint64_t)e->cgroup_fd,
		};
		long pid = syscall(SYS_clone3, &args, sizeof(args));

		if (pid == 0)
			child_exec(e, oldmask, -1, errp[1]);
		if (pid > 0)
			e->child = pid;
		else if (errno != EACCES && errno != EPERM && errno != ENOSYS && errno != EBUSY)
			die(EXIT_INTERNAL, "clone3 into '%s': %s", e->run.cgroup_path, strerror(errno));
	}
	if (e->child < 0) {
		/* Otherwise the child waits on a pipe while the daemon moves it,
		 * identified by a pidfd, so it never runs a command unenrolled. */
		if (!e->no_daemon && pipe2(gop, O_CLOEXEC) < 0)
			die(EXIT_INTERNAL, "pipe: %s", strerror(errno));
		e->child = fork();
		if (e->child < 0)
			die(EXIT_INTERNAL, "fork: %s", strerror(errno));
		if (e->child == 0)
			child_exec(e, oldmask, gop[0], errp[1]);
		if (!e->no_daemon) {
			struct hm_run_ref ref = { .run_id = e->run.run_id };
			const char *msg = NULL;
			int pidfd = syscall(SYS_pidfd_open, e->child, 0);

			close(gop[0]);
			if (pidfd < 0 || cli_call(e->sock, HM_REQ_RUN_ADOPT, &ref, sizeof(ref), pidfd,
						  HM_REP_OK, NULL, 0, false, NULL, &msg) < 0) {
				kill(e->child, SIGKILL);
				die(EXIT_INTERNAL, "hermeticd could not move the command into the run: %s",
				    msg ? msg : strerror(errno));
			}
			close(pidfd);
			if (write(gop[1], "g", 1) != 1)
				die(EXIT_INTERNAL, "cannot release the command: %s", strerror(errno));
			close(gop[1]);
		}
	}
	close(errp[1]);
	n = read(errp[0], &err, sizeof(err));
	close(errp[0]);
	if (n == sizeof(err)) {
		waitpid(e->child, NULL, 0);
		die(err == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_EXEC, "%s: %s", e->argv[0],
		    strerror(err));
	}
}

static int status_code(int st)
{
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return EXIT_INTERNAL;
}

/* Reap every child that has exited (we are a subreaper: orphans of the
 * run come back to us). */
static void reap(struct enroll *e)
{
	int st;
	pid_t p;

	while ((p = waitpid(-1, &st, WNOHANG)) > 0) {
		if (p == e->child) {
			e->child_status = st;
			e->child_done = true;
		}
	}
}

/* Read cgroup.events through the descriptor poll watches: kernfs reports
 * POLLPRI from every change until that descriptor reads the file again, so
 * a change that is never read back would make each poll return at once. */
static bool events_populated(struct enroll *e, char *buf, size_t size)
{
	ssize_t n = pread(e->events_fd, buf, size - 1, 0);

	if (n < 0)
		return false;
	buf[n] = 0;
	return strstr(buf, "populated 1") != NULL;
}

static bool run_populated(struct enroll *e)
{
	char buf[256];

	if (e->no_daemon) {
		int st;
		pid_t p;

		/* No cgroup: our children (orphans come back to us) are the run;
		 * reap those that exited until one is still running or none is left. */
		while ((p = waitpid(-1, &st, WNOHANG | __WALL)) > 0) {
			if (p == e->child) {
				e->child_status = st;
				e->child_done = true;
			}
		}
		return p == 0;
	}
	return events_populated(e, buf, sizeof(buf));
}

/* Wait for an event: a signal (forwarded), the cgroup emptying, or timeout. */
static void wait_events(struct enroll *e, int sfd, int timeout_ms)
{
	struct pollfd pfd[2] = {
		{ .fd = sfd, .events = POLLIN },
		{ .fd = e->no_daemon ? -1 : e->events_fd, .events = POLLPRI },
	};
	struct signalfd_siginfo si;
	char buf[256];

	if (poll(pfd, 2, timeout_ms) < 0 && errno != EINTR)
		die(EXIT_INTERNAL, "poll: %s", strerror(errno));
	if (pfd[1].revents)
		events_populated(e, buf, sizeof(buf)); /* acknowledge the change */
	while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGCHLD)
			continue;
		/* A terminal's ^C already reached the whole foreground process
		 * group (si_code SI_KERNEL); forward only signals sent to us. */
		if (si.ssi_code != SI_KERNEL && !e->child_done)
			kill(e->child, si.ssi_signo);
	}
	reap(e);
}

/* Name what outlived CMD in list (the first 8) and, with kill_them, kill
 * it; returns how many processes there were. */
static int stragglers(struct enroll *e, bool kill_them, char *list, size_t size)
{
	char buf[8192], path[64], *save, *tok;
	int n = 0;

	list[0] = 0;
	if (e->no_daemon) {
		/* Our remaining children (the run's orphans were reparented to us). */
		snprintf(path, sizeof(path), "/proc/%d/task/%d/children", getpid(), getpid());
		if (hm_read_file_at(AT_FDCWD, path, buf, sizeof(buf)) < 0)
			buf[0] = 0;
	} else if (hm_read_file_at(e->cgroup_fd, "cgroup.procs", buf, sizeof(buf)) < 0) {
		buf[0] = 0;
	}
	for (tok = strtok_r(buf, "\n ", &save); tok; tok = strtok_r(NULL, "\n ", &save)) {
		char comm[64] = "?";
		size_t used = strlen(list);

		snprintf(path, sizeof(path), "/proc/%s/comm", tok);
		if (hm_read_file_at(AT_FDCWD, path, comm, sizeof(comm)) > 0)
			comm[strcspn(comm, "\n")] = 0;
		if (n < 8 && used + 100 < size)
			snprintf(list + used, size - used, "%s%s (%s)", n ? ", " : "", tok, comm);
		else if (n == 8 && used + 8 < size)
			snprintf(list + used, size - used, ", ...");
		if (kill_them && e->no_daemon)
			kill(atoi(tok), SIGKILL);
		n++;
	}
	if (kill_them && !e->no_daemon)
		run_ref_call(e, HM_REQ_RUN_KILL);
	return n;
}

static void print_refusals(struct enroll *e)
{
	struct hm_run_ref ref = { .run_id = e->run.run_id };
	struct hm_report rep;
	const char *msg = NULL;
	char line[1024] = "", a[64];

	if (cli_call(e->sock, HM_REQ_RUN_REPORT, &ref, sizeof(ref), -1, HM_REP_REPORT, &rep,
		     sizeof(rep), true, NULL, &msg) < 0) {
		warnx_("cannot read the run's report: %s", msg);
		return;
	}
	if (!rep.refused)
		return;
	for (uint32_t i = 0; i < rep.n && i < HM_REPORT_MAX && i < 4; i++) {
		const struct hm_refusal *r = &rep.first[i];
		size_t used = strlen(line);
		char comm[17];

		memcpy(comm, r->comm, 16);
		comm[16] = 0;
		if (r->family == 1)
			snprintf(a, sizeof(a), "unix socket");
		else
			hm_addr_str(r->addr, r->port, a, sizeof(a));
		if (!comm[0])
			snprintf(comm, sizeof(comm), "pid unknown");
		snprintf(line + used, sizeof(line) - used, "%s%s%s (%s)%s", i ? ", " : "",
			 r->op == 2 ? "sendto " : r->op == 3 ? "packet to " : "", a, comm,
			 r->count > 1 ? (snprintf(comm, sizeof(comm), " x%u", r->count), comm) : "");
	}
	warnx_("refused %" PRIu64 " connection%s: %s%s", rep.refused, rep.refused == 1 ? "" : "s",
	       line, rep.n > 4 ? ", ..." : "");
}

#define APPEND(...)                                                                               \
	do {                                                                                       \
		if (used < sizeof(line))                                                           \
			used += snprintf(line + used, sizeof(line) - used, __VA_ARGS__);           \
	} while (0)
/* One argument, single-quoted unless plainly safe for a shell. */
#define APPEND_ARG(a)                                                                             \
	do {                                                                                       \
		const char *_a = (a);                                                              \
		if (*_a && strspn(_a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"          \
				      "0123456789-_./=:,+@%") == strlen(_a)) {                     \
			APPEND(" %s", _a);                                                         \
			break;                                                                     \
		}                                                                                  \
		APPEND(" '");                                                                      \
		for (const char *_c = _a; *_c; _c++)                                               \
			APPEND(*_c == '\'' ? "'\\''" : "%c", *_c);                                  \
		APPEND("'");                                                                       \
	} while (0)

/* The command line that repeats this run: every option that is not the
 * default, with the seed and start time made explicit. */
/* Coverage: what the kernel saw that the shim did not control. One line,
 * only when something escaped. */
static void fetch_audit(struct enroll *e)
{
	struct hm_run_ref ref = { .run_id = e->run.run_id };
	const char *msg = NULL;

	if (cli_call(e->sock, HM_REQ_RUN_AUDIT, &ref, sizeof(ref), -1, HM_REP_AUDIT, &e->audit,
		     sizeof(e->audit), true, NULL, &msg) < 0) {
		warnx_("cannot read the run's audit: %s", msg);
		return;
	}
	e->have_audit = true;
}

static void print_audit(struct enroll *e)
{
	const struct hm_audit *ap = &e->audit;
	char line[1024] = "";
	size_t used = 0;
	uint64_t bypass = 0;

	if (!e->cfg.clock_virtual && !e->cfg.rng)
		return; /* nothing was meant to be controlled */
	if (!e->have_audit)
		return;
	for (uint32_t i = 0; i < ap->n && i < HM_AUDIT_MAX; i++) {
		const struct hm_audit_proc *p = &ap->procs[i];
		uint64_t calls = (e->cfg.rng ? p->getrandom + p->random_reads : 0) +
				 (e->cfg.clock_virtual ? p->clock : 0);
		char comm[17];

		memcpy(comm, p->comm, 16);
		comm[16] = 0;
		if (!p->shim) {
			used += snprintf(line + used, sizeof(line) - used > 0 ? sizeof(line) - used : 0,
					 "%s%s (pid %u, %u getrandom, %u clock syscalls)",
					 used ? "; " : "", p->path[0] ? p->path : comm, p->pid,
					 p->getrandom + p->random_reads, p->clock);
		} else {
			bypass += calls;
		}
		if (used >= sizeof(line))
			break;
	}
	if (!ap->without_shim && !bypass && !ap->dropped)
		return;
	if (ap->without_shim)
		warnx_("coverage: %" PRIu64 " of %" PRIu64 " process%s ran without the shim: %s",
		       ap->without_shim, ap->processes, ap->processes == 1 ? "" : "es", line);
	if (bypass)
		warnx_("coverage: %" PRIu64 " raw time/entropy syscall%s bypassed the shim", bypass,
		       bypass == 1 ? "" : "s");
	if (ap->dropped)
		warnx_("coverage: the kernel could not deliver %" PRIu64 " event%s", ap->dropped,
		       ap->dropped == 1 ? "" : "s");
}

static void print_repro(struct enroll *e, int code)
{
	const struct hm_boundary *b = &e->bnd.opt;
	struct hm_config def;
	char now[64], line[8192];
	size_t used = 0;

	hm_config_init(&def);
	hm_format_time(e->cfg.now_ns, now, sizeof(now));
	APPEND("hermetic enroll --seed %" PRIu64 " --now %s", e->cfg.seed, now);
	if (e->cfg.tick_ns != def.tick_ns)
		APPEND(" --tick %" PRIu64 "ns", e->cfg.tick_ns);
	if (!e->cfg.clock_virtual)
		APPEND(" --clock off");
	if (!e->cfg.rng)
		APPEND(" --rng off");
	if (e->cfg.spin_limit != def.spin_limit)
		APPEND(" --spin-limit %" PRIu64, e->cfg.spin_limit);
	if (e->cfg.aslr)
		APPEND(" --aslr on");
	if (e->cfg.network == HM_NETWORK_OFF)
		APPEND(" --network off");
	if (!e->cfg.loopback)
		APPEND(" --no-loopback");
	if (!e->cfg.unix_sockets)
		APPEND(" --no-unix");
	for (int i = 0; i < e->n_allow_specs; i++)
		APPEND(" --allow %s", e->allow_specs[i]);
	if (e->no_daemon)
		APPEND(" --no-daemon");
	if (e->grace_ns != DEFAULT_GRACE_NS)
		APPEND(" --grace %" PRIu64 "ms", e->grace_ns / 1000000);
	if (b->fs == HM_FS_ISOLATE)
		APPEND(" --fs isolate");
	if (b->temp_parent) {
		APPEND(" --temp-parent");
		APPEND_ARG(b->temp_parent);
	}
	if (b->no_chdir)
		APPEND(" --no-chdir");
	if (b->scrub_env)
		APPEND(" --scrub-env");
	for (size_t i = 0; i < b->n_keep_env; i++) {
		APPEND(" --keep-env");
		APPEND_ARG(b->keep_env[i]);
	}
	for (size_t i = 0; i < b->n_env_ops; i++) {
		if (b->env_ops[i].value) {
			_cleanup_free_ char *kv = NULL;

			if (asprintf(&kv, "%s=%s", b->env_ops[i].name, b->env_ops[i].value) < 0)
				return;
			APPEND(" --env");
			APPEND_ARG(kv);
		} else {
			APPEND(" --unset");
			APPEND_ARG(b->env_ops[i].name);
		}
	}
	if (b->stragglers == HM_STRAGGLERS_KEEP)
		APPEND(" --stragglers keep");
	if (b->keep_root)
		APPEND(" --keep-root");
	APPEND(" --");
	for (char **a = e->argv; *a; a++)
		APPEND_ARG(*a);
	warnx_("command exited with status %d; reproduce with:\n  %s", code, line);
}
#undef APPEND
#undef APPEND_ARG

int enroll_status_code(int st)
{
	return status_code(st);
}

int enroll_run(struct enroll *e)
{
	sigset_t mask, oldmask;
	int sfd, code;
	const char *inside = getenv(HM_ENV_RUN);
	bool keep, kept = false, empty;
	char list[1024];

	if (inside && *inside)
		die(EXIT_NESTED,
		    "cannot enroll: this process is already inside hermetic run %s (one run's\n"
		    "  processes belong to one policy; run the command directly)",
		    inside);
	e->sock = e->cgroup_fd = e->events_fd = -1;
	if (e->record)
		record_setup(e);
	if (e->no_daemon)
		warnx_("--no-daemon: running shim-only; the kernel does NOT refuse this run's\n"
		       "  network traffic, and static binaries and raw syscalls are not seen");
	else
		create_run(e);
	boundary_setup(&e->bnd, e->argv);
	export_env(e);
	boundary_print(&e->bnd);
	if (!e->cfg.seed_set && !e->quiet_seed) {
		char now[64];

		hm_format_time(e->cfg.now_ns, now, sizeof(now));
		warnx_("seed %" PRIu64 ", now %s from %s (pass --seed %" PRIu64 " to repeat)",
		       e->cfg.seed, now, now_source_name(e->now_src), e->cfg.seed);
	}

	/* Signals arrive through a signalfd; CMD gets our original mask. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGQUIT);
	sigprocmask(SIG_BLOCK, &mask, &oldmask);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0)
		die(EXIT_INTERNAL, "signalfd: %s", strerror(errno));
	/* Orphans of the run (daemonized grandchildren) are reparented to us,
	 * so we reap them and can name them. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	signal(SIGPIPE, SIG_IGN);

	boundary_enter(&e->bnd);
	if (e->rec)
		record_before_spawn(e);
	if (e->before_spawn)
		e->before_spawn(e, e->userdata);
	e->started_mono = hm_now_ns();
	{
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		e->started_ns = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
	}
	spawn(e, &oldmask);
	e->bnd.started = true;
	boundary_leave(&e->bnd);
	while (!e->child_done)
		wait_events(e, sfd, -1);
	code = status_code(e->child_status);
	keep = e->bnd.opt.stragglers == HM_STRAGGLERS_KEEP;

	/* CMD is done; the run is done when its cgroup is empty. */
	uint64_t deadline = hm_now_ns() + e->grace_ns;
	while (run_populated(e) && hm_now_ns() < deadline)
		wait_events(e, sfd, (int)((deadline - hm_now_ns()) / 1000000 + 1));
	if (run_populated(e) && keep) {
		/* --stragglers keep: they run on, and so does their root. */
		int n = stragglers(e, false, list, sizeof(list));

		kept = run_populated(e);
		if (kept)
			warnx_("left %d process%s running that outlived the command by %.1fs "
			       "(--stragglers keep): %s",
			       n, n == 1 ? "" : "es", e->grace_ns / 1e9, list);
	} else if (run_populated(e)) {
		int n = stragglers(e, true, list, sizeof(list));

		if (n)
			warnx_("killed %d straggler%s that outlived the command by %.1fs: %s", n,
			       n == 1 ? "" : "s", e->grace_ns / 1e9, list);
		e->killed = n;
		deadline = hm_now_ns() + KILL_WAIT_MS * 1000000ULL;
		while (run_populated(e) && hm_now_ns() < deadline)
			wait_events(e, sfd, 50);
		if (run_populated(e))
			warnx_("processes of run %" PRIu64 " survived SIGKILL; hermeticd removes the "
			       "run when they are gone",
			       e->run.run_id);
	}
	reap(e);
	e->wall_ns = hm_now_ns() - e->started_mono;
	/* Only a provably empty run lets its root go. */
	empty = !kept && !run_populated(e);

	if (!e->no_daemon) {
		print_refusals(e);
		fetch_audit(e);
		print_audit(e);
	}
	/* The journal goes to the store before the run ends. */
	if (e->rec)
		record_finish(e, code);
	if (!e->no_daemon) {
		struct hm_run_end end = { .run_id = e->run.run_id,
					  .flags = kept ? HM_END_KEEP : 0 };
		const char *msg = NULL;

		if (cli_call(e->sock, HM_REQ_RUN_END, &end, sizeof(end), -1, HM_REP_OK, NULL, 0, false,
			     NULL, &msg) < 0)
			warnx_("hermeticd could not end the run: %s", msg);
	}
	boundary_finish(&e->bnd, empty);
	if (e->rec)
		record_cleanup(e);
	close(sfd);
	sigprocmask(SIG_SETMASK, &oldmask, NULL);
	if (code != 0 && !e->quiet_repro)
		print_repro(e, code);
	return code;
}

int cmd_enroll(int argc, char **argv)
{
	static struct enroll e;

	program_name = "hermetic";
	enroll_parse(&e, argc, argv, "hermetic enroll");
	return enroll_run(&e);
}
