/* SPDX-License-Identifier: MIT */
/*
 * The machine a run sees (identity.c, identity_files.c, identity_child.c;
 * docs/identity.md): `--identity host|fixed|FILE` and `--dir-order
 * sorted|seeded|host`. host (the default) changes nothing and costs
 * nothing; otherwise each pinned axis is applied in the kernel where the
 * run has the privilege (a UTS namespace, files bound over /proc, /sys and
 * /etc in the run's mount namespace, its real affinity, umask and limits)
 * and by the shim for what the kernel cannot say (uname's release, a CPU
 * count above the machine's, sysconf, sysinfo, the order of readdir).
 */
#ifndef HERMETIC_ENGINE_IDENTITY_H
#define HERMETIC_ENGINE_IDENTITY_H

#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include "engine.h"
#include "tmpdir.h"

/* The shim reads the pinned axes here (preload/identity.c). */
#define HM_ENV_IDENTITY "HERMETIC_IDENTITY"

#define IDENTITY_NAME_MAX 65 /* __NEW_UTS_LEN + 1 */
/* The hard descriptor limit a pinned soft one comes with (systemd's
 * default; Go raises its soft limit to the hard one at start). */
#define IDENTITY_NOFILE_HARD 524288 /* __NEW_UTS_LEN + 1 */

enum identity_dir_order { IDENTITY_DIR_HOST, IDENTITY_DIR_SORTED, IDENTITY_DIR_SEEDED };

/* One value per axis; 0 or "" is the host's. */
struct identity_axes {
	unsigned cpus;
	char hostname[IDENTITY_NAME_MAX];
	char domain[IDENTITY_NAME_MAX];
	char release[IDENTITY_NAME_MAX];
	char tz[64];
	char locale[64];
	int umask; /* -1: the host's */
	uint64_t nofile; /* soft descriptor limit */
	uint64_t memory_kb;
};

struct run_identity {
	const char *mode; /* "host", "fixed", or the FILE or spec given */
	struct identity_axes ax;
	enum identity_dir_order dir;
	uint64_t dir_key; /* the seeded order's key, from the run's seed */
	/* identity_prepare: the plan for the child */
	bool prepared;
	bool ns; /* root with its own mount namespace: UTS and bound files */
	cpu_set_t mask; /* the run's real affinity */
	bool set_mask;
	bool more_cpus; /* cpus is above what the machine gives: said, not real */
	struct run_tmpdir dir_files; /* the generated files bound in the child */
	char zone_file[256]; /* /usr/share/zoneinfo/ZONE, bound over /etc/localtime */
	char missing[512]; /* what could not be applied, in words */
	char env[512]; /* HERMETIC_IDENTITY for the shim */
};

/* "host", "fixed", a spec of KEY=VALUE pairs separated by ',' (what a
 * journal carries) or a FILE of KEY=VALUE lines. 0, or -errno with a reason
 * in err. */
int identity_parse(struct run_identity *id, const char *arg, struct eng_error *err);
int identity_parse_dir_order(struct run_identity *id, const char *arg, struct eng_error *err);

/* Anything to do: an axis pinned or a directory order chosen. */
bool identity_active(const struct run_identity *id);

/* The identity as one spec line (KEY=VALUE,...), for the journal: what
 * identity_parse reads back on replay. */
void identity_spec(const struct run_identity *id, char *buf, size_t size);

/* Before the fork: the files to bind, the affinity, the shim's variable and
 * TZ/LANG/LC_ALL in this process's environment (the child's). ns: the
 * child gets a mount namespace of its own (confine.c, CONFINE_NS_FULL) in
 * which it may bind files. */
int identity_prepare(struct run_identity *id, uint64_t seed, bool ns, struct eng_error *err);

/* In the child, before confine_child (Landlock and the dropped
 * capabilities end mounting): async-signal-safe calls only. 0 or -errno,
 * *ret_what naming the step. */
int identity_child(const struct run_identity *id, const char **ret_what);

/* Add what could not be applied to id->missing ("; "-separated). */
void identity_note_missing(struct run_identity *id, const char *what);

/* identity_files.c: write cpuinfo, stat, meminfo, online into dir. */
int identity_write_files(const struct run_identity *id, int dir_fd, struct eng_error *err);

#endif
