// SPDX-License-Identifier: MIT
/*
 * enroll --report FILE: one JSON document per run, appended to FILE as one
 * line (JSON Lines), for CI annotations and dashboards. The file is opened
 * before the run, so a path that cannot be written fails before any test
 * runs; the document is one write(2) with O_APPEND, so concurrent runs
 * reporting to one file never interleave.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <sys/wait.h>
#include <json-c/json.h>
#include "util.h"
#include "cli.h"
#include "enroll.h"
#include "enroll_opts.h"

#define EXIT_CANTCREAT 73 /* sysexits EX_CANTCREAT */

int enroll_json_open(struct enroll *e, struct cli_fail *f)
{
	struct enroll_report_out *out = &e->report_out;

	out->fd = -1;
	if (!out->path)
		return 0;
	out->fd = open(out->path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOCTTY, 0644);
	if (out->fd < 0) {
		/* A report that cannot be opened gets no line. */
		out->armed = false;
		return cli_fail(f, EXIT_CANTCREAT, "--report: cannot open '%s' for appending: %s",
				out->path, strerror(errno));
	}
	enroll_json_arm(e);
	return 0;
}

static json_object *str_or_null(const char *s)
{
	return s && *s ? json_object_new_string(s) : NULL;
}

static json_object *refusals(const struct enroll *e)
{
	json_object *o = json_object_new_object(), *first = json_object_new_array();
	const struct hm_report *rep = &e->end.refusals;

	json_object_object_add(o, "count", e->end.have_refusals ? json_object_new_uint64(rep->refused) : NULL);
	for (uint32_t i = 0; e->end.have_refusals && i < rep->n && i < HM_REPORT_MAX; i++) {
		const struct hm_refusal *r = &rep->first[i];
		json_object *j = json_object_new_object();
		char a[64], comm[17];

		enroll_refusal_names(r, a, sizeof(a), comm);
		json_object_object_add(j, "destination", json_object_new_string(a));
		json_object_object_add(j, "op", json_object_new_string(r->op == 2   ? "sendto"
									: r->op == 3 ? "packet"
									: r->op == 4 ? "join"
										     : "connect"));
		json_object_object_add(j, "process", str_or_null(comm));
		json_object_object_add(j, "count", json_object_new_uint64(r->count));
		json_object_array_add(first, j);
	}
	json_object_object_add(o, "first", first);
	return o;
}

static json_object *coverage(const struct enroll *e)
{
	json_object *o = json_object_new_object(), *escaped = json_object_new_array();
	const struct hm_audit *ap = &e->end.audit;
	uint64_t bypass = 0;

	if (!e->end.have_audit) {
		json_object_put(escaped);
		json_object_put(o);
		return NULL; /* --no-daemon: the kernel's view is not there */
	}
	for (uint32_t i = 0; i < ap->n && i < HM_AUDIT_MAX; i++) {
		const struct hm_audit_proc *p = &ap->procs[i];
		json_object *j;
		char comm[17];

		if (p->shim) {
			bypass += enroll_uncontrolled_calls(e, p);
			continue;
		}
		memcpy(comm, p->comm, 16);
		comm[16] = 0;
		j = json_object_new_object();
		json_object_object_add(j, "path", json_object_new_string(p->path[0] ? p->path : comm));
		json_object_object_add(j, "pid", json_object_new_uint64(p->pid));
		json_object_object_add(j, "getrandom",
				       json_object_new_uint64((uint64_t)p->getrandom + p->random_reads));
		json_object_object_add(j, "clock_syscalls", json_object_new_uint64(p->clock));
		json_object_array_add(escaped, j);
	}
	json_object_object_add(o, "processes", json_object_new_uint64(ap->processes));
	json_object_object_add(o, "without_shim", json_object_new_uint64(ap->without_shim));
	json_object_object_add(o, "bypassed_syscalls", json_object_new_uint64(bypass));
	json_object_object_add(o, "dropped_events", json_object_new_uint64(ap->dropped));
	json_object_object_add(o, "complete", json_object_new_boolean(!ap->without_shim && !bypass &&
								      !ap->dropped));
	json_object_object_add(o, "escaped", escaped);
	return o;
}

/* Why hermetic itself failed, by its exit status (cli.h). */
static const char *error_reason(int code)
{
	switch (code) {
	case EXIT_NODAEMON:
		return "no_daemon";
	case EXIT_INTERNAL:
		return "internal";
	case EXIT_NESTED:
		return "nested";
	case EXIT_CANNOT_EXEC:
		return "cannot_execute";
	case EXIT_NOT_FOUND:
		return "command_not_found";
	default:
		return "error";
	}
}

