// SPDX-License-Identifier: MIT
/*
 * The daemon's side of the wire protocol (docs/protocol.md): the socket,
 * connections and their limits, and dispatch of decoded requests.
 *
 * Who may talk to the daemon: the socket is 0660 root:<socket group>
 * (--socket-group, default "hermetic"); without that group, root only.
 * Every peer is identified when it connects: uid by SO_PEERCRED, the
 * process by a pidfd (peer.c). A member of the group may create runs: a
 * run can only take network access away from the processes its creator
 * starts in it, never grant any. Every request that touches a run checks
 * that the run belongs to the peer's uid. Every length is checked (in
 * request.c) before a payload is read.
 *
 * Nothing here blocks: sockets are non-blocking, a reply that does not fit
 * the peer's queue is dropped, and the daemon never takes a descriptor
 * from a client (lib/proto.h says why and what comes instead), so it
 * never reads, stats or closes a file a client controls. Journals are
 * copied from the daemon's own upload buffers on the store thread.
 */
#include <fcntl.h>
#include <grp.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/stat.h>
#include <sys/epoll.h>
#include <stdarg.h>
#include <inttypes.h>
#include <json-c/json.h>
#include "util.h"
#include "daemon.h"
#include "request.h"

int hmd_server_listen(struct hmd *d)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *path = d->socket_path;
	_cleanup_close_ int fd = -1;
	char dir[sizeof(sa.sun_path)], *slash;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = 0;
		if (mkdir(dir, 0755) < 0 && errno != EEXIST)
			return -errno;
	}
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	/* A socket file left by a daemon that died is removed; one that still
	 * answers belongs to a live daemon, and we must not steal it. */
	{
		_cleanup_close_ int probe = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

		if (probe >= 0 && connect(probe, (struct sockaddr *)&sa, sizeof(sa)) == 0)
			return -EADDRINUSE;
	}
	unlink(path);
	/* Bind with a umask that leaves it root-only, then hand it to the
	 * group: there is never a moment when others may connect. */
	mode_t old = umask(0177);
	int r = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (r < 0)
		return -errno;
	if (chown(path, 0, d->socket_group ? d->socket_gid : 0) < 0 ||
	    chmod(path, d->socket_group ? 0660 : 0600) < 0 || listen(fd, SOMAXCONN) < 0) {
		r = -errno;
		unlink(path);
		return r;
	}
	return steal_fd(&fd);
}

int hmd_reply(struct hmd_conn *c, uint16_t type, uint32_t seq, const void *p, uint32_t len, int fd)
{
	return hm_send(c->fd, type, seq, p, len, fd);
}

int hmd_reply_fds(struct hmd_conn *c, uint16_t type, uint32_t seq, const void *p, uint32_t len,
		  const int *fds, int nfds)
{
	return hm_send_fds(c->fd, type, seq, p, len, fds, nfds);
}

static int send_error(int fd, uint32_t seq, int err, const char *fmt, va_list ap)
{
	struct hm_error e = { .err = err };

	vsnprintf(e.msg, sizeof(e.msg), fmt, ap);
	return hm_send(fd, HM_REP_ERROR, seq, &e, sizeof(e), -1);
}

int hmd_reply_error(struct hmd_conn *c, uint32_t seq, int err, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = send_error(c->fd, seq, err, fmt, ap);
	va_end(ap);
	return r;
}

