// SPDX-License-Identifier: MIT
/*
 * The run table: one entry per cgroup the daemon created, with its policy
 * (mirrored in the BPF maps) and what the kernel reported about it.
 */
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <inttypes.h>
#include "util.h"
#include "daemon.h"
#include "procfs.h"

struct hmd_run *hmd_runs_find(struct hmd *d, uint64_t id)
{
	for (struct hmd_run *r = d->runs; r; r = r->next)
		if (r->id == id)
			return r;
	return NULL;
}

struct hmd_run *hmd_runs_find_cgid(struct hmd *d, uint64_t cgid)
{
	for (struct hmd_run *r = d->runs; r; r = r->next)
		if (r->cgid == cgid)
			return r;
	return NULL;
}

struct hmd_run *hmd_runs_find_cgroup(struct hmd *d, const char *cgroup)
{
	size_t m = strlen(d->cg.mount);

	for (struct hmd_run *r = d->runs; r; r = r->next) {
		const char *rel = r->path + m; /* "/hermetic/run-N" */
		size_t n = strlen(rel);

		if (strlen(r->path) > m && !strncmp(r->path, d->cg.mount, m) &&
		    !strncmp(cgroup, rel, n) && (cgroup[n] == '/' || cgroup[n] == 0))
			return r;
	}
	return NULL;
}

int hmd_runs_count_uid(struct hmd *d, uid_t uid)
{
	int n = 0;

	for (struct hmd_run *r = d->runs; r; r = r->next)
		n += r->uid == uid;
	return n;
}

static uint32_t net_flags(uint32_t run_flags)
{
	uint32_t f = 0;

	if (run_flags & HM_RUN_NET_ENFORCE)
		f |= HM_NET_ENFORCE;
	if (run_flags & HM_RUN_NET_LOOPBACK)
		f |= HM_NET_ALLOW_LOOPBACK;
	if (run_flags & HM_RUN_NET_UNIX)
		f |= HM_NET_ALLOW_UNIX;
	if ((run_flags & HM_RUN_NET_AUDIT) && (f & HM_NET_ENFORCE))
		f |= HM_NET_AUDIT;
	if (run_flags & HM_RUN_CONNLOG)
		f |= HM_NET_LOG_ALLOWED;
	return f;
}

/* Said once per daemon: blocked runs without names get no resolver. */
static void dns_unavailable(int err)
{
	static bool said;

	if (said)
		return;
	said = true;
	hmd_warn("no DNS resolver for runs (%s): their DNS is refused instead of answered "
		 "SERVFAIL, and --allow NAME cannot be served (the resolver needs AF_INET and "
		 "AF_INET6 sockets on loopback)",
		 strerror(-err));
}

/* A blocked run's DNS goes only to a resolver of ours (HM_NET_DNS); with
 * no names, block refuses every query and audit reports each. */
static uint32_t dns_flags(uint32_t f, uint32_t n_names)
{
	if ((f & (HM_NET_ENFORCE | HM_NET_AUDIT)) == HM_NET_ENFORCE)
		f |= HM_NET_DNS;
	if ((f & HM_NET_ENFORCE) && !n_names)
		f |= HM_NET_DNS_NONE;
	return f;
}

