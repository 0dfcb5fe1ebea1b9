/* SPDX-License-Identifier: MIT */
/*
 * The synthetic vDSO that a process without the shim gets at exec
 * (docs/static.md): its layout in the process, as the supervisor
 * (cli/supervise.c) maps it and the vDSO (vdso/vdso.c) finds it.
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

struct hm_vdso_data {
	__u64 magic;
	__u64 flags;
	/* The kernel's own vDSO functions in this process (0: none, a raw
	 * syscall then), for what is not virtual. */
	__u64 real_clock_gettime;
	__u64 real_gettimeofday;
	__u64 real_time;
	__u64 real_getcpu;
};

#endif
