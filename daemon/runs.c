// SPDX-License-Identifier: MIT
/*
 * The run table: one entry per cgroup the daemon created, with its policy
 * (mirrored in the BPF maps) and what the kernel reported about it.
 */
#include <fcntl.h>
#include <sys/epoll.h>
#include <inttypes.h>
#include "util.h"
#include "daemon.h"

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
	return f;
}

int hmd_runs_create(struct hmd *d, int conn_id, uid_t uid, pid_t pid, const struct hm_run_create *req,
		    const struct hm_allow *allow, struct hmd_run **ret)
{
	struct hmd_run *r;
	int err;

	if (d->n_runs >= HM_NET_MAX_RUNS - 1 || hmd_runs_count_uid(d, uid) >= HMD_MAX_RUNS_PER_UID)
		return -EUSERS;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->fd = r->events_fd = -1;
	if (req->n_allow) {
		r->allow = calloc(req->n_allow, sizeof(*allow));
		if (!r->allow) {
			free(r);
			return -ENOMEM;
		}
		memcpy(r->allow, allow, req->n_allow * sizeof(*allow));
	}
	r->n_allow = req->n_allow;
	r->id = d->next_run_id++;
	r->uid = uid;
	r->client_pid = pid;
	r->conn_id = conn_id;
	r->flags = req->flags;
	memcpy(r->label, req->label, sizeof(r->label));
	r->label[sizeof(r->label) - 1] = 0;

	err = hmd_cgroup_create_run(&d->cg, r->id, &r->fd, &r->cgid, r->path, sizeof(r->path));
	if (err < 0)
		goto fail;
	/* The policy goes in before any process can enter the cgroup: the
	 * client only learns the cgroup after this returns. */
	err = hmd_bpf_set_policy(d->bpf, r->cgid, net_flags(r->flags), r->allow, r->n_allow);
	if (err < 0) {
		hmd_cgroup_remove_run(&d->cg, r->id);
		goto fail;
	}
	r->next = d->runs;
	d->runs = r;
	d->n_runs++;
	hmd_debug("run %" PRIu64 " created for uid %u: %s (cgroup id %" PRIu64 ")", r->id, uid,
		  r->label, r->cgid);
	*ret = r;
	return 0;
fail:
	if (r->fd >= 0)
		close(r->fd);
	free(r->allow);
	free(r);
	return err;
}

static void run_free(struct hmd *d, struct hmd_run *run)
{
	struct hmd_run **pp;

	for (pp = &d->runs; *pp; pp = &(*pp)->next)
		if (*pp == run) {
			*pp = run->next;
			break;
		}
	d->n_runs--;
	if (run->events_fd >= 0) {
		epoll_ctl(d->epfd, EPOLL_CTL_DEL, run->events_fd, NULL);
		close(run->events_fd);
	}
	/* Remove the cgroup before the policy: while the cgroup exists with a
	 * process in it, that process must stay refused. */
	if (run->fd >= 0)
		close(run->fd);
	int err = hmd_cgroup_remove_run(&d->cg, run->id);
	if (err < 0)
		hmd_log("Failed to remove cgroup '%s': %s", run->path, strerror(-err));
	hmd_bpf_clear_policy(d->bpf, run->cgid, run->allow, run->n_allow);
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
	if (!keep) {
		err = hmd_cgroup_kill(r->fd);
		if (err < 0 && err != -ENOENT)
			hmd_log("Failed to kill run %" PRIu64 ": %s", r->id, strerror(-err));
	}
	/* cgroup.events signals EPOLLPRI when "populated" changes. */
	r->events_fd = openat(r->fd, "cgroup.events", O_RDONLY | O_CLOEXEC);
	if (r->events_fd >= 0) {
		struct epoll_event ev = { .events = EPOLLPRI, .data.u64 = HMD_EP(HMD_EP_RUN, 0) };

		epoll_ctl(d->epfd, EPOLL_CTL_ADD, r->events_fd, &ev);
	}
	hmd_runs_reap(d);
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

void hmd_runs_event(struct hmd *d, const void *data, size_t size)
{
	const struct hm_net_event *e = data;
	struct hmd_run *r;

	if (size < sizeof(*e) || e->kind != HM_EV_NET_REFUSED)
		return;
	r = hmd_runs_find_cgid(d, e->cgroup_id);
	if (!r)
		return;
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

void hmd_runs_shutdown(struct hmd *d)
{
	/* Kill every run, give the kernel a moment to empty the cgroups, and
	 * remove them; what will not go is logged, never left silently. */
	for (struct hmd_run *r = d->runs; r; r = r->next)
		hmd_cgroup_kill(r->fd);
	for (int i = 0; i < 200; i++) {
		bool busy = false;

		for (struct hmd_run *r = d->runs; r; r = r->next)
			busy |= hmd_cgroup_populated(r->fd) == 1;
		if (!busy)
			break;
		usleep(10000);
	}
	while (d->runs)
		run_free(d, d->runs);
}