/* Answer a connection that is not taken, and close it. */
static void refuse(int fd, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void refuse(int fd, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	send_error(fd, 0, err, fmt, ap);
	va_end(ap);
	close(fd);
}

static void conn_close(struct hmd *d, int id)
{
	struct hmd_conn *c = &d->conns[id];

	if (c->fd < 0)
		return;
	/* Runs of a client that went away are ended: their processes are
	 * killed unless the client already handed them over (RUN_END KEEP).
	 * hmd_runs_end() frees nothing, so the walk is safe. */
	for (struct hmd_run *r = d->runs; r; r = r->next)
		if (r->conn_id == id && !r->ending)
			hmd_runs_end(d, r, false);
	(void)epoll_ctl(d->epfd, EPOLL_CTL_DEL, c->fd, NULL); /* close() drops it too */
	close(c->fd);
	if (c->pidfd >= 0)
		close(c->pidfd);
	if (c->upload_fd >= 0) {
		close(c->upload_fd);
		hmd_upload_release(d, c->uid, c->upload_size); /* abandoned */
	}
	c->fd = c->pidfd = c->upload_fd = -1;
	c->n_runs = 0;
	c->gen++;
}

/* Out of descriptors: a pending connection would keep the listening
 * socket readable forever. Give up the spare fd, take the connection,
 * tell it why and close it, then take the spare back. */
static void accept_emfile(struct hmd *d)
{
	int fd;

	if (d->spare_fd >= 0)
		close(d->spare_fd);
	fd = accept4(d->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd >= 0)
		refuse(fd, EMFILE, "hermeticd is out of file descriptors; try again later");
	d->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
}

void hmd_server_accept(struct hmd *d)
{
	for (;;) {
		int fd = accept4(d->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		struct ucred cred;
		socklen_t len = sizeof(cred);
		int id = -1, free_slots = 0, mine = 0, full = 0;

		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE)
				accept_emfile(d);
			return;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
			close(fd);
			continue;
		}
		for (int i = 0; i < HMD_MAX_CONNS; i++) {
			if (d->conns[i].fd < 0) {
				free_slots++;
				if (id < 0)
					id = i;
			} else if (d->conns[i].uid == cred.uid) {
				mine++;
				full += !d->conns[i].adopt_only;
			}
		}
		/* Past its limit a uid gets as many connections again that may
		 * only ask RUN_ADOPT: a non-root enroll's child connects once,
		 * briefly, to be moved into the run its parent's connection
		 * holds, and a burst of enrolls that filled the limit with their
		 * own connections must not fail at that step. Such a connection
		 * answers one request and holds nothing, so the bound on what
		 * one uid can make the daemon keep stays (twice the limit). */
		bool adopt_only = cred.uid != 0 && mine >= (int)d->max_conns_per_user;

		/* Root's reserve: nobody else can take the last slots, so that
		 * root can always ask what is going on. */
		if (cred.uid != 0 && mine >= 2 * (int)d->max_conns_per_user) {
			refuse(fd, EUSERS,
			       "uid %u is at its limit of %u connections to hermeticd (%d open; "
			       "hermeticd --max-conns-per-user); close some and retry",
			       (unsigned)cred.uid, d->max_conns_per_user, full);
			continue;
		}
		if (free_slots == 0 || (cred.uid != 0 && free_slots <= HMD_ROOT_RESERVED_CONNS)) {
			refuse(fd, EUSERS, "hermeticd has no free connection (%d open); retry later",
			       HMD_MAX_CONNS - free_slots);
			continue;
		}
		struct epoll_event ev = { .events = EPOLLIN, .data.u64 = HMD_EP(HMD_EP_CONN, id) };
		if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
			close(fd);
			continue;
		}
		/* The process that connected, pinned by a pidfd. A peer that
		 * cannot be identified may still ask harmless questions; every
		 * request that needs to know where it runs refuses. */
		char why[sizeof(d->conns[id].peer_why)];
		int pidfd = hmd_peer_pidfd(fd, cred.pid, d->use_peerpidfd, why, sizeof(why));

		d->conns[id] = (struct hmd_conn){ .fd = fd,
						  .uid = cred.uid,
						  .gid = cred.gid,
						  .pid = cred.pid,
						  .pidfd = pidfd < 0 ? -1 : pidfd,
						  .upload_fd = -1,
						  .adopt_only = adopt_only,
						  .gen = d->conns[id].gen + 1 };
		memcpy(d->conns[id].peer_why, why, sizeof(why));
	}
}

