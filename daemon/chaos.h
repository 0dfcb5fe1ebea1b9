/* SPDX-License-Identifier: MIT */
/* --sched chaos in hermeticd: one run's seeded schedule perturbation
 * (chaos.c). */
#ifndef HERMETICD_CHAOS_H
#define HERMETICD_CHAOS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hmd_chaos;

struct hmd_chaos_info {
	uint64_t seed;
	int cpu; /* the run's CPU */
	uint64_t tick_ns; /* the mean gap between change points */
	uint64_t changes; /* change points made */
	uint64_t tasks; /* tasks given a priority */
	uint64_t lost; /* tasks beyond the table, left to the kernel */
	bool watchdog_fired; /* chaos ended after its wall-time bound */
	bool serial; /* --sched serial */
	uint64_t spun; /* serial: tasks lowered for spinning (not serial then) */
};

/* 0, or -errno with a reason in why when this machine cannot give chaos
 * safely (RT throttling off). */
int hmd_chaos_supported(char *why, size_t size);
/* Start perturbing (or, serial, serialising) the run whose cgroup directory is cgfd (duplicated) and
 * whose cgroup is cgpath as /proc/TID/cgroup names it. */
int hmd_chaos_start(struct hmd_chaos **ret, int cgfd, const char *cgpath, uint64_t seed,
		    bool serial);
void hmd_chaos_describe(const struct hmd_chaos *c, struct hmd_chaos_info *ret);
/* Stop and give every task back to SCHED_OTHER on every CPU; NULL is fine. */
void hmd_chaos_stop(struct hmd_chaos *c);

#endif
