// SPDX-License-Identifier: MIT
/*
 * hermetic enroll's options: --help, parsing and checking them into struct
 * enroll, resolving --allow names and choosing the seed and the start time.
 */
#include <getopt.h>
#include <stdarg.h>
#include <strings.h>
#include <netdb.h>
#include <inttypes.h>
#include <arpa/inet.h>
#include <sys/random.h>
#include "util.h"
#include "config.h"
#include "cli.h"
#include "isolate.h"
#include "enroll.h"
#include "now.h"
#include "dnsmsg.h"
#include <ctype.h>

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
		"  --network block|audit|off  refuse all but loopback and unix sockets\n"
		"                          (default block); audit: refuse nothing and list\n"
		"                          what block would refuse; off: enforce nothing.\n"
		"                          block: DNS (port 53, any address) goes only to\n"
		"                          hermeticd, which answers NXDOMAIN to names not\n"
		"                          allowed (every name without --allow NAME)\n"
		"  --no-loopback           refuse loopback (127.0.0.0/8, ::1) too\n"
		"  --no-unix               refuse unix socket connect/sendmsg too\n"
		"  --allow HOST[:PORT]     open exactly this destination (repeatable); no port\n"
		"                          opens every port; [V6ADDR]:PORT. HOST a name\n"
		"                          (or *.NAME: every name below NAME): the run's DNS\n"
		"                          (port 53, UDP and TCP) goes to hermeticd, which\n"
		"                          answers only these names, from the system's\n"
		"                          resolver, and opens the A/AAAA addresses of each\n"
		"                          answer (CNAMEs followed) for its TTL; connections\n"
		"                          opened meanwhile outlive it. Other names: NXDOMAIN\n"
		"                          at once, never sent upstream. Addresses\n"
		"                          /etc/hosts gives the name open now (docs/network.md)\n"
		"  --connections FILE      write one JSON line per connection attempt of the\n"
		"                          run to FILE: allowed, refused or audited, with\n"
		"                          process, destination, port, protocol and real\n"
		"                          time; datagrams to one destination in a row are\n"
		"                          one line with a count; the last line, {\"end\":\n"
		"                          true, ...}, has the counts and the events lost\n"
		"  --no-daemon             shim only: NO kernel network refusal, no kernel view\n"
		"  --confine on|off        on (default): the kernel refuses the run's\n"
		"                          processes, static ones too, packet and vsock\n"
		"                          sockets (and io_uring) when the network is\n"
		"                          blocked and setting the host's clock always; a\n"
		"                          root run gets a cgroup and mount namespace of its\n"
		"                          own and loses CAP_SYS_ADMIN, CAP_BPF,\n"
		"                          CAP_NET_ADMIN, CAP_SYS_PTRACE, CAP_SYS_MODULE,\n"
		"                          CAP_SYS_RAWIO, CAP_SYS_BOOT and\n"
		"                          CAP_DAC_READ_SEARCH, so even root cannot leave\n"
		"                          its cgroup; a non-root run gets no_new_privs\n"
		"                          (setuid programs such as sudo do not elevate).\n"
		"                          Root also loses CAP_PERFMON, CAP_SYSLOG,\n"
		"                          CAP_CHECKPOINT_RESTORE and, where the network is\n"
		"                          blocked, CAP_NET_RAW; every run\n"
		"                          is refused TIOCSTI/TIOCLINUX (typing into the\n"
		"                          terminal), clone3 (ENOSYS: libc falls back to\n"
		"                          clone) and system-wide perf_event_open.\n"
		"                          off: none of it, for suites that manage the machine\n"
		"  --pass-fd N             descriptor N, a network socket made outside the\n"
		"                          run, stays open in it (its traffic is judged as\n"
		"                          the outside's); every other inherited inet, inet6\n"
		"                          or packet socket is /dev/null in the run, named\n"
		"                          on stderr, when the network is enforced\n"
		"  --raw-sockets           a root run keeps CAP_NET_RAW under --network block\n"
		"                          (raw sockets, ping where net.ipv4.ping_group_range\n"
		"                          excludes root); its packets still meet the egress\n"
		"                          hook\n"
		"  --supervise on|clock|off  on (default): processes that do not load the\n"
		"                          shim (static binaries, Go) get the run's clocks\n"
		"                          (a synthetic vDSO mapped at their exec), its timed\n"
		"                          waits (sleeps, epoll and futex waits with a\n"
		"                          timeout: Go's timers) and seeded getrandom\n"
		"                          (docs/static.md); clock: the wall clock and\n"
		"                          getrandom only, the monotonic clock and waits real;\n"
		"                          off: the real ones ('waits' is the same as on)\n"
		"  --audit-syscalls        count the time and entropy syscalls that reach the\n"
		"                          kernel (raw ones that bypass the shim, those of\n"
		"                          processes without it, /dev/urandom reads) in the\n"
		"                          coverage line and --report (--record implies it:\n"
		"                          the journal keeps them); while a run with it\n"
		"                          lives, every syscall on the machine takes the\n"
		"                          kernel's slow path (docs/performance.md)\n"
		"\n"
		"Record (hermetic replay feeds a journal back):\n"
		"  --record[=DIR]          journal every value the shim hands out and the\n"
		"                          kernel's view; keep the journal in hermeticd's\n"
		"                          store and, with DIR, in DIR (with DIR/index.json).\n"
		"                          '--record DIR' works when CMD follows '--'\n"
		"  --keep-passing          keep the journal when CMD exits 0 too (default:\n"
		"                          only failing runs keep one)\n"
		"  --journal-per-scope     keep a journal in the record directory for every\n"
		"                          scope (test) left failed, instead of one for the run\n"
		"  --report FILE           append one line of JSON about the run to FILE:\n"
		"                          exit status, seed, now, refusals, coverage,\n"
		"                          journal, the command that repeats it (for CI)\n"
		"\n"
		"Clock and entropy (the shim):\n"
		"  --seed N                seed of every random byte (default: generated, printed)\n"
		"  --now TIME              virtual wall clock at start: ISO 8601 or @EPOCH\n"
		"                          (default: $SOURCE_DATE_EPOCH, else the commit time\n"
		"                          of HEAD when the working directory is in a git\n"
		"                          checkout, else the newest mtime among its entries,\n"
		"                          else the date of this hermetic release)\n"
		"  --tick DURATION         advance per reading once a thread has read the clock\n"
		"                          100000 times without waiting, or polled with a zero\n"
		"                          timeout and found nothing (default 1us; 0: never)\n"
		"  --clock virtual|off     one virtual clock for the run, moving only when the\n"
		"                          whole run is idle (default), or the real one\n"
		"  --rng all|off           seeded entropy (default) or real entropy\n"
		"  --spin-limit N          with --tick 0, end a process that reads the clock N\n"
		"                          times without waiting (default %llu; 0 = never)\n"
		"  --lag-bound K|inf       a pending timeout, timer or alarm fires at the latest\n"
		"                          once the run has been busy for K times its remaining\n"
		"                          virtual time of real time (default 10; inf: only\n"
		"                          when the run is idle)\n"
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
		"Exit status: CMD's own, or 128+N when it died of signal N (86: it spun on a\n"
		"clock that cannot advance). hermetic's own failures: 2 bad usage,\n"
		"69 hermeticd not reachable, 70 internal error or hermeticd refused the run,\n"
		"73 --report or --connections cannot be opened, 77 already inside a run,\n"
		"126 CMD not executable, 127 CMD not found. All but 2 and 73 also get a\n"
		"--report line whose hermetic_error says why; CMD's own status has it null.\n",
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