static void attach_json(struct hmd *d, json_object *o)
{
	json_object *att = json_object_new_array();

	for (int i = 0; i < d->n_attach; i++) {
		json_object *a = json_object_new_object();

		json_object_object_add(a, "name", json_object_new_string(d->attach[i].name));
		json_object_object_add(a, "required", json_object_new_boolean(d->attach[i].required));
		json_object_object_add(a, "attached", json_object_new_boolean(d->attach[i].attached));
		/* "idle": attached on demand, while runs exist. */
		json_object_object_add(a, "state",
				       json_object_new_string(d->attach[i].attached ? "active"
							      : d->attach[i].err == EAGAIN ? "idle"
											   : "refused"));
		if (!d->attach[i].attached)
			json_object_object_add(a, "error", json_object_new_string(d->attach[i].why));
		json_object_array_add(att, a);
	}
	json_object_object_add(o, "attach", att);
}

/* The run's network counts by verdict: "refused" (above) is the kernel's
 * count of what the policy did not allow, so in audit mode it is what was
 * audited; "allowed" only when the run keeps a connection log (the kernel
 * reports allowed attempts for those runs only); "dropped_events": events
 * the kernel could not deliver, plus attempts the log's queue could not
 * keep. */
static void run_counts_json(struct hmd *d, struct hmd_run *r, json_object *j)
{
	uint64_t refused = hmd_bpf_refused(d->bpf, r->cgid);
	bool audit = (r->flags & HM_RUN_NET_AUDIT) && (r->flags & HM_RUN_NET_ENFORCE);

	json_object_object_add(j, "audited", json_object_new_uint64(audit ? refused : 0));
	json_object_object_add(j, "connection_log",
			       json_object_new_boolean(r->flags & HM_RUN_CONNLOG));
	json_object_object_add(j, "allowed", (r->flags & HM_RUN_CONNLOG)
						     ? json_object_new_uint64(r->conns.allowed)
						     : NULL);
	json_object_object_add(j, "dropped_events",
			       json_object_new_uint64(hmd_bpf_dropped(d->bpf, r->cgid) +
						      r->conns.dropped));
}

static json_object *run_json(struct hmd *d, struct hmd_run *r)
{
	json_object *j = json_object_new_object();

	json_object_object_add(j, "id", json_object_new_int64(r->id));
	json_object_object_add(j, "uid", json_object_new_int64(r->uid));
	json_object_object_add(j, "label", json_object_new_string(r->label));
	json_object_object_add(j, "cgroup", json_object_new_string(r->path));
	json_object_object_add(j, "network",
			       json_object_new_string(!(r->flags & HM_RUN_NET_ENFORCE) ? "off"
						      : (r->flags & HM_RUN_NET_AUDIT) ? "audit"
										      : "block"));
	json_object_object_add(j, "confined",
			       json_object_new_boolean(!(r->flags & HM_RUN_UNCONFINED)));
	json_object_object_add(j, "ending", json_object_new_boolean(r->ending));
	/* adopted from a daemon before this one (a restart), and whether its
	 * client has taken it back */
	json_object_object_add(j, "adopted", json_object_new_boolean(r->restarted_ns != 0));
	json_object_object_add(j, "connected", json_object_new_boolean(r->conn_id >= 0));
	json_object_object_add(j, "refused", json_object_new_int64(hmd_bpf_refused(d->bpf, r->cgid)));
	run_counts_json(d, r, j);
	if (r->chaos) {
		struct hmd_chaos_info ci;
		json_object *s = json_object_new_object();

		hmd_chaos_describe(r->chaos, &ci);
		json_object_object_add(s, "mode", json_object_new_string(ci.serial ? "serial" : "chaos"));
		json_object_object_add(s, "seed", json_object_new_uint64(ci.seed));
		json_object_object_add(s, "cpu", json_object_new_int(ci.cpu));
		json_object_object_add(s, "mean_gap_ns", json_object_new_uint64(ci.tick_ns));
		json_object_object_add(s, "change_points", json_object_new_uint64(ci.changes));
		json_object_object_add(s, "tasks", json_object_new_uint64(ci.tasks));
		json_object_object_add(s, "tasks_uncontrolled", json_object_new_uint64(ci.lost));
		json_object_object_add(s, "watchdog_fired", json_object_new_boolean(ci.watchdog_fired));
		if (ci.serial) /* tasks lowered for spinning: the run is not serial then */
			json_object_object_add(s, "spinners_lowered", json_object_new_uint64(ci.spun));
		json_object_object_add(j, "sched", s);
	}
	if (r->has_clock) {
		struct hmd_clock_stats cs;
		json_object *c = json_object_new_object();

		hmd_keeper_stats(d->keeper, r->clock_dom, &cs);
		json_object_object_add(c, "moves", json_object_new_uint64(cs.advances));
		json_object_object_add(c, "wakes", json_object_new_uint64(cs.wakes));
		json_object_object_add(c, "lag_bound_fires", json_object_new_uint64(cs.lag_fires));
		json_object_object_add(c, "monotonic_ns", json_object_new_int64(cs.mono));
		json_object_object_add(c, "page_broken", json_object_new_boolean(cs.broken));
		json_object_object_add(j, "clock", c);
	}
	return j;
}

