/* SPDX-License-Identifier: MIT */
/*
 * The run's clock: one shared page (a file the daemon creates for each run,
 * mapped MAP_SHARED by every shim process of the run and by the daemon's
 * clock keeper). docs/virtual-time.md explains the rules; in short:
 *
 *   mono      the run's virtual CLOCK_MONOTONIC. It only grows (every writer
 *             uses compare-and-swap to a larger value) and only the keeper
 *             moves it while the run is idle: to the earliest deadline.
 *   wall_off  CLOCK_REALTIME = mono + wall_off (clock_settime moves it).
 *   slots     one per thread that has waited: its deadline while it waits,
 *             how the keeper wakes it, and a futex word for sleeps.
 *
 * The page also holds what of the run is secret from other runs (its seed):
 * nobody outside the run can open it. It reaches the run's processes only as
 * a descriptor (HERMETIC_CLOCK_FD, lib/clockfd.h), never by a path.
 *
 * Everything in the page is written by the run's own processes and so is
 * untrusted by the daemon: it reads each field once, bounds every index,
 * and a bad value only ever harms the run that wrote it.
 * Fixed-width types only, no includes.
 */
#ifndef HERMETIC_VCLOCK_H
#define HERMETIC_VCLOCK_H

#define HM_VCLOCK_MAGIC 0x4b4c4356u /* "VCLK" */
#define HM_VCLOCK_VERSION 3 /* 2: the run's seed lives here (secret); 3: the file-times table */
#define HM_VSLOTS 4096
#define HM_VCLOCK_HDR 4096
#define HM_VCLOCK_PORTS 65536
#define HM_VFILES 262144 /* entries of the file-times table (docs/file-times.md) */
/* header, slots, one byte per TCP and per UDP port, then the file-times
 * table (a sparse file: only the entries a run uses take memory) */
#define HM_VCLOCK_SIZE                                                                            \
	(HM_VCLOCK_HDR + HM_VSLOTS * 64 + 2 * HM_VCLOCK_PORTS + HM_VFILES * 64)
/* Virtual CLOCK_MONOTONIC at the start of a run: non-zero, and small, so that a
 * virtual deadline that reaches the kernel unconverted (a raw syscall) lies in
 * the real past and times out rather than hangs. */
#define HM_VMONO_BASE (10LL * 1000000000LL)

/* Waits ended by the lag bound that the page describes (more are counted). */
#define HM_VLAG_LOG 16
/* The lag bound never fires a wait younger than this (real ns): a run busy
 * for a moment only (a process starting on a loaded machine while another
 * waits out the last microsecond of its sleep) stays in the pure model
 * (docs/virtual-time.md). A quarter second was too little: on a 2-core
 * machine at load 8, four concurrent shell loops forking cat and stat
 * kept their run busy that long and ended a sleep 1 us before its
 * deadline, and two runs with one seed differed. */
#define HM_VLAG_FLOOR_NS (1000LL * 1000 * 1000)
/* How long a run must stay busy after an idle moment woke a waiter before
 * the bound also takes the waits due at that same deadline, which the next
 * idle moments would wake one by one (daemon/quiesce.c, lag_due): the
 * floor's, for the floor's reason (a loaded machine keeps a run busy for
 * a quarter second). */
#define HM_VLAG_TIE_NS HM_VLAG_FLOOR_NS

/* Who moves the clock when the run is idle. */
#define HM_VK_DAEMON 1 /* hermeticd's keeper, which sees the scheduler */
#define HM_VK_SELF 2 /* no daemon: waiters advance it themselves (approximate) */

/* Slot states. */
#define HM_VS_FREE 0
#define HM_VS_OWNED 1 /* a live thread holds it and is not in a virtual wait */
#define HM_VS_WAITING 2 /* blocked until deadline, or until its event */
#define HM_VS_EXTERNAL 3 /* blocked on the real world: the run is not idle */

/* How the keeper wakes a waiter whose deadline came. */
#define HM_VW_FUTEX 1 /* increment futex, FUTEX_WAKE it (shared futex) */
#define HM_VW_SIGNAL 2 /* SIGURG to tid, si_code SI_QUEUE, si_int HM_VWAKE_MAGIC */
#define HM_VWAKE_MAGIC 0x484d5657 /* "HMVW" */