/* "--allow https://example.com/x": a URL, not HOST[:PORT]; say which
 * form it wants, with the URL's own host and port. */
static void url_allow(const char *spec)
{
	const char *p = strstr(spec, "://"), *port = "PORT";
	char host[256];

	if (!p)
		return;
	if (!strncasecmp(spec, "https://", 8))
		port = "443";
	else if (!strncasecmp(spec, "http://", 7))
		port = "80";
	p += 3;
	p += strcspn(p, "@/") < strcspn(p, "/") ? strcspn(p, "@") + 1 : 0; /* user@ */
	snprintf(host, sizeof(host), "%.*s", (int)strcspn(p, "/?#"), p);
	if (strchr(host, ':') && host[0] != '[')
		bad_usage("--allow %s: a URL; --allow takes HOST:PORT, here --allow %s", spec, host);
	bad_usage("--allow %s: a URL; --allow takes HOST:PORT, here --allow %s:%s", spec,
		  host[0] ? host : "HOST", port);
}

/* The addresses /etc/hosts gives a name (or the names below *.suffix):
 * opened now, for the whole run. Such a lookup never becomes DNS (glibc's
 * and Go's "files" answer it), so the run's resolver never sees it; the file
 * is as static as an address given on the command line. Lines are "ADDR
 * NAME [ALIAS...]", '#' to the end of a line a comment. */