/* Append o as one line to the report, one write(2), and close it. */
static void write_line(struct enroll_report_out *out, json_object *o)
{
	const char *text;
	size_t len;

	text = json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN, &len);
	{
		/* One write, newline included: a line is a whole document. */
		_cleanup_free_ char *line = malloc(len + 1);

		if (!line) {
			warnx_("--report: out of memory");
			goto out;
		}
		memcpy(line, text, len);
		line[len] = '\n';
		if (write(out->fd, line, len + 1) != (ssize_t)(len + 1))
			warnx_("--report: Failed to write '%s': %s", out->path,
			       strerror(errno ? errno : EIO));
	}
out:
	close(out->fd);
	out->fd = -1;
}

/* A failure of enroll's own while a run with --report is being set up or
 * run: the command did not run (or its outcome is lost), and the line says
 * so, with hermetic's own status and message in hermetic_error. Only the
 * process that armed it writes (never a forked child). */
static void fail_line(struct enroll *e, const struct cli_fail *f)
{
	struct enroll_report_out *out = &e->report_out;
	json_object *o, *cmd, *err;
	char now[64];

	if (!out->armed || getpid() != out->armed_pid)
		return;
	out->armed = false;
	if (out->fd < 0)
		out->fd = open(out->path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOCTTY, 0644);
	if (out->fd < 0)
		return; /* enroll_die has said why hermetic stops */
	o = json_object_new_object();
	cmd = json_object_new_array();
	for (char **a = e->argv; a && *a; a++)
		json_object_array_add(cmd, json_object_new_string(*a));
	json_object_object_add(o, "hermetic", json_object_new_string(HERMETIC_VERSION));
	json_object_object_add(o, "command", cmd);
	json_object_object_add(o, "run_id", e->run.run_id ? json_object_new_uint64(e->run.run_id) : NULL);
	json_object_object_add(o, "exit_status", json_object_new_int(f->status));
	json_object_object_add(o, "signal", NULL);
	json_object_object_add(o, "cancelled", NULL);
	json_object_object_add(o, "passed", json_object_new_boolean(false));
	if (e->parsed) {
		hm_format_time(e->cfg.now_ns, now, sizeof(now));
		json_object_object_add(o, "seed", json_object_new_uint64(e->cfg.seed));
		json_object_object_add(o, "now", json_object_new_string(now));
		(void)enroll_build_repro(e); /* out of memory: repro null */
	} else {
		json_object_object_add(o, "seed", NULL);
		json_object_object_add(o, "now", NULL);
	}
	json_object_object_add(o, "repro", str_or_null(e->repro));
	err = json_object_new_object();
	json_object_object_add(err, "exit_status", json_object_new_int(f->status));
	json_object_object_add(err, "reason", json_object_new_string(f->reason ? f->reason
							: e->fail_reason ? e->fail_reason
							: error_reason(f->status)));
	json_object_object_add(err, "message", json_object_new_string(f->msg));
	json_object_object_add(o, "hermetic_error", err);
	write_line(out, o);
	json_object_put(o);
}

void enroll_die(struct enroll *e, const struct cli_fail *f)
{
	fprintf(stderr, "%s: %s\n", program_name, f->msg);
	enroll_settle_now(e); /* the line names the run's start time */
	fail_line(e, f);
	exit(f->status);
}

void enroll_json_arm(struct enroll *e)
{
	if (!e->report_out.path)
		return;
	e->report_out.armed = true;
	e->report_out.armed_pid = getpid();
}

/* "lag_bound": the factor (null: inf), how many waits it ended, the first
 * of them (what the run's processes said about themselves). */
static json_object *lag_bound(const struct enroll *e)
{
	json_object *o = json_object_new_object(), *w = json_object_new_array();

	json_object_object_add(o, "k", e->cfg.lag_milli ? json_object_new_double(e->cfg.lag_milli / 1000.0)
							: NULL);
	json_object_object_add(o, "fired", json_object_new_uint64(e->clock.lag_fires));
	for (int i = 0; i < e->clock.n_lag; i++) {
		json_object *l = json_object_new_object();

		json_object_object_add(l, "process", json_object_new_string(e->clock.lag[i].process));
		json_object_object_add(l, "thread", json_object_new_uint64(e->clock.lag[i].thread));
		json_object_object_add(l, "wait", json_object_new_string(e->clock.lag[i].what));
		json_object_object_add(l, "virtual_s", json_object_new_double(e->clock.lag[i].virt_s));
		json_object_object_add(l, "real_s", json_object_new_double(e->clock.lag[i].real_s));
		json_object_object_add(l, "clock_s", json_object_new_double(e->clock.lag[i].clock_s));
		json_object_array_add(w, l);
	}
	json_object_object_add(o, "waits", w);
	return o;
}

