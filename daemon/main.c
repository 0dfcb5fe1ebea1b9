// SPDX-License-Identifier: MIT
/*
 * hermeticd: start-up, readiness, the event loop and shutdown, in that
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

int main(int argc, char **argv)
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
	static struct hmd d;
	const char *socket_path = getenv("HERMETIC_SOCKET"), *subtree = "hermetic",
		   *runtime_dir = "/run/hermetic", *socket_group = "hermetic";
	bool group_given = false;
	struct epoll_event ev;
	sigset_t mask;
	int c, r, sfd = -1, tfd = -1, lock_fd = -1, rc = 1;
	static char lock_path[4096];
	bool running = true, lsm_only = false, delegated = false, keep = false;
	const char *stop_why = "start-up failed";
	uint64_t ringbuf_size = HMD_RINGBUF_SIZE_DEFAULT, v;

	d.kstream_max = HMD_KSTREAM_MAX_DEFAULT;
	d.kstream_total_max = HMD_KSTREAM_TOTAL_MAX_DEFAULT;
	d.kstream_user_max = HMD_KSTREAM_USER_MAX_DEFAULT;
	d.max_conns_per_user = HMD_MAX_CONNS_PER_USER_DEFAULT;
	d.max_runs_per_user = HMD_MAX_RUNS_PER_USER_DEFAULT;
	d.use_peerpidfd = true;
	d.max_upload_per_user = HMD_MAX_UPLOAD_PER_USER_DEFAULT;
	d.spare_fd = -1;
	d.store.path = HMD_STORE_DEFAULT;
	d.store.fd = -1;
	d.store.max_journals = HMD_STORE_MAX_JOURNALS_DEFAULT;
	d.store.max_bytes = HMD_STORE_MAX_BYTES_DEFAULT;

	if (!socket_path || !*socket_path)
		socket_path = HM_DEFAULT_SOCKET;
	while ((c = getopt_long(argc, argv, "s:t:r:g:vhV", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			socket_path = optarg;
			break;
		case 't':
			subtree = optarg;
			break;
		case 'r':
			runtime_dir = optarg;
			break;
		case 'v':
			hmd_verbose = true;
			break;
		case 'L':
			lsm_only = true;
			break;
		case 'D':
			delegated = true;
			break;
		case 'P':
			d.use_peerpidfd = false;
			break;
		case 'g':
			socket_group = optarg;
			group_given = true;
			break;
		case 'C':
		case 'N':
			if (hm_parse_u64(optarg, &v) < 0 || v == 0 || v > HMD_MAX_CONNS) {
				hmd_err("--%s: not a number in 1..%d: '%s'",
					c == 'C' ? "max-conns-per-user" : "max-runs-per-user",
					HMD_MAX_CONNS, optarg);
				return 2;
			}
			if (c == 'C')
				d.max_conns_per_user = v;
			else
				d.max_runs_per_user = v;
			break;
		case 'S':
			if (optarg[0] != '/') {
				hmd_err("--store needs an absolute path: '%s'", optarg);
				return 2;
			}
			d.store.path = optarg;
			break;
		case 'J':
			if (hm_parse_u64(optarg, &v) < 0 || v == 0 || v > 1000000) {
				hmd_err("--store-max-journals: not a number in 1..1000000: '%s'", optarg);
				return 2;
			}
			d.store.max_journals = v;
			break;
		case 'B':
		case 'u':
		case 'R':
		case 'K':
		case 'T':
		case 'U':
			if (parse_size(optarg, &v) < 0 || v == 0) {
				hmd_err("not a size: '%s' (e.g. 64M, 1G, 4096)", optarg);
				return 2;
			}
			if (c == 'B')
				d.store.max_bytes = v;
			else if (c == 'u')
				d.max_upload_per_user = v;
			else if (c == 'K')
				d.kstream_max = v;
			else if (c == 'T')
				d.kstream_total_max = v;
			else if (c == 'U')
				d.kstream_user_max = v;
			else if (v < 4096 || v > (1ULL << 30) || (v & (v - 1))) {
				/* The kernel wants a power-of-two number of pages. */
				hmd_err("--ringbuf-size must be a power of two from 4K to 1G: '%s'",
					optarg);
				return 2;
			} else
				ringbuf_size = v;
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
	/* The nameservers the resolver of runs with --allow NAME asks. */
	if (hmd_dns_init() < 0) {
		hmd_err("cannot set the DNS upstream");
		return 1;
	}
	if (geteuid() != 0) {
		hmd_err("must run as root (it loads BPF programs and manages cgroups)");
		return 1;
	}
	/* Who may connect. A group that was asked for must exist; the default
	 * one may not (yet): then the socket is root's alone until it does. */
	{
		struct group *g = getgrnam(socket_group);

		if (g) {
			d.socket_group = socket_group;
			d.socket_gid = g->gr_gid;
		} else if (group_given) {
			hmd_err("--socket-group %s: no such group. Create it (groupadd --system %s)"
				" and add the users who may enroll (usermod -aG %s USER)",
				socket_group, socket_group, socket_group);
			return 2;
		} else {
			hmd_warn("group '%s' does not exist: the socket is for root only. To let "
				"users enroll: groupadd --system %s; usermod -aG %s USER; then "
				"restart hermeticd (or pass --socket-group GROUP)",
				socket_group, socket_group, socket_group);
		}
	}
	/* Not dumpable: a process of a run running as root (with reduced
	 * capabilities, see cli/confine.c) must not ptrace the daemon or take
	 * its descriptors with pidfd_getfd; without CAP_SYS_PTRACE the kernel
	 * refuses both for a non-dumpable process. */
	prctl(PR_SET_DUMPABLE, 0);
	/* Every connection and run holds descriptors; the limits above, not
	 * the default soft limit of 1024, are what bound them. */
	{
		struct rlimit rl;

		if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
			rl.rlim_cur = rl.rlim_max;
			setrlimit(RLIMIT_NOFILE, &rl);
		}
	}

	/* ---- start-up ---- */
	d.listen_fd = d.epfd = d.probe_fd = d.watchdog_fd = -1;
	d.store.w = NULL;
	d.cg.subtree_fd = -1;
	d.next_run_id = 1;
	d.socket_path = socket_path;
	d.started_ns = hm_now_ns();
	for (int i = 0; i < HMD_MAX_CONNS; i++)
		d.conns[i].fd = d.conns[i].pidfd = -1;
	{
		/* Run ids are unique across restarts of the daemon, so a journal or
		 * a log line never names two different runs. */
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		d.next_run_id = (uint64_t)ts.tv_sec * 1000;
	}

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (mkdir(runtime_dir, 0755) < 0 && errno != EEXIST) {
		hmd_err("Failed to create '%s': %s", runtime_dir, strerror(errno));
		return 1;
	}
	if (strchr(subtree, '/') || !*subtree) {
		hmd_err("--subtree must be a single name, not '%s'", subtree);
		goto out;
	}
	hmd_service_status(&d, "Setting up cgroup subtree %s", subtree);
	r = hmd_cgroup_locate(&d.cg, subtree, runtime_dir, delegated);
	if (r < 0) {
		hmd_err("Failed to find the place of cgroup subtree '%s': %s", subtree, strerror(-r));
		goto out;
	}
	/* One daemon per subtree, whatever its --runtime-dir: a second one (or
	 * one started while the last is still shutting down) would remove
	 * what the other uses. Taken before the subtree is touched. */
	{
		char holder[640];

		lock_fd = hmd_subtree_lock(&d.cg, socket_path, lock_path, sizeof(lock_path), holder,
					   sizeof(holder));
		if (lock_fd == -EBUSY) {
			hmd_err("another hermeticd holds cgroup subtree '%s' (%s; lock %s): stop it "
				"first, or give this one another --subtree",
				d.cg.subtree, holder[0] ? holder : "pid unknown", lock_path);
			goto out;
		}
		if (lock_fd < 0) {
			hmd_err("Failed to lock cgroup subtree '%s' (%s): %s%s", d.cg.subtree,
				lock_path[0] ? lock_path : HMD_SUBTREE_LOCK_DIR, strerror(-lock_fd),
				lock_fd == -EPERM ? " (" HMD_SUBTREE_LOCK_DIR
						    " must be a directory of root's that only root can write)"
						  : "");
			goto out;
		}
	}
	r = hmd_cgroup_setup(&d.cg);
	if (r < 0) {
		hmd_err("Failed to set up cgroup subtree '%s': %s", subtree, strerror(-r));
		goto out;
	}
	/* Pins (in bpffs) and run records (here) are what outlive us. */
	r = hmd_pin_setup(&d.pins, runtime_dir, subtree);
	if (r < 0) {
		/* Runs work as before pinning: they end when this process does. */
		hmd_warn("Failed to set up the pin directory in bpffs ('%s'): %s; runs will not "
			 "outlive this daemon (mount bpffs at /sys/fs/bpf to fix)",
			 d.pins.mount, strerror(-r));
		d.pins.dir[0] = 0;
	}
	r = hmd_record_init(&d, runtime_dir, subtree);
	if (r < 0) {
		hmd_err("Failed to set up '%s': %s", d.records, strerror(-r));
		goto out;
	}
	hmd_service_status(&d, "Loading and attaching BPF programs");
	r = hmd_bpf_load(&d.bpf, d.cg.subtree_fd, cgroup_level(&d.cg) + 1, lsm_only,
			 (uint32_t)ringbuf_size, d.pins.dir[0] ? d.pins.dir : NULL, d.attach,
			 &d.n_attach);
	for (int i = 0; i < d.n_attach; i++)
		if (!d.attach[i].attached && d.attach[i].err != EAGAIN)
			hmd_log_at(d.attach[i].required ? LOG_ERR : LOG_NOTICE, "%s %s: %s",
				   d.attach[i].required ? "required" : "optional",
				d.attach[i].name, d.attach[i].why);
	if (r < 0) {
		hmd_err("Failed to load BPF programs: %s%s", strerror(-r),
			hmd_cgroup_count_runs(&d.cg)
				? " (runs of a hermeticd before this one stay enforced by its pinned "
				  "programs; a daemon of another version or --ringbuf-size cannot "
				  "take them over: start the one that left them, or wait for them to end)"
				: "");
		goto out;
	}
	if (d.pins.dir[0])
		hmd_log("BPF objects pinned in %s", d.pins.dir);
	r = hmd_bpf_open_events(d.bpf, &d);
	if (r < 0) {
		hmd_err("Failed to open the event ring buffer: %s", strerror(-r));
		goto out;
	}
	/* The virtual clock's keeper: runs asking for a clock (--clock virtual,
	 * the default) need it; without it they are refused with the reason. */
	{
		struct stat sst;

		/* (the subtree's cgroup id is its directory's inode number) */
		r = fstat(d.cg.subtree_fd, &sst) < 0 ? -errno : 0;
		if (r == 0)
			r = hmd_sched_load(&d.sched, cgroup_level(&d.cg) + 1, sst.st_ino,
					   d.pins.dir[0] ? d.pins.dir : NULL);
	}
	if (r == 0)
		r = hmd_keeper_start(&d.keeper, d.sched, runtime_dir);
	if (r < 0) {
		snprintf(d.sched_why, sizeof(d.sched_why), "scheduler tracepoints unavailable: %s",
			 strerror(-r));
		hmd_log("no virtual clock keeper: %s", d.sched_why);
	}
	/* Runs a daemon before us left (killed, crashed, restarted): taken
	 * over before the first event is read, so none of theirs is lost. */
	r = hmd_runs_adopt(&d);
	if (r < 0) {
		hmd_err("Failed to look for runs to adopt in '%s': %s", d.cg.subtree, strerror(-r));
		goto out;
	}
	if (r > 0)
		hmd_log("adopted %d run%s of a hermeticd before this one", r, r == 1 ? "" : "s");
	/* Their kernel events (pinned tracing links), or none left over. */
	if (d.n_runs)
		hmd_bpf_trace_lazy(d.bpf, HMD_TRACE_RUNS, true);
	else
		hmd_bpf_trace_forget(d.bpf, HMD_TRACE_RUNS);
	if (hmd_runs_audit_syscalls(&d))
		hmd_bpf_trace_lazy(d.bpf, HMD_TRACE_SYSCALLS, true);
	else
		hmd_bpf_trace_forget(d.bpf, HMD_TRACE_SYSCALLS);
	d.idle_since_ns = d.sys_idle_since_ns = hm_now_ns();
	/* A store that cannot be used is no reason to refuse runs: store
	 * requests answer with the reason, and it is logged once here. */
	r = hmd_store_open(&d.store);
	if (r < 0)
		hmd_warn("journal store '%s' unavailable: %s", d.store.path, d.store.why);
	else if ((r = hmd_store_worker_start(&d.store)) < 0) {
		hmd_err("Failed to start the store thread: %s", strerror(-r));
		goto out;
	}
	d.spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	d.listen_fd = hmd_service_listen(&d, socket_path);
	if (d.listen_fd < 0) {
		r = d.listen_fd;
		hmd_err("Failed to listen on '%s': %s%s", socket_path, strerror(-r),
			r == -EADDRINUSE ? " (another hermeticd is running there)" : "");
		goto out;
	}
	d.epfd = epoll_create1(EPOLL_CLOEXEC);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	/* A slow tick reaps runs whose cgroup.events change we might miss. */
	tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (d.epfd < 0 || sfd < 0 || tfd < 0) {
		hmd_err("Failed to set up the event loop: %s", strerror(errno));
		goto out;
	}
	timerfd_settime(tfd, 0,
			&(struct itimerspec){ .it_interval = { 1, 0 }, .it_value = { 1, 0 } }, NULL);
	ev = (struct epoll_event){ .events = EPOLLIN, .data.u64 = HMD_EP(HMD_EP_LISTEN, 0) };
	epoll_ctl(d.epfd, EPOLL_CTL_ADD, d.listen_fd, &ev);
	ev = (struct epoll_event){ .events = EPOLLIN, .data.u64 = HMD_EP(HMD_EP_SIGNAL, 0) };
	epoll_ctl(d.epfd, EPOLL_CTL_ADD, sfd, &ev);
	ev = (struct epoll_event){ .events = EPOLLIN, .data.u64 = HMD_EP(HMD_EP_TIMER, 0) };
	epoll_ctl(d.epfd, EPOLL_CTL_ADD, tfd, &ev);
	ev = (struct epoll_event){ .events = EPOLLIN, .data.u64 = HMD_EP(HMD_EP_EVENTS, 0) };
	epoll_ctl(d.epfd, EPOLL_CTL_ADD, hmd_bpf_events_fd(d.bpf), &ev);
	if (hmd_store_worker_fd(&d.store) >= 0) {
		ev = (struct epoll_event){ .events = EPOLLIN, .data.u64 = HMD_EP(HMD_EP_STORE, 0) };
		epoll_ctl(d.epfd, EPOLL_CTL_ADD, hmd_store_worker_fd(&d.store), &ev);
	}

	/* ---- ready: once our own request through the socket is answered ---- */
	hmd_service_status(&d, "Checking that %s answers", d.socket_path);
	r = hmd_service_probe_start(&d);
	if (r < 0) {
		hmd_err("Failed to connect to '%s': %s", d.socket_path, strerror(-r));
		goto out;
	}
	r = hmd_service_watchdog_start(&d);
	if (r < 0) {
		hmd_err("Failed to set up the watchdog: %s", strerror(-r));
		goto out;
	}

	/* ---- event loop ---- */
	while (running) {
		struct epoll_event evs[32];
		int n = epoll_wait(d.epfd, evs, ARRAY_SIZE(evs), -1);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			hmd_err("epoll_wait: %s", strerror(errno));
			break;
		}
		for (int i = 0; i < n; i++) {
			uint64_t kind = evs[i].data.u64 >> 32;
			uint32_t idx = (uint32_t)evs[i].data.u64;

			switch (kind) {
			case HMD_EP_LISTEN:
				hmd_server_accept(&d);
				break;
			case HMD_EP_CONN:
				if (d.conns[idx].fd >= 0)
					hmd_server_handle(&d, idx);
				break;
			case HMD_EP_EVENTS:
				hmd_bpf_drain(d.bpf);
				break;
			case HMD_EP_RUN:
				hmd_runs_reap(&d);
				break;
			case HMD_EP_STORE:
				hmd_server_store_done(&d);
				break;
			case HMD_EP_TIMER: {
				uint64_t t;

				if (read(tfd, &t, sizeof(t)) < 0) {
					/* nothing to do */
				}
				hmd_runs_check_orphans(&d);
				hmd_runs_reap(&d);
				/* Detach the tracers once idle for a while,
				 * so back-to-back runs don't pay for attaching;
				 * the scheduler programs once no run has had a
				 * clock for as long (sched.c). */
				if (!d.n_runs && hm_now_ns() - d.idle_since_ns > 10000000000ULL)
					hmd_bpf_trace_lazy(d.bpf, HMD_TRACE_RUNS, false);
				if (!hmd_runs_audit_syscalls(&d) &&
				    hm_now_ns() - d.sys_idle_since_ns > 10000000000ULL)
					hmd_bpf_trace_lazy(d.bpf, HMD_TRACE_SYSCALLS, false);
				if (d.keeper)
					hmd_keeper_idle(d.keeper);
				break;
			}
			case HMD_EP_PROBE:
				r = hmd_service_probe_done(&d);
				if (r < 0) {
					hmd_err("Failed to get an answer through '%s': %s",
						d.socket_path, strerror(-r));
					goto out;
				}
				break;
			case HMD_EP_WATCHDOG:
				hmd_service_watchdog(&d);
				break;
			case HMD_EP_SIGNAL: {
				struct signalfd_siginfo si;

				if (read(sfd, &si, sizeof(si)) == sizeof(si)) {
					hmd_log("received %s, shutting down", strsignal(si.ssi_signo));
					stop_why = strsignal(si.ssi_signo);
					running = false;
				}
				break;
			}
			}
		}
		/* Runs that began ending in this batch go now, when no handler
		 * holds a pointer to them. */
		if (d.reap_due) {
			d.reap_due = false;
			hmd_runs_reap(&d);
		}
		hmd_service_update(&d);
	}
	rc = 0;

	/* ---- shutdown: undo everything start-up did, in reverse ---- */
