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
#include "reconnect.h"


#define DEFAULT_GRACE_NS 2000000000ULL

struct record;
struct cli_fail; /* cli.h */
struct hm_vclock;

/* An option as given, for the journal: name without dashes, value NULL for
 * a flag. The run's clock/entropy/network settings are in cfg instead. */
struct enroll_opt {
	const char *name;
	const char *value;
};

#define ENROLL_MAX_OPTS 512
#define ENROLL_MAX_ENV 8

/* enroll --report FILE (enroll_json.c): opened before the run, appended
 * after; armed, a failure of enroll's own gets a line (enroll_die) */
struct enroll_report_out {
	const char *path;
	int fd;
	bool armed;
	pid_t armed_pid; /* only the process that armed it writes the line */
};

/* enroll --connections FILE (connlog.c) */
struct enroll_connlog {
	const char *path;
	int fd; /* -1: no log */
	uint64_t next_ns; /* next fetch (CLOCK_MONOTONIC) */
	uint64_t lines;
	uint64_t attempts[4]; /* by HM_VERDICT_* */
	uint64_t refused, kernel_dropped, daemon_dropped; /* the daemon's last counts */
	bool fetch_err;
	int write_err;
};

/* --allow: the destinations as given (for the journal and the repro
 * line), resolved to addresses, and the names the run's resolver answers */
struct enroll_allow {
	const char *specs[HM_RUN_MAX_ALLOW];
	int n_specs;
	struct hm_allow addrs[HM_RUN_MAX_ALLOW];
	uint32_t n_addrs;
	struct hm_allow_name names[HM_RUN_MAX_NAMES]; /* --allow NAME: the run's resolver */
	uint32_t n_names;
	char dns[4096]; /* the names, comma-separated, for the shim (HM_ENV_DNS_ALLOW) */
};

/* engine/inherited.c: network sockets from enroll's parent. --pass-fd N
 * names those CMD keeps; the others are /dev/null in the run. */
struct enroll_inherited {
	int pass[16], n_pass;
	int foreign[32], n_foreign;
	int null_fd;
};

/* --record[=DIR], --keep-passing, --journal-per-scope (engine/record.c,
 * record_scopes.c), and the journal kept, if any */
struct enroll_recording {
	bool on;
	const char *dir;
	bool keep_passing;
	bool per_scope;
	char journal_id[32];
	char journal_file[4352];
};

/* Set by a verb that runs through enroll's run (replay): variables for
 * CMD after the run's own; no seed line, no line that repeats the run; a
 * call once CMD's environment is final, just before it starts. */
struct enroll;
struct enroll_caller {
	const char *extra_env[ENROLL_MAX_ENV][2];
	size_t n_extra_env;
	bool quiet_seed;
	bool quiet_repro; /* the caller reports a failure itself */
	void (*before_spawn)(struct enroll *e, void *userdata);
	void *userdata;
};

/* What a run came to, once it is over: its wall time, the stragglers
 * killed, the kernel's audit and the refusals as hermeticd counted them
 * (have_*: the daemon answered). */
struct enroll_end {
	uint64_t wall_ns;
	uint32_t killed; /* stragglers killed after CMD exited */
	bool have_audit;
	struct hm_audit audit;
	bool have_refusals;
	struct hm_report refusals;
};

/* --sched: HM_SCHED_CHAOS, HM_SCHED_SERIAL or 0 (off); the seed, the run's own unless set. */
struct enroll_sched {
	uint32_t mode;
	bool seed_set;
	uint64_t seed;
};

struct enroll {
	struct hm_config cfg;
	bool parsed; /* enroll_parse is done: seed and start time are final (the
		      * time once enroll_settle_now ran, where now_later) */
	enum now_source now_src; /* where cfg.now_ns came from */
	bool now_later; /* the verb reads HEAD's time after parsing (enroll_settle_now) */
	bool now_pending; /* ... and has not yet: cfg.now_ns is not final */
	bool no_daemon;
	bool unconfined; /* --confine off */
	bool raw_sockets; /* --raw-sockets: root keeps CAP_NET_RAW */
	struct enroll_inherited inh; /* --pass-fd (engine/inherited.c) */
	struct confine conf; /* the kernel backstop (confine.c) */
	bool launch_planned; /* enroll_launch_plan is done (launch.c) */
	struct run_identity ident; /* --identity, --dir-order (engine/identity.c) */
	bool no_supervise; /* --supervise off */
	bool supervise_nowaits; /* --supervise clock: real monotonic clock and waits */
	struct supervise sv; /* processes without the shim (supervise.c) */
	uint64_t grace_ns;
	struct enroll_allow allow; /* --allow (enroll_allow.c) */
	char **argv;
	struct boundary bnd; /* --fs, --env, --stragglers, ... (isolate.c) */
	struct enroll_opt opts[ENROLL_MAX_OPTS]; /* non-cfg options, in order */
	size_t n_opts;
	struct enroll_recording recording; /* --record[=DIR] and the journal kept */
	struct record *rec; /* the recording under way (engine/record.c) */
	struct enroll_caller caller; /* what replay sets */
	struct run_signals sig; /* SIGINT, SIGTERM, SIGHUP, SIGQUIT (engine/signals.c) */
	/* the run */
	struct hm_client conn; /* to hermeticd (engine/client.h) */
	int create_sent; /* RUN_CREATE's send: its sequence number, or -errno */
	struct hm_run run;
	int cgroup_fd;
	int events_fd;
	struct run_child child; /* CMD's process (engine/signals.h) */
	int64_t started_ns; /* real wall clock at start */
	int64_t fs_start_ns; /* the real start file times follow (replay: the recorded run's), or 0 */
	uint64_t started_mono;
	struct enroll_end end; /* what the run came to (enroll_report.c) */
	char *repro; /* the command line that repeats the run */
	struct enroll_report_out report_out; /* --report FILE (enroll_json.c) */
	struct enroll_sched sched; /* --sched (enroll_sched.c) */
	bool audit_syscalls; /* --audit-syscalls: the kernel counts time and entropy syscalls */
	struct enroll_connlog connlog;
	const char *fail_reason; /* hermetic_error.reason of a failure now, if not by status */
	/* the run's clock (engine/vclock.c): its page, B, and what the run
	 * wrote there (refused lookups, waits the lag bound ended) */
	struct run_clock clock;
	/* the daemon connection across a restart of hermeticd (engine/reconnect.c) */
	struct run_reconnect daemon;
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
 * ("chaos:SEED", "off"), and the daemon's schedule for the run (-1 with f
 * filled when refused). */