/* The status document, at most max bytes: with more runs than fit, the
 * newest are listed and "runs_omitted" says how many are not. A caller
 * other than root sees its own runs only (their ids and labels are its
 * business) and a count of the others' in "runs_of_others". */
static json_object *status_json(struct hmd *d, size_t max, uid_t uid)
{
	json_object *o = json_object_new_object(), *runs = json_object_new_array(), *st;
	size_t used;
	int omitted = 0, others = 0;

	json_object_object_add(o, "version", json_object_new_string(HERMETIC_VERSION));
	json_object_object_add(o, "protocol", json_object_new_int(HM_PROTO_VERSION));
	json_object_object_add(o, "cgroup_root", json_object_new_string(d->cg.mount));
	json_object_object_add(o, "subtree", json_object_new_string(d->cg.subtree));
	json_object_object_add(o, "pins", d->pins.dir[0] ? json_object_new_string(d->pins.dir) : NULL);
	json_object_object_add(o, "socket", json_object_new_string(d->socket_path));
	json_object_object_add(o, "socket_group",
			       d->socket_group ? json_object_new_string(d->socket_group) : NULL);
	json_object_object_add(o, "uptime_s",
			       json_object_new_int64((hm_now_ns() - d->started_ns) / 1000000000ULL));
	attach_json(d, o);
	{
		/* The virtual clock's keeper (quiesce.c), or why there is none. */
		json_object *k = json_object_new_object();

		json_object_object_add(k, "active", json_object_new_boolean(d->keeper != NULL));
		if (!d->keeper)
			json_object_object_add(k, "error", json_object_new_string(d->sched_why));
		json_object_object_add(o, "clock_keeper", k);
	}
	st = json_object_new_object();
	json_object_object_add(st, "path", json_object_new_string(d->store.path));
	json_object_object_add(st, "available", json_object_new_boolean(d->store.fd >= 0));
	if (d->store.fd < 0)
		json_object_object_add(st, "error", json_object_new_string(d->store.why));
	json_object_object_add(st, "max_journals", json_object_new_uint64(d->store.max_journals));
	json_object_object_add(st, "max_bytes", json_object_new_uint64(d->store.max_bytes));
	json_object_object_add(o, "store", st);
	{
		json_object *l = json_object_new_object();

		json_object_object_add(l, "connections", json_object_new_int(HMD_MAX_CONNS));
		json_object_object_add(l, "connections_reserved_for_root",
				       json_object_new_int(HMD_ROOT_RESERVED_CONNS));
		json_object_object_add(l, "connections_per_user",
				       json_object_new_int(d->max_conns_per_user));
		json_object_object_add(l, "runs", json_object_new_int(HM_NET_MAX_RUNS - 1));
		json_object_object_add(l, "runs_per_user", json_object_new_int(d->max_runs_per_user));
		json_object_object_add(l, "runs_per_connection",
				       json_object_new_int(HMD_MAX_RUNS_PER_CONN));
		json_object_object_add(o, "limits", l);
	}
	/* Memory held by recorded runs' kernel streams, and its cap. */
	json_object_object_add(o, "kstream_bytes", json_object_new_uint64(d->kstream_bytes));
	json_object_object_add(o, "kstream_total_max", json_object_new_uint64(d->kstream_total_max));
	json_object_object_add(o, "runs_total", json_object_new_int(d->n_runs));
	{
		/* Parts of runs made ahead (pool.c): never runs, never listed. */
		json_object *p = json_object_new_object();

		json_object_object_add(p, "size", json_object_new_int(HMD_POOL_SIZE));
		json_object *ids = json_object_new_array();

		for (int i = 0; i < d->pool.n_cg; i++)
			json_object_array_add(ids, json_object_new_uint64(d->pool.cg[i].id));
		json_object_object_add(p, "cgroups", json_object_new_int(d->pool.n_cg));
		/* (their cgroups are <subtree>/run-<id>: ids no run has yet) */
		json_object_object_add(p, "cgroup_ids", ids);
		json_object_object_add(p, "clock_pages", json_object_new_int(d->pool.n_clock));
		json_object_object_add(p, "runs_from_pool", json_object_new_uint64(d->pool.taken));
		json_object_object_add(p, "runs_without", json_object_new_uint64(d->pool.missed));
		json_object_object_add(o, "pool", p);
	}
	{
		/* What --sched chaos and serial get on this machine (chaos.c). */
		char why[160];
		json_object *s = json_object_new_object();
		bool ok = hmd_chaos_supported(why, sizeof(why)) == 0;

		json_object_object_add(s, "chaos", json_object_new_string(
			ok ? "real-time priorities: PCT on one CPU, or spread with the shim's start gate"
			   : "refused"));
		json_object_object_add(s, "serial", json_object_new_string(
			ok ? "one CPU, SCHED_FIFO priorities drawn by seed and task identity"
			   : "refused"));
		json_object_object_add(s, "why", ok ? NULL : json_object_new_string(why));
		json_object_object_add(s, "sched_ext", json_object_new_boolean(false));
		json_object_object_add(o, "sched", s);
	}
	used = strlen(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN)) + 64;
	for (struct hmd_run *r = d->runs; r; r = r->next) {
		json_object *j;
		size_t n;

		if (uid != 0 && r->uid != uid) {
			others++;
			continue;
		}
		j = run_json(d, r);
		n = strlen(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN)) + 1;

		if (omitted || used + n > max) {
			json_object_put(j);
			omitted++;
			continue;
		}
		used += n;
		json_object_array_add(runs, j);
	}
	json_object_object_add(o, "runs", runs);
	json_object_object_add(o, "runs_omitted", json_object_new_int(omitted));
	json_object_object_add(o, "runs_of_others", json_object_new_int(others));
	return o;
}

