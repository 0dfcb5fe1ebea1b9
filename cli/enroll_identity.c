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
int enroll_identity_option(struct enroll *e, const char *name, const char *arg)
{
	struct eng_error err;
	char spec[1024], *kept = NULL;

	if (!strcmp(name, "dir-order")) {
		if (identity_parse_dir_order(&e->ident, arg, &err) < 0)
			bad_usage("--dir-order %s: %s", arg, err.msg);
		enroll_add_opt(e, name, arg);
		return 0;
	}
	if (identity_parse(&e->ident, arg, &err) < 0)
		bad_usage("--identity %s: %s", arg, err.msg);
	identity_spec(&e->ident, spec, sizeof(spec));
	if (spec[0] && !(kept = strdup(spec)))
		return -ENOMEM;
	enroll_add_opt(e, name, kept ? kept : "host");
	return 0;
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
