/* SPDX-License-Identifier: MIT */
/*
 * The run's clock as the engine holds it (vclock.c): the page, where B
 * lies, and what the run wrote into the page about itself, read at its end
 * for the verb's report.
 */
#ifndef HERMETIC_ENGINE_VCLOCK_H
#define HERMETIC_ENGINE_VCLOCK_H

#include <stdbool.h>
#include <stdint.h>
#include "config.h"
#include "engine.h"

struct hm_vclock;

/* One wait the lag bound ended, as the run logged it. */
struct run_lag {
	char process[64]; /* lineage key */
	uint32_t thread;
	char what[16];
	double virt_s, real_s, clock_s;
};

struct run_clock {
	/* hermeticd's page (the verb puts the descriptor it was sent here),
	 * or (--no-daemon, --clock off) a memfd of ours; CMD inherits page_fd */
	int page_fd;
	char page_env[64]; /* HERMETIC_CLOCK_FD's value */
	struct hm_vclock *vc;
	int64_t mono0; /* the run's monotonic clock at start */
	/* The line between file times from before the run and those it causes,
	 * read when the process starts (0: none). line_passed: a fine stamp
	 * raised the kernel's floor above it at once; otherwise the child
	 * waits for the kernel's coarse clock to pass it just before its exec. */
	int64_t files_since;
	bool line_passed;
	int64_t *waited_ns; /* HERMETIC_DEBUG=phases: the child's wait (shared) */
	int64_t coarse_tick_ns; /* resolution of CLOCK_REALTIME_COARSE */
	/* read from the page once the command ended (what the run says) */
	bool have_dns; /* the count of refused lookups was read */
	uint64_t dns_refused;
	char dns_first[4][64];
	bool nested_refused; /* an enroll inside the run refused to start */
	uint64_t lag_fires; /* waits the lag bound ended */
	int n_lag;
	struct run_lag lag[16];
};

/* B, as the first thing enroll or replay does. */
void run_clock_mark_start(void);
/* No page yet; B: that moment. */
void run_clock_init(struct run_clock *c);
/* Map the page (own_page: make one of ours first) and set the run's seed,
 * start and lag bound in it from cfg. 0, or -errno with the reason in err. */
int run_clock_setup(struct run_clock *c, bool own_page, const struct hm_config *cfg,
		    struct eng_error *err);
/* In the child, before its exec: until the line B is passed. */
void run_clock_wait_files(const struct run_clock *c);
/* HERMETIC_DEBUG=phases: how the line was passed, a note under the phases. */
void run_clock_note_line(const struct run_clock *c);
/* An enroll inside a run that refuses to start marks the run's page. */
void run_clock_mark_nested(void);
/* After CMD ended: the name lookups the shim refused (one warning when
 * there were any), and the waits the lag bound ended (a warning each, for
 * the first five). */
void run_clock_read_dns(struct run_clock *c);
void run_clock_read_lag(struct run_clock *c, const struct hm_config *cfg);
/* Unmap and close the page (HERMETIC_DEBUG=waits: the keeper's counters). */
void run_clock_finish(struct run_clock *c, const struct hm_config *cfg);

#endif
