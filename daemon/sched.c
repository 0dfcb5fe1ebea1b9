// SPDX-License-Identifier: MIT
/*
 * The scheduler view of clock domains (bpf/sched.bpf.c): loading, attaching
 * while domains exist, and the slot table that maps a domain to a cgroup.
 * Called from the main thread (add/remove) and the keeper thread (read,
 * tid lookups, the ring buffer); the BPF maps are safe to use from both,
 * and the slot bitmap is under the keeper's lock (quiesce.c).
 *
 * Maps and links are pinned (pin.c): while a daemon restarts, the kernel
 * goes on counting each run's runnable tasks, so the next keeper takes over
 * counts that are right. Tracing links cannot be moved to a new program
 * (BPF_LINK_UPDATE is for cgroup links): an upgraded daemon keeps the
 * pinned programs until no domain is left.
 */
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include "util.h"
#include "daemon.h"
#include "sched.skel.h"

#define SCHED_PROGS 8

struct hmd_sched {
	struct sched_bpf *skel;
	const char *pin_dir;
	struct bpf_link *links[SCHED_PROGS];
	int n_links;
	bool attached;
	struct hmd_detacher dt; /* detaching, off the keeper's lock (detach.c) */
	int n_domains;
	uint64_t idle_since_ns; /* when n_domains last fell to 0 */
	bool used[HM_SCHED_DOMAINS];
};

static int read_pid_max(void)
{
	char buf[32];
	int fd = open("/proc/sys/kernel/pid_max", O_RDONLY | O_CLOEXEC);
	ssize_t n;
	long v;

	if (fd < 0)
		return 4194304;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 4194304;
	buf[n] = 0;
	v = strtol(buf, NULL, 10);
	return v > 0 && v <= 4194304 ? (int)v : 4194304;
}

int hmd_sched_load(struct hmd_sched **ret, int min_level, uint64_t subtree_id, const char *pin_dir)
{
	struct hmd_sched *s = calloc(1, sizeof(*s));
	int err;

	if (!s)
		return -ENOMEM;
	s->skel = sched_bpf__open();
	if (!s->skel) {
		err = -errno;
		free(s);
		return err ? err : -EINVAL;
	}
	s->skel->rodata->min_level = min_level;
	/* The early exit for tasks outside every run (bpf/sched.bpf.c). */
	s->skel->rodata->subtree_id = subtree_id;
	s->pin_dir = pin_dir;
	/* One entry per possible tid: a task is found by index, no locks. */
	bpf_map__set_max_entries(s->skel->maps.hm_sched_task, read_pid_max() + 1);
	err = hmd_pin_maps(s->skel->obj, pin_dir);
	if (!err)
		err = sched_bpf__load(s->skel);
	if (err) {
		sched_bpf__destroy(s->skel);
		free(s);
		return err < 0 ? err : -EINVAL;
	}
	*ret = s;
	return 0;
}

static void detach(struct hmd_sched *s, bool unpin)
{
	hmd_detach_wait(&s->dt);
	while (s->n_links)
		hmd_pin_link_drop(s->links[--s->n_links], unpin);
}

void hmd_sched_unload(struct hmd_sched *s, bool keep)
{
	if (!s)
		return;
	detach(s, !keep);
	if (!keep)
		hmd_pin_unpin_maps(s->skel->obj);
	sched_bpf__destroy(s->skel);
	free(s);
}

static int set_attached(struct hmd_sched *s, bool on)
{
	struct bpf_program *p;

	if (on == s->attached)
		return 0;
	if (!on) {
		/* Each close waits for RCU grace periods: in a thread, so
		 * that the keeper (and the runs that ask it for a clock) do
		 * not wait; attaching again waits for it (just below). */
		hmd_detach_async(&s->dt, s->links, s->n_links, -1);
		s->n_links = 0;
		s->attached = false;
		return 0;
	}
	hmd_detach_wait(&s->dt);
	bpf_object__for_each_program(p, s->skel->obj) {
		bool upgraded;
		struct bpf_link *l = hmd_pin_link_adopt(s->pin_dir, p, 0, &upgraded);
		int err;

		if (s->n_links == SCHED_PROGS) {
			detach(s, true);
			return -ENOSPC;
		}
		if (!l && !(l = bpf_program__attach(p))) {
			err = -errno;
			detach(s, true);
			return err;
		}
		s->links[s->n_links++] = l;
		if ((err = hmd_pin_link(s->pin_dir, p, l)) < 0)
			hmd_warn("Failed to pin the link of %s: %s", bpf_program__name(p),
				 strerror(-err));
	}
	s->attached = true;
	return 0;
}

int hmd_sched_adopt(struct hmd_sched *s, uint32_t dom, uint64_t cgid)
{
	uint32_t have;
	int err;

	if (dom >= HM_SCHED_DOMAINS || s->used[dom])
		return -EINVAL;
	/* The pinned maps must still name this cgroup in this slot. */
	if (bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.hm_sched_cg), &cgid, &have) ||
	    have != dom)
		return -ESTALE;
	s->used[dom] = true;
	if (s->n_domains++ == 0 && (err = set_attached(s, true)) < 0) {
		s->used[dom] = false;
		s->n_domains--;
		return err;
	}
	return 0;
}