int hmd_runs_create(struct hmd *d, int conn_id, uid_t uid, gid_t gid, pid_t pid,
		    const struct hm_run_create *req, const struct hm_allow *allow,
		    const struct hm_allow_name *names, uint32_t n_names, struct hmd_run **ret,
		    int *ret_page_fd)
{
	struct hmd_run *r;
	int err;

	*ret_page_fd = -1;
	if (d->n_runs >= HM_NET_MAX_RUNS - 1)
		return -EUSERS;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->fd = r->events_fd = r->client_pidfd = -1;
	hm_audit_init(&r->audit, r->audit_procs, HMD_MAX_PROCS);
	r->ks.snap_fd = -1;
	if (req->n_allow) {
		r->allow = calloc(req->n_allow, sizeof(*allow));
		if (!r->allow) {
			free(r);
			return -ENOMEM;
		}
		memcpy(r->allow, allow, req->n_allow * sizeof(*allow));
	}
	r->n_allow = req->n_allow;
	r->uid = uid;
	r->gid = gid;
	r->client_pid = pid;
	r->client_start = hm_proc_start(pid);
	r->created_ns = hmd_wall_ns();
	r->conn_id = conn_id;
	r->flags = req->flags;
	memcpy(r->label, req->label, sizeof(r->label));
	r->label[sizeof(r->label) - 1] = 0;

	/* A cgroup made ahead (pool.c), or one made now. */
	err = hmd_pool_take_cgroup(d, &r->id, &r->fd, &r->cgid);
	/* (the name hmd_cgroup_create_run gives; one that does not fit
	 * is refused, and the cgroup goes) */
	if (err == 0 && (size_t)snprintf(r->path, sizeof(r->path), "%s/run-%" PRIu64, d->cg.subtree,
					 r->id) >= sizeof(r->path)) {
		hmd_cgroup_remove_run(&d->cg, r->id);
		err = -ENAMETOOLONG;
	}
	if (err == -ENOENT) /* (pool.c: the next free id) */
		err = hmd_run_cgroup_make(d, &r->id, &r->fd, &r->cgid, r->path, sizeof(r->path));
	if (err < 0)
		goto fail;
	/* The policy goes in before any process can enter the cgroup: the
	 * client only learns the cgroup after this returns. */
	err = hmd_bpf_set_policy(d->bpf, r->cgid, dns_flags(net_flags(r->flags), n_names), r->allow,
				 r->n_allow);
	if (err < 0) {
		hmd_cgroup_remove_run(&d->cg, r->id);
		goto fail;
	}
	/* Its resolver, before any process can enter: its first lookup is
	 * redirected (without names, to the shared one that answers SERVFAIL).
	 * Under audit the run's DNS goes where it was sent. */
	if ((net_flags(r->flags) & (HM_NET_ENFORCE | HM_NET_AUDIT)) == HM_NET_ENFORCE) {
		err = hmd_dns_start(d->bpf, r->cgid, names, n_names, &r->dns);
		if (err < 0 && !n_names) {
			/* No shared resolver (a unit without AF_INET, say): the
			 * run has no hm_dns entry, and HM_NET_DNS refuses its
			 * DNS. It fails closed, as a blocked run should. */
			dns_unavailable(err);
			err = 0;
		}
		if (err < 0) {
			hmd_bpf_clear_policy(d->bpf, r->cgid, r->allow, r->n_allow);
			hmd_cgroup_remove_run(&d->cg, r->id);
			goto fail;
		}
	}
	/* Its clock too, before any process can enter: the first task is
	 * counted from its first instruction. */
	if (r->flags & HM_RUN_CLOCK) {
		struct hmd_clock_prep prep;
		bool pooled = d->keeper && hmd_pool_take_clock(d, &prep) == 0;

		if (!d->keeper)
			err = -EOPNOTSUPP;
		else
			err = hmd_keeper_add(d->keeper, r->id, r->cgid, pooled ? &prep : NULL,
					     d->pool.dirfd, &r->clock_dom, r->clock_path,
					     sizeof(r->clock_path), ret_page_fd);
		if (err < 0) {
			hmd_bpf_clear_policy(d->bpf, r->cgid, r->allow, r->n_allow);
			hmd_cgroup_remove_run(&d->cg, r->id);
			goto fail;
		}
		r->has_clock = true;
	}
	/* The record, before the client learns of the run: a daemon after us
	 * must find every run it may have to adopt. */
	err = hmd_record_write(d, r);
	if (err < 0) {
		if (r->has_clock) {
			hmd_keeper_remove(d->keeper, r->clock_dom);
			close(*ret_page_fd);
			*ret_page_fd = -1;
		}
		hmd_bpf_clear_policy(d->bpf, r->cgid, r->allow, r->n_allow);
		hmd_cgroup_remove_run(&d->cg, r->id);
		goto fail;
	}
	r->next = d->runs;
	d->runs = r;
	d->n_runs++;
	hmd_bpf_trace_lazy(d->bpf, HMD_TRACE_RUNS, true);
	if (r->flags & HM_RUN_AUDIT_SYSCALLS)
		hmd_bpf_trace_lazy(d->bpf, HMD_TRACE_SYSCALLS, true);
	hmd_debug("run %" PRIu64 " created for uid %u: %s (cgroup id %" PRIu64 ")", r->id, uid,
		  r->label, r->cgid);
	*ret = r;
	return 0;
fail:
	hmd_dns_stop(r->dns);
	if (r->fd >= 0)
		close(r->fd);
	free(r->allow);
	free(r);
	return err;
}

static void kstream_free(struct hmd *d, struct hmd_kstream *ks)
{
	struct hmd_kchunk *c, *next;

	for (c = ks->first; c; c = next) {
		next = c->next;
		free(c);
	}
	d->kstream_bytes -= ks->bytes;
	if (ks->snap_fd >= 0)
		close(ks->snap_fd);
	memset(ks, 0, sizeof(*ks));
	ks->snap_fd = -1;
}

