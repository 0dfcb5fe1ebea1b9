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
	__u32 pad32;
	__u64 pad;
};
#define HM_SCHED_GEN_MAX 2047u /* 11 bits of a task's entry */

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
