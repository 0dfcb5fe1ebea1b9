/* SPDX-License-Identifier: MIT */
/*
 * One run of a command, as enroll and replay start it: the options parsed
 * into struct enroll, then enroll_run() asks hermeticd for the run, sets up
 * the boundary and environment, starts CMD in the run's cgroup, waits until
 * the cgroup is empty and reports. Recording (record.c) and replay
 * (replay.c) hang off the same run.
 */
#ifndef HERMETIC_CLI_ENROLL_H
#define HERMETIC_CLI_ENROLL_H

#include <stdbool.h>
#include <stdint.h>
#include <signal.h>
#include "config.h"
#include "proto.h"
#include "isolate.h"
#include "confine.h"
#include "supervise.h"
#include "now.h"
#include "signals.h"
#include "client.h"
#include "vclock.h"
#include "identity.h"

#define DEFAULT_GRACE_NS 2000000000ULL

struct record;
struct hm_vclock;

/* An option as given, for the journal: name without dashes, value NULL for
 * a flag. The run's clock/entropy/network settings are in cfg instead. */
struct enroll_opt {
	const char *name;
	const char *value;
};

#define ENROLL_MAX_OPTS 512
#define ENROLL_MAX_ENV 8

/* enroll --connections FILE (connlog.c) */
struct enroll_connlog {
	int fd; /* -1: no log */
	uint64_t next_ns; /* next fetch (CLOCK_MONOTONIC) */
	uint64_t lines;
	uint64_t attempts[4]; /* by HM_VERDICT_* */
	uint64_t refused, kernel_dropped, daemon_dropped; /* the daemon's last counts */
	bool fetch_err;
	int write_err;
};

/* --sched: HM_SCHED_CHAOS, HM_SCHED_SERIAL or 0 (off); the seed, the run's own unless set. */
struct enroll_sched {
	uint32_t mode;
	bool seed_set;
	uint64_t seed;
};

struct enroll {
	struct hm_config cfg;
	bool parsed; /* enroll_parse is done: seed and start time are final */
	enum now_source now_src; /* where cfg.now_ns came from */
	bool no_daemon;
	bool unconfined; /* --confine off */
	bool raw_sockets; /* --raw-sockets: root keeps CAP_NET_RAW */
	/* inherited.c: network sockets from enroll's parent. --pass-fd N
	 * names those CMD keeps; the others are /dev/null in the run. */
	int pass_fds[16], n_pass_fds;
	int foreign[32], n_foreign;
	int null_fd;
	struct confine conf; /* the kernel backstop (confine.c) */
	struct run_identity ident; /* --identity, --dir-order (engine/identity.c) */
	bool no_supervise; /* --supervise off */
	bool supervise_nowaits; /* --supervise clock: real monotonic clock and waits */
	struct supervise sv; /* processes without the shim (supervise.c) */
	uint64_t grace_ns;
	struct hm_allow allow[HM_RUN_MAX_ALLOW];
	uint32_t n_allow;
	const char *allow_specs[HM_RUN_MAX_ALLOW];
	int n_allow_specs;
	char dns_allow[4096];
	struct hm_allow_name names[HM_RUN_MAX_NAMES]; /* --allow NAME: the run's resolver */
	uint32_t n_names;
	char **argv;
	struct boundary bnd; /* --fs, --env, --stragglers, ... (isolate.c) */
	struct enroll_opt opts[ENROLL_MAX_OPTS]; /* non-cfg options, in order */
	size_t n_opts;
	/* --record[=DIR], --keep-passing (record.c) */
	bool record;
	const char *record_dir;
	bool keep_passing;
	bool journal_per_scope; /* --journal-per-scope (record_scopes.c) */
	struct record *rec;
	/* set by replay: variables for CMD after the run's own; no seed line,
	 * no line that repeats the run */
	const char *extra_env[ENROLL_MAX_ENV][2];
	size_t n_extra_env;
	bool quiet_seed;
	bool quiet_repro; /* the caller reports a failure itself */
	/* called once CMD's environment is final, just before it starts */
	void (*before_spawn)(struct enroll *e, void *userdata);
	void *userdata;
	struct run_signals sig; /* SIGINT, SIGTERM, SIGHUP, SIGQUIT (engine/signals.c) */
	/* the run */
	struct hm_client conn; /* to hermeticd (engine/client.h) */
	struct hm_run run;
	int cgroup_fd;
	int events_fd;
	struct run_child child; /* CMD's process (engine/signals.h) */
	int64_t started_ns; /* real wall clock at start */
	int64_t fs_start_ns; /* the real start file times follow (replay: the recorded run's), or 0 */
	uint64_t started_mono;
	uint64_t wall_ns;
	uint32_t killed; /* stragglers killed after CMD exited */
	bool have_audit;
	struct hm_audit audit;
	bool have_report;
	struct hm_report report; /* refusals, as hermeticd counted them */
	char *repro; /* the command line that repeats the run */
	/* --report FILE (report.c): opened before the run, appended after */
	const char *report_path;
	int report_fd;
	const char *connlog_path; /* --connections FILE */
	struct enroll_sched sched; /* --sched (enroll_sched.c) */
	bool audit_syscalls; /* --audit-syscalls: the kernel counts time and entropy syscalls */
	struct enroll_connlog connlog;
	const char *fail_reason; /* hermetic_error.reason of a die() now, if not by status */
	/* the journal kept, if any (record.c) */
	char journal_id[32];
	char journal_file[4352];
	/* the run's clock (engine/vclock.c): its page, B, and what the run
	 * wrote there (refused lookups, waits the lag bound ended) */
	struct run_clock clock;
	/* the daemon connection across a restart of hermeticd (reconnect.c) */
	bool daemon_lost; /* the connection closed; not reclaimed yet */
	bool daemon_restarted; /* reclaimed from a restarted daemon */
	bool daemon_given_up;
	uint64_t daemon_lost_ns, daemon_lost_mono, daemon_last_try;
	uint64_t daemon_restarted_ns, daemon_away_ns, daemon_events_lost;
	char restart_note[160];
};

