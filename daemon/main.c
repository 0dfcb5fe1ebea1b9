// SPDX-License-Identifier: MIT
/*
 * hermeticd: options, start-up, readiness, the event loop and shutdown, in that
 * order, all in this file.
 */
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <time.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/stat.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <grp.h>
#include <fcntl.h>
#include "util.h"
#include "daemon.h"

bool hmd_verbose;

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: hermeticd [OPTIONS]\n"
		"\n"
		"The hermetic daemon: loads the BPF programs, owns a cgroup subtree, creates\n"
		"one cgroup per run and enforces each run's network policy in the kernel.\n"
		"Runs in the foreground as root; stops cleanly on SIGTERM or SIGINT. Under\n"
		"systemd it takes the socket from socket activation and reports readiness,\n"
		"status and watchdog pings (packaging/systemd/hermeticd.service).\n"
		"\n"
		"  -s, --socket PATH       listen here (default %s;\n"
		"                          HERMETIC_SOCKET overrides the default)\n"
		"  -t, --subtree NAME      cgroup subtree under the cgroup2 root (default hermetic)\n"
		"  -r, --runtime-dir DIR   where to mount cgroup2 if none is mounted, and the\n"
		"                          runs' clock pages (DIR/clock/, root only: runs\n"
		"                          get descriptors) (default /run/hermetic)\n"
		"      --delegated         put the subtree inside hermeticd's own cgroup, which\n"
		"                          a service manager delegated to it (systemd's\n"
		"                          Delegate=yes), and move hermeticd into its leaf\n"
		"                          'daemon'\n"
		"  -g, --socket-group GROUP  the socket is 0660 root:GROUP (default hermetic;\n"
		"                          when that group does not exist, root only);\n"
		"                          users in GROUP may enroll and use the store\n"
		"      --max-conns-per-user N  connections one uid may hold (default %d;\n"
		"                          root is exempt and has %d reserved)\n"
		"      --max-runs-per-user N   runs one uid may have at once (default %d;\n"
		"                          root is exempt)\n"
		"  -v, --verbose           log every run and libbpf warnings\n"
		"      --store DIR         the journal store (default %s)\n"
		"      --store-max-journals N  journals kept per user, oldest removed first\n"
		"                          (default %d)\n"
		"      --store-max-bytes SIZE  bytes kept per user (default 1G)\n"
		"      --max-upload-bytes-per-user SIZE  journal upload buffers one uid\n"
		"                          may hold at once, root included (default 1G:\n"
		"                          four of the largest journal the store takes)\n"
		"      --ringbuf-size SIZE the kernel's event ring buffer, a power of two\n"
		"                          (default 8M)\n"
		"      --ring-wakeup half|each|never  when a traced event wakes hermeticd:\n"
		"                          when it finds the ring over half full (default),\n"
		"                          for every event (the kernel's adaptive wake-up),\n"
		"                          or never (testing only: the 1 s tick drains)\n"
		"      --kstream-max SIZE  memory for one recorded run's kernel stream\n"
		"                          (default 64M; beyond it events are counted as dropped)\n"
		"      --kstream-user-max SIZE   the same over one uid's runs (default 256M)\n"
		"      --kstream-total-max SIZE  the same over all runs (default 512M)\n"
		"      --dns-upstream ADDR[:PORT]  the nameserver (repeatable, at most 3) the\n"
		"                          resolver of runs with --allow NAME forwards their\n"
		"                          allowed names to (default: /etc/resolv.conf's)\n"
		"      --no-cgroup-hooks   testing only: enforce with the BPF-LSM layer alone\n"
		"                          (refuses to start where BPF-LSM is unavailable)\n"
		"      --no-peerpidfd      testing only: identify peers as on kernels before\n"
		"                          6.5 (pidfd_open of the peer's pid, checked against\n"
		"                          the connection) instead of SO_PEERPIDFD\n"
		"  -h, --help              show this help\n"
		"  -V, --version           show the version\n",
		HM_DEFAULT_SOCKET, HMD_MAX_CONNS_PER_USER_DEFAULT, HMD_ROOT_RESERVED_CONNS,
		HMD_MAX_RUNS_PER_USER_DEFAULT, HMD_STORE_DEFAULT, HMD_STORE_MAX_JOURNALS_DEFAULT);
}

