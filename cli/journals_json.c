// SPDX-License-Identifier: MIT
/*
 * hermetic journals show --json: what a journal holds, as one JSON document
 * (the text form is journals_show.c).
 */
#include <inttypes.h>
#include <json-c/json.h>
#include "util.h"
#include "config.h"
#include "journal.h"
#include "cli.h"
#include "record.h"
#include "journals.h"

static json_object *audit_json(const struct hm_journal *j)
{
	struct hm_audit_acc a;
	json_object *o = json_object_new_object(), *list = json_object_new_array();

	if (journal_audit(j, &a) < 0)
		die(EXIT_INTERNAL, "out of memory");
	_cleanup_free_ struct hm_audit_proc *p = a.procs;
	uint64_t escaped = 0;

	for (uint32_t i = 0; i < a.n_procs; i++) {
		json_object *e;

		if (!hm_audit_escaped(&p[i]) && !hm_audit_bypassed(&p[i]))
			continue;
		escaped += hm_audit_escaped(&p[i]);
		e = json_object_new_object();
		json_object_object_add(e, "pid", json_object_new_int64(p[i].pid));
		json_object_object_add(e, "shim", json_object_new_boolean(p[i].shim));
		json_object_object_add(e, "path", jl_jstr(p[i].path));
		json_object_object_add(e, "comm", jl_jstr(p[i].comm));
		json_object_object_add(e, "getrandom", json_object_new_int64(p[i].getrandom));
		json_object_object_add(e, "getrandom_bytes",
				       json_object_new_uint64(p[i].getrandom_bytes));
		json_object_object_add(e, "random_reads", json_object_new_int64(p[i].random_reads));
		json_object_object_add(e, "clock_syscalls", json_object_new_int64(p[i].clock));
		json_object_array_add(list, e);
	}
	json_object_object_add(o, "processes", json_object_new_uint64(a.sum.processes));
	json_object_object_add(o, "without_shim", json_object_new_uint64(escaped));
	json_object_object_add(o, "untracked", json_object_new_uint64(a.untracked));
	json_object_object_add(o, "escaped", list);
	return o;
}

static json_object *stream_json(const struct hm_jstream_summary *s)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "thread", json_object_new_int64(s->hdr.thread));
	json_object_object_add(o, "generation", json_object_new_int64(s->hdr.gen));
	json_object_object_add(o, "image", jl_jhex(s->hdr.image));
	json_object_object_add(o, "exe", jl_jstr(s->hdr.exe));
	json_object_object_add(o, "exe_count", json_object_new_int64(s->hdr.exe_count));
	json_object_object_add(o, "pid", json_object_new_int64(s->hdr.pid));
	json_object_object_add(o, "tid", json_object_new_int64(s->hdr.tid));
	json_object_object_add(o, "records", json_object_new_uint64(s->records));
	json_object_object_add(o, "clock", json_object_new_uint64(s->clock));
	json_object_object_add(o, "entropy", json_object_new_uint64(s->entropy));
	json_object_object_add(o, "entropy_bytes", json_object_new_uint64(s->entropy_bytes));
	json_object_object_add(o, "wait", json_object_new_uint64(s->wait));
	json_object_object_add(o, "wait_timed_out", json_object_new_uint64(s->wait_timed_out));
	json_object_object_add(o, "wait_lag_bound", json_object_new_uint64(s->wait_lag));
	json_object_object_add(o, "unknown_records", json_object_new_uint64(s->ext));
	json_object_object_add(o, "end", s->ended ? jl_jstr(jl_end_name(s)) : NULL);
	return o;
}

