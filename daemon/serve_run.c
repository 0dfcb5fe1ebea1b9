// SPDX-License-Identifier: MIT
/*
 * The run requests: create, adopt, kill, report, audit, end, kernel
 * stream. Each says here why it is safe for any peer to send.
 */
#include <inttypes.h>
#include "util.h"
#include "daemon.h"
#include "procfs.h"
#include "request.h"

/* Find a run the peer owns; replies with the error itself when it can't. */
static struct hmd_run *owned_run(struct hmd *d, struct hmd_conn *c, uint32_t seq, uint64_t id)
{
	struct hmd_run *r = hmd_runs_find(d, id);

	/* Another user's run looks exactly like a missing one. */
	if (!r || r->uid != c->uid) {
		hmd_reply_error(c, seq, ENOENT, "no run %" PRIu64 " of yours", id);
		return NULL;
	}
	return r;
}

/* The peer must be a live process outside every run. Fails closed: a
 * peer whose process cannot be seen any more is refused, never assumed
 * to be outside (a run's process could connect, fork and exit); so is one
 * the daemon could not identify (c->peer_why) or whose cgroup cannot be
 * read exactly. Replies with the error itself; returns 0 when the peer
 * may go on. */
static int peer_outside(struct hmd *d, struct hmd_conn *c, uint32_t seq, struct hmd_proc *ret)
{
	int k = hmd_conn_in_run(d, c, ret);

	/* EACCES, not EPERM: not "you are in a run" (the client's nested
	 * refusal) but "this daemon cannot check here": its set-up is at fault. */
	if (k < 0 && c->pidfd < 0 && c->peer_why[0])
		return hmd_reply_error(c, seq, EACCES, "cannot identify the caller: %s",
				       c->peer_why),
		       -EPERM;
	if (k == -ESRCH || k == -EBADF)
		return hmd_reply_error(c, seq, EPERM,
				       "cannot tell whether the caller is inside a hermetic run: the "
				       "process that connected (pid %d) is gone; connect from the "
				       "process that asks",
				       (int)c->pid),
		       -EPERM;
	if (k < 0)
		return hmd_reply_error(c, seq, EPERM,
				       "cannot tell whether the caller is inside a hermetic run: "
				       "/proc/%d/cgroup has no single whole cgroup v2 line (%s)",
				       (int)c->pid, strerror(-k)),
		       -EPERM;
	if (k > 0)
		return hmd_reply_error(c, seq, EPERM,
				       "the caller is already inside a hermetic run (%s)", ret->cgroup),
		       -EPERM;
	return 0;
}

/*
 * The run's controls (kill, end, report, audit, kernel stream, connection
 * log) answer only the connection that owns the run (the one that created
 * or reclaimed it: enroll's), and only while the process that connected it
 * is outside every run. A run's process may hold a connection of its own to
 * this socket (its user is in the socket's group), and, with the uid check
 * alone, could kill another run of its user, or end its own with keep and
 * so erase its record; nor does it ever get the owner's connection (enroll
 * is not dumpable, and Landlock keeps a run from pidfd_getfd). Checked on
 * every request, not once: a process outside may be moved into a run
 * later. Only RUN_CLOCK and RUN_ADOPT come from inside (serve_clock,
 * serve_adopt).
 */
static struct hmd_run *controlled_run(struct hmd *d, int id, uint32_t seq, uint64_t run_id)
{
	struct hmd_conn *c = &d->conns[id];
	struct hmd_run *r = owned_run(d, c, seq, run_id);
	struct hmd_proc peer;

	if (!r)
		return NULL;
	if (peer_outside(d, c, seq, &peer) < 0)
		return NULL;
	if (r->conn_id != id) {
		hmd_reply_error(c, seq, EPERM,
				"run %" PRIu64 " is %s: only the connection that created it (or "
				"reclaimed it) controls it",
				r->id, r->ending ? "ending" : "another connection's");
		return NULL;
	}
	return r;
}