static void hosts_allow(struct enroll *e, const char *pattern, uint16_t port)
{
	char line[4096];
	FILE *f = fopen("/etc/hosts", "re");

	while (f && fgets(line, sizeof(line), f)) {
		char *save, *tok, *addr;
		uint8_t a[16] = {};
		bool v4;

		line[strcspn(line, "#")] = 0;
		addr = strtok_r(line, " \t\r\n", &save);
		if (!addr)
			continue;
		v4 = inet_pton(AF_INET, addr, a + 12) == 1;
		if (v4)
			a[10] = a[11] = 0xff;
		else if (inet_pton(AF_INET6, addr, a) != 1)
			continue;
		while ((tok = strtok_r(NULL, " \t\r\n", &save))) {
			size_t n = strlen(tok);

			if (n && tok[n - 1] == '.')
				tok[--n] = 0;
			for (size_t i = 0; i < n; i++)
				tok[i] = (char)tolower((unsigned char)tok[i]);
			if (hm_dns_match(pattern, tok)) {
				add_allow(e, a, port);
				break;
			}
		}
	}
	if (f)
		fclose(f);
}

/* An address opens now; a name is given to the run's resolver in hermeticd,
 * which opens the addresses of the answers the run receives, for their TTL
 * (docs/network.md). */
