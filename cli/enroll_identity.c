// SPDX-License-Identifier: MIT
/*
 * enroll's --identity and --dir-order (docs/identity.md): the options into
 * e->ident and the journal, the plan before the fork, the report's
 * "identity" object. The work is engine/identity*.c's.
 */
#include <json-c/json.h>
#include "util.h"
#include "cli.h"
#include "enroll.h"
#include "enroll_opts.h"
#include "identity.h"

/* --identity host|fixed|SPEC|FILE. The journal gets the axes as a spec,
 * not the FILE's name: replay on another machine needs no file. */
void enroll_identity_option(struct enroll *e, const char *name, const char *arg)
{
	struct eng_error err;
	char spec[1024];

	if (!strcmp(name, "dir-order")) {
		if (identity_parse_dir_order(&e->ident, arg, &err) < 0)
			bad_usage("--dir-order %s: %s", arg, err.msg);
		enroll_add_opt(e, name, arg);
		return;
	}
	if (identity_parse(&e->ident, arg, &err) < 0)
		bad_usage("--identity %s: %s", arg, err.msg);
	identity_spec(&e->ident, spec, sizeof(spec));
	enroll_add_opt(e, name, spec[0] ? xasprintf("%s", spec) : "host");
}

/* In enroll_launch, once confine_prepare chose the namespaces. */
void enroll_identity_prepare(struct enroll *e)
{
	struct eng_error err;

	if (!identity_active(&e->ident))
		return; /* host: nothing read, nothing set */
	if (identity_prepare(&e->ident, e->cfg.seed, e->conf.on && e->conf.ns == CONFINE_NS_FULL,
			     &err) < 0)
		die(err.code == ENOENT ? EXIT_USAGE : EXIT_INTERNAL, "%s", err.msg);
}

/* After supervise_prepare: what only the supervisor says to static and Go
 * binaries (uname's release, sysinfo's memory, sched_getaffinity's CPUs
 * where the machine has fewer), or why they miss it. */
void enroll_identity_supervise(struct enroll *e)
{
	struct run_identity *id = &e->ident;

	if (!id->prepared)
		return;
	if (id->dir != IDENTITY_DIR_HOST && e->sv.want)
		supervise_set_dir_order(&e->sv, (int)id->dir, id->dir_key);
	else if (id->dir != IDENTITY_DIR_HOST)
		identity_note_missing(id, "directory order for static and Go binaries (getdents64): "
					  "the supervisor is off in this run");
	if (!id->ax.release[0] && !id->ax.memory_kb && !id->more_cpus)
		return;
	if (e->sv.want)
		supervise_set_identity(&e->sv, id->ax.release, id->ax.hostname, id->ax.domain,
				       id->ax.memory_kb, id->more_cpus ? id->ax.cpus : 0);
	else
		identity_note_missing(id, "the kernel release, sysinfo's memory and a CPU count "
					  "above the machine's for static and Go binaries: the "
					  "supervisor is off in this run");
}

struct json_object *enroll_identity_status_json(const struct confine *here)
{
	json_object *o = json_object_new_object();
	bool ns = here->on && here->ns == CONFINE_NS_FULL;

	json_object_object_add(o, "namespaces", json_object_new_boolean(ns));
	json_object_object_add(
		o, "kernel",
		json_object_new_string(
			ns ? "a UTS and mount namespace (hostname; /proc/cpuinfo, /proc/stat, "
			     "/proc/meminfo, /sys CPU lists bound over), real affinity, umask, limits, "
			     "TZ and locale; the shim and the supervisor for the rest"
			   : "real affinity, umask, limits, TZ and locale; hostname and the /proc and "
			     "/sys files only through the shim's calls (no namespace: needs root with "
			     "CAP_SYS_ADMIN)"));
	return o;
}

/* The report's "identity": the mode, the axes pinned, what could not be. */
struct json_object *enroll_identity_json(const struct enroll *e)
{
	const struct run_identity *id = &e->ident;
	static const char *const order[] = { "host", "sorted", "seeded" };
	json_object *o = json_object_new_object();
	char spec[1024];

	identity_spec(id, spec, sizeof(spec));
	json_object_object_add(o, "mode", json_object_new_string(id->mode ? id->mode : "host"));
	json_object_object_add(o, "axes", spec[0] ? json_object_new_string(spec) : NULL);
	json_object_object_add(o, "dir_order", json_object_new_string(order[id->dir]));
	json_object_object_add(o, "not_applied",
			       id->missing[0] ? json_object_new_string(id->missing) : NULL);
	return o;
}