static void serve_create(struct hmd *d, int id, const struct hmd_req *req)
{
	struct hmd_conn *c = &d->conns[id];
	struct hm_run rep = {};
	struct hmd_proc peer;
	struct hmd_run *r;
	int err, n, fds[2];

	if (c->n_runs >= HMD_MAX_RUNS_PER_CONN)
		return (void)hmd_reply_error(c, req->seq, EUSERS, "too many runs on one connection");
	if (c->uid != 0 && (n = hmd_runs_count_uid(d, c->uid)) >= (int)d->max_runs_per_user)
		return (void)hmd_reply_error(c, req->seq, EUSERS,
					     "uid %u is at its limit of %u runs (hermeticd "
					     "--max-runs-per-user); retry when one has ended",
					     (unsigned)c->uid, d->max_runs_per_user);
	/* One run's processes belong to one policy: a process inside a run
	 * may not start another (it could otherwise pick a weaker policy). */
	if (peer_outside(d, c, req->seq, &peer) < 0)
		return;
	if ((req->create.c.flags & HM_RUN_CLOCK) && !d->keeper)
		return (void)hmd_reply_error(c, req->seq, EOPNOTSUPP,
					     "this hermeticd has no virtual clock keeper: %s "
					     "(use --clock off, or --no-daemon for an approximate clock)",
					     d->sched_why);
	err = hmd_runs_create(d, id, c->uid, c->gid, peer.pid, &req->create.c, req->create.allow,
			      req->create.names, req->create.n_names, &r, &fds[1]);
	if (err < 0)
		return (void)hmd_reply_error(c, req->seq, -err, "cannot create run: %s%s",
					     strerror(-err),
					     err == -EUSERS ? " (hermeticd's run table is full)" : "");
	c->n_runs++;
	rep.run_id = r->id;
	rep.cgroup_id = r->cgid;
	snprintf(rep.cgroup_path, sizeof(rep.cgroup_path), "%s", r->path);
	/* The directory fd lets a root client clone3(CLONE_INTO_CGROUP) and any
	 * client read cgroup.events; writing cgroup.procs still needs the
	 * permissions the kernel checks, which an unprivileged client lacks.
	 * The clock page goes only as a descriptor: its file is root's, in a
	 * root-only directory, so no other process of the user can open it.
	 * It is the descriptor the daemon made the file with (O_RDWR, its own
	 * open file, which nobody else was given). */
	fds[0] = r->fd;
	err = hmd_reply_fds(c, HM_REP_RUN, req->seq, &rep, sizeof(rep), fds, r->has_clock ? 2 : 1);
	if (fds[1] >= 0)
		close(fds[1]);
	if (err < 0)
		hmd_runs_end(d, r, false);
}

/*
 * A process of a run whose inherited page descriptor is gone (a program
 * closed it with a raw syscall) asks for its run's page. Safe: the run is
 * the one the kernel says the asker is in (its cgroup, read through the
 * connection's pidfd, peer.c), whatever its uid (a root run's process that
 * dropped to another user is still the run's); nothing in the request names
 * a run. The page gives only what the asker's run already shares.
 */
static void serve_clock(struct hmd *d, struct hmd_conn *c, const struct hmd_req *req)
{
	struct hm_run_ref rep = {};
	struct hmd_proc peer;
	struct hmd_run *r;
	int fd, k;

	k = hmd_conn_in_run(d, c, &peer);
	if (k < 0)
		return (void)hmd_reply_error(c, req->seq, EPERM,
					     "cannot tell which run the caller is in: the process "
					     "that connected (pid %d) is gone",
					     (int)c->pid);
	r = k > 0 ? hmd_runs_find_cgroup(d, peer.cgroup) : NULL;
	if (!r)
		return (void)hmd_reply_error(c, req->seq, ENOENT,
					     "the caller (pid %d) is in no hermetic run", (int)peer.pid);
	if (!r->has_clock)
		return (void)hmd_reply_error(c, req->seq, ENOENT,
					     "run %" PRIu64 " has no virtual clock (--clock off)", r->id);
	fd = hmd_clockpage_fd(r->clock_path);
	if (fd < 0)
		return (void)hmd_reply_error(c, req->seq, -fd, "cannot open the clock page of run %" PRIu64 ": %s",
					     r->id, strerror(-fd));
	rep.run_id = r->id;
	if (hmd_reply(c, HM_REP_CLOCK, req->seq, &rep, sizeof(rep), fd) == 0)
		hmd_log("run %" PRIu64 ": gave process %d its clock page again (its descriptor "
			"was closed)",
			r->id, (int)peer.pid);
	close(fd);
}

/*
 * The process to adopt asks itself, on its own connection, between its
 * fork and its exec; the kernel names it (the connection's pidfd), so no
 * pid or descriptor travels in the message. Safe because every fact is
 * read through pidfds (peer.c): the asker is in no run (a run's process
 * never moves to another run, so no run is a way out of another), has the
 * run owner's uid and is a direct child of the live process whose
 * connection created the run, which is itself in no run; and the run is
 * still empty. The move itself is by pid number, so the asker's pidfd is
 * checked again after it: had it been reaped meanwhile (only its parent
 * can reap it), whatever was moved is not ours to keep, and the run, which
 * held nothing before, is emptied.
 */