static void serve_hello(struct hmd *d, struct hmd_conn *c, uint32_t seq)
{
	struct hm_hello hello = { .proto_version = HM_PROTO_VERSION, .features = HM_FEAT_NET };

	snprintf(hello.version, sizeof(hello.version), "%s", HERMETIC_VERSION);
	for (int i = 0; i < d->n_attach; i++)
		if (d->attach[i].attached && !strncmp(d->attach[i].name, "lsm/", 4))
			hello.features |= HM_FEAT_LSM;
		else if (d->attach[i].attached && strstr(d->attach[i].name, "unix"))
			hello.features |= HM_FEAT_UNIX;
	hmd_reply(c, HM_REP_HELLO, seq, &hello, sizeof(hello), -1);
}

static void serve_status(struct hmd *d, struct hmd_conn *c, uint32_t seq)
{
	const size_t max = HM_MSG_MAX - sizeof(struct hm_hdr);
	json_object *o;

	hmd_bpf_drain(d->bpf); /* the runs' counts include what is on the ring */
	o = status_json(d, max - 256, c->uid);
	const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	size_t n = strlen(s);

	if (n > max)
		hmd_reply_error(c, seq, EMSGSIZE, "status too large");
	else
		hmd_reply(c, HM_REP_STATUS, seq, s, n, -1);
	json_object_put(o);
}

