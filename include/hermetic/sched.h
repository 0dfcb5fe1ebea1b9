/* SPDX-License-Identifier: MIT */
/*
 * The kernel's count of each clock domain's runnable tasks (bpf/sched.bpf.c),
 * read by the daemon's clock keeper (daemon/quiesce.c). A clock domain is a
 * run's cgroup (and later a scope's sub-cgroup); its slot indexes the arrays.
 * Fixed-width types only, no includes. docs/virtual-time.md says why the
 * count is exact.
 */
#ifndef HERMETIC_SCHED_H
#define HERMETIC_SCHED_H

#define HM_SCHED_DOMAINS 4096 /* clock domains at once */
#define HM_SCHED_TIDS 65536 /* (domain, tid) pairs remembered */
#define HM_SCHED_RINGBUF (256 * 1024)

/* The timer slack (ns) the supervisor in enroll gives a process it set up
 * at its exec, with its waits on the run's clock (docs/static.md): threads
 * inherit it, and bpf/sched.bpf.c tells by it a timed wait the supervisor
 * holds from one a process the supervisor does not serve makes for real
 * (the kernel's default is 50,000 ns). */
#define HM_SCHED_SUPER_SLACK 50021ULL

/* One clock domain (array value, index = slot). */
struct hm_sched_dom {
	__s64 nrun; /* tasks of the domain that are runnable now */
	__u64 quiet_seq; /* times nrun went to 0 */
	__u64 cgid; /* the domain's cgroup id; 0 = slot unused */
	__u64 lost; /* quiet events the ring buffer had no room for */
	__u64 anomalies; /* decrements below zero (bookkeeping error) */
	/* Of nrun, tasks blocked in a call the supervisor in enroll answers
	 * (SUPER, bpf/sched.bpf.c): busy unless the supervisor published a
	 * virtual wait for them in the run's clock page (daemon/quiesce.c). */
	__s64 nsuper;
	/* The slot's incarnation (1..HM_SCHED_GEN_MAX, never 0): a task's
	 * entry names it with the slot, so that an entry left from an earlier
	 * run in this slot counts nothing in this one (bpf/sched.bpf.c). Kept
	 * when the slot is freed; the next run takes the next one. */
	__u32 gen;
	/* Kernel work a task of the domain queued (workqueue_queue_work) and
	 * a worker has not finished yet: a PTY's flush to its other side, for
	 * one. Its wake-up of a waiter of the run is in flight although no
	 * task of the run is runnable (bpf/sched.bpf.c), so the keeper does
	 * not take the run for idle while the count is above 0, for at most
	 * HM_SCHED_WORK_HOLD_NS after work_ns (daemon/quiesce.c). */
	__s32 nwork;
	__u64 work_ns; /* bpf_ktime_get_ns() when work was last queued */
};
#define HM_SCHED_GEN_MAX 2047u /* 11 bits of a task's entry */

/* How long queued work keeps its run from looking idle (above). Work runs
 * within microseconds (milliseconds on a loaded machine); work that is
 * cancelled instead never says it ended, and this bounds what such a count
 * costs: a stall of the run's clock for this long after the last work it
 * queued, never a hang. */
#define HM_SCHED_WORK_HOLD_NS 250000000ULL

/* Work items a task of a run queued, by their address: how many times
 * (queued and not yet executed to the end), and for which domain. */
struct hm_sched_work {
	__s64 n;
	__u32 dom; /* slot */
	__u32 gen; /* the slot's incarnation then */
};
#define HM_SCHED_WORKS 8192

/* Ring buffer record: the domain's nrun just went to 0, or to nsuper. */
struct hm_sched_quiet {
	__u32 dom;
	__u32 pad;
	__u64 seq; /* quiet_seq after the transition */
};

/* A task's id as its own pid namespace sees it (what gettid() returned in
 * the shim), within a domain -> the ids the daemon can signal. */
struct hm_sched_tidkey {
	__u32 dom;
	__u32 nstid;
};

struct hm_sched_tid {
	__u32 tid; /* in the initial pid namespace */
	__u32 tgid;
};

#endif