static void resolve_allow(struct enroll *e, const char *spec)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICHOST };
	struct addrinfo *res, *ai;
	struct hm_allow_name *nm;
	char host[256];
	uint16_t port;
	size_t len;

	url_allow(spec);
	split_host_port(spec, host, sizeof(host), &port);
	if (!getaddrinfo(host, NULL, &hints, &res)) {
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
		return;
	}
	len = strlen(host);
	if (len > 1 && host[len - 1] == '.')
		host[--len] = 0;
	for (size_t i = 0; i < len; i++)
		host[i] = (char)tolower((unsigned char)host[i]);
	if (!hm_dns_pattern_ok(host))
		bad_usage("--allow %s: '%s' is neither an address nor a DNS name (NAME or *.NAME)",
			  spec, host);
	if (e->n_names == HM_RUN_MAX_NAMES)
		bad_usage("at most %d --allow names", HM_RUN_MAX_NAMES);
	nm = &e->names[e->n_names++];
	snprintf(nm->name, sizeof(nm->name), "%s", host);
	nm->port = port;
	hosts_allow(e, host, port);
	/* The shim lets these names through to the system's resolver, whose
	 * queries the kernel sends to the run's resolver. */
	{
		size_t used = strlen(e->dns_allow);

		if (used + len + 2 >= sizeof(e->dns_allow))
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
		O_RECORD = 239, O_KEEP_PASSING, O_REPORT, O_JOURNAL_PER_SCOPE, O_CONFINE, O_SUPERVISE,
		O_CONNECTIONS,
		O_AUDIT_SYSCALLS, O_RAW_SOCKETS, O_PASS_FD,
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
		{ "audit-syscalls", no_argument, NULL, O_AUDIT_SYSCALLS },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	int c, idx, r;
	const char *why;
	char msg[1024];

	usage_prefix = prefix;
	e->report_fd = -1;
	e->connlog.fd = -1;
	hm_config_init(&e->cfg);
	e->now_src = NOW_RELEASE;
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
		case O_JOURNAL_PER_SCOPE:
			e->journal_per_scope = true;
			break;
		case O_REPORT:
			if (!*optarg)
				bad_usage("--report FILE: empty file name");
			e->report_path = optarg;
			break;
		case O_CONNECTIONS:
			if (!*optarg)
				bad_usage("--connections FILE: empty file name");
			e->connlog_path = optarg;
			break;
		case O_AUDIT_SYSCALLS:
			e->audit_syscalls = true;
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
		case O_CONFINE:
			if (strcmp(optarg, "on") && strcmp(optarg, "off"))
				bad_usage("--confine %s: expected on or off", optarg);
			e->unconfined = !strcmp(optarg, "off");
			add_opt(e, opts[idx].name, optarg);
			break;
		case O_RAW_SOCKETS:
			e->raw_sockets = true;
			add_opt(e, opts[idx].name, NULL);
			break;
		case O_PASS_FD: {
			char *end;
			long fd = strtol(optarg, &end, 10);

			if (*end || end == optarg || fd < 0 || fd > 1 << 20)
				bad_usage("--pass-fd %s: expected a descriptor number", optarg);
			if (e->n_pass_fds == (int)ARRAY_SIZE(e->pass_fds))
				bad_usage("at most %zu --pass-fd options", ARRAY_SIZE(e->pass_fds));
			e->pass_fds[e->n_pass_fds++] = (int)fd;
			add_opt(e, opts[idx].name, optarg);
			break;
		}
		case O_SUPERVISE:
			if (strcmp(optarg, "on") && strcmp(optarg, "off") && strcmp(optarg, "waits") &&
			    strcmp(optarg, "clock"))
				bad_usage("--supervise %s: expected on, clock or off", optarg);
			e->no_supervise = !strcmp(optarg, "off");
			e->supervise_nowaits = !strcmp(optarg, "clock");
			add_opt(e, opts[idx].name, optarg);
			break;
		case O_GRACE:
			if (hm_parse_duration(optarg, &e->grace_ns) < 0)
				bad_usage("--grace %s: expected a duration such as 500ms or 2s", optarg);
			add_opt(e, opts[idx].name, optarg);
			break;
		case '?':
			exit(cli_bad_option(usage_prefix, "+h", argv));
		default:
			if (c < O_BOUNDARY) {
				set_cfg(e, opts[idx].name, optarg);
				if (c == O_LAG) /* the journal keeps it: replay's live waits */
					add_opt(e, opts[idx].name, optarg);
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
		bad_usage("--allow, --no-loopback and --no-unix need --network block or audit");
	if (e->no_daemon && (e->n_allow_specs || !e->cfg.loopback || !e->cfg.unix_sockets))
		bad_usage("--allow, --no-loopback and --no-unix need the daemon (not --no-daemon)");
	if (e->no_daemon && e->connlog_path)
		bad_usage("--connections needs the daemon (not --no-daemon): the kernel hooks see "
			  "the connections");
	if (e->keep_passing && !e->record)
		bad_usage("--keep-passing needs --record");
	if (e->journal_per_scope && !e->record_dir)
		bad_usage("--journal-per-scope needs --record=DIR: the journals of failing scopes go to DIR");
	if (e->record && e->no_daemon && !e->record_dir)
		bad_usage("--record with --no-daemon needs a directory (--record=DIR): the\n"
			  "  journal store is hermeticd's");
	if (boundary_validate(&e->bnd, msg, sizeof(msg)) < 0)
		bad_usage("%s", msg);
	/* Usage errors above get no --report line; what fails from here on does. */
	enroll_json_arm(e);
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
	e->parsed = true;
}
