/* SPDX-License-Identifier: MIT */
/*
 * The synthetic vDSO that a process without the shim gets at exec
 * (docs/static.md): its layout in the process, as the supervisor
 * (engine/supervise.c) maps it and the vDSO (vdso/vdso.c) finds it.
 *
 *   base + 0                 the image (vdso/libhermetic-vdso.so, read-only)
 *   base + HM_VDSO_DATA_OFF  one private page: struct hm_vdso_data
 *   base + HM_VDSO_PAGE_OFF  the run's clock page (include/hermetic/vclock.h),
 *                            mapped shared, read-only
 *
 * The image finds both by its own address (__ehdr_start), so it carries no
 * relocation and needs nothing written into it.
 * Fixed-width types only, no includes.
 */
#ifndef HERMETIC_VDSO_H
#define HERMETIC_VDSO_H

#define HM_VDSO_IMAGE_MAX 0xf000
#define HM_VDSO_DATA_OFF 0xf000
#define HM_VDSO_PAGE_OFF 0x10000
#define HM_VDSO_DATA_MAGIC 0x4f53445648ull /* "HVDSO" */

/* Flags of struct hm_vdso_data. */
#define HM_VDSO_WALL 0x1 /* realtime clocks read the run's clock */
#define HM_VDSO_MONO 0x2 /* so do the monotonic ones (the process's waits are virtual) */
#define HM_VDSO_RNG 0x4 /* Go's getrandom is served here (rng_* below, docs/static.md) */

/* The stream the supervisor keeps for a process whose getrandom is served
 * in the process (HM_VDSO_RNG) starts at this block of the same key: the
 * process's own calls use the blocks from 0, so the two never overlap. */
#define HM_VDSO_RNG_SUPER_BLOCK (1ull << 57)

struct hm_vdso_data {
	__u64 magic;
	__u64 flags;
	/* The kernel's own vDSO functions in this process (0: none, a raw
	 * syscall then), for what is not virtual. */
	__u64 real_clock_gettime;
	__u64 real_gettimeofday;
	__u64 real_time;
	__u64 real_getcpu;
	/* --tick: a reading advances by tick ns once the process has read the
	 * clock tick_after times since the run's clock last moved (a loop
	 * polling the clock makes progress; the shim counts per thread, this
	 * page has no threads: per process). 0: frozen. */
	__u64 tick;
	__u64 tick_after;
	__u64 pad0[4];
	/* written by the vDSO, on a cache line of their own */
	__s64 base; /* the run's mono when the count started */
	__u64 reads;
	__s64 off; /* ticks so far, ns */
	__s64 last; /* the last reading, so that none goes back */
	__u64 pad1[4];
	/* HM_VDSO_RNG: Go's internal/syscall/unix.GetRandom jumps to the
	 * image's entry point (hm_go_getrandom, vdso/vdso.c), which hands out
	 * the process's seeded stream: ChaCha20 of rng_key from block 0, the
	 * bytes in the order of the calls (rng_pos, advanced atomically). Only
	 * in the process rng_pid names: a fork child's copy of this page makes
	 * the raw syscall (the supervisor then keys its own stream). An error
	 * goes back as Go's error value: the itab of (syscall.Errno, error)
	 * and the address of runtime.staticuint64s, where Go boxes small
	 * integers. */
	__u8 rng_key[32];
	__u64 rng_pid;
	__u64 go_errno_itab;
	__u64 go_small_ints;
	__u64 pad2[5];
	__u64 rng_pos; /* written by the vDSO, on a cache line of its own */
};

#endif
