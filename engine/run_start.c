// SPDX-License-Identifier: MIT
/*
 * The start of a run in the engine: no run yet (run_begin), this process
 * the reaper of the run's orphans (run_adopt_orphans), the run asked of
 * hermeticd (run_create_send, and its answer run_create_recv: the verb
 * does what needs no answer in between), CMD's environment
 * (run_export_env). The launch itself is launch.c's; what follows it,
 * run.c's. Nothing here exits or prints: a failure is -errno with err
 * filled.
 *
 * Trust: hermetic runs as the user; the run's cgroup descriptor comes from
 * hermeticd over its socket (which checks our credentials), and the one
 * process attribute set here, PR_SET_CHILD_SUBREAPER, is this process's.
 */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <inttypes.h>
#include <sys/prctl.h>
#include <time.h>
#include "util.h"
#include "config.h"
#include "engine.h"
#include "enroll.h"
#include "record.h"
#include "run.h"

/* The shim next to this binary (build tree), in ../lib/hermetic (installed
 * anywhere), or in the directory it was built for (HERMETIC_SHIMDIR, the
 * multiarch one of the Debian package). All are paths in the filesystem
 * this process sees: inside a container, the container's. */
int enroll_find_lib(const char *name, char *buf, size_t size)
{
	const char *rel[] = { "", "../lib/hermetic/", HERMETIC_SHIMDIR "/" };
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
		char path[4096 + 256];

		snprintf(path, sizeof(path), "%s%s%s%s", rel[i][0] == '/' ? "" : exe,
			 rel[i][0] == '/' ? "" : "/", rel[i], name);
		if (access(path, R_OK) == 0 && realpath(path, buf) && strlen(buf) < size)
			return 0;
	}
	return -ENOENT;
}

static int find_shim(char *buf, size_t size)
{
	return enroll_find_lib("libhermetic-preload.so", buf, size);
}

int run_export_env(struct enroll *e, struct eng_error *err)
{
	char shim[4096], v[64];
	const char *old;
	int r;

	/* The seed is in the clock page (vclock.c), which /proc/PID/environ
	 * does not show to other processes of the user. */
	r = hm_config_export(&e->cfg, !e->clock.vc);
	if (r < 0)
		return eng_fail(err, -r, "Failed to set the environment: %s", strerror(-r));
	/* The run's real start, and the file-time shift that follows from it
	 * (or from the recorded run's start, for replay). */
	{
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		e->started_ns = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
	}
	snprintf(v, sizeof(v), "%" PRId64,
		 hm_fs_shift_s(e->fs_start_ns ? e->fs_start_ns : e->started_ns, e->cfg.now_ns));
	setenv(HM_ENV_FS_SHIFT, v, 1);
	if (e->no_daemon)
		snprintf(v, sizeof(v), "none");
	else
		snprintf(v, sizeof(v), "%" PRIu64, e->run.run_id);
	setenv(HM_ENV_RUN, v, 1);
	setenv(HM_ENV_LINEAGE, "1", 1);
	unsetenv(HM_ENV_IMAGE);
	/* --fs isolate: the password database's home follows HOME (passwd.c) */
	if (e->bnd.opt.fs == HM_FS_ISOLATE && (old = getenv("HOME")) && *old)
		setenv(HM_ENV_HOME, old, 1);
	else
		unsetenv(HM_ENV_HOME);
	if (e->clock.vc)
		setenv(HM_ENV_CLOCK_FD, e->clock.page_env, 1);
	else
		unsetenv(HM_ENV_CLOCK_FD);
	if (e->allow.dns[0])
		setenv(HM_ENV_DNS_ALLOW, e->allow.dns, 1);
	else
		unsetenv(HM_ENV_DNS_ALLOW);
	/* Record and replay directories come only from this run. */
	unsetenv(HM_ENV_RECORD);
	unsetenv(HM_ENV_REPLAY);
	unsetenv(HM_ENV_REPLAY_STRICT);
	unsetenv(HM_ENV_REPLAY_REPORT);
	if (e->rec)
		record_export_env(e);
	for (size_t i = 0; i < e->caller.n_extra_env; i++)
		setenv(e->caller.extra_env[i][0], e->caller.extra_env[i][1], 1);
	if (find_shim(shim, sizeof(shim)) < 0) {
		if (e->cfg.clock_virtual || e->cfg.rng)
			return eng_fail(err, ENOENT,
					"cannot find libhermetic-preload.so next to hermetic, in "
					"../lib/hermetic or\n"
					"  in " HERMETIC_SHIMDIR "; reinstall hermetic, or pass --clock off\n"
					"  --rng off to run without it");
		return 0;
	}
	setenv(HM_ENV_PRELOAD, shim, 1);
	old = getenv("LD_PRELOAD");
	if (old && *old) {
		_cleanup_free_ char *both = NULL;

		if (asprintf(&both, "%s:%s", shim, old) < 0)
			return eng_fail(err, ENOMEM, "out of memory");
		setenv("LD_PRELOAD", both, 1);
	} else {
		setenv("LD_PRELOAD", shim, 1);
	}
	return 0;
}

