// SPDX-License-Identifier: MIT
/*
 * enroll --sched: its value, and asking hermeticd for the run's schedule
 * (daemon/chaos.c; docs/scheduling.md). "chaos" alone takes the run's
 * seed, so --seed N repeats the schedule's decisions as well.
 */
#include <inttypes.h>
#include "util.h"
#include "config.h"
#include "cli.h"
#include "enroll.h"
#include "enroll_opts.h"

int enroll_sched_parse(const char *arg, struct enroll_sched *ret, char *why, size_t size)
{
	const char *colon = strchr(arg, ':');
	size_t n = colon ? (size_t)(colon - arg) : strlen(arg);
	struct enroll_sched s = {};

	if (n == 3 && !strncmp(arg, "off", 3) && !colon) {
		*ret = s;
		return 0;
	}
	if (n == 5 && !strncmp(arg, "chaos", 5)) {
		s.mode = HM_SCHED_CHAOS;
	} else {
		snprintf(why, size, "expected chaos[:SEED] or off");
		return -EINVAL;
	}
	if (colon) {
		char *end;
		unsigned long long v;

		errno = 0;
		v = strtoull(colon + 1, &end, 10);
		if (!colon[1] || *end || errno || colon[1] == '-') {
			snprintf(why, size, "SEED must be a number (0 to 2^64-1)");
			return -EINVAL;
		}
		s.seed = v;
		s.seed_set = true;
	}
	*ret = s;
	return 0;
}

const char *enroll_sched_name(const struct enroll_sched *s, char *buf, size_t size)
{
	if (!s->mode)
		snprintf(buf, size, "off");
	else
		snprintf(buf, size, "chaos:%" PRIu64, s->seed);
	return buf;
}

void enroll_sched_start(struct enroll *e)
{
	struct hm_run_sched req = { .run_id = e->run.run_id, .mode = e->sched.mode };
	const char *msg = NULL;
	char name[64];

	if (!e->sched.mode)
		return;
	if (!e->sched.seed_set)
		e->sched.seed = e->cfg.seed; /* repeats with --seed */
	req.seed = e->sched.seed;
	{
		char v[32];

		/* The shim's start offsets (preload/sched.c). */
		snprintf(v, sizeof(v), "%" PRIu64, e->sched.seed);
		setenv(HM_ENV_SCHED_SEED, v, 1);
	}
	if (cli_call(&e->conn, HM_REQ_RUN_SCHED, &req, sizeof(req), -1, HM_REP_OK, NULL, 0, false,
		     NULL, &msg) < 0)
		die(EXIT_INTERNAL, "hermeticd refused --sched %s: %s",
		    enroll_sched_name(&e->sched, name, sizeof(name)), msg ? msg : "no answer");
	if (!e->quiet_seed)
		warnx_("sched %s: %s (pass --sched %s to repeat its decisions)",
		       enroll_sched_name(&e->sched, name, sizeof(name)),
		       hm_sched_spread(e->sched.seed)
			       ? "the run on every CPU at one real-time priority, starts lined up"
			       : "the run on one CPU under seeded real-time priorities",
		       name);
}