/* "64M", "8MiB", "4096", "1G": bytes. Returns 0 or -EINVAL/-ERANGE. */
static int parse_size(const char *s, uint64_t *ret)
{
	char num[32], *end;
	uint64_t v, mul = 1;
	size_t n = strspn(s, "0123456789");

	if (!n || n >= sizeof(num))
		return -EINVAL;
	memcpy(num, s, n);
	num[n] = 0;
	end = (char *)s + n;
	if (hm_parse_u64(num, &v) < 0)
		return -ERANGE;
	if (*end == 'K' || *end == 'k')
		mul = 1ULL << 10;
	else if (*end == 'M')
		mul = 1ULL << 20;
	else if (*end == 'G')
		mul = 1ULL << 30;
	else if (*end)
		return -EINVAL;
	if (*end && end[1] && strcmp(end + 1, "iB") && strcmp(end + 1, "B"))
		return -EINVAL;
	if (v > UINT64_MAX / mul)
		return -ERANGE;
	*ret = v * mul;
	return 0;
}

/* How deep the subtree lies below the cgroup2 root (the root is level 0). */
static int cgroup_level(const struct hmd_cgroup *cg)
{
	const char *p = cg->subtree + strlen(cg->mount);
	int level = 0;

	for (; *p; p++)
		if (*p == '/' && p[1] && p[1] != '/')
			level++;
	return level;
}

/* What the options chose that is not the daemon's own state. */
struct opts {
	const char *socket_path, *subtree, *runtime_dir, *socket_group;
	bool group_given, lsm_only, delegated;
	uint64_t ringbuf_size;
	uint32_t ring_wakeup; /* HM_RING_WAKE_* */
};

/* What start-up made that the loop and shutdown use. */
struct loop {
	int sfd, tfd, lock_fd;
	const char *stop_why;
	char lock_path[4096];
};

/* HMD_GO: go on; otherwise the exit status (0 for --help/--version). */
#define HMD_GO (-1)

static int parse_number_opt(int c, const char *arg, struct hmd *d, uint64_t *ringbuf_size)
{
	uint64_t v;

	switch (c) {
	case 'C':
	case 'N':
		if (hm_parse_u64(arg, &v) < 0 || v == 0 || v > HMD_MAX_CONNS) {
			hmd_err("--%s: not a number in 1..%d: '%s'",
				c == 'C' ? "max-conns-per-user" : "max-runs-per-user", HMD_MAX_CONNS,
				arg);
			return 2;
		}
		if (c == 'C')
			d->max_conns_per_user = v;
		else
			d->max_runs_per_user = v;
		return HMD_GO;
	case 'J':
		if (hm_parse_u64(arg, &v) < 0 || v == 0 || v > 1000000) {
			hmd_err("--store-max-journals: not a number in 1..1000000: '%s'", arg);
			return 2;
		}
		d->store.max_journals = v;
		return HMD_GO;
	}
	/* sizes: B u R K T U */
	if (parse_size(arg, &v) < 0 || v == 0) {
		hmd_err("not a size: '%s' (e.g. 64M, 1G, 4096)", arg);
		return 2;
	}
	if (c == 'B')
		d->store.max_bytes = v;
	else if (c == 'u')
		d->max_upload_per_user = v;
	else if (c == 'K')
		d->kstream_max = v;
	else if (c == 'T')
		d->kstream_total_max = v;
	else if (c == 'U')
		d->kstream_user_max = v;
	else if (v < 4096 || v > (1ULL << 30) || (v & (v - 1))) {
		/* The kernel wants a power-of-two number of pages. */
		hmd_err("--ringbuf-size must be a power of two from 4K to 1G: '%s'", arg);
		return 2;
	} else
		*ringbuf_size = v;
	return HMD_GO;
}