/* Kernel stream memory of uid's runs (one walk per 1 MiB chunk). */
static uint64_t kstream_user_bytes(struct hmd *d, uid_t uid)
{
	uint64_t n = 0;

	for (struct hmd_run *r = d->runs; r; r = r->next)
		if (r->uid == uid)
			n += r->ks.bytes;
	return n;
}

/* Keep one event of a recorded run. Memory is bounded three times: per
 * run (--kstream-max), per user (--kstream-user-max, so that one user's
 * runs cannot take everyone's) and over all runs (--kstream-total-max);
 * what does not fit is counted in ks->dropped, which the KSTREAM reply
 * carries. */
static void kstream_add(struct hmd *d, struct hmd_run *r, const struct hm_trace_event *e)
{
	struct hmd_kstream *ks = &r->ks;
	struct hmd_kchunk *c = ks->last;

	if (!c || c->n == HMD_KCHUNK_RECS) {
		if (ks->bytes + sizeof(*c) > d->kstream_max ||
		    d->kstream_bytes + sizeof(*c) > d->kstream_total_max ||
		    (r->uid != 0 && kstream_user_bytes(d, r->uid) + sizeof(*c) > d->kstream_user_max) ||
		    !(c = malloc(sizeof(*c)))) {
			ks->dropped++;
			return;
		}
		c->next = NULL;
		c->n = 0;
		if (ks->last)
			ks->last->next = c;
		else
			ks->first = c;
		ks->last = c;
		ks->bytes += sizeof(*c);
		d->kstream_bytes += sizeof(*c);
	}
	c->rec[c->n++] = *e;
	ks->records++;
}

/* A refused connection as a kernel stream record (include/hermetic/trace.h). */
static void kstream_add_net(struct hmd *d, struct hmd_run *r, const struct hm_net_event *n)
{
	struct hm_trace_event e = {
		.kind = HM_EV_NET_REFUSED,
		.pid = n->pid,
		.cgroup_id = n->cgroup_id,
		.time_ns = n->time_ns,
		.aux = n->port,
		.arg0 = n->family,
		.arg1 = n->proto,
		.flags = n->op,
		.len = 16,
	};

	memcpy(e.comm, n->comm, sizeof(e.comm));
	memcpy(e.data, n->addr, 16);
	kstream_add(d, r, &e);
}

int hmd_runs_kstream(struct hmd *d, struct hmd_run *r, struct hm_kstream_hdr *ret_hdr)
{
	struct hmd_kstream *ks = &r->ks;
	struct hm_kstream_hdr h = {
		.record_size = sizeof(struct hm_trace_event),
		.records = ks->records,
		.kernel_dropped = hmd_bpf_dropped(d->bpf, r->cgid),
		.daemon_dropped = ks->dropped,
	};
	_cleanup_close_ int fd = -1;
	int err;

	if (!(r->flags & HM_RUN_RECORD))
		return -EINVAL;
	/* Nothing new since the last snapshot: hand out the same memfd, so a
	 * client asking again costs no memory. */
	if (ks->snap_fd >= 0 && !memcmp(&ks->snap_hdr, &h, sizeof(h))) {
		*ret_hdr = h;
		return ks->snap_fd;
	}
	/* Each snapshot may hold up to --kstream-max of tmpfs memory for as
	 * long as the client keeps it: a run still producing events gets a
	 * bounded number of them. */
	if (ks->snapshots >= HMD_KSTREAM_MAX_SNAPSHOTS && hmd_cgroup_populated(r->fd) != 0)
		return -EBUSY;
	fd = memfd_create("hermetic-kstream", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	if ((err = hm_write_all(fd, &h, sizeof(h))) < 0)
		return err;
	for (struct hmd_kchunk *c = ks->first; c; c = c->next)
		if ((err = hm_write_all(fd, c->rec, c->n * sizeof(c->rec[0]))) < 0)
			return err;
	/* Sealed: the client reads exactly what the daemon wrote, and nobody
	 * can change it after the fact. */
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) < 0)
		return -errno;
	if (ks->snap_fd >= 0)
		close(ks->snap_fd);
	ks->snap_fd = steal_fd(&fd);
	ks->snap_hdr = h;
	ks->snapshots++;
	*ret_hdr = h;
	return ks->snap_fd;
}

