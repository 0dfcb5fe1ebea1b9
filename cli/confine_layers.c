// SPDX-License-Identifier: MIT
/*
 * What a run started here gets from each layer of its containment, and
 * what this kernel and these privileges cannot give: for the run's
 * --report and for `hermetic status`. Everything here is decided before
 * the fork (confine_prepare); the child applies exactly that or the run
 * does not start, so the description cannot claim a layer that is absent.
 */
#include <json-c/json.h>
#include "util.h"
#include "cli.h"
#include "confine.h"

static const char *ns_name(enum confine_ns ns)
{
	return ns == CONFINE_NS_FULL ? "mount+cgroup" : ns == CONFINE_NS_CHROOT ? "mount+cgroup (chroot)" : "none";
}

/* Calls fn(what, userdata) for each thing this run will lack. */
static void missing(const struct confine *c, void (*fn)(const char *, void *), void *ud)
{
	static char buf[3][200];

	if (!c->on) {
		fn("everything: --confine off (no seccomp filter, no Landlock domain, no namespaces)", ud);
		return;
	}
	if (c->landlock_abi <= 0) {
		snprintf(buf[0], sizeof(buf[0]),
			 "ptrace, /proc/PID/{mem,maps,environ,root,fd} and signals of processes outside "
			 "the run: %s",
			 confine_landlock_why(c->landlock_abi));
		fn(buf[0], ud);
	} else if (c->landlock_abi < 6) {
		snprintf(buf[1], sizeof(buf[1]),
			 "signals to the user's processes outside the run: Landlock ABI %d scopes no "
			 "signals (ABI 6, Linux 6.12, does)",
			 c->landlock_abi);
		fn(buf[1], ud);
	}
	if (c->ll_writes_limited)
		fn("writing files created later directly in / (root without namespaces: writes are "
		   "allowed per entry)",
		   ud);
}

static void add_missing(const char *what, void *ud)
{
	json_object_array_add(ud, json_object_new_string(what));
}

json_object *confine_layers_json(const struct confine *c)
{
	json_object *o = json_object_new_object(), *ll = json_object_new_object(),
		    *miss = json_object_new_array();

	json_object_object_add(o, "enabled", json_object_new_boolean(c->on));
	if (c->on) {
		json_object_object_add(ll, "abi", json_object_new_int(c->landlock_abi > 0 ? c->landlock_abi : 0));
		json_object_object_add(ll, "ptrace_scoped", json_object_new_boolean(c->landlock_abi > 0));
		json_object_object_add(ll, "signals_scoped", json_object_new_boolean(c->ll_scoped != 0));
		json_object_object_add(ll, "writes_limited", json_object_new_boolean(c->ll_writes_limited));
		if (c->landlock_abi <= 0)
			json_object_object_add(ll, "error", json_object_new_string(confine_landlock_why(c->landlock_abi)));
		json_object_object_add(o, "landlock", ll);
		ll = NULL;
		json_object_object_add(o, "seccomp", json_object_new_boolean(true));
		json_object_object_add(o, "namespaces", json_object_new_string(ns_name(c->ns)));
		if (c->ns == CONFINE_NS_NONE && c->ns_why)
			json_object_object_add(o, "namespaces_why", json_object_new_string(c->ns_why));
		json_object_object_add(o, "no_new_privs", json_object_new_boolean(c->no_new_privs));
		json_object_object_add(o, "capabilities_dropped", json_object_new_boolean(c->root));
	}
	json_object_put(ll);
	missing(c, add_missing, miss);
	json_object_object_add(o, "missing", miss);
	return o;
}

struct print_ctx {
	FILE *f;
	const char *indent;
};

static void print_missing(const char *what, void *ud)
{
	struct print_ctx *p = ud;

	fprintf(p->f, "%s  %-12s %s\n", p->indent, "missing", what);
}

void confine_layers_print(FILE *f, const struct confine *c, const char *indent)
{
	struct print_ctx p = { f, indent };

	if (c->on) {
		if (c->landlock_abi > 0)
			fprintf(f, "%s  %-12s ABI %d: ptrace and /proc of processes outside the run refused%s%s\n",
				indent, "landlock", c->landlock_abi,
				c->ll_scoped ? ", signals to them refused" : "",
				c->ll_writes_limited ? ", no writes under /sys or cgroup2" : "");
		else
			fprintf(f, "%s  %-12s unavailable (%s)\n", indent, "landlock",
				confine_landlock_why(c->landlock_abi));
		fprintf(f, "%s  %-12s setting the host clock, bpf(), TIOCSTI, clone3 and system-wide perf refused%s\n",
			indent, "seccomp",
			c->block_net ? "; packet, vsock and other unhooked sockets, io_uring too" : "");
		if (c->ns != CONFINE_NS_NONE)
			fprintf(f, "%s  %-12s %s: the run is the root of its cgroup view; bpffs hidden, /sys and /proc/sys read-only\n",
				indent, "namespaces", ns_name(c->ns));
		else
			fprintf(f, "%s  %-12s none (%s)\n", indent, "namespaces", c->ns_why ? c->ns_why : "-");
		if (c->root)
			fprintf(f, "%s  %-12s CAP_SYS_ADMIN, CAP_BPF, CAP_NET_ADMIN, CAP_SYS_PTRACE, CAP_PERFMON and others dropped%s%s\n",
				indent, "capabilities", c->raw_sockets || !c->block_net ? " (CAP_NET_RAW kept)" : "",
				c->no_new_privs ? "; no_new_privs" : "");
		else
			fprintf(f, "%s  %-12s no_new_privs (setuid programs cannot raise a process)\n", indent,
				"privileges");
	}
	missing(c, print_missing, &p);
}