void jl_show_json(const char *path, size_t fsize, const struct hm_journal *j, struct proc *p,
		  size_t np, bool records)
{
	const struct hm_journal_config *c = &j->config;
	json_object *o = json_object_new_object(), *cfg = json_object_new_object(), *arr, *m,
		    *procs;
	char buf[64];

	json_object_object_add(o, "file", jl_jstr(path));
	snprintf(buf, sizeof(buf), "%u.%u", j->major, j->minor);
	json_object_object_add(o, "format", jl_jstr(buf));
	json_object_object_add(o, "size", json_object_new_uint64(fsize));
	json_object_object_add(o, "uncompressed_size", json_object_new_uint64(j->size));

	json_object_object_add(cfg, "seed", json_object_new_uint64(c->cfg.seed));
	json_object_object_add(cfg, "seed_given", json_object_new_boolean(c->cfg.seed_set));
	json_object_object_add(cfg, "now", jl_jstr(jl_fmt_time(c->cfg.now_ns, buf, sizeof(buf))));
	json_object_object_add(cfg, "now_ns", json_object_new_int64(c->cfg.now_ns));
	json_object_object_add(cfg, "tick_ns", json_object_new_uint64(c->cfg.tick_ns));
	json_object_object_add(cfg, "clock", jl_jstr(c->cfg.clock_virtual ? "virtual" : "off"));
	json_object_object_add(cfg, "rng", jl_jstr(c->cfg.rng ? "all" : "off"));
	json_object_object_add(cfg, "network",
			       jl_jstr(hm_network_name(c->cfg.network)));
	json_object_object_add(cfg, "loopback", json_object_new_boolean(c->cfg.loopback));
	json_object_object_add(cfg, "unix_sockets", json_object_new_boolean(c->cfg.unix_sockets));
	json_object_object_add(cfg, "aslr", json_object_new_boolean(c->cfg.aslr));
	json_object_object_add(cfg, "spin_limit", json_object_new_uint64(c->cfg.spin_limit));
	json_object_object_add(cfg, "run_id", json_object_new_uint64(c->run_id));
	json_object_object_add(cfg, "uid", json_object_new_int64(c->uid));
	json_object_object_add(cfg, "started", jl_jstr(jl_fmt_time(c->started_ns, buf, sizeof(buf))));
	arr = json_object_new_array();
	for (size_t i = 0; i < c->argc; i++)
		json_object_array_add(arr, jl_jstr(c->argv[i]));
	json_object_object_add(cfg, "argv", arr);
	m = json_object_new_object();
	for (size_t i = 0; i < c->n_opts; i++)
		json_object_object_add(m, c->opts[i].key, jl_jstr(c->opts[i].value));
	json_object_object_add(cfg, "options", m);
	json_object_object_add(o, "config", cfg);

	if (j->has_fingerprint) {
		json_object *fp = json_object_new_object(), *fields = json_object_new_object(),
			    *env = json_object_new_object();

		for (size_t i = 0; i < j->fingerprint.n_fields; i++)
			json_object_object_add(fields, j->fingerprint.fields[i].key,
					       jl_jstr(j->fingerprint.fields[i].value));
		/* null: the variable was set, its value is not recorded. */
		for (size_t i = 0; i < j->fingerprint.n_env; i++)
			json_object_object_add(env, j->fingerprint.env[i].key,
					       jl_jstr(j->fingerprint.env[i].value));
		json_object_object_add(fp, "fields", fields);
		json_object_object_add(fp, "env", env);
		json_object_object_add(o, "fingerprint", fp);
	} else {
		json_object_object_add(o, "fingerprint", NULL);
	}

	procs = json_object_new_array();
	for (size_t i = 0; i < np; i++) {
		json_object *po = json_object_new_object(), *streams = json_object_new_array();
		char parent[HM_LINEAGE_MAX];
		char *dot;

		snprintf(parent, sizeof(parent), "%s", p[i].lineage);
		dot = strrchr(parent, '.');
		if (dot)
			*dot = 0;
		json_object_object_add(po, "lineage", jl_jstr(p[i].lineage));
		json_object_object_add(po, "parent", dot ? jl_jstr(parent) : NULL);
		json_object_object_add(po, "process", jl_jhex(p[i].id));
		json_object_object_add(po, "parent_image", p[i].parent ? jl_jhex(p[i].parent) : NULL);
		json_object_object_add(po, "threads", json_object_new_uint64(p[i].threads));
		json_object_object_add(po, "images", json_object_new_uint64(p[i].gens));
		json_object_object_add(po, "clock", json_object_new_uint64(p[i].clock));
		json_object_object_add(po, "entropy", json_object_new_uint64(p[i].entropy));
		json_object_object_add(po, "entropy_bytes",
				       json_object_new_uint64(p[i].entropy_bytes));
		json_object_object_add(po, "wait", json_object_new_uint64(p[i].wait));
		json_object_object_add(po, "wait_timed_out",
				       json_object_new_uint64(p[i].timed_out));
		json_object_object_add(po, "wait_lag_bound", json_object_new_uint64(p[i].lag));
		json_object_object_add(po, "end",
				       p[i].last_main && p[i].last_main->ended
					       ? jl_jstr(jl_end_name(p[i].last_main))
					       : NULL);
		for (size_t k = p[i].first; k < p[i].first + p[i].n; k++) {
			json_object *so = stream_json(&j->streams[k].sum);

			if (records)
				json_object_object_add(so, "values",
						       jl_show_records(&j->streams[k], true));
			json_object_array_add(streams, so);
		}
		json_object_object_add(po, "streams", streams);
		json_object_array_add(procs, po);
	}
	json_object_object_add(o, "processes", procs);
	json_object_object_add(o, "scopes", journals_scopes_json(j));

	m = json_object_new_object();
	json_object_object_add(m, "records", json_object_new_uint64(j->kernel_records));
	json_object_object_add(m, "chunks", json_object_new_uint64(j->n_kernel));
	json_object_object_add(m, "events",
			       j->has_kernel_summary ? json_object_new_uint64(j->kernel_events)
						     : NULL);
	json_object_object_add(m, "dropped",
			       j->has_kernel_summary ? json_object_new_uint64(j->kernel_dropped)
						     : NULL);
	json_object_object_add(o, "kernel", m);
	json_object_object_add(o, "audit", audit_json(j));

	if (j->has_exit) {
		m = json_object_new_object();
		json_object_object_add(m, "status", json_object_new_int64(j->exit.status));
		json_object_object_add(m, "signal", json_object_new_int64(j->exit.signal));
		json_object_object_add(m, "wall_ns", json_object_new_uint64(j->exit.wall_ns));
		json_object_object_add(m, "stragglers", json_object_new_int64(j->exit.stragglers));
		json_object_object_add(o, "exit", m);
	} else {
		json_object_object_add(o, "exit", NULL);
	}
	json_object_object_add(o, "skipped_sections", json_object_new_uint64(j->n_skipped));
	puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
						       JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}