int enroll_sched_parse(const char *arg, struct enroll_sched *ret, char *why, size_t size);
const char *enroll_sched_name(const struct enroll_sched *s, char *buf, size_t size);
int enroll_sched_start(struct enroll *e, struct cli_fail *f);
/* A request after the command ended, or the journal's hand-over, that
 * outlives a restart of the daemon while it is out (client_call's returns). */
ssize_t enroll_daemon_call(struct enroll *e, uint16_t type, const void *req, uint32_t len,
			   uint16_t expect, void *rep, size_t rep_size, bool exact, int *ret_fd,
			   const char **ret_msg);
int enroll_daemon_store(struct enroll *e, const struct hm_journal_store *req, int fd,
			const char **ret_msg);



/* Parse enroll's options and CMD from argv (argv[0] is the verb). Exits
 * with EXIT_USAGE on bad usage (prefix names the verb in messages); -1 with
 * f filled when what the options leave open cannot be settled (a --report
 * line is due then: enroll_die). */
int enroll_parse(struct enroll *e, int argc, char **argv, const char *prefix, struct cli_fail *f);
/* With e->now_later set before enroll_parse, the start time that no --now
 * or SOURCE_DATE_EPOCH gave (HEAD's commit time, else the release's) is
 * read here instead, once, when the verb has a moment for it (cli/enroll.c:
 * while hermeticd makes the run); a no-op when it was read already. */
void enroll_settle_now(struct enroll *e);

/* Start CMD as configured, wait until the run is over, report. Returns
 * CMD's exit status (128+N for a signal), or -1 with f filled on
 * hermetic's own failure (the caller ends with enroll_die). */
int enroll_run(struct enroll *e, struct cli_fail *f);

/* enroll_json.c: open --report FILE (-1 with f filled on failure, before
 * the run; that failure gets no line), and append the run's JSON document
 * to it. */
int enroll_json_open(struct enroll *e, struct cli_fail *f);
/* From here until enroll_json_write, enroll_die appends a line with
 * hermetic_error to the report (opened then if need be). */
void enroll_json_arm(struct enroll *e);
void enroll_json_write(struct enroll *e, int code);
/* The one end of an enroll that failed itself: "hermetic: MSG", the
 * --report line when armed, exit with f's status. */
void enroll_die(struct enroll *e, const struct cli_fail *f) __attribute__((noreturn));
/* --print-boundary: the boundary's JSON line on stderr (-1, f: ENOMEM). */
int enroll_print_boundary(struct enroll *e, struct cli_fail *f);

/* Time and entropy syscalls of a process with the shim that reached the
 * kernel although the run meant to control them. */
uint64_t enroll_uncontrolled_calls(const struct enroll *e, const struct hm_audit_proc *p);

/* connlog.c: --connections FILE opened before the run (-1 with f filled,
 * status 73, when it cannot be written; that failure gets no --report
 * line); while CMD runs, the poll timeout and a fetch when one is due
 * (-ENOMEM); at the end the rest and the end line (daemon: it is
 * reachable; -1 with f filled on ENOMEM). */
int connlog_open(struct enroll *e, struct cli_fail *f);
int connlog_timeout(struct enroll *e, int timeout_ms);
int connlog_tick(struct enroll *e);
int connlog_finish(struct enroll *e, bool daemon, struct cli_fail *f);

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
/* The part of the launch's preparation that needs no run (the
 * confinement's plan, the inherited sockets; -errno, -EPERM when this
 * machine cannot confine the run): a verb may call it while hermeticd
 * makes the run (cli/enroll.c); enroll_launch does, unless it was. */
int enroll_launch_plan(struct enroll *e, struct eng_error *err);



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
int enroll_build_repro(struct enroll *e); /* -ENOMEM: e->repro stays NULL */

#endif