struct hm_vslot {
	__u32 state; /* HM_VS_* */
	__u32 futex; /* sleeps wait on this word */
	__u32 tid; /* owner, as gettid() in the run's pid namespace */
	__u32 pid; /* owner's process, same namespace */
	__s64 deadline; /* virtual monotonic ns, while WAITING */
	__u64 order; /* tie-break among equal deadlines: deterministic */
	__u32 wake; /* HM_VW_* */
	__u32 seq; /* waits begun so far */
	__u32 flags; /* HM_VSF_* */
	__u32 woken; /* the keeper's: the seq of a short wait it ended */
	__s64 real_begin; /* real CLOCK_MONOTONIC when this wait began (the lag bound) */
	__u32 lagged; /* the keeper's: the seq of a wait the lag bound ended */
	__u32 pad; /* HM_VSF_ASK: the supervisor's answer (a seq) */
};

/* Slot flags. A short wait (under a millisecond: a spin-then-sleep back-off
 * such as the JVM's safepoint poll) is woken when the run is idle without
 * the clock moving for it (docs/virtual-time.md). */
#define HM_VSF_SHORT 0x1
/* A wait the supervisor in enroll does on the thread's behalf: the thread is
 * blocked on it, counted as running by bpf/sched.bpf.c (nsuper) until this
 * slot says what it waits for. */
#define HM_VSF_SUPER 0x2
/* A futex wait the supervisor holds: the keeper asks before it moves the
 * clock to its deadline (woken := seq), the supervisor answers once it has
 * seen the futex word unchanged (pad := seq), daemon/quiesce.c. */
#define HM_VSF_ASK 0x4

struct hm_vclock {
	__u32 magic;
	__u32 version;
	__u32 size; /* HM_VCLOCK_SIZE */
	__u32 nslots; /* HM_VSLOTS */
	__s64 mono;
	__s64 wall_off;
	__u32 keeper; /* HM_VK_* */
	__u32 hw; /* slots ever claimed lie below this */
	__s64 beat; /* keeper's real CLOCK_MONOTONIC at its last heartbeat */
	/* the keeper's counters, for the run's summary */
	__u64 advances; /* times the clock moved because the run was idle */
	__u64 wakes; /* waiters woken at their deadline */
	__u64 idle_nothing; /* idle with no deadline pending (blocked for good) */
	__u64 external; /* idle checks that found a wait on the real world */
	__s64 real_start; /* real CLOCK_REALTIME when the run began, ns */
	/* Pipes, terminals and sockets the run's first process inherited as
	 * 0, 1, 2 (st_dev, st_ino): their other end is outside the run. */
	__u32 n_outside;
	__u32 flags; /* HM_VCF_* */
	__u64 outside[8][2];
	/* Without a keeper (docs/virtual-time.md): waits begun and ended, so a
	 * waiter can tell a quiet run from a busy one. A cache line of its own:
	 * every wait writes it, every clock reading reads mono. The first of
	 * pad1 is the byte enroll's supervisor write(2)s to poke the keeper. */
	__u64 pad1[7];
	__u64 activity;
	__u64 pad2[7];
	/* The lag bound (docs/virtual-time.md): a pending deadline fires once
	 * the run has been busy for lag_milli / 1000 times its remaining
	 * virtual time of real time; 0 = never (the pure model). Set by the
	 * CLI before the run starts. */
	__u64 lag_milli;
	__u64 lag_fires; /* deadlines the bound fired (the keeper's count) */
	__u64 lag_logged; /* entries claimed in lag[] by the waits it ended */
	struct hm_vlag {
		__u32 ready; /* 1 once the rest is written */
		__u32 thread; /* thread number in its process */
		__s64 virt; /* the wait's virtual length, ns */
		__s64 real; /* real ns from its start to its end */
		__s64 mono; /* the run's clock when it ended */
		char what[16]; /* "sleep", "select", ... */
		char lineage[64]; /* the process's lineage key */
	} lag[HM_VLAG_LOG];
	/* Name lookups the shim refused (neither in /etc/hosts nor allowed):
	 * how many, and the first distinct names (NUL-terminated, cut at 63
	 * bytes), for enroll's summary. Written by the run: what it says. */
	__u64 dns_refused;
	char dns_first[4][64];
	/* Set by a hermetic enroll inside the run that refused to start (a run
	 * holds no other): the run's own enroll then offers no repro line. */
	__u64 nested_refused;
	/* The run's secrets, set by hermetic enroll before CMD starts (not in
	 * the environment, which /proc/PID/environ shows to the same user). */
	__u64 seed;
	__u32 has_seed; /* 1: seed is set */
	__u32 pad3;
	/* Real CLOCK_REALTIME before the run's first instruction, ns, set by
	 * the CLI: a file time after it was stamped during the run. 0: none. */
	__s64 files_since;
	/* of lag_fires, those of a wait whose bound was due as it began: the
	 * next of a series, fired when enroll's supervisor published it (its
	 * poke), not at the keeper's next tick (daemon/quiesce.c) */
	__u64 lag_prompt;
	__u64 pad[428 - HM_VLAG_LOG * 14];
};

