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
};

#endif
