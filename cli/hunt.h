/* SPDX-License-Identifier: MIT */
/*
 * hermetic hunt: run a command under many seeds, group its failures, verify
 * each one's reproduction and name the axis that causes it.
 *
 * hunt.c parses and drives; hunt_run.c runs tries (hunt_run_one is the one
 * place a try is run: today a child 'hermetic enroll', later the engine in
 * process); hunt_axes.c derives each try's settings from the hunt seed;
 * hunt_stats.c groups failures and computes rates; hunt_cause.c reruns a
 * failure one axis at a time; hunt_report.c prints and reads reports.
 */
#ifndef HERMETIC_CLI_HUNT_H
#define HERMETIC_CLI_HUNT_H

#include <regex.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Axes a try draws from its seed (--vary) and a cause can name. */
enum {
	HUNT_AX_ENTROPY = 1 << 0, /* the seed of every random byte */
	HUNT_AX_CLOCK = 1 << 1, /* the virtual clock's start (--now) */
	HUNT_AX_TICK = 1 << 2, /* the clock's advance per busy reading (--tick) */
	HUNT_AX_IDENTITY = 1 << 3, /* the machine: CPU count and time zone (--identity) */
	/* the identity's two parts, as causes (never in --vary) */
	HUNT_AX_ID_CPUS = 1 << 4,
	HUNT_AX_ID_TZ = 1 << 5,
	HUNT_AX_SCHED = 1 << 6, /* the schedule (--sched chaos:SEED or serial:SEED) */
	/* --vary sched=chaos, sched=serial: the modes a try draws (neither:
	 * both, serial for 1 try in 4) */
	HUNT_AX_SCHED_CHAOS = 1 << 7,
	HUNT_AX_SCHED_SERIAL = 1 << 8,
};
/* What cause analysis varies one at a time: entropy, clock, tick, the
 * identity's CPU count, its time zone, the schedule (hunt_cause.c). */
#define HUNT_CAUSES 6
#define HUNT_CAUSE_SCHED 5 /* the schedule's index among them */
#define HUNT_AX_DEFAULT (HUNT_AX_ENTROPY | HUNT_AX_CLOCK)
#define HUNT_MAX_SEEDS 8 /* seeds listed per failure */
#define HUNT_LINE 256
#define HUNT_MAX_ARGS 1024 /* CMD's arguments */

/* What one try runs with: what 'hermetic enroll' is given. */
struct hunt_settings {
	uint64_t seed;
	int64_t now_ns;
	uint64_t tick_ns; /* 0 with tick_set false: enroll's default */
	bool tick_set;
	unsigned id_cpus; /* 0: no --identity (identity not varied) */
	char id_tz[48];
	uint64_t sched_seed; /* --sched chaos:SEED (serial:SEED) when sched_set */
	bool sched_set;
	bool sched_serial; /* serial, not chaos */
};

enum hunt_kind {
	HUNT_PASS,
	HUNT_EXIT, /* CMD exited non-zero (or died of a signal) */
	HUNT_TIMEOUT, /* --timeout of real time passed */
	HUNT_OUTPUT, /* --fail-if matched a line of its output */
	HUNT_ERROR, /* hermetic's own failure: the hunt stops */
};

struct hunt_result {
	enum hunt_kind kind;
	int status; /* enroll's exit status */
	char last[HUNT_LINE]; /* the last line of CMD's output (or the matching one) */
	char key[HUNT_LINE + 64]; /* kind, status and the masked line: the group */
	char journal[4096]; /* kept journal file, or "" */
	char output[4096]; /* kept output file, or "" */
	char error[512]; /* HUNT_ERROR: hermetic's message */
	uint64_t duration_ms;
};

/* One try: its place in the seed space, its settings and what it did. */
struct hunt_try {
	uint64_t index;
	struct hunt_settings s;
	struct hunt_result r;
	bool done;
	bool keep; /* keep its output and journal when it fails */
};

/* What cause analysis found for one failure (hunt_cause.c). */
struct hunt_cause {
	bool done;
	uint64_t index; /* the try it analysed */
	unsigned verified, verify_runs; /* reruns that failed the same way */
	unsigned flips[HUNT_CAUSES], tried[HUNT_CAUSES]; /* per axis (HUNT_CAUSES): passing variants */
	int state; /* 1: an earlier passing try fails now; 0: it passes; -1: not checked */
	char flipped_at[HUNT_LINE]; /* a clock variant that passed, "" */
	char cause[1024]; /* one line: "randomness (entropy)", ... */
};

/* A distinct failure: tries with the same key. */
struct hunt_group {
	char key[HUNT_LINE + 64];
	enum hunt_kind kind;
	int status;
	char last[HUNT_LINE];
	uint64_t count;
	struct hunt_try *first; /* the lowest index (the one analysed) */
	uint64_t seeds[HUNT_MAX_SEEDS];
	unsigned n_seeds;
	struct hunt_cause c;
};

/* hunt merge: an analysis read from a report */
struct hunt_cause_line {
	char key[HUNT_LINE + 64];
	struct hunt_cause c;
};