out:
	hmd_service_stopping(&d, stop_why);
	/* Runs outlive us (they are not the connections' to end now). */
	hmd_runs_detach_all(&d);
	if (d.epfd >= 0)
		hmd_server_close_all(&d);
	/* Without pins nothing enforces once we are gone: end every run. */
	hmd_runs_shutdown(&d, d.pins.dir[0] != 0);
	/* Enforcement stays while any run cgroup does (ours, or one we could
	 * not adopt after a failed start): never unpin what may enforce. */
	keep = d.pins.dir[0] && d.cg.subtree_fd >= 0 && hmd_cgroup_count_runs(&d.cg) > 0;
	hmd_keeper_stop(d.keeper, keep);
	hmd_sched_unload(d.sched, keep);
	if (d.listen_fd >= 0)
		close(d.listen_fd);
	hmd_bpf_unload(d.bpf, keep);
	hmd_store_worker_stop(&d.store);
	hmd_store_close(&d.store);
	if (d.spare_fd >= 0)
		close(d.spare_fd);
	if (keep) {
		hmd_log("runs go on, still enforced: their BPF links and maps stay pinned in %s; "
			"the next hermeticd of subtree '%s' adopts them",
			d.pins.dir, subtree);
		close(d.cg.subtree_fd);
	} else {
		hmd_cgroup_teardown(&d.cg);
		hmd_pin_teardown(&d.pins);
		if (d.records[0]) {
			if (d.records_mounted)
				hmd_tmpfs_release(d.records);
			rmdir(d.records);
		}
	}
	/* Last: a socket that is gone means a daemon that is gone. One that
	 * systemd passed stays: systemd holds it and queues clients for the
	 * next start. */
	if (d.listen_fd >= 0 && !d.activated)
		unlink(socket_path);
	if (sfd >= 0)
		close(sfd);
	if (tfd >= 0)
		close(tfd);
	if (d.epfd >= 0)
		close(d.epfd);
	hmd_subtree_unlock(lock_fd, lock_path);
	return rc;
}