int run_create_send(struct enroll *e, struct eng_error *err)
{
	struct {
		struct hm_run_create c;
		struct hm_allow a[HM_RUN_MAX_ALLOW];
		struct hm_allow_name names[HM_RUN_MAX_NAMES];
	} req = {};
	size_t len;

	req.c.flags = 0;
	if (e->cfg.network == HM_NETWORK_BLOCK || e->cfg.network == HM_NETWORK_AUDIT)
		req.c.flags |= HM_RUN_NET_ENFORCE;
	if (e->cfg.network == HM_NETWORK_AUDIT)
		req.c.flags |= HM_RUN_NET_AUDIT;
	if (e->cfg.loopback)
		req.c.flags |= HM_RUN_NET_LOOPBACK;
	if (e->cfg.unix_sockets)
		req.c.flags |= HM_RUN_NET_UNIX;
	if (e->recording.on)
		req.c.flags |= HM_RUN_RECORD;
	if (e->unconfined)
		req.c.flags |= HM_RUN_UNCONFINED;
	if (e->cfg.clock_virtual)
		req.c.flags |= HM_RUN_CLOCK;
	if (e->connlog.path)
		req.c.flags |= HM_RUN_CONNLOG;
	/* A journal keeps the kernel's whole view, as it always has. */
	if (e->audit_syscalls || e->recording.on)
		req.c.flags |= HM_RUN_AUDIT_SYSCALLS;
	req.c.n_allow = e->allow.n_addrs;
	memcpy(req.a, e->allow.addrs, e->allow.n_addrs * sizeof(struct hm_allow));
	/* The names follow the allow entries that are there, in the payload. */
	len = sizeof(req.c) + e->allow.n_addrs * sizeof(struct hm_allow);
	memcpy((char *)&req + len, e->allow.names, e->allow.n_names * sizeof(struct hm_allow_name));
	len += e->allow.n_names * sizeof(struct hm_allow_name);
	snprintf(req.c.label, sizeof(req.c.label), "%s", e->argv[0]);
	e->create_sent = client_send(&e->conn, HM_REQ_RUN_CREATE, &req, len, -1);
	if (e->create_sent < 0 && e->conn.broken)
		return eng_fail(err, -e->create_sent, "%s", e->conn.why);
	return 0;
}

int run_create_recv(struct enroll *e, struct eng_error *err)
{
	const char *msg = NULL;
	int fds[HM_MSG_MAX_FDS];
	ssize_t n;

	if (run_signals_wait(&e->sig, &e->child, e->conn.sock, POLLIN, -1) == -ECANCELED) {
		close(e->conn.sock);
		e->conn.sock = -1;
		return -ECANCELED;
	}
	n = client_recv(&e->conn, e->create_sent, HM_REP_RUN, &e->run, sizeof(e->run), true, fds, &msg);
	/* (no daemon to ask: the command cannot run in a run) */
	if (n < 0 && !e->conn.daemon_said)
		return eng_fail(err, (int)-n, "%s", e->conn.why);
	if (n == -EPERM)
		return eng_fail(err, EPERM, "cannot enroll: %s", msg);
	if (n < 0) {
		e->fail_reason = "refused";
		return eng_fail(err, (int)-n, "hermeticd refused the run: %s", msg);
	}
	e->cgroup_fd = fds[0];
	e->clock.page_fd = fds[1]; /* HM_RUN_CLOCK: the clock page (engine/vclock.c) */
	if (e->cgroup_fd < 0)
		return eng_fail(err, EPROTO, "hermeticd sent no cgroup descriptor");
	e->run.cgroup_path[sizeof(e->run.cgroup_path) - 1] = 0;
	e->events_fd = openat(e->cgroup_fd, "cgroup.events", O_RDONLY | O_CLOEXEC);
	/* (EACCES for EPERM: -EPERM is the daemon's refusal of a nested run) */
	if (e->events_fd < 0)
		return eng_fail(err, errno == EPERM ? EACCES : errno,
				"Failed to open '%s/cgroup.events': %s", e->run.cgroup_path,
				strerror(errno));
	return 0;
}

int run_begin(struct enroll *e, struct eng_error *err)
{
	e->conn.sock = e->cgroup_fd = e->events_fd = -1;
	e->child.pid = -1;
	run_clock_init(&e->clock);
	return run_signals_arm(&e->sig, err);
}

int run_adopt_orphans(struct eng_error *err)
{
	/* Orphans of the run (daemonized grandchildren) are reparented to us,
	 * so we reap them and can name them. */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
		return eng_fail(err, errno, "prctl(PR_SET_CHILD_SUBREAPER): %s", strerror(errno));
	/* A run's end is told over sockets a daemon may close: EPIPE, not death. */
	(void)signal(SIGPIPE, SIG_IGN);
	return 0;
}