static void serve_adopt(struct hmd *d, int id, const struct hmd_req *req)
{
	struct hmd_conn *c = &d->conns[id], *owner;
	struct hmd_run *r = owned_run(d, c, req->seq, req->ref.run_id);
	struct hmd_proc ch, parent;
	int err;

	if (!r)
		return;
	if (r->adopted || r->ending || hmd_cgroup_populated(r->fd) != 0)
		return (void)hmd_reply_error(c, req->seq, EBUSY,
					     "run %" PRIu64 " is not empty: RUN_ADOPT moves the first "
					     "process of a new run",
					     r->id);
	if (c->pidfd < 0 || (err = hmd_pidfd_proc(c->pidfd, &c->pidfd_pid, true, &ch)) < 0)
		return (void)hmd_reply_error(c, req->seq, EPERM,
					     "cannot identify the process to adopt: %s",
					     c->pidfd < 0 && c->peer_why[0]
						     ? c->peer_why
						     : "RUN_ADOPT must come from that process, on "
						       "its own connection");
	owner = r->conn_id >= 0 ? &d->conns[r->conn_id] : NULL;
	/* After the asker's facts: the parent alive now held its pid then. */
	if (!owner || owner->pidfd < 0 || hmd_pidfd_proc(owner->pidfd, &owner->pidfd_pid, false, &parent) < 0)
		return (void)hmd_reply_error(c, req->seq, ESRCH,
					     "the process that created run %" PRIu64 " is gone", r->id);
	if (hmd_cgroup_in_subtree(&d->cg, ch.cgroup) || hmd_cgroup_in_subtree(&d->cg, parent.cgroup))
		return (void)hmd_reply_error(c, req->seq, EPERM,
					     "process %d is inside a hermetic run (%s); a run's "
					     "processes stay in their run",
					     (int)ch.pid, ch.cgroup);
	if (ch.ppid != parent.pid || ch.uid != c->uid)
		return (void)hmd_reply_error(c, req->seq, EPERM,
					     "process %d is not a child (with its uid) of the process "
					     "that created run %" PRIu64,
					     (int)ch.pid, r->id);
	err = hmd_cgroup_move(r->fd, ch.pid);
	if (!err && hmd_pidfd_alive(c->pidfd) < 0) {
		hmd_cgroup_kill(r->fd);
		hmd_log("run %" PRIu64 ": process %d was reaped while being adopted; emptied the run",
			r->id, (int)ch.pid);
		err = -ESRCH;
	}
	if (err < 0)
		return (void)hmd_reply_error(c, req->seq, -err, "cannot move %d into run: %s",
					     (int)ch.pid, strerror(-err));
	r->adopted = true;
	hmd_reply(c, HM_REP_OK, req->seq, NULL, 0, -1);
}

static void serve_report(struct hmd *d, int id, const struct hmd_req *req)
{
	struct hmd_conn *c = &d->conns[id];
	struct hmd_run *r = controlled_run(d, id, req->seq, req->ref.run_id);
	struct hm_report rep = {};

	if (!r)
		return;
	hmd_bpf_drain(d->bpf); /* make the report include everything so far */
	rep.refused = hmd_bpf_refused(d->bpf, r->cgid);
	rep.dropped = hmd_bpf_dropped(d->bpf, r->cgid);
	for (uint32_t i = 0; i < r->n_kinds && rep.n < HM_REPORT_MAX; i++)
		rep.first[rep.n++] = r->kinds[i].r;
	hmd_reply(c, HM_REP_REPORT, req->seq, &rep, sizeof(rep), -1);
}

