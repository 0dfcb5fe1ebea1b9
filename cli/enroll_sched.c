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
	} else if (n == 6 && !strncmp(arg, "serial", 6)) {
		s.mode = HM_SCHED_SERIAL;
	} else {
		snprintf(why, size, "expected chaos[:SEED], serial[:SEED] or off");
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
		snprintf(buf, size, "%s:%" PRIu64, s->mode == HM_SCHED_SERIAL ? "serial" : "chaos",
			 s->seed);
	return buf;
}

/* The CPUs in set as "0-3,8", for the shim (preload/sched.c). Empty when
 * too many to say. */
static void cpu_list(const cpu_set_t *set_, char *buf, size_t size)
{
	const cpu_set_t set = *set_;
	size_t used = 0;

	buf[0] = 0;
	for (int i = 0; i < CPU_SETSIZE; i++) {
		int j = i;

		if (!CPU_ISSET(i, &set))
			continue;
		while (j + 1 < CPU_SETSIZE && CPU_ISSET(j + 1, &set))
			j++;
		used += (size_t)snprintf(buf + used, used < size ? size - used : 0,
					 j > i ? "%s%d-%d" : "%s%d", used ? "," : "", i, j);
		if (used >= size) {
			buf[0] = 0; /* too many to say: the shim leaves the kernel's */
			return;
		}
		i = j;
	}
}

int enroll_sched_start(struct enroll *e, struct cli_fail *f)
{
	struct hm_run_sched req = { .run_id = e->run.run_id, .mode = e->sched.mode };
	const char *msg = NULL;
	char name[64];
	ssize_t n;

	if (!e->sched.mode)
		return 0;
	if (!e->sched.seed_set)
		e->sched.seed = e->cfg.seed; /* repeats with --seed */
	req.seed = e->sched.seed;
	{
		char v[32];

		/* The shim's start offsets (preload/sched.c). */
		char cpus[1024];
		cpu_set_t set;

		snprintf(v, sizeof(v), "%" PRIu64, e->sched.seed);
		setenv(HM_ENV_SCHED_SEED, v, 1);
		if (e->sched.mode == HM_SCHED_SERIAL)
			setenv(HM_ENV_SCHED_MODE, "serial", 1);
		/* What the run's tasks would have had without the pinning: the
		 * shim and the supervisor answer sched_getaffinity with it, so
		 * that nproc, GOMAXPROCS and the like see the machine they
		 * would have seen (the schedule is the only thing changed). */
		if (sched_getaffinity(0, sizeof(set), &set) == 0) {
			cpu_list(&set, cpus, sizeof(cpus));
			if (cpus[0])
				setenv(HM_ENV_SCHED_CPUS, cpus, 1);
			supervise_set_sched_cpus(&e->sv, &set);
		}
	}
	n = client_call(&e->conn, HM_REQ_RUN_SCHED, &req, sizeof(req), -1, HM_REP_OK, NULL, 0, false,
			NULL, &msg);
	if (n < 0 && !e->conn.daemon_said) /* the transport (as cli_call) */
		return cli_fail(f, EXIT_INTERNAL, "%s", e->conn.why);
	if (n < 0)
		return cli_fail(f, EXIT_INTERNAL, "hermeticd refused --sched %s: %s",
				enroll_sched_name(&e->sched, name, sizeof(name)),
				msg ? msg : "no answer");
	if (!e->caller.quiet_seed)
		warnx_("sched %s: %s (pass --sched %s to repeat its decisions)",
		       enroll_sched_name(&e->sched, name, sizeof(name)),
		       e->sched.mode == HM_SCHED_SERIAL
			       ? "the run's threads one at a time on one CPU, in seeded priority order"
		       : hm_sched_spread(e->sched.seed)
			       ? "the run on every CPU at one real-time priority, starts lined up"
			       : "the run on one CPU under seeded real-time priorities",
		       name);
	return 0;
}