void enroll_json_write(struct enroll *e, int code)
{
	json_object *o, *cmd, *j;
	char now[64];

	e->report_out.armed = false;
	if (e->report_out.fd < 0)
		return;
	o = json_object_new_object();
	cmd = json_object_new_array();
	for (char **a = e->argv; *a; a++)
		json_object_array_add(cmd, json_object_new_string(*a));
	hm_format_time(e->cfg.now_ns, now, sizeof(now));
	json_object_object_add(o, "hermetic", json_object_new_string(HERMETIC_VERSION));
	json_object_object_add(o, "command", cmd);
	json_object_object_add(o, "run_id", e->no_daemon ? NULL : json_object_new_uint64(e->run.run_id));
	json_object_object_add(o, "exit_status", json_object_new_int(code));
	json_object_object_add(o, "signal", WIFSIGNALED(e->child.status)
						    ? json_object_new_int(WTERMSIG(e->child.status))
						    : NULL);
	/* the signal that cancelled the run outside CMD's life (engine/signals.c) */
	json_object_object_add(o, "cancelled", e->sig.cancel ? json_object_new_int(e->sig.cancel)
							     : NULL);
	json_object_object_add(o, "passed", json_object_new_boolean(code == 0));
	json_object_object_add(o, "seed", json_object_new_uint64(e->cfg.seed));
	json_object_object_add(o, "now", json_object_new_string(now));
	{
		char sched[48];

		/* --sched: "chaos:SEED", null for the kernel's schedule */
		json_object_object_add(o, "sched", e->sched.mode
						   ? json_object_new_string(enroll_sched_name(
							     &e->sched, sched, sizeof(sched)))
						   : NULL);
	}
	json_object_object_add(o, "network", json_object_new_string(
						     e->no_daemon ? "unenforced" : hm_network_name(e->cfg.network)));
	json_object_object_add(o, "refusals", e->no_daemon ? NULL : refusals(e));
	/* inherited.c: network sockets from enroll's parent, /dev/null in the run */
	json_object *inh = json_object_new_array();

	for (int i = 0; i < e->inh.n_foreign; i++)
		json_object_array_add(inh, json_object_new_int(e->inh.foreign[i]));
	json_object_object_add(o, "inherited_sockets_closed", inh);
	json_object_object_add(o, "coverage", coverage(e));
	json_object_object_add(o, "containment", e->no_daemon ? NULL : confine_layers_json(&e->conf));
	if (e->clock.have_dns) {
		json_object *d = json_object_new_object(), *names = json_object_new_array();

		json_object_object_add(d, "count", json_object_new_uint64(e->clock.dns_refused));
		for (int i = 0; i < 4 && e->clock.dns_first[i][0]; i++)
			json_object_array_add(names, json_object_new_string(e->clock.dns_first[i]));
		json_object_object_add(d, "names", names);
		json_object_object_add(o, "dns_refusals", d);
	} else {
		json_object_object_add(o, "dns_refusals", NULL); /* --clock off: not counted */
	}
	json_object_object_add(o, "lag_bound", lag_bound(e));
	json_object_object_add(o, "identity", enroll_identity_json(e));
	j = json_object_new_object();
	json_object_object_add(j, "id", str_or_null(e->recording.journal_id));
	json_object_object_add(j, "file", str_or_null(e->recording.journal_file));
	json_object_object_add(o, "journal", e->recording.on ? j : (json_object_put(j), NULL));
	json_object_object_add(o, "stragglers_killed", json_object_new_uint64(e->end.killed));
	json_object_object_add(o, "duration_ms", json_object_new_uint64(e->end.wall_ns / 1000000));
	json_object_object_add(o, "repro", str_or_null(e->repro));
	/* hermeticd restarted (or went away) during the run: the note, the
	 * kernel events it lost and how long the run was without it. */
	if (e->daemon.restarted || e->daemon.given_up) {
		json_object *r = json_object_new_object();

		json_object_object_add(r, "note", json_object_new_string(e->daemon.note));
		json_object_object_add(r, "reconnected", json_object_new_boolean(e->daemon.restarted));
		json_object_object_add(r, "events_lost", json_object_new_uint64(e->daemon.events_lost));
		json_object_object_add(r, "away_ms", json_object_new_uint64(e->daemon.away_ns / 1000000));
		json_object_object_add(o, "daemon_restart", r);
	} else {
		json_object_object_add(o, "daemon_restart", NULL);
	}
	json_object_object_add(o, "hermetic_error", NULL);
	write_line(&e->report_out, o);
	json_object_put(o);
}

int enroll_print_boundary(struct enroll *e, struct cli_fail *f)
{
	_cleanup_free_ char *line = NULL;
	struct eng_error err;

	if (!e->bnd.opt.print_boundary)
		return 0;
	if (boundary_json(&e->bnd, &line, &err) < 0)
		return cli_fail(f, EXIT_INTERNAL, "%s", err.msg);
	fprintf(stderr, "%s\n", line);
	fflush(stderr);
	return 0;
}
