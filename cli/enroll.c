// SPDX-License-Identifier: MIT
/*
 * hermetic enroll [OPTIONS] [--] CMD [ARGS...]
 *
 * Asks hermeticd for a run, starts CMD inside the run's cgroup before its
 * first instruction, forwards signals, waits until the cgroup is provably
 * empty, reports refusals and exits with CMD's status. The run itself is
 * the engine's (engine/run.c, engine/launch.c); here are its order, what
 * enroll says about it and its exit status.
 */
#include <inttypes.h>
#include <string.h>
#include "util.h"
#include "config.h"
#include "cli.h"
#include "isolate.h"
#include "enroll.h"
#include "phases.h"
#include "record.h"
#include "run.h"
#include "identity.h"
#include "lazy_libs.h"


/* What set-up can do before the run exists (with the daemon: while it
 * makes the run): the start time from HEAD, the launch's plan (engine/
 * launch.c). -1 with f filled when enroll itself fails. */
static int enroll_plan(struct enroll *e, struct cli_fail *f)
{
	struct eng_error err;

	enroll_settle_now(e);
	if (enroll_launch_plan(e, &err) < 0)
		return cli_fail(f, EXIT_INTERNAL, "%s", err.msg);
	cli_phase("plan");
	return 0;
}

/* Set-up, step by step until CMD runs. A signal that cancels the run
 * (engine/signals.c) is seen in the waits inside the steps and read after
 * them; what is left of set-up is then skipped, and the run ends as any
 * other does. -1 with f filled when enroll itself fails. */
static int enroll_start(struct enroll *e, struct cli_fail *f)
{
	struct eng_error err;
	int r;

	if (run_signals_take(&e->sig, &e->child))
		return 0;
	if (e->no_daemon) {
		warnx_("--no-daemon: running shim-only; the kernel does NOT refuse this run's\n"
		       "  network traffic, and static binaries and raw syscalls are not seen");
		if (enroll_plan(e, f) < 0)
			return -1;
	} else {
		if ((e->conn.sock = cli_connect_fail(f)) < 0)
			return -1;
		if (run_create_send(e, &err) < 0)
			return cli_fail(f, EXIT_INTERNAL, "%s", err.msg);
		/* While hermeticd makes the run, what needs no answer from it.
		 * A failure here leaves the request unanswered: the connection
		 * closes at enroll's exit and the daemon ends what it made. */
		if (enroll_plan(e, f) < 0)
			return -1;
		r = run_create_recv(e, &err);
		if (r == -ECANCELED)
			return 0;
		if (r < 0)
			return cli_fail(f, r == -EPERM ? EXIT_NESTED : EXIT_INTERNAL, "%s", err.msg);
		if (enroll_sched_start(e, f) < 0)
			return -1;
	}
	cli_phase("create");
	/* From here on the run exists: a daemon that goes away does not take
	 * this process (and the command's exit status) with it; the engine's
	 * requests say so (engine/client.h, engine/reconnect.c). */
	if (run_clock_setup(&e->clock, e->no_daemon || !e->cfg.clock_virtual, &e->cfg, &err) < 0)
		return cli_fail(f, EXIT_INTERNAL, "%s", err.msg);
	if (boundary_setup(&e->bnd, e->argv, &err) < 0)
		return cli_fail(f, err.code == EINVAL ? EXIT_USAGE : EXIT_INTERNAL, "%s", err.msg);
	if (run_export_env(e, &err) < 0)
		return cli_fail(f, EXIT_INTERNAL, "%s", err.msg);
	if (enroll_print_boundary(e, f) < 0)
		return -1;
	cli_phase("setup");
	if (!e->cfg.seed_set && !e->caller.quiet_seed) {
		char now[64];

		hm_format_time(e->cfg.now_ns, now, sizeof(now));
		warnx_("seed %" PRIu64 ", now %s from %s (pass --seed %" PRIu64 " to repeat)",
		       e->cfg.seed, now, now_source_name(e->now_src), e->cfg.seed);
	}
	if (run_signals_take(&e->sig, &e->child))
		return 0;
	if (boundary_enter(&e->bnd, &err) < 0)
		return cli_fail(f, EXIT_INTERNAL, "%s", err.msg);
	if (e->rec && record_before_spawn(e, &err) < 0)
		return cli_fail(f, EXIT_INTERNAL, "%s", err.msg);
	if (e->caller.before_spawn)
		e->caller.before_spawn(e, e->caller.userdata);
	e->started_mono = hm_now_ns();
	/* CMD's own exec failing is the shell's 127 or 126, as before a run */
	if ((r = enroll_launch(e, &err)) < 0 && e->child.exec_err)
		return cli_fail(f, e->child.exec_err == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_EXEC,
				"%s", err.msg);
	else if (r < 0) /* (a time zone --identity names that this machine lacks: usage) */
		return cli_fail(f,
				r == -ENOENT && identity_active(&e->ident) && !e->ident.prepared
					? EXIT_USAGE
					: EXIT_INTERNAL,
				"%s", err.msg);
	e->bnd.started = e->child.pid > 0;
	boundary_leave(&e->bnd);
	cli_phase("launch");
	return 0;
}