int hmd_sched_add(struct hmd_sched *s, uint64_t cgid, uint32_t *ret_dom)
{
	struct hm_sched_dom init = { .cgid = cgid }, prev;
	uint32_t dom;
	int err;

	for (dom = 0; dom < HM_SCHED_DOMAINS && s->used[dom]; dom++)
		;
	if (dom == HM_SCHED_DOMAINS)
		return -EUSERS;
	/* The slot's next incarnation: entries a task of an earlier run in
	 * this slot left (bpf/sched.bpf.c) count nothing in this one. */
	if (bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.hm_sched_doms), &dom, &prev))
		prev.gen = 0;
	init.gen = prev.gen % HM_SCHED_GEN_MAX + 1;
	/* The counters first, then the cgroup: the first task of the run is
	 * counted in a domain that is already zeroed. */
	if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.hm_sched_doms), &dom, &init, BPF_ANY) ||
	    bpf_map_update_elem(bpf_map__fd(s->skel->maps.hm_sched_cg), &cgid, &dom, BPF_NOEXIST))
		return -errno;
	s->used[dom] = true;
	if (s->n_domains++ == 0 && (err = set_attached(s, true)) < 0) {
		hmd_sched_remove(s, dom, cgid);
		return err;
	}
	*ret_dom = dom;
	return 0;
}

/* Once the domain's cgroup is empty (a dying task's last switch may still
 * come: its entry names this incarnation of the slot, bpf/sched.bpf.c). */
void hmd_sched_remove(struct hmd_sched *s, uint32_t dom, uint64_t cgid)
{
	struct hm_sched_dom zero = { 0 }, last = { 0 };

	if (dom >= HM_SCHED_DOMAINS || !s->used[dom])
		return;
	/* A count that fell below zero made the run look idle while a task
	 * of it ran: said, for whoever sees the clock jump. */
	if (!bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.hm_sched_doms), &dom, &last) &&
	    last.anomalies)
		hmd_warn("clock domain %u: %llu decrements below zero (nrun %lld at its end)", dom,
			 (unsigned long long)last.anomalies, (long long)last.nrun);
	bpf_map_delete_elem(bpf_map__fd(s->skel->maps.hm_sched_cg), &cgid);
	zero.gen = last.gen; /* (the next run in the slot takes the next one) */
	bpf_map_update_elem(bpf_map__fd(s->skel->maps.hm_sched_doms), &dom, &zero, BPF_ANY);
	s->used[dom] = false;
	/* The programs stay attached until hmd_sched_detach_idle(): detaching
	 * waits for an RCU grace period (about 12 ms here), which back-to-back
	 * runs would pay one by one, under the keeper's lock. */
	if (--s->n_domains == 0)
		s->idle_since_ns = hm_now_ns();
}

/* Detach once no run has had a clock for HMD_SCHED_LINGER_NS: runs with
 * --clock off (and a daemon whose runs all have it) cost the scheduler
 * nothing, whatever other runs exist. */
bool hmd_sched_detach_idle(struct hmd_sched *s)
{
	if (s->n_domains || !s->attached || hm_now_ns() - s->idle_since_ns < HMD_SCHED_LINGER_NS)
		return false;
	set_attached(s, false);
	return true;
}

int hmd_sched_read(struct hmd_sched *s, uint32_t dom, struct hm_sched_dom *ret)
{
	if (dom >= HM_SCHED_DOMAINS)
		return -EINVAL;
	if (bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.hm_sched_doms), &dom, ret))
		return -errno;
	return 0;
}

int hmd_sched_tid(struct hmd_sched *s, uint32_t dom, uint32_t nstid, struct hm_sched_tid *ret)
{
	struct hm_sched_tidkey k = { .dom = dom, .nstid = nstid };

	if (bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.hm_sched_tids), &k, ret))
		return -errno;
	return 0;
}

int hmd_sched_quiet_fd(struct hmd_sched *s)
{
	return bpf_map__fd(s->skel->maps.hm_sched_quiet);
}

/* After adoption: forget domains no run was adopted for, and detach
 * programs a daemon before us left pinned when none is left. */
void hmd_sched_settle(struct hmd_sched *s)
{
	int fd = bpf_map__fd(s->skel->maps.hm_sched_cg);
	uint64_t key, next;
	uint32_t dom;
	bool first = true;

	while (!bpf_map_get_next_key(fd, first ? NULL : &key, &next)) {
		first = false;
		if (bpf_map_lookup_elem(fd, &next, &dom) == 0 &&
		    (dom >= HM_SCHED_DOMAINS || !s->used[dom])) {
			bpf_map_delete_elem(fd, &next);
			first = true; /* the walk starts over after a deletion */
			continue;
		}
		key = next;
	}
	/* (only what is pinned: attaching every program to detach it
	 * again would cost two rounds of RCU grace periods for nothing) */
	if (s->n_domains == 0) {
		struct bpf_program *p;

		bpf_object__for_each_program(p, s->skel->obj) {
			bool upgraded;

			hmd_pin_link_drop(hmd_pin_link_adopt(s->pin_dir, p, 0, &upgraded), true);
		}
	}
}
