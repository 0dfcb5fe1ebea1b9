// SPDX-License-Identifier: MIT
/*
 * The daemon's side of the wire protocol (docs/protocol.md).
 *
 * Every peer is authenticated by SO_PEERCRED when it connects. Any local
 * user may create runs: a run can only take network access away from the
 * processes the user starts in it, never grant any. Every request that
 * touches a run checks that the run belongs to the peer's uid. Every length
 * is checked against what arrived before a payload is read.
 */
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/stat.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <signal.h>
#include <stdarg.h>
#include <inttypes.h>
#include <json-c/json.h>
#include "util.h"
#include "daemon.h"

int hmd_server_listen(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
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
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -errno;
	/* World-connectable: see the comment at the top of this file. */
	if (chmod(path, 0666) < 0 || listen(fd, 64) < 0) {
		int r = -errno;

		unlink(path);
		return r;
	}
	return steal_fd(&fd);
}

static void conn_close(struct hmd *d, int id)
{
	struct hmd_conn *c = &d->conns[id];

	if (c->fd < 0)
		return;
	/* Runs of a client that went away are ended: their processes are
	 * killed unless the client already handed them over (RUN_END KEEP). */
	for (struct hmd_run *r = d->runs; r; r = r->next)
		if (r->conn_id == id && !r->ending)
			hmd_runs_end(d, r, false);
	epoll_ctl(d->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	c->fd = -1;
	c->n_runs = 0;
}

void hmd_server_accept(struct hmd *d)
{
	for (;;) {
		int fd = accept4(d->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		struct ucred cred;
		socklen_t len = sizeof(cred);
		int id;

		if (fd < 0)
			return;
		for (id = 0; id < HMD_MAX_CONNS && d->conns[id].fd >= 0; id++)
			;
		if (id == HMD_MAX_CONNS ||
		    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
			struct hm_error e = { .err = EUSERS };

			snprintf(e.msg, sizeof(e.msg), "hermeticd: too many connections");
			hm_send(fd, HM_REP_ERROR, 0, &e, sizeof(e), -1);
			close(fd);
			continue;
		}
		struct epoll_event ev = { .events = EPOLLIN, .data.u64 = HMD_EP(HMD_EP_CONN, id) };
		if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
			close(fd);
			continue;
		}
		d->conns[id] = (struct hmd_conn){
			.fd = fd, .uid = cred.uid, .gid = cred.gid, .pid = cred.pid
		};
	}
}

static int reply_error(struct hmd_conn *c, uint32_t seq, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int reply_error(struct hmd_conn *c, uint32_t seq, int err, const char *fmt, ...)
{
	struct hm_error e = { .err = err };
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(e.msg, sizeof(e.msg), fmt, ap);
	va_end(ap);
	return hm_send(c->fd, HM_REP_ERROR, seq, &e, sizeof(e), -1);
}

/* The peer's cgroup path relative to the cgroup2 root, from /proc. */
static int peer_cgroup(pid_t pid, char *buf, size_t size)
{
	char path[64], data[1024], *p;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	n = hm_read_file_at(AT_FDCWD, path, data, sizeof(data));
	if (n < 0)
		return n;
	p = strstr(data, "0::");
	if (!p)
		return -ENOENT;
	p += 3;
	p[strcspn(p, "\n")] = 0;
	snprintf(buf, size, "%s", p);
	return 0;
}

static json_object *status_json(struct hmd *d)
{
	json_object *o = json_object_new_object(), *att = json_object_new_array(),
		    *runs = json_object_new_array();

	json_object_object_add(o, "version", json_object_new_string(HERMETIC_VERSION));
	json_object_object_add(o, "protocol", json_object_new_int(HM_PROTO_VERSION));
	json_object_object_add(o, "cgroup_root", json_object_new_string(d->cg.mount));
	json_object_object_add(o, "subtree", json_object_new_string(d->cg.subtree));
	json_object_object_add(o, "socket", json_object_new_string(d->socket_path));
	json_object_object_add(o, "uptime_s",
			       json_object_new_int64((hm_now_ns() - d->started_ns) / 1000000000ULL));
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
	{
		/* The virtual clock's keeper (quiesce.c), or why there is none. */
		json_object *k = json_object_new_object();

		json_object_object_add(k, "active", json_object_new_boolean(d->keeper != NULL));
		if (!d->keeper)
			json_object_object_add(k, "error", json_object_new_string(d->sched_why));
		json_object_object_add(o, "clock_keeper", k);
	}
	for (struct hmd_run *r = d->runs; r; r = r->next) {
		json_object *j = json_object_new_object();

		json_object_object_add(j, "id", json_object_new_int64(r->id));
		json_object_object_add(j, "uid", json_object_new_int64(r->uid));
		json_object_object_add(j, "label", json_object_new_string(r->label));
		json_object_object_add(j, "cgroup", json_object_new_string(r->path));
		json_object_object_add(j, "network",
				       json_object_new_string(r->flags & HM_RUN_NET_ENFORCE ? "block"
											      : "off"));
		json_object_object_add(j, "ending", json_object_new_boolean(r->ending));
		json_object_object_add(j, "refused",
				       json_object_new_int64(hmd_bpf_refused(d->bpf, r->cgid)));
		if (r->has_clock) {
			struct hmd_clock_stats cs;
			json_object *c = json_object_new_object();

			hmd_keeper_stats(d->keeper, r->clock_dom, &cs);
			json_object_object_add(c, "moves", json_object_new_uint64(cs.advances));
			json_object_object_add(c, "wakes", json_object_new_uint64(cs.wakes));
			json_object_object_add(c, "monotonic_ns", json_object_new_int64(cs.mono));
			json_object_object_add(c, "page_broken", json_object_new_boolean(cs.broken));
			json_object_object_add(j, "clock", c);
		}
		json_object_array_add(runs, j);
	}
	json_object_object_add(o, "runs", runs);
	{
		json_object *st = json_object_new_object();

		json_object_object_add(st, "path", json_object_new_string(d->store.path));
		json_object_object_add(st, "available", json_object_new_boolean(d->store.fd >= 0));
		if (d->store.fd < 0)
			json_object_object_add(st, "error", json_object_new_string(d->store.why));
		json_object_object_add(st, "max_journals",
				       json_object_new_uint64(d->store.max_journals));
		json_object_object_add(st, "max_bytes", json_object_new_uint64(d->store.max_bytes));
		json_object_object_add(o, "store", st);
	}
	/* Memory held by recorded runs' kernel streams, and its cap. */
	json_object_object_add(o, "kstream_bytes", json_object_new_uint64(d->kstream_bytes));
	json_object_object_add(o, "kstream_total_max", json_object_new_uint64(d->kstream_total_max));
	return o;
}

/* Find a run the peer owns; replies with the error itself when it can't. */
static struct hmd_run *owned_run(struct hmd *d, struct hmd_conn *c, uint32_t seq, const void *p,
				 uint32_t len, size_t need)
{
	struct hmd_run *r;
	uint64_t id;

	if (len != need) {
		reply_error(c, seq, EBADMSG, "payload of %u bytes, expected %zu", len, need);
		return NULL;
	}
	memcpy(&id, p, sizeof(id));
	r = hmd_runs_find(d, id);
	/* Another user's run looks exactly like a missing one. */
	if (!r || r->uid != c->uid) {
		reply_error(c, seq, ENOENT, "no run %" PRIu64 " of yours", id);
		return NULL;
	}
	return r;
}

static void handle_create(struct hmd *d, int id, uint32_t seq, const void *p, uint32_t len)
{
	struct hmd_conn *c = &d->conns[id];
	struct hm_run_create req;
	struct hm_run rep = {};
	struct hmd_run *r;
	char cgpath[512];
	size_t rel = strlen(d->cg.mount);
	int err;

	if (len < sizeof(req))
		return (void)reply_error(c, seq, EBADMSG, "RUN_CREATE payload too short");
	memcpy(&req, p, sizeof(req));
	if (req.n_allow > HM_RUN_MAX_ALLOW)
		return (void)reply_error(c, seq, E2BIG, "at most %d --allow destinations",
					 HM_RUN_MAX_ALLOW);
	if (len != sizeof(req) + req.n_allow * sizeof(struct hm_allow))
		return (void)reply_error(c, seq, EBADMSG, "RUN_CREATE length does not match n_allow");
	if (req.flags & ~(HM_RUN_NET_ENFORCE | HM_RUN_NET_LOOPBACK | HM_RUN_NET_UNIX | HM_RUN_RECORD |
			  HM_RUN_CLOCK))
		return (void)reply_error(c, seq, EINVAL, "unknown run flags 0x%x", req.flags);
	if (c->n_runs >= HMD_MAX_RUNS_PER_CONN)
		return (void)reply_error(c, seq, EUSERS, "too many runs on one connection");
	/* One run's processes belong to one policy: a process inside a run may
	 * not start another (it could otherwise pick a weaker policy). */
	if (peer_cgroup(c->pid, cgpath, sizeof(cgpath)) == 0 &&
	    !strncmp(cgpath, d->cg.subtree + rel, strlen(d->cg.subtree + rel)) &&
	    (cgpath[strlen(d->cg.subtree + rel)] == '/'))
		return (void)reply_error(c, seq, EPERM,
					 "the caller is already inside a hermetic run (%s)", cgpath);

	if ((req.flags & HM_RUN_CLOCK) && !d->keeper)
		return (void)reply_error(c, seq, EOPNOTSUPP,
					 "this hermeticd has no virtual clock keeper: %s "
					 "(use --clock off, or --no-daemon for an approximate clock)",
					 d->sched_why);
	err = hmd_runs_create(d, id, c->uid, c->gid, c->pid, &req,
			      (const struct hm_allow *)((const char *)p + sizeof(req)), &r);
	if (err < 0)
		return (void)reply_error(c, seq, -err, "cannot create run: %s", strerror(-err));
	c->n_runs++;
	rep.run_id = r->id;
	rep.cgroup_id = r->cgid;
	snprintf(rep.cgroup_path, sizeof(rep.cgroup_path), "%s", r->path);
	snprintf(rep.clock_path, sizeof(rep.clock_path), "%s", r->clock_path);
	/* The directory fd lets a root client clone3(CLONE_INTO_CGROUP) and any
	 * client read cgroup.events; writing cgroup.procs still needs the
	 * permissions the kernel checks, which an unprivileged client lacks. */
	if (hm_send(c->fd, HM_REP_RUN, seq, &rep, sizeof(rep), r->fd) < 0)
		hmd_runs_end(d, r, false);
}

/* Move the client's waiting child into its run. Safe because: the pidfd
 * pins the process, the process must be a direct child of the peer and have
 * the peer's uid, and the run must be the peer's. */
static void handle_adopt(struct hmd *d, int id, uint32_t seq, const void *p, uint32_t len, int pidfd)
{
	struct hmd_conn *c = &d->conns[id];
	struct hmd_run *r = owned_run(d, c, seq, p, len, sizeof(struct hm_run_ref));
	char path[64], buf[2048], *s;
	int pid = -1, ppid = -1, uid = -1, err;

	if (!r)
		return;
	if (pidfd < 0)
		return (void)reply_error(c, seq, EBADF, "RUN_ADOPT needs a pidfd");
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", pidfd);
	if (hm_read_file_at(AT_FDCWD, path, buf, sizeof(buf)) < 0 || !(s = strstr(buf, "\nPid:")) ||
	    sscanf(s + 5, "%d", &pid) != 1 || pid <= 0)
		return (void)reply_error(c, seq, EBADF, "not a pidfd of a live process");
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if (hm_read_file_at(AT_FDCWD, path, buf, sizeof(buf)) < 0 || !(s = strstr(buf, "\nPPid:")) ||
	    sscanf(s + 6, "%d", &ppid) != 1 || !(s = strstr(buf, "\nUid:")) ||
	    sscanf(s + 5, "%d", &uid) != 1)
		return (void)reply_error(c, seq, ESRCH, "process %d is gone", pid);
	if (ppid != c->pid || (uid_t)uid != c->uid)
		return (void)reply_error(c, seq, EPERM,
					 "process %d is not a child of the caller with its uid", pid);
	err = hmd_cgroup_move(r->fd, pid);
	/* The pidfd proves the process we checked is the one we moved: if it
	 * had died in between, its pid could have been reused. */
	if (!err && syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) < 0)
		err = -ESRCH;
	if (err < 0)
		return (void)reply_error(c, seq, -err, "cannot move %d into run: %s", pid,
					 strerror(-err));
	hm_send(c->fd, HM_REP_OK, seq, NULL, 0, -1);
}

static void handle_report(struct hmd *d, int id, uint32_t seq, const void *p, uint32_t len)
{
	struct hmd_conn *c = &d->conns[id];
	struct hmd_run *r = owned_run(d, c, seq, p, len, sizeof(struct hm_run_ref));
	struct hm_report rep = {};

	if (!r)
		return;
	hmd_bpf_drain(d->bpf); /* make the report include everything so far */
	rep.refused = hmd_bpf_refused(d->bpf, r->cgid);
	rep.dropped = hmd_bpf_dropped(d->bpf, r->cgid);
	for (uint32_t i = 0; i < r->n_kinds && rep.n < HM_REPORT_MAX; i++)
		rep.first[rep.n++] = r->kinds[i].r;
	hm_send(c->fd, HM_REP_REPORT, seq, &rep, sizeof(rep), -1);
}

/* The kernel stream of the peer's own recorded run, as a sealed memfd. */
static void handle_kstream(struct hmd *d, int id, uint32_t seq, const void *p, uint32_t len)
{
	struct hmd_conn *c = &d->conns[id];
	struct hmd_run *r = owned_run(d, c, seq, p, len, sizeof(struct hm_run_ref));
	struct hm_kstream_hdr h;
	int fd;

	if (!r)
		return;
	/* Everything the kernel has delivered so far belongs in the answer. */
	hmd_bpf_drain(d->bpf);
	fd = hmd_runs_kstream(d, r, &h);
	if (fd == -EINVAL)
		return (void)reply_error(c, seq, EINVAL, "run %" PRIu64 " was not created to record",
					 r->id);
	if (fd == -EBUSY)
		return (void)reply_error(c, seq, EBUSY,
					 "run %" PRIu64 " is still running and has had %d snapshots",
					 r->id, HMD_KSTREAM_MAX_SNAPSHOTS);
	if (fd < 0)
		return (void)reply_error(c, seq, -fd, "cannot build the kernel stream: %s",
					 strerror(-fd));
	/* The run keeps its reference (a second KSTREAM reuses it). */
	hm_send(c->fd, HM_REP_KSTREAM, seq, &h, sizeof(h), fd);
}

static void handle_store(struct hmd *d, int id, uint32_t seq, const void *p, uint32_t len,
			 int fd)
{
	struct hmd_conn *c = &d->conns[id];
	struct hm_journal_store req;
	char why[200];
	int err;

	if (len != sizeof(req))
		return (void)reply_error(c, seq, EBADMSG, "JOURNAL_STORE payload of %u bytes, expected %zu",
					 len, sizeof(req));
	memcpy(&req, p, sizeof(req));
	if (req.flags)
		return (void)reply_error(c, seq, EINVAL, "unknown store flags 0x%x", req.flags);
	/* Only a journal of one's own run, live or ended a short while ago:
	 * the store is keyed by run id, and nobody may claim another's. */
	if (!hmd_runs_owned_recently(d, req.run_id, c->uid))
		return (void)reply_error(c, seq, ENOENT,
					 "no run %" PRIu64 " of yours (live or ended in the last %llu min)",
					 req.run_id, HMD_ENDED_TTL_NS / 60000000000ULL);
	err = hmd_store_put(&d->store, c->uid, &req, fd, why, sizeof(why));
	if (err < 0)
		return (void)reply_error(c, seq, -err, "%s", why);
	hm_send(c->fd, HM_REP_OK, seq, NULL, 0, -1);
}

static void handle_list(struct hmd *d, int id, uint32_t seq, const void *p, uint32_t len)
{
	static char out[HM_MSG_MAX - sizeof(struct hm_hdr)];
	struct hmd_conn *c = &d->conns[id];
	struct hm_journal_list req = {};
	ssize_t n;

	if (len != 0 && len != sizeof(req))
		return (void)reply_error(c, seq, EBADMSG, "JOURNAL_LIST payload of %u bytes", len);
	if (len)
		memcpy(&req, p, sizeof(req));
	n = hmd_store_list(&d->store, c->uid, req.skip, out, sizeof(out));
	if (n == -ENOSYS)
		return (void)reply_error(c, seq, ENOSYS, "the journal store is unavailable: %s",
					 d->store.why);
	if (n < 0)
		return (void)reply_error(c, seq, -n, "cannot list journals: %s", strerror(-n));
	hm_send(c->fd, HM_REP_JOURNALS, seq, out, n, -1);
}

static void handle_fetch(struct hmd *d, int id, uint32_t seq, const void *p, uint32_t len)
{
	struct hmd_conn *c = &d->conns[id];
	struct hm_journal_ref ref;
	struct hm_journal_info info = {};
	int fd = -1, err;

	if (len != sizeof(ref))
		return (void)reply_error(c, seq, EBADMSG, "JOURNAL_FETCH payload of %u bytes", len);
	memcpy(&ref, p, sizeof(ref));
	err = hmd_store_fetch(&d->store, c->uid, ref.id, &fd, &info.size);
	if (err == -ENOSYS)
		return (void)reply_error(c, seq, ENOSYS, "the journal store is unavailable: %s",
					 d->store.why);
	if (err < 0)
		return (void)reply_error(c, seq, err == -ENOENT ? ENOENT : -err,
					 "no journal %" PRIu64 " of yours%s%s", ref.id,
					 err == -ENOENT ? "" : ": ", err == -ENOENT ? "" : strerror(-err));
	info.id = ref.id;
	hm_send(c->fd, HM_REP_JOURNAL, seq, &info, sizeof(info), fd);
	close(fd);
}

static void handle_rm_gc(struct hmd *d, int id, uint32_t type, uint32_t seq, const void *p,
			 uint32_t len)
{
	struct hmd_conn *c = &d->conns[id];
	struct hm_journal_count cnt = {};
	uint64_t arg;
	int err;

	if (len != sizeof(arg))
		return (void)reply_error(c, seq, EBADMSG, "payload of %u bytes, expected 8", len);
	memcpy(&arg, p, sizeof(arg));
	if (type == HM_REQ_JOURNAL_RM)
		err = hmd_store_rm(&d->store, c->uid, arg, &cnt);
	else
		err = hmd_store_gc(&d->store, c->uid, arg, &cnt);
	if (err == -ENOSYS)
		return (void)reply_error(c, seq, ENOSYS, "the journal store is unavailable: %s",
					 d->store.why);
	if (err == -ENOENT && type == HM_REQ_JOURNAL_RM)
		return (void)reply_error(c, seq, ENOENT, "no journal %" PRIu64 " of yours", arg);
	if (err < 0)
		return (void)reply_error(c, seq, -err, "cannot remove journals: %s", strerror(-err));
	hm_send(c->fd, HM_REP_COUNT, seq, &cnt, sizeof(cnt), -1);
}

void hmd_server_handle(struct hmd *d, int id)
{
	static char buf[HM_MSG_MAX];
	struct hmd_conn *c = &d->conns[id];
	struct hm_hdr *h;
	struct hmd_run *r;
	const void *p;
	int fd = -1;
	ssize_t len = hm_recv(c->fd, buf, sizeof(buf), &h, &fd);
	_cleanup_close_ int rfd = fd;

	if (len == -EAGAIN)
		return;
	if (len == -EBADMSG || len == -EMSGSIZE) {
		/* Answer what we can; the connection stays usable. */
		reply_error(c, 0, -len, "%s", len == -EBADMSG ? "malformed message" : "message too large");
		return;
	}
	if (len < 0) {
		conn_close(d, id);
		return;
	}
	p = buf + sizeof(*h);
	switch (h->type) {
	case HM_REQ_HELLO: {
		/* Harmless: says who we are. */
		struct hm_hello hello = { .proto_version = HM_PROTO_VERSION, .features = HM_FEAT_NET };

		snprintf(hello.version, sizeof(hello.version), "%s", HERMETIC_VERSION);
		for (int i = 0; i < d->n_attach; i++)
			if (d->attach[i].attached && !strncmp(d->attach[i].name, "lsm/", 4))
				hello.features |= HM_FEAT_LSM;
			else if (d->attach[i].attached && strstr(d->attach[i].name, "unix"))
				hello.features |= HM_FEAT_UNIX;
		hm_send(c->fd, HM_REP_HELLO, h->seq, &hello, sizeof(hello), -1);
		break;
	}
	case HM_REQ_STATUS: {
		/* Read-only; every user may see the run list (labels, uids). */
		json_object *o = status_json(d);
		const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
		size_t n = strlen(s);

		if (n > HM_MSG_MAX - sizeof(struct hm_hdr))
			reply_error(c, h->seq, EMSGSIZE, "status too large");
		else
			hm_send(c->fd, HM_REP_STATUS, h->seq, s, n, -1);
		json_object_put(o);
		break;
	}
	case HM_REQ_RUN_CREATE:
		/* Only restricts the caller's own future processes. */
		handle_create(d, id, h->seq, p, len);
		break;
	case HM_REQ_RUN_ADOPT:
		/* Checked in handle_adopt(). */
		handle_adopt(d, id, h->seq, p, len, rfd);
		break;
	case HM_REQ_RUN_KILL:
		/* Kills only the processes of the peer's own run. */
		if ((r = owned_run(d, c, h->seq, p, len, sizeof(struct hm_run_ref)))) {
			int err = hmd_cgroup_kill(r->fd);

			if (err < 0)
				reply_error(c, h->seq, -err, "cannot kill run: %s", strerror(-err));
			else
				hm_send(c->fd, HM_REP_OK, h->seq, NULL, 0, -1);
		}
		break;
	case HM_REQ_RUN_REPORT:
		handle_report(d, id, h->seq, p, len);
		break;
	case HM_REQ_RUN_AUDIT:
		/* The peer's own run only. */
		if ((r = owned_run(d, c, h->seq, p, len, sizeof(struct hm_run_ref)))) {
			struct hm_audit a;

			hmd_bpf_drain(d->bpf);
			hmd_runs_audit(d, r, &a);
			hm_send(c->fd, HM_REP_AUDIT, h->seq, &a, sizeof(a), -1);
		}
		break;
	case HM_REQ_RUN_END: {
		/* Ends only the peer's own run. */
		struct hm_run_end end;

		if (len != sizeof(end)) {
			reply_error(c, h->seq, EBADMSG, "RUN_END payload of %zd bytes", len);
			break;
		}
		memcpy(&end, p, sizeof(end));
		if ((r = owned_run(d, c, h->seq, &end.run_id, sizeof(end.run_id),
				   sizeof(end.run_id)))) {
			if (r->conn_id == id)
				c->n_runs--;
			hmd_runs_end(d, r, end.flags & HM_END_KEEP);
			hm_send(c->fd, HM_REP_OK, h->seq, NULL, 0, -1);
		}
		break;
	}
	case HM_REQ_RUN_KSTREAM:
		/* The peer's own run only; the memfd is sealed and read-only to
		 * the peer, and its size is bounded by --kstream-max. */
		handle_kstream(d, id, h->seq, p, len);
		break;
	case HM_REQ_JOURNAL_STORE:
		/* Writes only into the peer's own store directory, only a journal
		 * of the peer's own run, copied (never linked) from a regular
		 * file on a local filesystem, size-capped, retention applied. */
		handle_store(d, id, h->seq, p, len, rfd);
		break;
	case HM_REQ_JOURNAL_LIST:
		/* Reads only the peer's own store directory. */
		handle_list(d, id, h->seq, p, len);
		break;
	case HM_REQ_JOURNAL_FETCH:
		/* An O_RDONLY fd of a file in the peer's own store directory. */
		handle_fetch(d, id, h->seq, p, len);
		break;
	case HM_REQ_JOURNAL_RM:
	case HM_REQ_JOURNAL_GC:
		/* Removes only files in the peer's own store directory. */
		handle_rm_gc(d, id, h->type, h->seq, p, len);
		break;
	default:
		reply_error(c, h->seq, EOPNOTSUPP, "unknown request type %u", h->type);
	}
}

void hmd_server_close_all(struct hmd *d)
{
	for (int i = 0; i < HMD_MAX_CONNS; i++)
		conn_close(d, i);
}