/* The lag bound's record read, then done with the page: let it go before
 * the run ends, so that the last reference to its file (and the kernel's
 * truncation of its pages) is not ours to wait for. */
static void clock_done(struct enroll *e)
{
	run_clock_read_lag(&e->clock, &e->cfg);
	run_clock_finish(&e->clock, &e->cfg);
}

/* The run is over: the daemon's report of it, its journal, its clock page,
 * its end in the daemon. A cancelled run reports nothing and keeps no
 * journal: it only ends. -1 with f filled when enroll itself fails. */
static int run_report(struct enroll *e, int code, bool have_run, bool kept, struct cli_fail *f)
{
	/* A daemon that went away during the run: wait for the next one. */
	bool daemon = have_run && !e->sig.cancel && enroll_daemon_wait(e);
	struct enroll_opt note = { 0 };

	/* Nothing between the audit and the end that needs the daemon (no
	 * journal, no connection log, no restart to note): the clock page goes
	 * first (as below), then the report, the audit and the end are one
	 * hand-off to hermeticd instead of three (docs/performance.md). */
	if (daemon && !e->rec && e->connlog.fd < 0 && !e->daemon.restarted &&
	    !e->daemon.given_up) {
		run_clock_read_dns(&e->clock);
		clock_done(e);
		bool ended = enroll_report_and_end(e, kept);

		cli_phase("audit");
		cli_phase("journal+clock");
		if (!ended)
			run_end(e, daemon, have_run, kept);
		else
			cli_phase("end");
		return 0;
	}
	if (daemon) {
		enroll_print_refusals(e);
		enroll_fetch_audit(e);
		enroll_print_audit(e);
	}
	cli_phase("audit");
	if (connlog_finish(e, daemon, f) < 0)
		return -1;
	run_clock_read_dns(&e->clock);
	if (e->rec && !e->sig.cancel)
		record_prepare(e, code);
	enroll_daemon_note(e, &note);
	/* The journal goes to the store before the run ends; it carries the
	 * restart as a note among its options. */
	if (e->rec && !e->sig.cancel) {
		bool noted = note.name && e->n_opts < ENROLL_MAX_OPTS;

		if (noted)
			e->opts[e->n_opts++] = note;
		record_finish(e, code);
		if (noted)
			e->n_opts--; /* not an option to repeat */
	}
	if (note.name && e->daemon.restarted)
		warnx_("note: %s (the run was without a daemon for %.1f s; its network stayed "
		       "refused)",
		       e->daemon.note, e->daemon.away_ns / 1e9);
	else if (note.name)
		warnx_("note: %s", e->daemon.note);
	clock_done(e);
	cli_phase("journal+clock");
	run_end(e, daemon, have_run, kept);
	return 0;
}