void hmd_server_handle(struct hmd *d, int id)
{
	static char buf[HM_MSG_MAX];
	static struct hmd_req req;
	struct hmd_conn *c = &d->conns[id];
	struct hm_hdr *h;
	char why[200];
	int err;
	/* No control buffer: a descriptor a client attaches is dropped by the
	 * kernel, never installed here (see lib/proto.h). */
	ssize_t len = hm_recv(c->fd, buf, sizeof(buf), &h, NULL);

	if (len == -EAGAIN)
		return;
	if (len == -EBADMSG || len == -EMSGSIZE) {
		/* Answer what we can; the connection stays usable. */
		hmd_reply_error(c, 0, -len, "%s",
				len == -EBADMSG ? "malformed message" : "message too large");
		return;
	}
	if (len < 0) {
		conn_close(d, id);
		return;
	}
	err = hmd_req_decode(buf, sizeof(*h) + len, &req, why, sizeof(why));
	if (err < 0) {
		hmd_reply_error(c, req.seq, -err, "%s", why);
		return;
	}
	/* Past the limit a connection may still ask what a run's start needs:
	 * its adoption, and a process's clock page (one answer each). */
	if (c->adopt_only && req.type != HM_REQ_RUN_ADOPT && req.type != HM_REQ_RUN_CLOCK) {
		int mine = 0;

		for (int i = 0; i < HMD_MAX_CONNS; i++)
			mine += d->conns[i].fd >= 0 && d->conns[i].uid == c->uid &&
				!d->conns[i].adopt_only;
		hmd_reply_error(c, req.seq, EUSERS,
				"uid %u is at its limit of %u connections to hermeticd (%d open; "
				"hermeticd --max-conns-per-user); close some and retry",
				(unsigned)c->uid, d->max_conns_per_user, mine);
		conn_close(d, id);
		return;
	}
	switch (req.type) {
	case HM_REQ_HELLO:
		/* Harmless: says who we are. */
		serve_hello(d, c, req.seq);
		break;
	case HM_REQ_STATUS:
		/* Read-only; every user who may connect sees the run list. */
		serve_status(d, c, req.seq);
		break;
	case HM_REQ_RUN_CREATE:
	case HM_REQ_RUN_ADOPT:
	case HM_REQ_RUN_KILL:
	case HM_REQ_RUN_REPORT:
	case HM_REQ_RUN_AUDIT:
	case HM_REQ_RUN_END:
	case HM_REQ_RUN_KSTREAM:
	case HM_REQ_RUN_RECLAIM:
	case HM_REQ_RUN_CLOCK:
	case HM_REQ_RUN_CONNS:
	case HM_REQ_RUN_SCHED:
		/* Each handler says why it is safe (serve_run.c). */
		hmd_serve_run(d, id, &req);
		break;
	default:
		/* The journal store (serve_journal.c): only the peer's own. */
		hmd_serve_journal(d, id, &req);
		break;
	}
}

void hmd_server_close_all(struct hmd *d)
{
	for (int i = 0; i < HMD_MAX_CONNS; i++)
		conn_close(d, i);
}
