// SPDX-License-Identifier: MIT
/*
 * What enroll says when a run is over: refused connections, what escaped
 * the shim (the kernel's audit), and the command line that repeats a failed
 * run.
 */
#include <inttypes.h>
#include "util.h"
#include "config.h"
#include "cli.h"
#include "enroll.h"

void enroll_refusal_names(const struct hm_refusal *r, char *addr, size_t size, char comm[17])
{
	memcpy(comm, r->comm, 16);
	comm[16] = 0;
	if (r->family == 1)
		snprintf(addr, size, "unix socket");
	else
		hm_addr_str(r->addr, r->port, addr, size);
}

void enroll_print_refusals(struct enroll *e)
{
	struct hm_run_ref ref = { .run_id = e->run.run_id };
	const char *msg = NULL;

	if (enroll_daemon_call(e, HM_REQ_RUN_REPORT, &ref, sizeof(ref), HM_REP_REPORT, &e->end.refusals,
			       sizeof(e->end.refusals), true, NULL, &msg) < 0) {
		warnx_("cannot read the run's report: %s", msg);
		return;
	}
	e->end.have_refusals = true;
	enroll_show_refusals(e);
}

void enroll_show_refusals(struct enroll *e)
{
	const struct hm_report rep = e->end.refusals;
	char line[1024] = "", a[64];

	if (!rep.refused)
		return;
	for (uint32_t i = 0; i < rep.n && i < HM_REPORT_MAX && i < 4; i++) {
		const struct hm_refusal *r = &rep.first[i];
		size_t used = strlen(line);
		char comm[17], times[16] = "";

		enroll_refusal_names(r, a, sizeof(a), comm);
		if (!comm[0])
			snprintf(comm, sizeof(comm), "pid unknown");
		/* Its own buffer: the process name is still to be printed. */
		if (r->count > 1)
			snprintf(times, sizeof(times), " x%u", r->count);
		snprintf(line + used, sizeof(line) - used, "%s%s%s (%s)%s", i ? ", " : "",
			 r->op == 2 ? "sendto " : r->op == 3 ? "packet to " : r->op == 4 ? "join of " : "", a, comm, times);
	}
	/* --network audit: the same list, of what block would have refused. */
	warnx_("%s %" PRIu64 " connection%s: %s%s",
	       e->cfg.network == HM_NETWORK_AUDIT ? "audit: --network block would have refused"
						  : "refused",
	       rep.refused, rep.refused == 1 ? "" : "s",
	       line, rep.n > 4 ? ", ..." : "");
}

#define APPEND(...)                                                                               \
	do {                                                                                       \
		if (used < sizeof(line))                                                           \
			used += snprintf(line + used, sizeof(line) - used, __VA_ARGS__);           \
	} while (0)