/* The kernel stream of the peer's own recorded run, as a sealed memfd. */
static void serve_kstream(struct hmd *d, int id, const struct hmd_req *req)
{
	struct hmd_conn *c = &d->conns[id];
	struct hmd_run *r = controlled_run(d, id, req->seq, req->ref.run_id);
	struct hm_kstream_hdr h;
	int fd;

	if (!r)
		return;
	/* Everything the kernel has delivered so far belongs in the answer. */
	hmd_bpf_drain(d->bpf);
	fd = hmd_runs_kstream(d, r, &h);
	if (fd == -EINVAL)
		return (void)hmd_reply_error(c, req->seq, EINVAL,
					     "run %" PRIu64 " was not created to record", r->id);
	if (fd == -EBUSY)
		return (void)hmd_reply_error(c, req->seq, EBUSY,
					     "run %" PRIu64 " is still running and has had %d snapshots",
					     r->id, HMD_KSTREAM_MAX_SNAPSHOTS);
	if (fd < 0)
		return (void)hmd_reply_error(c, req->seq, -fd, "cannot build the kernel stream: %s",
					     strerror(-fd));
	/* The run keeps its reference (a second KSTREAM reuses it). */
	hmd_reply(c, HM_REP_KSTREAM, req->seq, &h, sizeof(h), fd);
}

/* enroll --connections: the peer's own run's queued connection attempts,
 * taken from the queue (what the peer does not take, nobody else can). */
static void serve_conns(struct hmd *d, int id, const struct hmd_req *req)
{
	struct hmd_conn *c = &d->conns[id];
	static struct {
		struct hm_conns h;
		struct hm_conn_rec rec[HM_CONNS_MAX];
	} rep;
	struct hmd_run *r = controlled_run(d, id, req->seq, req->ref.run_id);
	bool more;

	if (!r)
		return;
	if (!(r->flags & HM_RUN_CONNLOG))
		return (void)hmd_reply_error(c, req->seq, EINVAL,
					     "run %" PRIu64 " was not created with a connection log",
					     r->id);
	hmd_bpf_drain(d->bpf); /* everything the kernel has delivered so far */
	memset(&rep.h, 0, sizeof(rep.h));
	rep.h.n = hmd_connlog_take(r, rep.rec, HM_CONNS_MAX, &more);
	rep.h.more = more;
	rep.h.refused = hmd_bpf_refused(d->bpf, r->cgid);
	rep.h.kernel_dropped = hmd_bpf_dropped(d->bpf, r->cgid);
	rep.h.daemon_dropped = r->conns.dropped;
	hmd_reply(c, HM_REP_CONNS, req->seq, &rep, sizeof(rep.h) + rep.h.n * sizeof(rep.rec[0]), -1);
}

/*
 * A run this daemon adopted after a restart (adopt.c) has no connection
 * until its client takes it back. Safe: only a run of the peer's uid, with
 * no connection, and only from the very process that created it (pid as
 * the kernel names the peer, and its start time), which is outside every
 * run: a run's process cannot take its run's controls.
 */
static void serve_reclaim(struct hmd *d, int id, const struct hmd_req *req)
{
	struct hmd_conn *c = &d->conns[id];
	struct hmd_run *r = owned_run(d, c, req->seq, req->ref.run_id);
	struct hm_run_reclaim rep = {};
	struct hmd_proc peer;

	if (!r)
		return;
	if (r->conn_id >= 0 || r->ending)
		return (void)hmd_reply_error(c, req->seq, EBUSY,
					     "run %" PRIu64 " is %s", r->id,
					     r->ending ? "ending" : "another connection's");
	if (peer_outside(d, c, req->seq, &peer) < 0)
		return;
	if (peer.pid != r->client_pid || hm_proc_start(peer.pid) != r->client_start)
		return (void)hmd_reply_error(c, req->seq, EPERM,
					     "run %" PRIu64 " was created by another process (pid %d)",
					     r->id, (int)r->client_pid);
	if (c->n_runs >= HMD_MAX_RUNS_PER_CONN)
		return (void)hmd_reply_error(c, req->seq, EUSERS, "too many runs on one connection");
	hmd_bpf_drain(d->bpf); /* count what is on the ring as received */
	r->conn_id = id;
	c->n_runs++;
	rep.restarted_ns = r->restarted_ns;
	rep.lost = hmd_runs_lost(d, r);
	hmd_log("run %" PRIu64 " reclaimed by its client (pid %d); %" PRIu64
		" kernel events lost in the restart",
		r->id, (int)peer.pid, (uint64_t)rep.lost);
	hmd_reply(c, HM_REP_RECLAIM, req->seq, &rep, sizeof(rep), -1);
}

/* --sched chaos or serial: the controller of daemon/chaos.c for the peer's own run,
 * asked from outside it, once. */
