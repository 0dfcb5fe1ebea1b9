/* SPDX-License-Identifier: MIT */
/*
 * A run's configuration and how it reaches every process: the CLI parses
 * options into struct hm_config and exports it as HERMETIC_* environment
 * variables; the shim reads them at start-up and re-injects them on exec.
 */
#ifndef HERMETIC_CONFIG_H
#define HERMETIC_CONFIG_H

#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>

/* Environment contract (values are plain ASCII, decimal numbers). */
#define HM_ENV_RUN "HERMETIC_RUN" /* run id, or "none" under --no-daemon */
#define HM_ENV_SEED "HERMETIC_SEED" /* u64; only where no clock page carries it (the shim alone) */
#define HM_ENV_NOW "HERMETIC_NOW" /* virtual realtime at start, ns since epoch (i64) */
#define HM_ENV_TICK "HERMETIC_TICK" /* monotonic advance per reading, ns */
#define HM_ENV_CLOCK "HERMETIC_CLOCK" /* "virtual" | "off" */
#define HM_ENV_RNG "HERMETIC_RNG" /* "all" | "off" */
#define HM_ENV_SPIN_LIMIT "HERMETIC_SPIN_LIMIT" /* u64, 0 = no limit */
#define HM_ENV_ASLR "HERMETIC_ASLR" /* "off" | "on" */
#define HM_ENV_NETWORK "HERMETIC_NETWORK" /* "block" | "off" */
#define HM_ENV_DNS_ALLOW "HERMETIC_DNS_ALLOW" /* comma-separated host names */
#define HM_ENV_PRELOAD "HERMETIC_PRELOAD" /* absolute path of the shim */
#define HM_ENV_HOME "HERMETIC_HOME" /* --fs isolate: HOME, also the passwd entry's home */
#define HM_ENV_SCHED_SEED "HERMETIC_SCHED_SEED" /* --sched chaos|serial: its seed (u64, non-zero) */
#define HM_ENV_SCHED_MODE "HERMETIC_SCHED_MODE" /* "serial"; unset: chaos */
/* The run's CPUs before --sched pinned it (sched_getaffinity answers them):
 * CPU numbers and ranges, "0-3,8". */
#define HM_ENV_SCHED_CPUS "HERMETIC_SCHED_CPUS"
#define HM_ENV_FS_SHIFT "HERMETIC_FS_SHIFT" /* real - virtual file times, whole seconds (i64) */
/* Record and replay (issue 4). Spool and replay directories hold one file
 * per stream, named "<lineage>.<thread>.<image>.hjs", image in 16 hex digits
 * (lib/jstream.h bytes). */
#define HM_ENV_RECORD "HERMETIC_RECORD" /* spool dir the shim writes streams to */
#define HM_ENV_REPLAY "HERMETIC_REPLAY" /* dir of recorded streams to feed back */
#define HM_ENV_REPLAY_STRICT "HERMETIC_REPLAY_STRICT" /* "1" (default) | "0" */
#define HM_ENV_REPLAY_REPORT "HERMETIC_REPLAY_REPORT" /* file the shim appends outcomes to */
#define HM_EXIT_REPLAY 87 /* a process stopped at a strict replay mismatch */
/* Maintained by the shim itself, per process: */
#define HM_ENV_LINEAGE "HERMETIC_LINEAGE" /* "1", "1.3", "1.3.1" */
/* "<proc>:<parent>:<gen>:<runs>": process and parent image ids (16 hex
 * digits each), images of the process so far, "name=count,..." */
#define HM_ENV_IMAGE "HERMETIC_IMAGE"
/* The run's clock page (include/hermetic/vclock.h): an inherited descriptor,
 * "<fd>:<st_dev>:<st_ino>" (lib/clockfd.h). It also carries the seed. */
#define HM_ENV_CLOCK_FD "HERMETIC_CLOCK_FD"
#define HM_ENV_SOCKET "HERMETIC_SOCKET" /* hermeticd's socket, when not the default */

#define HM_DEFAULT_NOW_NS 1577836800000000000LL /* 2020-01-01T00:00:00Z */
#define HM_DEFAULT_TICK_NS 1000ULL
#define HM_DEFAULT_SPIN_LIMIT 1000000ULL
/* --lag-bound K, in thousandths (docs/virtual-time.md); 0 = inf, the pure model */
#define HM_DEFAULT_LAG_MILLI 10000ULL

/* audit: enforced in the kernel as block is, but what block would refuse
 * is only reported and let through. */
enum hm_network { HM_NETWORK_BLOCK, HM_NETWORK_OFF, HM_NETWORK_AUDIT };
/* "block", "off", "audit": as the option, the environment and JSON say it. */
const char *hm_network_name(enum hm_network n);

struct hm_config {
	uint64_t seed;
	bool seed_set;
	int64_t now_ns;
	uint64_t tick_ns;
	bool clock_virtual;
	bool rng;
	uint64_t spin_limit;
	uint64_t lag_milli; /* --lag-bound K as K * 1000; 0 = inf */
	bool aslr;
	enum hm_network network;
	bool loopback;
	bool unix_sockets;
};

void hm_config_init(struct hm_config *c);

/* Parse an option value into c. name is the long option without dashes:
 * "seed", "now", "tick", "clock", "rng", "spin-limit", "lag-bound", "aslr",
 * "network".
 * Returns 0, -ENOENT for an unknown name, -EINVAL/-ERANGE for a bad value;
 * on error *ret_why says what a valid value looks like. */
int hm_config_set(struct hm_config *c, const char *name, const char *value, const char **ret_why);

/* Parse "2020-01-01T00:00:00Z", "2020-01-01T00:00:00.5+02:00", "2020-01-01"
 * or "@1577836800[.5]" into ns since the epoch. Returns 0 or -EINVAL. */
int hm_parse_time(const char *s, int64_t *ret_ns);

/* Format ns since the epoch as ISO 8601 UTC ("2020-01-01T00:00:00Z", with
 * fractional seconds only when non-zero). */
const char *hm_format_time(int64_t ns, char *buf, size_t size);

/*
 * File times (preload/files.c): a run shows every file time moved back by
 * one constant, in whole seconds, returned here for a run that really
 * started at real_start_ns with its virtual wall clock at now_ns:
 *
 *     shift = E - now, E = the first 1 January 00:00:00 UTC after real_start + 1 day
 *
 * It depends on the real start only through its calendar year (so runs of one
 * --now in one year agree on every file's time), and a file the run writes
 * appears at least a day before the virtual start.
 */
#define HM_FS_SLACK_S 86400
int64_t hm_fs_shift_s(int64_t real_start_ns, int64_t now_ns);

/* Export c as HM_ENV_* variables with setenv(3); the seed only with
 * with_seed (else it goes in the clock page). Returns 0 or -errno. */
int hm_config_export(const struct hm_config *c, bool with_seed);

#endif
