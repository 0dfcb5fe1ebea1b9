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
 * Everything in the page is written by the run's own processes and so is
 * untrusted by the daemon: it reads each field once, bounds every index,
 * and a bad value only ever harms the run that wrote it.
 * Fixed-width types only, no includes.
 */
#ifndef HERMETIC_VCLOCK_H
#define HERMETIC_VCLOCK_H

#define HM_VCLOCK_MAGIC 0x4b4c4356u /* "VCLK" */
#define HM_VCLOCK_VERSION 2
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
	__u64 pad[2];
};

/* Slot flags. A short wait (under a millisecond: a spin-then-sleep back-off
 * such as the JVM's safepoint poll) is woken when the run is idle without
 * the clock moving for it (docs/virtual-time.md). */
#define HM_VSF_SHORT 0x1

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
	__u32 pad0;
	__u64 outside[8][2];
	/* Without a keeper (docs/virtual-time.md): waits begun and ended, so a
	 * waiter can tell a quiet run from a busy one. A cache line of its own:
	 * every wait writes it, every clock reading reads mono. */
	__u64 pad1[7];
	__u64 activity;
	/* Real CLOCK_REALTIME before the run's first instruction, ns, set by
	 * the CLI: a file time after it was stamped during the run. 0: none. */
	__s64 files_since;
	__u64 pad[475];
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
	__u32 pad;
	__s64 real[3]; /* ns, as the kernel stamped them; 0: none */
	__s64 virt[3]; /* ns, what the run sees for them */
};

/* The slots follow the header; the port bytes follow the slots. */
#define HM_VCLOCK_SLOTS(vc) ((struct hm_vslot *)((char *)(vc) + HM_VCLOCK_HDR))
#define HM_VCLOCK_TCP(vc) ((__u8 *)(vc) + HM_VCLOCK_HDR + HM_VSLOTS * 64)
#define HM_VCLOCK_UDP(vc) (HM_VCLOCK_TCP(vc) + HM_VCLOCK_PORTS)
#define HM_VCLOCK_FILES(vc) ((struct hm_vfile *)(HM_VCLOCK_UDP(vc) + HM_VCLOCK_PORTS))

#endif