bool hmd_runs_owned_recently(struct hmd *d, uint64_t id, uid_t uid)
{
	struct hmd_run *r = hmd_runs_find(d, id);
	uint64_t now = hm_now_ns();

	if (r)
		return r->uid == uid;
	for (uint32_t i = 0; i < HMD_ENDED_MAX; i++)
		if (d->ended[i].id == id && d->ended[i].ended_ns &&
		    now - d->ended[i].ended_ns < HMD_ENDED_TTL_NS)
			return d->ended[i].uid == uid;
	return false;
}

static void run_free(struct hmd *d, struct hmd_run *run)
{
	struct hmd_run **pp;

	/* Remember the owner for a while: JOURNAL_STORE may come after the
	 * run is gone. */
	d->ended[d->ended_next] =
		(struct hmd_ended){ .id = run->id, .uid = run->uid, .ended_ns = hm_now_ns() };
	d->ended_next = (d->ended_next + 1) % HMD_ENDED_MAX;
	kstream_free(d, &run->ks);
	hmd_connlog_free(run);
	hmd_chaos_stop(run->chaos);
	run->chaos = NULL;

	for (pp = &d->runs; *pp; pp = &(*pp)->next)
		if (*pp == run) {
			*pp = run->next;
			break;
		}
	d->n_runs--;
	if (!d->n_runs)
		d->idle_since_ns = hm_now_ns();
	if ((run->flags & HM_RUN_AUDIT_SYSCALLS) && !hmd_runs_audit_syscalls(d))
		d->sys_idle_since_ns = hm_now_ns();
	if (run->events_fd >= 0) {
		/* close() drops it from the set as well; the DEL is for clarity. */
		(void)epoll_ctl(d->epfd, EPOLL_CTL_DEL, run->events_fd, NULL);
		close(run->events_fd);
	}
	if (run->client_pidfd >= 0)
		close(run->client_pidfd);
	/* Remove the cgroup before the policy: while the cgroup exists with a
	 * process in it, that process must stay refused. */
	if (run->fd >= 0)
		close(run->fd);
	int err = hmd_cgroup_remove_run(&d->cg, run->id);
	if (err < 0)
		hmd_warn("Failed to remove cgroup '%s': %s", run->path, strerror(-err));
	hmd_dns_stop(run->dns);
	hmd_bpf_clear_policy(d->bpf, run->cgid, run->allow, run->n_allow);
	/* The cgroup is empty: no task's scheduler entry names the domain. */
	if (run->has_clock)
		hmd_keeper_remove(d->keeper, run->clock_dom);
	hmd_record_remove(d, run->id);
	hmd_debug("run %" PRIu64 " removed", run->id);
	free(run->allow);
	free(run);
}

void hmd_runs_end(struct hmd *d, struct hmd_run *r, bool keep)
{
	int err;

	if (r->ending)
		return;
	r->ending = true;
	r->conn_id = -1;
	/* What is kept (keep) goes on with the kernel's schedule. */
	hmd_chaos_stop(r->chaos);
	r->chaos = NULL;
	if (!keep) {
		err = hmd_cgroup_kill(r->fd);
		if (err < 0 && err != -ENOENT)
			hmd_err("Failed to kill run %" PRIu64 ": %s", r->id, strerror(-err));
	}
	/* cgroup.events signals EPOLLPRI when "populated" changes. */
	r->events_fd = openat(r->fd, "cgroup.events", O_RDONLY | O_CLOEXEC);
	if (r->events_fd >= 0) {
		struct epoll_event ev = { .events = EPOLLPRI, .data.u64 = HMD_EP(HMD_EP_RUN, 0) };

		/* Without the notification the 1 s tick reaps the run. */
		if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, r->events_fd, &ev) < 0)
			hmd_debug("run %" PRIu64 ": cgroup.events not watched (%s): the tick reaps it",
				  r->id, strerror(errno));
	}
	d->reap_due = true;
}

void hmd_runs_reap(struct hmd *d)
{
	struct hmd_run *r = d->runs, *next;

	for (; r; r = next) {
		next = r->next;
		if (r->ending && hmd_cgroup_populated(r->fd) == 0)
			run_free(d, r);
	}
}

static bool same_kind(const struct hm_refusal *a, const struct hm_net_event *e)
{
	return a->port == e->port && a->family == e->family && a->op == e->op &&
	       !memcmp(a->addr, e->addr, 16) && !strncmp(a->comm, e->comm, sizeof(a->comm));
}

int hmd_runs_audit_syscalls(const struct hmd *d)
{
	int n = 0;

	for (const struct hmd_run *r = d->runs; r; r = r->next)
		n += !!(r->flags & HM_RUN_AUDIT_SYSCALLS);
	return n;
}

