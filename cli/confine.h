/* SPDX-License-Identifier: MIT */
/*
 * The kernel backstop of a run (confine.c): what its processes cannot do,
 * set up in enroll's child before CMD's first instruction and inherited by
 * every process of the run, static binaries included.
 */
#ifndef HERMETIC_CLI_CONFINE_H
#define HERMETIC_CLI_CONFINE_H

#include <stdbool.h>
#include <linux/filter.h>

#define CONFINE_MAX_INSNS 128
#define CONFINE_MAX_MOUNTS 64

struct confine_mount {
	char path[256];
	unsigned long flags; /* MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_RDONLY, ... as mounted */
};

struct confine {
	bool on; /* --confine on (the default) */
	bool block_net; /* the run's network is blocked */
	bool root; /* the command starts as root: namespaces and capabilities too */
	struct sock_filter insns[CONFINE_MAX_INSNS];
	struct sock_fprog prog;
	/* root only, read from /proc/self/mountinfo before the fork */
	struct confine_mount cgroup2[8]; /* replaced by the run's own view */
	int n_cgroup2;
	struct confine_mount bpf[64]; /* hidden: pins must stay the daemon's (one per daemon: tests run many) */
	int n_bpf;
	struct confine_mount ro[CONFINE_MAX_MOUNTS]; /* /sys and below: read-only */
	int n_ro;
};

/* In the parent, before the fork: build the seccomp filter and, for root,
 * the list of mounts. Dies on failure (the run must not start less
 * confined than it says). */
void confine_prepare(struct confine *c, bool on, bool block_net);

/* In the child, once it is in the run's cgroup, before exec: only
 * async-signal-safe calls. Returns 0 or -errno; *ret_what names the step
 * that failed. */
int confine_child(const struct confine *c, const char **ret_what);

#endif
