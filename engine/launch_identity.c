// SPDX-License-Identifier: MIT
/*
 * The run's --identity in enroll_launch (docs/identity.md): its plan once
 * confine_prepare chose the namespaces, and what only the supervisor can
 * say to static and Go binaries. The work is identity*.c's; this is the
 * glue to struct enroll (until launch.c is free of it, engine/README.md).
 */
#include "util.h"
#include "enroll.h"
#include "identity.h"
#include "launch_identity.h"

/* Before the fork: read and generate what the child binds and sets. A time
 * zone this machine lacks fails with ENOENT (the user's to fix). */
int launch_identity_prepare(struct enroll *e, struct eng_error *err)
{
	int r;

	if (!identity_active(&e->ident))
		return 0; /* host: nothing read, nothing set */
	r = identity_prepare(&e->ident, e->cfg.seed, e->conf.on && e->conf.ns == CONFINE_NS_FULL,
			     err);
	if (r < 0)
		e->ident.prepared = false; /* half a plan is none (and enroll says whose fault) */
	return r;
}

/* After supervise_prepare: what only the supervisor says to static and Go
 * binaries (uname's release, sysinfo's memory, sched_getaffinity's CPUs
 * where the machine has fewer, getdents64's order), or why they miss it. */
void launch_identity_supervise(struct enroll *e)
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