static void serve_sched(struct hmd *d, int id, const struct hmd_req *req)
{
	struct hmd_conn *c = &d->conns[id];
	struct hmd_run *r = controlled_run(d, id, req->seq, req->sched.run_id);
	char why[160];
	int err;

	if (!r)
		return;
	if (r->chaos)
		return (void)hmd_reply_error(c, req->seq, EBUSY,
					     "run %" PRIu64 " already has a schedule", r->id);
	if ((err = hmd_chaos_supported(why, sizeof(why))) < 0)
		return (void)hmd_reply_error(c, req->seq, -err, "--sched chaos: %s", why);
	err = hmd_chaos_start(&r->chaos, r->fd, r->path + strlen(d->cg.mount), req->sched.seed,
			      req->sched.mode == HM_SCHED_SERIAL);
	if (err < 0)
		return (void)hmd_reply_error(c, req->seq, -err, "--sched chaos: %s", strerror(-err));
	hmd_reply(c, HM_REP_OK, req->seq, NULL, 0, -1);
}

void hmd_serve_run(struct hmd *d, int id, const struct hmd_req *req)
{
	struct hmd_conn *c = &d->conns[id];
	struct hmd_run *r;
	int err;

	switch (req->type) {
	case HM_REQ_RUN_CREATE:
		/* Only restricts the caller's own future processes. */
		serve_create(d, id, req);
		break;
	case HM_REQ_RUN_ADOPT:
		/* Checked in serve_adopt(). */
		serve_adopt(d, id, req);
		break;
	case HM_REQ_RUN_KILL:
		/* Kills only the processes of the peer's own run, asked from
		 * outside it (controlled_run). */
		if (!(r = controlled_run(d, id, req->seq, req->ref.run_id)))
			break;
		if ((err = hmd_cgroup_kill(r->fd)) < 0)
			hmd_reply_error(c, req->seq, -err, "cannot kill run: %s", strerror(-err));
		else
			hmd_reply(c, HM_REP_OK, req->seq, NULL, 0, -1);
		break;
	case HM_REQ_RUN_REPORT:
		/* Counters of the peer's own run. */
		serve_report(d, id, req);
		break;
	case HM_REQ_RUN_AUDIT:
		/* The peer's own run only (controlled_run). */
		if ((r = controlled_run(d, id, req->seq, req->ref.run_id))) {
			struct hm_audit a;

			hmd_bpf_drain(d->bpf);
			hmd_runs_audit(d, r, &a);
			if (r->chaos) {
				struct hmd_chaos_info ci;

				hmd_chaos_describe(r->chaos, &ci);
				a.sched_spun = ci.spun > UINT32_MAX ? UINT32_MAX : (uint32_t)ci.spun;
			}
			hmd_reply(c, HM_REP_AUDIT, req->seq, &a, sizeof(a), -1);
		}
		break;
	case HM_REQ_RUN_END:
		/* Ends only the peer's own run, asked by its connection from
		 * outside every run (controlled_run): a run cannot end itself
		 * with keep, and so erase its own record. */
		/* The answer goes first: the client waits for nothing the
		 * end does (the kill, the watch, and the removal of an empty
		 * run in the reap after this batch of events, main.c). No
		 * request sent after the answer is read before that reap: the
		 * loop reads one message per event, the oldest, and a message
		 * reported in this batch was sent before epoll_wait returned
		 * it. So a client that saw the answer never sees the run
		 * still held; a failed clean-up is logged as before (runs.c). */
		if ((r = controlled_run(d, id, req->seq, req->end.run_id))) {
			c->n_runs--;
			hmd_reply(c, HM_REP_OK, req->seq, NULL, 0, -1);
			hmd_runs_end(d, r, req->end.flags & HM_END_KEEP);
		}
		break;
	case HM_REQ_RUN_KSTREAM:
		/* The peer's own run only; the memfd is sealed and read-only to
		 * the peer, and its size is bounded by --kstream-max. */
		serve_kstream(d, id, req);
		break;
	case HM_REQ_RUN_RECLAIM:
		/* Checked in serve_reclaim(). */
		serve_reclaim(d, id, req);
		break;
	case HM_REQ_RUN_CLOCK:
		/* Checked in serve_clock(): the asker's own run only. */
		serve_clock(d, c, req);
		break;
	case HM_REQ_RUN_CONNS:
		/* The peer's own run only (controlled_run). */
		serve_conns(d, id, req);
		break;
	case HM_REQ_RUN_SCHED:
		/* Real-time priorities and one CPU for the tasks of the peer's
		 * own run only (controlled_run; chaos.c re-checks each task),
		 * refused while RT throttling is off. */
		serve_sched(d, id, req);
		break;
	}
}
