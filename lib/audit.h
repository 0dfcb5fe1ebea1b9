/* SPDX-License-Identifier: MIT */
/*
 * The audit: from the kernel's events of a run (include/hermetic/trace.h),
 * which processes ran without the shim and which time/entropy syscalls
 * reached the kernel anyway. One implementation for the daemon (live
 * events) and the CLI (a journal's recorded kernel stream).
 */
#ifndef HERMETIC_AUDIT_H
#define HERMETIC_AUDIT_H

#include <linux/types.h>
#include "hermetic/trace.h"
#include "proto.h"

struct hm_audit_acc {
	struct hm_audit sum; /* counters; procs[] of sum is filled by hm_audit_summary */
	struct hm_audit_proc *procs; /* caller's storage, in order of first sight */
	uint32_t n_procs, cap;
	uint64_t untracked; /* processes seen after procs[] was full */
};

void hm_audit_init(struct hm_audit_acc *a, struct hm_audit_proc *procs, uint32_t cap);

/* Account one event; events of other kinds are ignored. */
void hm_audit_add(struct hm_audit_acc *a, const struct hm_trace_event *e);

/* A process that ran without the shim: its last image was exec'd (or
 * inherited from one that was) and never announced the shim, and it was
 * not killed while that image was still starting (audit.c, unstarted). */
static inline int hm_audit_escaped(const struct hm_audit_proc *p)
{
	return !p->shim && p->path[0] && !(p->flags & HM_AUDIT_UNSTARTED);
}

/* A process with the shim whose time/entropy syscalls reached the kernel. */
static inline int hm_audit_bypassed(const struct hm_audit_proc *p)
{
	return p->shim && (p->getrandom || p->clock || p->random_reads);
}

/* The counters and up to HM_AUDIT_MAX processes, those that ran without the
 * shim first, then those that bypassed it. dropped is left to the caller. */
void hm_audit_summary(const struct hm_audit_acc *a, struct hm_audit *out);

#endif