/*
 * The file-times table: per inode the run wrote or saw change, the real
 * times the kernel gave it and the virtual time each stands for (preload/
 * filetab.c). Field order: mtime, ctime, atime. Written by the run's shim
 * processes only; the daemon never reads it.
 */
struct hm_vfile {
	__u64 key; /* hash of (st_dev, st_ino), never 0; 0: free */
	__u32 lock; /* 0 free, 1 held */
	/* 1: written again since real[] was recorded, all at the page time
	 * virt[0] and virt[1] say (a write the shim did not fstat after:
	 * filetab.c, hm_ft_rewrote); the next stamp found for mtime and ctime
	 * stands for them */
	__u32 dirty;
	__s64 real[3]; /* ns, as the kernel stamped them; 0: none */
	__s64 virt[3]; /* ns, what the run sees for them */
};
/* Fields are carved from the padding: the header stays one page. */
_Static_assert(sizeof(struct hm_vclock) == HM_VCLOCK_HDR, "the clock page's header is one page");

/* Header flags. */
#define HM_VCF_STDIO 0x1 /* enroll noted outside[] (n_outside may be 0): the shim leaves it */
#define HM_VCF_OWN 0x2 /* enroll's own page (--no-daemon, --clock off): no hermeticd can
			* hand it back, so the shim keeps its descriptor (preload/fdkeep.c) */

/* The slots follow the header; the port bytes follow the slots. */
#define HM_VCLOCK_SLOTS(vc) ((struct hm_vslot *)((char *)(vc) + HM_VCLOCK_HDR))
#define HM_VCLOCK_TCP(vc) ((__u8 *)(vc) + HM_VCLOCK_HDR + HM_VSLOTS * 64)
#define HM_VCLOCK_UDP(vc) (HM_VCLOCK_TCP(vc) + HM_VCLOCK_PORTS)
#define HM_VCLOCK_FILES(vc) ((struct hm_vfile *)(HM_VCLOCK_UDP(vc) + HM_VCLOCK_PORTS))

/* The one way to move the run's clock (vc->mono): to v if v is later,
 * never back. Every writer (the shim, the supervisor, the keeper) races
 * every other; a lost compare-and-swap re-reads and retries only while
 * the clock is still behind v. True when this call moved it. Inline: the
 * shim calls it on its hot path. */
static inline _Bool hm_vclock_raise(__s64 *mono, __s64 v)
{
	__s64 cur = __atomic_load_n(mono, __ATOMIC_ACQUIRE);

	while (cur < v)
		if (__atomic_compare_exchange_n(mono, &cur, v, 0, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE))
			return 1;
	return 0;
}

/* A slot claimed at index i: vc->hw (the slots ever claimed lie below
 * it) grows to i + 1 if it is lower, never shrinks; the shim and the
 * supervisor claim slots at once. */
static inline void hm_vclock_raise_hw(__u32 *hw, __u32 n)
{
	__u32 cur = __atomic_load_n(hw, __ATOMIC_ACQUIRE);

	while (cur < n && !__atomic_compare_exchange_n(hw, &cur, n, 0, __ATOMIC_ACQ_REL,
							__ATOMIC_ACQUIRE))
		;
}

#endif