struct hunt {
	char **argv; /* CMD */
	uint64_t runs;
	unsigned jobs;
	bool until_fail;
	uint64_t budget_ns, timeout_ns;
	const char *fail_if_src;
	regex_t fail_if;
	uint64_t hunt_seed;
	unsigned vary;
	unsigned verify;
	unsigned shard_i, shard_n; /* 1-based; 1/1: everything */
	const char *report_path;
	bool json;
	char dir[4096]; /* where outputs and journals of failing tries go */
	bool dir_given; /* --keep DIR: never removed */
	int64_t base_now; /* the start time when the clock is not varied */
	uint64_t base_tick;
	bool base_tick_set;
	char zone[64]; /* the time zone runs see (TZ or /etc/localtime) */
	char self[4096]; /* this hermetic binary */
	/* the tries of this hunt, in index order */
	struct hunt_try *tries;
	size_t n_tries;
	uint64_t elapsed_ns;
	uint64_t started_ns;
	bool stopped; /* --until-fail or --budget ended it early */
	const char *stop_reason;
	struct hunt_group *groups;
	size_t n_groups;
	uint64_t runs_done, failures;
	char new_entries[256]; /* entries of the cwd the hunt's runs created */
	/* hunt merge */
	char *command_json; /* the first report's command, to compare */
	const char *first_report;
	struct hunt_cause_line *causes;
	size_t n_causes;
};

/* hunt_run.c: run one try with settings s, synchronously (thread-safe):
 * its files are named after tag in h->dir and kept only when it fails and
 * keep is set. Returns 0, or -errno when the try could not be started. */
int hunt_run_one(const struct hunt *h, const struct hunt_settings *s, const char *tag, bool keep,
		 struct hunt_result *ret);
/* Run tries[0..n) with h->jobs at once; progress on stderr when progress
 * is set; honours --until-fail and --budget when stoppable. Returns the
 * number run. */
size_t hunt_run_batch(struct hunt *h, struct hunt_try *tries, size_t n, bool progress,
		      bool stoppable);
/* Remove the per-try files of a passing try (the record directory). */
void hunt_run_cleanup(const struct hunt *h, const char *tag);

/* hunt_axes.c */
int hunt_axes_parse(const char *list, unsigned *ret, char *why, size_t size);
const char *hunt_axes_name(unsigned axes, char *buf, size_t size);
void hunt_axes_init(struct hunt *h); /* the clock's interesting instants, the zone */
void hunt_draw(const struct hunt *h, uint64_t index, struct hunt_settings *ret);
/* Variants of s that change only axis (one HUNT_AX_*): up to max into out. */
size_t hunt_variants(const struct hunt *h, const struct hunt_settings *s, uint64_t index,
		     unsigned axis, struct hunt_settings *out, size_t max);
/* What is special about a start time: "last day of a month", ... or "". */
void hunt_describe_time(int64_t ns, char *buf, size_t size);
uint64_t hunt_mix(uint64_t a, uint64_t b);

/* hunt_stats.c */
/* The square root hunt_wilson takes, without libm. */
double hunt_sqrt(double x);
void hunt_wilson(uint64_t k, uint64_t n, double *lo, double *hi);
void hunt_mask(const char *line, char *out, size_t size);
void hunt_key(struct hunt_result *r);
/* Group h->tries' failures into h->groups (first-seen order of index). */
void hunt_group(struct hunt *h);

/* hunt_cause.c: verify and analyse every group. */
void hunt_analyse(struct hunt *h);
/* The names in the working directory before the tries (NULL-terminated);
 * after them, those that are new into h->new_entries (before is freed). */
char **hunt_cwd_names(void);
void hunt_cwd_new(struct hunt *h, char **before);

/* hunt_report.c */
/* "hermetic enroll --seed S --now T [--tick K] -- CMD", shell-quoted */
/* hunt_axes.c: the try's --identity SPEC, "" for none */
void hunt_identity_spec(const struct hunt_settings *s, char *buf, size_t size);
void hunt_repro(const struct hunt *h, const struct hunt_settings *s, char *buf, size_t size);
void hunt_quote(const char *arg, char *buf, size_t size);
/* ISO 8601 UTC, what --now takes */
const char *hunt_format_now(int64_t ns, char *buf, size_t size);
const char *hunt_kind_name(enum hunt_kind k);
void hunt_print(const struct hunt *h, FILE *f);
void hunt_print_json(const struct hunt *h, FILE *f);
int hunt_report_write(const struct hunt *h, const char *path);
/* hunt_merge.c: read a report into h (tries and analyses); 0, or -errno
 * with why set (-EXDEV: another command's hunt). hunt_merge_finish
 * groups the tries and gives each failure its analysis. */
int hunt_report_read(struct hunt *h, const char *path, char *why, size_t size);
void hunt_merge_finish(struct hunt *h);

/* "chaos" or "serial": the mode of s's --sched */
const char *hunt_sched_mode(const struct hunt_settings *s);

int cmd_hunt(int argc, char **argv);

#endif
