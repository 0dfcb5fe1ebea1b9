/* SPDX-License-Identifier: MIT */
/*
 * The kernel backstop of a run (confine.c): what its processes cannot do,
 * set up in enroll's child before CMD's first instruction and inherited by
 * every process of the run, static binaries included.
 */
#ifndef HERMETIC_ENGINE_CONFINE_H
#define HERMETIC_ENGINE_CONFINE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <linux/filter.h>

#define CONFINE_MAX_INSNS 128
/* with the supervisor's program (SV_MAX_INSNS) */
#define CONFINE_MAX_MERGED_INSNS (CONFINE_MAX_INSNS + 64)
#define CONFINE_MAX_MOUNTS 64
/* the dispatch seccomp_fast() puts in front of a program, at most */
#define FAST_MAX_INSNS 256

#define CONFINE_MAX_ALL_MOUNTS 512
#define CONFINE_MAX_LL_PATHS 256

struct confine_mount {
	char path[256];
	unsigned long flags; /* MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_RDONLY, ... as mounted */
	int id, parent; /* mountinfo's mount ids */
};

/* Root's mount and cgroup namespace: the host's view (none), a namespace
 * whose / is a mount (full), or a chroot's, whose / is not (chroot). */
enum confine_ns { CONFINE_NS_NONE, CONFINE_NS_FULL, CONFINE_NS_CHROOT };

struct confine {
	/* confine_prepare ran on it: it is not all zeros (a struct confine is
	 * large; one still as the loader zeroed it is not written again). */
	bool prepared;
	bool on; /* --confine on (the default) */
	bool block_net; /* the run's network is blocked */
	bool root; /* the command starts as root: namespaces and capabilities too */
	bool have_sys_admin; /* in effect in enroll */
	bool raw_sockets; /* --raw-sockets: root keeps CAP_NET_RAW */
	bool no_new_privs; /* set before Landlock and seccomp (all but root with CAP_SYS_ADMIN) */
	enum confine_ns ns;
	const char *ns_why; /* why none */
	char refuse[512]; /* non-empty: why a run started here cannot be confined */
	/* Landlock (confine_landlock.c): ABI or -errno, what the ruleset
	 * handles, and the paths writes stay allowed beneath */
	int landlock_abi;
	uint64_t ll_fs, ll_scoped;
	bool ll_writes_limited; /* root without namespaces: no writes under /sys, cgroup2 */
	char ll_paths[CONFINE_MAX_LL_PATHS][256];
	int n_ll_paths;
	struct sock_filter insns[CONFINE_MAX_INSNS + FAST_MAX_INSNS];
	struct sock_fprog prog;
	/* Set before the fork where the supervisor's filter goes in too: the
	 * two as one program (confine_merge), which supervise_child installs;
	 * confine_child then leaves the filter to it. */
	bool merged;
	struct sock_filter merged_insns[CONFINE_MAX_MERGED_INSNS + FAST_MAX_INSNS];
	struct sock_fprog merged_prog;
	/* root only, read from /proc/self/mountinfo before the fork */
	struct confine_mount all[CONFINE_MAX_ALL_MOUNTS]; /* every mount visible here */
	int n_all;
	bool root_is_mount; /* "/" is a mount point (not a plain chroot) */
	int proc_mount; /* mount id of /proc, 0: none */
	/* As many as /sys may hold: a host whose containers or test daemons
	 * each mounted a bpffs has more than a few, and each must be handled. */
	struct confine_mount cgroup2[CONFINE_MAX_MOUNTS]; /* replaced by the run's own view */
	int n_cgroup2;
	struct confine_mount bpf[CONFINE_MAX_MOUNTS]; /* hidden: pins must stay the daemon's */
	int n_bpf;
	struct confine_mount ro[CONFINE_MAX_MOUNTS]; /* /sys and below: read-only */
	int n_ro;
	/* root only: hermeticd's directory of clock pages, hidden under an
	 * empty read-only tmpfs (root's runs could open other runs' pages by
	 * the path their /proc/PID/maps show), or "" */
	char hide[256];
};

/* In the parent, before the fork: build the seccomp filter, probe Landlock
 * and, for root, read the mounts and choose the namespaces. Where a run
 * started here cannot be confined as it must be, says why in c->refuse:
 * the caller refuses to start it (it must not start less confined than it
 * says). */
void confine_prepare(struct confine *c, bool on, bool block_net);

/* In the child, once it is in the run's cgroup, before exec: only
 * async-signal-safe calls. Returns 0 or -errno; *ret_what names the step
 * that failed. */
int confine_child(const struct confine *c, const char **ret_what);

/* confine.c, in the child: c's seccomp filter alone (confine_child installs
 * it unless c->merged; launch.c where the merged program could not go in).
 * 0 or -errno, *ret_what naming the step. */
int confine_install_filter(const struct confine *c, const char **ret_what);

/* confine_filter.c: the seccomp filter for c->block_net. */
void confine_build_filter(struct confine *c);

/* confine_merge.c: one program deciding every system call as the filters
 * conf and sv installed one after the other (sv the newer) decide it,
 * written to out (cap instructions) and described by *ret: 0, -EINVAL where
 * conf returns other than ERRNO and ALLOW or sv other than USER_NOTIF and
 * ALLOW (the proof does not hold), -E2BIG where it does not fit. */
int confine_merge(const struct sock_fprog *conf, const struct sock_fprog *sv, struct sock_filter *out,
		  size_t cap, struct sock_fprog *ret);

/* seccomp_fast.c: p (whose buffer holds cap instructions) with a dispatch
 * in front that allows, in a few instructions, the x86_64 and i386 numbers
 * p allows whatever the arguments, and sends every other call to p's
 * first instruction: it decides every call as p did, and the kernel takes
 * it faster. 0, or -E2BIG / -EINVAL with p unchanged. */
int seccomp_fast(struct sock_fprog *p, size_t cap);

/* confine_landlock.c. The ABI of this kernel's Landlock, or -errno; why
 * there is none, in words; the plan (before the fork); the domain (in the
 * child, before exec). */
int confine_landlock_abi(void);
const char *confine_landlock_why(int abi);
int confine_landlock_plan(struct confine *c);
int confine_landlock_apply(const struct confine *c, const char **ret_what);

/* confine_layers.c: what a run started here gets, layer by layer, as
 * JSON (for --report and status) and as lines of text. */
struct json_object;
struct json_object *confine_layers_json(const struct confine *c);
void confine_layers_print(FILE *f, const struct confine *c, const char *indent);

#endif