/* One argument, single-quoted unless plainly safe for a shell. */
#define APPEND_ARG(a)                                                                             \
	do {                                                                                       \
		const char *_a = (a);                                                              \
		if (*_a && strspn(_a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"          \
				      "0123456789-_./=:,+@%") == strlen(_a)) {                     \
			APPEND(" %s", _a);                                                         \
			break;                                                                     \
		}                                                                                  \
		APPEND(" '");                                                                      \
		for (const char *_c = _a; *_c; _c++)                                               \
			APPEND(*_c == '\'' ? "'\\''" : "%c", *_c);                                  \
		APPEND("'");                                                                       \
	} while (0)

/* Coverage: what the kernel saw that the shim did not control. One line,
 * only when something escaped. */
void enroll_fetch_audit(struct enroll *e)
{
	struct hm_run_ref ref = { .run_id = e->run.run_id };
	const char *msg = NULL;

	if (enroll_daemon_call(e, HM_REQ_RUN_AUDIT, &ref, sizeof(ref), HM_REP_AUDIT, &e->end.audit,
			       sizeof(e->end.audit), true, NULL, &msg) < 0) {
		warnx_("cannot read the run's audit: %s", msg);
		return;
	}
	e->end.have_audit = true;
}

uint64_t enroll_uncontrolled_calls(const struct enroll *e, const struct hm_audit_proc *p)
{
	return (e->cfg.rng ? p->getrandom + p->random_reads : 0) +
	       (e->cfg.clock_virtual ? p->clock : 0);
}

void enroll_print_audit(struct enroll *e)
{
	const struct hm_audit *ap = &e->end.audit;
	char line[1024] = "";
	size_t used = 0;
	uint64_t bypass = 0;

	if (e->end.have_audit && e->sched.mode == HM_SCHED_SERIAL && ap->sched_spun)
		warnx_("sched serial: %u task%s ran 0.2 s of CPU without blocking and went below "
		       "the rest of the run (so as not to starve them): from then on the run was "
		       "not serial, and its order not the seed's alone",
		       ap->sched_spun, ap->sched_spun == 1 ? "" : "s");
	if (!e->cfg.clock_virtual && !e->cfg.rng)
		return; /* nothing was meant to be controlled */
	if (!e->end.have_audit)
		return;
	for (uint32_t i = 0; i < ap->n && i < HM_AUDIT_MAX; i++) {
		const struct hm_audit_proc *p = &ap->procs[i];
		uint64_t calls = enroll_uncontrolled_calls(e, p);
		char comm[17];

		memcpy(comm, p->comm, 16);
		comm[16] = 0;
		if (!p->shim && (e->audit_syscalls || e->recording.on)) {
			used += snprintf(line + used, sizeof(line) - used > 0 ? sizeof(line) - used : 0,
					 "%s%s (pid %u, %u getrandom, %u clock syscalls)",
					 used ? "; " : "", p->path[0] ? p->path : comm, p->pid,
					 p->getrandom + p->random_reads, p->clock);
		} else if (!p->shim) {
			/* (its syscalls were not counted: --audit-syscalls) */
			used += snprintf(line + used, sizeof(line) - used > 0 ? sizeof(line) - used : 0,
					 "%s%s (pid %u)", used ? "; " : "", p->path[0] ? p->path : comm,
					 p->pid);
		} else {
			bypass += calls;
		}
		if (used >= sizeof(line))
			break;
	}
	if (!ap->without_shim && !bypass && !ap->dropped)
		return;
	if (ap->without_shim)
		warnx_("coverage: %" PRIu64 " of %" PRIu64 " process%s ran without the shim: %s",
		       ap->without_shim, ap->processes, ap->processes == 1 ? "" : "es", line);
	if (bypass)
		warnx_("coverage: %" PRIu64 " raw time/entropy syscall%s bypassed the shim", bypass,
		       bypass == 1 ? "" : "s");
	if (ap->dropped)
		warnx_("coverage: the kernel could not deliver %" PRIu64 " event%s", ap->dropped,
		       ap->dropped == 1 ? "" : "s");
}

/* The command line that repeats this run: every option that is not the
 * default, with the seed and start time made explicit, in e->repro. */
int enroll_build_repro(struct enroll *e)
{
	const struct hm_boundary *b = &e->bnd.opt;
	struct hm_config def;
	char now[64], line[8192];
	size_t used = 0;

	hm_config_init(&def);
	hm_format_time(e->cfg.now_ns, now, sizeof(now));
	APPEND("hermetic enroll --seed %" PRIu64 " --now %s", e->cfg.seed, now);
	if (e->cfg.tick_ns != def.tick_ns)
		APPEND(" --tick %" PRIu64 "ns", e->cfg.tick_ns);
	if (!e->cfg.clock_virtual)
		APPEND(" --clock off");
	if (!e->cfg.rng)
		APPEND(" --rng off");
	if (e->cfg.spin_limit != def.spin_limit)
		APPEND(" --spin-limit %" PRIu64, e->cfg.spin_limit);
	if (e->cfg.lag_milli != def.lag_milli && !e->cfg.lag_milli)
		APPEND(" --lag-bound inf");
	else if (e->cfg.lag_milli != def.lag_milli)
		APPEND(" --lag-bound %" PRIu64 ".%03" PRIu64, e->cfg.lag_milli / 1000,
		       e->cfg.lag_milli % 1000);
	if (e->cfg.aslr)
		APPEND(" --aslr on");
	if (e->cfg.network != HM_NETWORK_BLOCK)
		APPEND(" --network %s", hm_network_name(e->cfg.network));
	if (!e->cfg.loopback)
		APPEND(" --no-loopback");
	if (!e->cfg.unix_sockets)
		APPEND(" --no-unix");
	for (int i = 0; i < e->allow.n_specs; i++)
		APPEND(" --allow %s", e->allow.specs[i]);
	if (e->no_daemon)
		APPEND(" --no-daemon");
	if (e->unconfined)
		APPEND(" --confine off");
	if (e->sched.mode) /* its seed: the run's own unless --sched gave one */
		APPEND(" --sched %s:%" PRIu64, e->sched.mode == HM_SCHED_SERIAL ? "serial" : "chaos",
		       e->sched.seed_set ? e->sched.seed : e->cfg.seed);
	if (e->grace_ns != DEFAULT_GRACE_NS)
		APPEND(" --grace %" PRIu64 "ms", e->grace_ns / 1000000);
	if (b->fs == HM_FS_ISOLATE)
		APPEND(" --fs isolate");
	if (b->temp_parent) {
		APPEND(" --temp-parent");
		APPEND_ARG(b->temp_parent);
	}
	if (b->no_chdir)
		APPEND(" --no-chdir");
	if (b->scrub_env)
		APPEND(" --scrub-env");
	for (size_t i = 0; i < b->n_keep_env; i++) {
		APPEND(" --keep-env");
		APPEND_ARG(b->keep_env[i]);
	}
	for (size_t i = 0; i < b->n_env_ops; i++) {
		if (b->env_ops[i].value) {
			_cleanup_free_ char *kv = NULL;

			if (asprintf(&kv, "%s=%s", b->env_ops[i].name, b->env_ops[i].value) < 0)
				return -ENOMEM;
			APPEND(" --env");
			APPEND_ARG(kv);
		} else {
			APPEND(" --unset");
			APPEND_ARG(b->env_ops[i].name);
		}
	}
	if (b->stragglers == HM_STRAGGLERS_KEEP)
		APPEND(" --stragglers keep");
	if (b->keep_root)
		APPEND(" --keep-root");
	APPEND(" --");
	for (char **a = e->argv; *a; a++)
		APPEND_ARG(*a);
	e->repro = strdup(line);
	return e->repro ? 0 : -ENOMEM;
}
#undef APPEND
#undef APPEND_ARG

static bool lost(ssize_t n)
{
	return n == -ECONNRESET || n == -ENOTCONN || n == -EPIPE;
}

bool enroll_report_and_end(struct enroll *e, bool kept)
{
	struct hm_run_ref ref = { .run_id = e->run.run_id };
	struct hm_run_end end = { .run_id = e->run.run_id, .flags = kept ? HM_END_KEEP : 0 };
	struct client_req r[3] = {
		{ .type = HM_REQ_RUN_REPORT, .expect = HM_REP_REPORT, .req = &ref, .len = sizeof(ref),
		  .rep = &e->end.refusals, .rep_size = sizeof(e->end.refusals), .exact = true },
		{ .type = HM_REQ_RUN_AUDIT, .expect = HM_REP_AUDIT, .req = &ref, .len = sizeof(ref),
		  .rep = &e->end.audit, .rep_size = sizeof(e->end.audit), .exact = true },
		{ .type = HM_REQ_RUN_END, .expect = HM_REP_OK, .req = &end, .len = sizeof(end) },
	};

	if (e->daemon.lost || e->conn.sock < 0)
		return false;
	/* The end goes with the report and the audit: by then the command and
	 * every process of the run are gone (run_settle), so what the daemon
	 * reports is final either way, and it answers in order. */
	client_batch(&e->conn, r, 3);
	/* A daemon lost meanwhile: what it did not answer is asked again, one
	 * request at a time, of the next (enroll_daemon_call waits for it). */
	if (lost(r[0].ret) || lost(r[1].ret) || lost(r[2].ret))
		enroll_daemon_lost(e);
	if (lost(r[0].ret))
		enroll_print_refusals(e);
	else if (r[0].ret < 0)
		warnx_("cannot read the run's report: %s", r[0].msg);
	else {
		e->end.have_refusals = true;
		enroll_show_refusals(e);
	}
	if (lost(r[1].ret))
		enroll_fetch_audit(e);
	else if (r[1].ret < 0)
		warnx_("cannot read the run's audit: %s", r[1].msg);
	else
		e->end.have_audit = true;
	enroll_print_audit(e);
	if (lost(r[2].ret))
		return false; /* run_end asks again */
	if (r[2].ret < 0)
		warnx_("hermeticd could not end the run: %s", r[2].msg);
	return true;
}