/* reconnect.c: the descriptor to watch (-1 for none), the poll timeout
 * while reconnecting, what a poll saw on it, a reconnection attempt when
 * due; enroll_daemon_wait waits for the daemon at the end (true: it is
 * there); enroll_daemon_note gives the journal's note, if any. */
int enroll_daemon_pollfd(struct enroll *e);
int enroll_daemon_timeout(struct enroll *e, int timeout_ms);
void enroll_daemon_event(struct enroll *e, short revents);
void enroll_daemon_lost(struct enroll *e);
void enroll_daemon_retry(struct enroll *e);
bool enroll_daemon_wait(struct enroll *e);
void enroll_daemon_note(struct enroll *e, struct enroll_opt *ret_opt);

/* enroll_sched.c: --sched's value (-EINVAL with a reason), its name
 * ("chaos:SEED", "off"), and the daemon's schedule for the run (dies when
 * refused). */
int enroll_sched_parse(const char *arg, struct enroll_sched *ret, char *why, size_t size);
const char *enroll_sched_name(const struct enroll_sched *s, char *buf, size_t size);
void enroll_sched_start(struct enroll *e);
/* A request after the command ended, or the journal's hand-over, that
 * outlives a restart of the daemon while it is out (client_call's returns). */
ssize_t enroll_daemon_call(struct enroll *e, uint16_t type, const void *req, uint32_t len,
			   uint16_t expect, void *rep, size_t rep_size, bool exact, int *ret_fd,
			   const char **ret_msg);
int enroll_daemon_store(struct enroll *e, const struct hm_journal_store *req, int fd,
			const char **ret_msg);



/* Parse enroll's options and CMD from argv (argv[0] is the verb). Dies with
 * EXIT_USAGE on bad usage; prefix names the verb in messages. */
void enroll_parse(struct enroll *e, int argc, char **argv, const char *prefix);

/* Start CMD as configured, wait until the run is over, report. Returns
 * CMD's exit status (128+N for a signal); dies on hermetic's own failures. */
int enroll_run(struct enroll *e);

/* enroll_json.c: open --report FILE (dies on failure, before the run), and
 * append the run's JSON document to it. */
void enroll_json_open(struct enroll *e);
/* From here until enroll_json_write, a die() of hermetic's own appends a
 * line with hermetic_error to the report (opened then if need be). */
void enroll_json_arm(struct enroll *e);
void enroll_json_write(struct enroll *e, int code);
/* --print-boundary: the boundary's JSON line on stderr (dies on ENOMEM). */
void enroll_print_boundary(struct enroll *e);

/* Time and entropy syscalls of a process with the shim that reached the
 * kernel although the run meant to control them. */
uint64_t enroll_uncontrolled_calls(const struct enroll *e, const struct hm_audit_proc *p);

/* connlog.c: --connections FILE opened before the run (dies with 73 when it
 * cannot be written); while CMD runs, the poll timeout and a fetch when one
 * is due; at the end the rest and the end line (daemon: it is reachable). */
void connlog_open(struct enroll *e);
int connlog_timeout(struct enroll *e, int timeout_ms);
void connlog_tick(struct enroll *e);
void connlog_finish(struct enroll *e, bool daemon);

/* engine/inherited.c: before the fork, find the inet, inet6 and packet
 * sockets CMD would inherit (each named through eng_warn; -errno), and, in
 * the child, put /dev/null in their place. */
int enroll_find_foreign_sockets(struct enroll *e, struct eng_error *err);
int enroll_drop_foreign_sockets(const struct enroll *e);

/* engine/launch.c: start CMD inside the run (clone3 into its cgroup, or a
 * child that asks the daemon to adopt it), confined (confine.c), before its
 * first instruction. -errno on failure (e->child.exec_err set when it was
 * CMD's exec that failed); a signal that cancels the run before the exec
 * kills the child and returns 0 (e->sig.cancel, e->child.cmd_started
 * false). */
int enroll_launch(struct enroll *e, struct eng_error *err);



/* enroll_report.c, once the run is over: refused connections; the kernel's
 * audit (fetched into e->audit) and what escaped the shim; the command line
 * that repeats a run that exited with code. */
void enroll_print_refusals(struct enroll *e);
/* The refusals of e->report (already read), in one line. */
void enroll_show_refusals(struct enroll *e);
/* A refusal's destination ("1.2.3.4:80", "unix socket") and process name. */
void enroll_refusal_names(const struct hm_refusal *r, char *addr, size_t size, char comm[17]);
void enroll_fetch_audit(struct enroll *e);
/* The report (its refusals printed), the audit (into e->audit, printed)
 * and the run's end (RUN_END, kept: HM_END_KEEP) asked of hermeticd in one
 * hand-off. False when the end is still to be asked (run_end): the
 * connection was lost, and the daemon waited for, meanwhile. */
bool enroll_report_and_end(struct enroll *e, bool kept);
void enroll_print_audit(struct enroll *e);
void enroll_build_repro(struct enroll *e);

#endif