void hmd_runs_audit(struct hmd *d, struct hmd_run *r, struct hm_audit *out)
{
	hm_audit_summary(&r->audit, out);
	out->dropped = hmd_bpf_dropped(d->bpf, r->cgid);
}

void hmd_runs_event(struct hmd *d, const void *data, size_t size)
{
	const struct hm_net_event *e = data;
	struct hmd_run *r;

	if (size < sizeof(uint32_t) * 2 + sizeof(uint64_t))
		return;
	r = hmd_runs_find_cgid(d, e->cgroup_id);
	if (!r)
		return;
	r->received++;
	if (e->kind == HM_EV_NET_ALLOWED) {
		if (size >= sizeof(*e))
			hmd_connlog_add(r, e);
		return;
	}
	if (e->kind != HM_EV_NET_REFUSED) {
		if (size < sizeof(struct hm_trace_event))
			return;
		hm_audit_add(&r->audit, data);
		hmd_connlog_trace(r, data);
		if (r->flags & HM_RUN_RECORD)
			kstream_add(d, r, data);
		return;
	}
	if (size < sizeof(*e))
		return;
	if (r->flags & HM_RUN_RECORD)
		kstream_add_net(d, r, e);
	hmd_connlog_add(r, e);
	r->events_seen++;
	for (uint32_t i = 0; i < r->n_kinds; i++) {
		if (same_kind(&r->kinds[i].r, e)) {
			r->kinds[i].r.count++;
			return;
		}
	}
	if (r->n_kinds >= HMD_MAX_REFUSAL_KINDS)
		return; /* counted in the policy map all the same */
	struct hm_refusal *k = &r->kinds[r->n_kinds++].r;
	memcpy(k->addr, e->addr, 16);
	k->port = e->port;
	k->family = e->family;
	k->op = e->op;
	k->proto = e->proto;
	k->pid = e->pid;
	k->count = 1;
	memcpy(k->comm, e->comm, sizeof(k->comm));
	k->comm[sizeof(k->comm) - 1] = 0;
}

/* Let go of a run that outlives this daemon: its cgroup, policy, record
 * and clock page stay for the next one (adopt.c). */
static void run_release(struct hmd *d, struct hmd_run *run)
{
	struct hmd_run **pp;

	for (pp = &d->runs; *pp; pp = &(*pp)->next)
		if (*pp == run) {
			*pp = run->next;
			break;
		}
	d->n_runs--;
	kstream_free(d, &run->ks);
	/* Its resolver goes with this daemon: the run's DNS is refused (fails
	 * closed) until it ends; what it learned closes. */
	hmd_dns_stop(run->dns);
	hmd_connlog_free(run);
	if (run->events_fd >= 0)
		close(run->events_fd);
	if (run->client_pidfd >= 0)
		close(run->client_pidfd);
	if (run->fd >= 0)
		close(run->fd);
	free(run->allow);
	free(run);
}

int hmd_runs_shutdown(struct hmd *d, bool keep_running)
{
	int kept = 0;

	if (!keep_running)
		for (struct hmd_run *r = d->runs; r; r = r->next)
			r->ending = true;
	/* A run that is ending is killed, and removed once empty. Every other
	 * run goes on, still refused: the links and maps are pinned, and the
	 * next daemon of this subtree adopts it (docs/hermeticd.8). */
	for (struct hmd_run *r = d->runs; r; r = r->next)
		if (r->ending)
			hmd_cgroup_kill(r->fd);
	for (int i = 0; i < 200; i++) {
		bool busy = false;

		for (struct hmd_run *r = d->runs; r; r = r->next)
			busy |= r->ending && hmd_cgroup_populated(r->fd) == 1;
		if (!busy)
			break;
		usleep(10000);
	}
	while (d->runs) {
		struct hmd_run *r = d->runs;

		if (r->ending && hmd_cgroup_populated(r->fd) == 0) {
			run_free(d, r);
		} else {
			/* (an ending run that would not empty is left too: the
			 * next daemon finds its client gone and ends it) */
			hmd_log("run %" PRIu64 " (%s) goes on, still enforced, for the next hermeticd",
				r->id, r->label);
			run_release(d, r);
			kept++;
		}
	}
	/* After every run's entry to it is gone (run_free, run_release). */
	hmd_dns_shutdown();
	return kept;
}

void hmd_runs_detach_all(struct hmd *d)
{
	for (struct hmd_run *r = d->runs; r; r = r->next)
		r->conn_id = -1;
}