static int parse_options(int argc, char **argv, struct hmd *d, struct opts *o)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "subtree", required_argument, NULL, 't' },
		{ "runtime-dir", required_argument, NULL, 'r' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "no-cgroup-hooks", no_argument, NULL, 'L' },
		{ "delegated", no_argument, NULL, 'D' },
		{ "store", required_argument, NULL, 'S' },
		{ "store-max-journals", required_argument, NULL, 'J' },
		{ "store-max-bytes", required_argument, NULL, 'B' },
		{ "ringbuf-size", required_argument, NULL, 'R' },
		{ "ring-wakeup", required_argument, NULL, 'W' },
		{ "kstream-max", required_argument, NULL, 'K' },
		{ "kstream-total-max", required_argument, NULL, 'T' },
		{ "kstream-user-max", required_argument, NULL, 'U' },
		{ "socket-group", required_argument, NULL, 'g' },
		{ "max-conns-per-user", required_argument, NULL, 'C' },
		{ "max-runs-per-user", required_argument, NULL, 'N' },
		{ "no-peerpidfd", no_argument, NULL, 'P' },
		{ "max-upload-bytes-per-user", required_argument, NULL, 'u' },
		{ "dns-upstream", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{},
	};
	int c, r;

	while ((c = getopt_long(argc, argv, "s:t:r:g:vhV", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			o->socket_path = optarg;
			break;
		case 't':
			o->subtree = optarg;
			break;
		case 'r':
			o->runtime_dir = optarg;
			break;
		case 'v':
			hmd_verbose = true;
			break;
		case 'L':
			o->lsm_only = true;
			break;
		case 'D':
			o->delegated = true;
			break;
		case 'P':
			d->use_peerpidfd = false;
			break;
		case 'g':
			o->socket_group = optarg;
			o->group_given = true;
			break;
		case 'S':
			if (optarg[0] != '/') {
				hmd_err("--store needs an absolute path: '%s'", optarg);
				return 2;
			}
			d->store.path = optarg;
			break;
		case 'C':
		case 'N':
		case 'J':
		case 'B':
		case 'u':
		case 'R':
		case 'K':
		case 'T':
		case 'U':
			r = parse_number_opt(c, optarg, d, &o->ringbuf_size);
			if (r != HMD_GO)
				return r;
			break;
		case 'W':
			if (!strcmp(optarg, "half"))
				o->ring_wakeup = HM_RING_WAKE_HALF;
			else if (!strcmp(optarg, "each"))
				o->ring_wakeup = HM_RING_WAKE_EACH;
			else if (!strcmp(optarg, "never"))
				o->ring_wakeup = HM_RING_WAKE_NEVER;
			else {
				hmd_err("--ring-wakeup: expected half, each or never: '%s'", optarg);
				return 2;
			}
			break;
		case 'd':
			if (hmd_dns_add_upstream(optarg) < 0) {
				hmd_err("--dns-upstream %s: expected ADDR, ADDR:PORT or [V6ADDR]:PORT "
					"(at most 3)", optarg);
				return 2;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("hermeticd %s\n", HERMETIC_VERSION);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	return HMD_GO;
}

/* The daemon's defaults, before the options. */
static void defaults(struct hmd *d, struct opts *o)
{
	o->socket_path = getenv("HERMETIC_SOCKET");
	if (!o->socket_path || !*o->socket_path)
		o->socket_path = HM_DEFAULT_SOCKET;
	o->subtree = "hermetic";
	o->runtime_dir = "/run/hermetic";
	o->socket_group = "hermetic";
	o->ringbuf_size = HMD_RINGBUF_SIZE_DEFAULT;
	o->ring_wakeup = HM_RING_WAKE_HALF;
	d->kstream_max = HMD_KSTREAM_MAX_DEFAULT;
	d->kstream_total_max = HMD_KSTREAM_TOTAL_MAX_DEFAULT;
	d->kstream_user_max = HMD_KSTREAM_USER_MAX_DEFAULT;
	d->max_conns_per_user = HMD_MAX_CONNS_PER_USER_DEFAULT;
	d->max_runs_per_user = HMD_MAX_RUNS_PER_USER_DEFAULT;
	d->use_peerpidfd = true;
	d->max_upload_per_user = HMD_MAX_UPLOAD_PER_USER_DEFAULT;
	d->spare_fd = -1;
	d->store.path = HMD_STORE_DEFAULT;
	d->store.fd = -1;
	d->store.max_journals = HMD_STORE_MAX_JOURNALS_DEFAULT;
	d->store.max_bytes = HMD_STORE_MAX_BYTES_DEFAULT;
	d->listen_fd = d->epfd = d->probe_fd = d->watchdog_fd = -1;
	d->store.w = NULL;
	d->cg.subtree_fd = -1;
	d->pool.dirfd = -1;
	for (int i = 0; i < HMD_MAX_CONNS; i++)
		d->conns[i].fd = d->conns[i].pidfd = -1;
}

/* The process itself: who may connect, not dumpable, descriptor limit.
 * Returns HMD_GO or an exit status. */
static int prepare_process(struct hmd *d, const struct opts *o)
{
	struct group *g;
	struct rlimit rl;
	struct timespec ts;

	/* The nameservers the resolver of runs with --allow NAME asks. */
	if (hmd_dns_init() < 0) {
		hmd_err("cannot set the DNS upstream");
		return 1;
	}
	d->socket_path = o->socket_path;
	if (geteuid() != 0) {
		hmd_err("must run as root (it loads BPF programs and manages cgroups)");
		return 1;
	}
	/* Who may connect. A group that was asked for must exist; the default
	 * one may not (yet): then the socket is root's alone until it does. */
	g = getgrnam(o->socket_group);
	if (g) {
		d->socket_group = o->socket_group;
		d->socket_gid = g->gr_gid;
	} else if (o->group_given) {
		hmd_err("--socket-group %s: no such group. Create it (groupadd --system %s)"
			" and add the users who may enroll (usermod -aG %s USER)",
			o->socket_group, o->socket_group, o->socket_group);
		return 2;
	} else {
		hmd_warn("group '%s' does not exist: the socket is for root only. To let "
			 "users enroll: groupadd --system %s; usermod -aG %s USER; then "
			 "restart hermeticd (or pass --socket-group GROUP)",
			 o->socket_group, o->socket_group, o->socket_group);
	}
	/* Not dumpable: a process of a run running as root (with reduced
	 * capabilities, see engine/confine.c) must not ptrace the daemon or take
	 * its descriptors with pidfd_getfd; without CAP_SYS_PTRACE the kernel
	 * refuses both for a non-dumpable process. A daemon that cannot make
	 * sure of that does not start. */
	if (prctl(PR_SET_DUMPABLE, 0) < 0) {
		hmd_err("Failed to make the daemon non-dumpable: %s", strerror(errno));
		return 1;
	}
	/* Every connection and run holds descriptors; the limits above, not
	 * the default soft limit of 1024, are what bound them. Raising it is
	 * a convenience: on failure the soft limit stays and is logged. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			hmd_warn("cannot raise the descriptor limit to %llu: %s",
				 (unsigned long long)rl.rlim_max, strerror(errno));
	}
	d->started_ns = hm_now_ns();
	/* Run ids are unique across restarts of the daemon, so a journal or a
	 * log line never names two different runs. */
	(void)clock_gettime(CLOCK_REALTIME, &ts);
	d->next_run_id = (uint64_t)ts.tv_sec * 1000;
	return HMD_GO;
}

/* The subtree: located, locked, set up; pins and run records beside it.
 * Returns 0 or -1 (logged). */
static int start_subtree(struct hmd *d, const struct opts *o, struct loop *l)
{
	char holder[640];
	int r;

	if (mkdir(o->runtime_dir, 0755) < 0 && errno != EEXIST) {
		hmd_err("Failed to create '%s': %s", o->runtime_dir, strerror(errno));
		return -1;
	}
	if (strchr(o->subtree, '/') || !*o->subtree) {
		hmd_err("--subtree must be a single name, not '%s'", o->subtree);
		return -1;
	}
	hmd_service_status(d, "Setting up cgroup subtree %s", o->subtree);
	r = hmd_cgroup_locate(&d->cg, o->subtree, o->runtime_dir, o->delegated);
	if (r < 0) {
		hmd_err("Failed to find the place of cgroup subtree '%s': %s", o->subtree,
			strerror(-r));
		return -1;
	}
	/* One daemon per subtree, whatever its --runtime-dir: a second one (or
	 * one started while the last is still shutting down) would remove
	 * what the other uses. Taken before the subtree is touched. */
	l->lock_fd = hmd_subtree_lock(&d->cg, o->socket_path, l->lock_path, sizeof(l->lock_path),
				      holder, sizeof(holder));
	if (l->lock_fd == -EBUSY) {
		hmd_err("another hermeticd holds cgroup subtree '%s' (%s; lock %s): stop it "
			"first, or give this one another --subtree",
			d->cg.subtree, holder[0] ? holder : "pid unknown", l->lock_path);
		return -1;
	}
	if (l->lock_fd < 0) {
		hmd_err("Failed to lock cgroup subtree '%s' (%s): %s%s", d->cg.subtree,
			l->lock_path[0] ? l->lock_path : HMD_SUBTREE_LOCK_DIR, strerror(-l->lock_fd),
			l->lock_fd == -EPERM ? " (" HMD_SUBTREE_LOCK_DIR
					       " must be a directory of root's that only root can write)"
					     : "");
		return -1;
	}
	r = hmd_cgroup_setup(&d->cg);
	if (r < 0) {
		hmd_err("Failed to set up cgroup subtree '%s': %s", o->subtree, strerror(-r));
		return -1;
	}
	/* Pins (in bpffs) and run records (here) are what outlive us. */
	r = hmd_pin_setup(&d->pins, o->runtime_dir, o->subtree);
	if (r < 0) {
		/* Runs work as before pinning: they end when this process does. */
		hmd_warn("Failed to set up the pin directory in bpffs ('%s'): %s; runs will not "
			 "outlive this daemon (mount bpffs at /sys/fs/bpf to fix)",
			 d->pins.mount, strerror(-r));
		d->pins.dir[0] = 0;
	}
	r = hmd_record_init(d, o->runtime_dir, o->subtree);
	if (r < 0) {
		hmd_err("Failed to set up '%s': %s", d->records, strerror(-r));
		return -1;
	}
	return 0;
}

/* BPF programs, the ring buffer, the clock's keeper. Returns 0 or -1. */
static int start_bpf(struct hmd *d, const struct opts *o)
{
	struct stat sst;
	int r;

	hmd_service_status(d, "Loading and attaching BPF programs");
	r = hmd_bpf_load(&d->bpf, d->cg.subtree_fd, cgroup_level(&d->cg) + 1, o->lsm_only,
			 (uint32_t)o->ringbuf_size, o->ring_wakeup,
			 d->pins.dir[0] ? d->pins.dir : NULL, d->attach, &d->n_attach);
	for (int i = 0; i < d->n_attach; i++)
		if (!d->attach[i].attached && d->attach[i].err != EAGAIN)
			hmd_log_at(d->attach[i].required ? LOG_ERR : LOG_NOTICE, "%s %s: %s",
				   d->attach[i].required ? "required" : "optional",
				   d->attach[i].name, d->attach[i].why);
	if (r < 0) {
		hmd_err("Failed to load BPF programs: %s%s", strerror(-r),
			hmd_cgroup_count_runs(&d->cg)
				? " (runs of a hermeticd before this one stay enforced by its pinned "
				  "programs; a daemon of another version or --ringbuf-size cannot "
				  "take them over: start the one that left them, or wait for them to end)"
				: "");
		return -1;
	}
	if (d->pins.dir[0])
		hmd_log("BPF objects pinned in %s", d->pins.dir);
	r = hmd_bpf_open_events(d->bpf, d);
	if (r < 0) {
		hmd_err("Failed to open the event ring buffer: %s", strerror(-r));
		return -1;
	}
	/* The virtual clock's keeper: runs asking for a clock (--clock virtual,
	 * the default) need it; without it they are refused with the reason.
	 * (The subtree's cgroup id is its directory's inode number.) */
	r = fstat(d->cg.subtree_fd, &sst) < 0 ? -errno : 0;
	if (r == 0)
		r = hmd_sched_load(&d->sched, cgroup_level(&d->cg) + 1, sst.st_ino,
				   d->pins.dir[0] ? d->pins.dir : NULL);
	if (r == 0)
		r = hmd_keeper_start(&d->keeper, d->sched, o->runtime_dir);
	if (r < 0) {
		snprintf(d->sched_why, sizeof(d->sched_why), "scheduler tracepoints unavailable: %s",
			 strerror(-r));
		hmd_log("no virtual clock keeper: %s", d->sched_why);
	}
	return 0;
}

/* Runs a daemon before us left, the store, the socket. Returns 0 or -1. */
static int start_serving(struct hmd *d, const struct opts *o)
{
	int r;

	/* Runs a daemon before us left (killed, crashed, restarted): taken
	 * over before the first event is read, so none of theirs is lost. */
	r = hmd_runs_adopt(d);
	if (r < 0) {
		hmd_err("Failed to look for runs to adopt in '%s': %s", d->cg.subtree,
			strerror(-r));
		return -1;
	}
	if (r > 0)
		hmd_log("adopted %d run%s of a hermeticd before this one", r, r == 1 ? "" : "s");
	/* After adoption: no id made ahead is an adopted run's. */
	hmd_pool_init(d, o->subtree);
	/* Their kernel events (pinned tracing links), or none left over. */
	if (d->n_runs)
		hmd_bpf_trace_lazy(d->bpf, HMD_TRACE_RUNS, true);
	else
		hmd_bpf_trace_forget(d->bpf, HMD_TRACE_RUNS);
	if (hmd_runs_audit_syscalls(d))
		hmd_bpf_trace_lazy(d->bpf, HMD_TRACE_SYSCALLS, true);
	else
		hmd_bpf_trace_forget(d->bpf, HMD_TRACE_SYSCALLS);
	d->idle_since_ns = d->sys_idle_since_ns = hm_now_ns();
	/* A store that cannot be used is no reason to refuse runs: store
	 * requests answer with the reason, and it is logged once here. */
	r = hmd_store_open(&d->store);
	if (r < 0)
		hmd_warn("journal store '%s' unavailable: %s", d->store.path, d->store.why);
	else if ((r = hmd_store_worker_start(&d->store)) < 0) {
		hmd_err("Failed to start the store thread: %s", strerror(-r));
		return -1;
	}
	/* The descriptor kept for accept() at the descriptor limit (server.c). */
	d->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (d->spare_fd < 0)
		hmd_warn("no spare descriptor: %s", strerror(errno));
	d->listen_fd = hmd_service_listen(d, o->socket_path);
	if (d->listen_fd < 0) {
		r = d->listen_fd;
		hmd_err("Failed to listen on '%s': %s%s", o->socket_path, strerror(-r),
			r == -EADDRINUSE ? " (another hermeticd is running there)" : "");
		return -1;
	}
	return 0;
}

static int watch(struct hmd *d, int fd, uint64_t kind)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = HMD_EP(kind, 0) };

	return epoll_ctl(d->epfd, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
}

/* The event loop's descriptors: every one of them is needed (a signal
 * not watched is a daemon that cannot be stopped; a timer not armed is a
 * run whose end may be missed), so each call is checked. Returns 0 or -1. */
static int start_loop(struct hmd *d, sigset_t *mask, struct loop *l)
{
	static const struct itimerspec tick = { .it_interval = { 1, 0 }, .it_value = { 1, 0 } };
	int r;

	d->epfd = epoll_create1(EPOLL_CLOEXEC);
	l->sfd = signalfd(-1, mask, SFD_CLOEXEC | SFD_NONBLOCK);
	/* A slow tick reaps runs whose cgroup.events change we might miss. */
	l->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (d->epfd < 0 || l->sfd < 0 || l->tfd < 0 || timerfd_settime(l->tfd, 0, &tick, NULL) < 0) {
		hmd_err("Failed to set up the event loop: %s", strerror(errno));
		return -1;
	}
	r = watch(d, d->listen_fd, HMD_EP_LISTEN);
	if (!r)
		r = watch(d, l->sfd, HMD_EP_SIGNAL);
	if (!r)
		r = watch(d, l->tfd, HMD_EP_TIMER);
	if (!r)
		r = watch(d, hmd_bpf_events_fd(d->bpf), HMD_EP_EVENTS);
	if (!r && hmd_store_worker_fd(&d->store) >= 0)
		r = watch(d, hmd_store_worker_fd(&d->store), HMD_EP_STORE);
	if (r < 0) {
		hmd_err("Failed to set up the event loop: %s", strerror(-r));
		return -1;
	}
	/* Ready: once our own request through the socket is answered. */
	hmd_service_status(d, "Checking that %s answers", d->socket_path);
	r = hmd_service_probe_start(d);
	if (r < 0) {
		hmd_err("Failed to connect to '%s': %s", d->socket_path, strerror(-r));
		return -1;
	}
	r = hmd_service_watchdog_start(d);
	if (r < 0) {
		hmd_err("Failed to set up the watchdog: %s", strerror(-r));
		return -1;
	}
	return 0;
}

/* The slow tick: runs whose end we may have missed, tracers to detach. */
static void on_tick(struct hmd *d, struct loop *l)
{
	uint64_t t;

	/* Only the wake-up matters; a failed read (nothing due) changes nothing. */
	(void)!read(l->tfd, &t, sizeof(t));
	/* The tracers' records wake us only when the ring is half full
	 * (trace.bpf.c): what a quiet run left there is taken now, so that
	 * the ring is never held full by a run nobody asks about. */
	hmd_bpf_drain(d->bpf);
	hmd_runs_check_orphans(d);
	hmd_runs_reap(d);
	d->pool.failed = false; /* (try making parts ahead again) */
	/* Detach the tracers once idle for a while, so back-to-back runs don't
	 * pay for attaching; the scheduler programs once no run has had a
	 * clock for as long (sched.c). */
	if (!d->n_runs && hm_now_ns() - d->idle_since_ns > 10000000000ULL)
		hmd_bpf_trace_lazy(d->bpf, HMD_TRACE_RUNS, false);
	if (!hmd_runs_audit_syscalls(d) && hm_now_ns() - d->sys_idle_since_ns > 10000000000ULL)
		hmd_bpf_trace_lazy(d->bpf, HMD_TRACE_SYSCALLS, false);
	if (d->keeper)
		hmd_keeper_idle(d->keeper);
}

/* One event. Returns 1 to go on, 0 to stop, -1 on a failure (logged). */
static int on_event(struct hmd *d, struct loop *l, uint64_t what)
{
	uint64_t kind = what >> 32;
	uint32_t idx = (uint32_t)what;
	struct signalfd_siginfo si;
	int r;

	switch (kind) {
	case HMD_EP_LISTEN:
		hmd_server_accept(d);
		break;
	case HMD_EP_CONN:
		if (d->conns[idx].fd >= 0)
			hmd_server_handle(d, idx);
		break;
	case HMD_EP_EVENTS:
		hmd_bpf_drain(d->bpf);
		break;
	case HMD_EP_RUN:
		hmd_runs_reap(d);
		break;
	case HMD_EP_STORE:
		hmd_server_store_done(d);
		break;
	case HMD_EP_TIMER:
		on_tick(d, l);
		break;
	case HMD_EP_PROBE:
		r = hmd_service_probe_done(d);
		if (r < 0) {
			hmd_err("Failed to get an answer through '%s': %s", d->socket_path,
				strerror(-r));
			return -1;
		}
		break;
	case HMD_EP_WATCHDOG:
		hmd_service_watchdog(d);
		break;
	case HMD_EP_SIGNAL:
		if (read(l->sfd, &si, sizeof(si)) == sizeof(si)) {
			hmd_log("received %s, shutting down", strsignal(si.ssi_signo));
			l->stop_why = strsignal(si.ssi_signo);
			return 0;
		}
		break;
	}
	return 1;
}

#define POOL_IDLE_MS 1

/* Until a signal asks to stop. Returns 0 after a signal, -1 on a failure. */
static int event_loop(struct hmd *d, struct loop *l)
{
	bool running = true;

	while (running) {
		struct epoll_event evs[32];
		/* With parts of runs to make ahead (pool.c): one at a time, and
		 * only once no event has come for POOL_IDLE_MS, so a request
		 * never waits for more than one, and a client just answered
		 * gets the CPU first (made at once after the answer, on a CPU
		 * the client shares, they delayed it: docs/performance.md). */
		bool fill = hmd_pool_short(d);
		int n = epoll_wait(d->epfd, evs, ARRAY_SIZE(evs), fill ? POOL_IDLE_MS : -1);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			hmd_err("epoll_wait: %s", strerror(errno));
			return -1;
		}
		if (n == 0 && fill) {
			hmd_pool_fill(d);
			continue;
		}
		for (int i = 0; i < n; i++) {
			int r = on_event(d, l, evs[i].data.u64);

			if (r < 0)
				return -1;
			if (r == 0)
				running = false;
		}
		/* Runs that began ending in this batch go now, when no handler
		 * holds a pointer to them. */
		if (d->reap_due) {
			d->reap_due = false;
			hmd_runs_reap(d);
		}
		hmd_service_update(d);
	}
	return 0;
}

/* Undo everything start-up did, in reverse. */
static void shut_down(struct hmd *d, const struct opts *o, struct loop *l)
{
	bool keep;

	hmd_service_stopping(d, l->stop_why);
	/* What was made ahead was never a run's: it goes whatever runs stay. */
	hmd_pool_drain(d);
	/* Runs outlive us (they are not the connections' to end now). */
	hmd_runs_detach_all(d);
	if (d->epfd >= 0)
		hmd_server_close_all(d);
	/* Without pins nothing enforces once we are gone: end every run. */
	hmd_runs_shutdown(d, d->pins.dir[0] != 0);
	/* Enforcement stays while any run cgroup does (ours, or one we could
	 * not adopt after a failed start): never unpin what may enforce. */
	keep = d->pins.dir[0] && d->cg.subtree_fd >= 0 && hmd_cgroup_count_runs(&d->cg) > 0;
	hmd_keeper_stop(d->keeper, keep);
	hmd_sched_unload(d->sched, keep);
	if (d->listen_fd >= 0)
		close(d->listen_fd);
	hmd_bpf_unload(d->bpf, keep);
	hmd_store_worker_stop(&d->store);
	hmd_store_close(&d->store);
	if (d->spare_fd >= 0)
		close(d->spare_fd);
	if (keep) {
		hmd_log("runs go on, still enforced: their BPF links and maps stay pinned in %s; "
			"the next hermeticd of subtree '%s' adopts them",
			d->pins.dir, o->subtree);
		close(d->cg.subtree_fd);
	} else {
		hmd_cgroup_teardown(&d->cg);
		hmd_pin_teardown(&d->pins);
		if (d->records[0]) {
			if (d->records_mounted)
				hmd_tmpfs_release(d->records);
			(void)rmdir(d->records);
		}
	}
	/* Last: a socket that is gone means a daemon that is gone. One that
	 * systemd passed stays: systemd holds it and queues clients for the
	 * next start. */
	if (d->listen_fd >= 0 && !d->activated)
		(void)unlink(o->socket_path);
	if (l->sfd >= 0)
		close(l->sfd);
	if (l->tfd >= 0)
		close(l->tfd);
	if (d->epfd >= 0)
		close(d->epfd);
	hmd_subtree_unlock(l->lock_fd, l->lock_path);
}

int main(int argc, char **argv)
{
	static struct hmd d;
	static struct opts o;
	static struct loop l = { .sfd = -1, .tfd = -1, .lock_fd = -1,
				 .stop_why = "start-up failed" };
	sigset_t mask;
	int rc;

	defaults(&d, &o);
	rc = parse_options(argc, argv, &d, &o);
	if (rc == HMD_GO)
		rc = prepare_process(&d, &o);
	if (rc != HMD_GO)
		return rc;
	/* Stop signals are read from a signalfd by the loop, never handled. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0 || signal(SIGPIPE, SIG_IGN) == SIG_ERR) {
		hmd_err("Failed to set up signals: %s", strerror(errno));
		return 1;
	}
	rc = 1;
	if (start_subtree(&d, &o, &l) == 0 && start_bpf(&d, &o) == 0 &&
	    start_serving(&d, &o) == 0 && start_loop(&d, &mask, &l) == 0 &&
	    event_loop(&d, &l) == 0)
		rc = 0;
	shut_down(&d, &o, &l);
	return rc;
}