/* What enroll says last about a run that failed or was cancelled. */
static void run_verdict(struct enroll *e, int code)
{
	if (e->sig.cancel)
		warnx_("run cancelled by SIG%s %s; exit status %d", sigabbrev_np(e->sig.cancel),
		       e->child.cmd_started ? "after the command ended" : "before the command started",
		       code);
	else if (e->caller.quiet_repro)
		return;
	else if (code == EXIT_NESTED && e->clock.nested_refused)
		warnx_("command exited with status %d: a hermetic enroll inside the run refused to\n"
		       "  start (a run holds no other run; run its command directly)",
		       code);
	else if (code != 0)
		warnx_("command exited with status %d; reproduce with:\n  %s", code,
		       e->repro ? e->repro : "(out of memory)");
}

/* Before set-up: not inside a run, the run's state, its outputs. */
static int enroll_prepare(struct enroll *e, struct cli_fail *f)
{
	const char *inside = getenv(HM_ENV_RUN), *why;
	struct eng_error err;

	if (inside && *inside) {
		run_clock_mark_nested();
		return cli_fail(f, EXIT_NESTED,
				"cannot enroll: this process is already inside hermetic run %s (one "
				"run's\n  processes belong to one policy; run the command directly)",
				inside);
	}
	if (run_begin(e, &err) < 0)
		return cli_fail(f, EXIT_INTERNAL, "%s", err.msg);
	/* The libraries the run's outputs need (cli/lazy_libs.c), loaded
	 * before the run: one missing fails enroll here, not at its end. */
	if ((e->report_out.path || e->connlog.path || e->recording.on) && (why = lazy_load(LAZY_JSONC)))
		return cli_fail(f, EXIT_INTERNAL, "%s", why);
	if (e->recording.on && (why = lazy_load(LAZY_ZSTD)))
		return cli_fail(f, EXIT_INTERNAL, "%s", why);
	if (enroll_json_open(e, f) < 0 || connlog_open(e, f) < 0)
		return -1;
	if (e->recording.on && record_setup(e, &err) < 0)
		return cli_fail(f, EXIT_INTERNAL, "%s", err.msg);
	if (run_adopt_orphans(&err) < 0)
		return cli_fail(f, EXIT_INTERNAL, "%s", err.msg);
	return 0;
}

int enroll_run(struct enroll *e, struct cli_fail *f)
{
	struct eng_error err;
	bool kept, empty, have_run;
	int code, r = 0;

	if (enroll_prepare(e, f) < 0 || enroll_start(e, f) < 0)
		return -1;
	/* A run cancelled before the daemon answered has nothing to end. */
	have_run = e->no_daemon || e->cgroup_fd >= 0;
	if (have_run && (r = run_wait(e, &err)) < 0)
		return cli_fail(f, EXIT_INTERNAL, "%s", err.msg);
	kept = have_run && r == 1;
	code = e->sig.cancel ? 128 + e->sig.cancel : run_status_code(e->child.status);
	empty = run_settle(e, have_run, kept);
	if (run_report(e, code, have_run, kept, f) < 0)
		return -1;
	boundary_finish(&e->bnd, empty);
	if (e->rec)
		record_cleanup(e);
	cli_phase("teardown");
	if (enroll_build_repro(e) < 0)
		return cli_fail(f, EXIT_INTERNAL, "out of memory");
	run_verdict(e, code);
	enroll_json_write(e, code);
	cli_phases_print();
	return code;
}

int cmd_enroll(int argc, char **argv)
{
	static struct enroll e;
	struct cli_fail f;
	int code;

	program_name = "hermetic";
	run_clock_mark_start(); /* the file-time line B, first (engine/vclock.c) */
	cli_phase(NULL);
	e.now_later = true; /* HEAD's time is read while the daemon works */
	if (enroll_parse(&e, argc, argv, "hermetic enroll", &f) < 0)
		enroll_die(&e, &f);
	cli_phase("parse");
	/* The one place enroll's own failures end: its --report line, its
	 * message, its exit status. */
	if ((code = enroll_run(&e, &f)) < 0)
		enroll_die(&e, &f);
	return code;
}
