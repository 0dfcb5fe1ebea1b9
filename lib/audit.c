// SPDX-License-Identifier: MIT
#include <sys/syscall.h>
#include "util.h"
#include "audit.h"

void hm_audit_init(struct hm_audit_acc *a, struct hm_audit_proc *procs, uint32_t cap)
{
	memset(a, 0, sizeof(*a));
	a->procs = procs;
	a->cap = cap;
}

/* The record of one process, created on first sight. */
static struct hm_audit_proc *proc(struct hm_audit_acc *a, uint32_t pid, const char *comm)
{
	struct hm_audit_proc *p;

	for (uint32_t i = 0; i < a->n_procs; i++)
		if (a->procs[i].pid == pid)
			return &a->procs[i];
	a->sum.processes++;
	if (a->n_procs == a->cap) {
		a->untracked++; /* counted in the sums all the same */
		return NULL;
	}
	p = &a->procs[a->n_procs++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	memcpy(p->comm, comm, sizeof(p->comm));
	p->comm[sizeof(p->comm) - 1] = 0;
	return p;
}

/*
 * A process a signal ended while its image was still starting: a dynamic
 * image (it loads the shim) that never announced the shim, was killed by a
 * signal, made fewer page faults since its exec than the loader makes
 * before any program's main (about 60 for a minimal C program; the bound
 * is HM_AUDIT_START_FAULTS) and no time or entropy system call that the
 * kernel's view counted but one: the shim's constructor makes malloc's
 * first call before it announces itself, and glibc draws the tcache key
 * there (one getrandom of 8 bytes), so a child killed between the two made
 * that one call (a flake of audit.sh's 20 killed children on a loaded
 * machine). That is a child its parent killed at once
 * (subprocess's Popen then kill): nothing of the program ran, with the
 * shim or without it, so it is not a process that ran without the shim.
 * The kernel streams of older journals have no fault counts (0 at the
 * exec, which no real exec has): they keep the old answer.
 */
#define HM_AUDIT_START_FAULTS 256
#define HM_AUDIT_START_RANDOM 8 /* glibc's tcache key */
static bool unstarted(const struct hm_audit_proc *p, const struct hm_trace_event *e)
{
	int status = (int)e->ret;

	return !p->shim && p->path[0] && (p->flags & HM_AUDIT_DYNAMIC) && p->exec_faults &&
	       (status & 0x7f) != 0 && (status & 0x7f) != 0x7f &&
	       (uint32_t)e->arg0 - p->exec_faults < HM_AUDIT_START_FAULTS && p->getrandom <= 1 &&
	       p->getrandom_bytes <= HM_AUDIT_START_RANDOM && !p->clock && !p->random_reads;
}

void hm_audit_add(struct hm_audit_acc *a, const struct hm_trace_event *e)
{
	struct hm_audit_proc *p, *c;

	if (e->kind < HM_EV_EXEC || e->kind > HM_EV_RANDOM_READ)
		return;
	p = proc(a, e->pid, e->comm);
	a->sum.events++;
	switch (e->kind) {
	case HM_EV_EXEC:
		a->sum.execs++;
		if (p) {
			/* A new image: it has the shim only if it says so again. */
			p->shim = 0;
			p->exec_faults = (uint32_t)e->arg0;
			p->flags = (e->flags & 1) ? HM_AUDIT_DYNAMIC : 0;
			memcpy(p->comm, e->comm, sizeof(p->comm));
			p->comm[sizeof(p->comm) - 1] = 0;
			snprintf(p->path, sizeof(p->path), "%.*s",
				 (int)(e->len < sizeof(e->data) ? e->len : sizeof(e->data)),
				 (const char *)e->data);
		}
		break;
	case HM_EV_FORK:
		if (e->flags & 1)
			break; /* a thread */
		a->sum.forks++;
		/* The child inherits the parent's image, shim or not. */
		c = proc(a, e->aux, e->comm);
		if (c && p) {
			c->shim = p->shim;
			memcpy(c->path, p->path, sizeof(c->path));
			/* its own fault count starts at 0: no exec of its own */
			c->exec_faults = 0;
			c->flags = 0;
		}
		break;
	case HM_EV_EXIT:
		a->sum.exits++;
		if (p && unstarted(p, e))
			p->flags |= HM_AUDIT_UNSTARTED;
		break;
	case HM_EV_SHIM:
		/* What this image did before the shim's constructor ran (the
		 * loader's and libc's own start-up, e.g. malloc's tcache key)
		 * is no program behaviour: count from the announcement on. */
		if (p) {
			p->shim = 1;
			p->getrandom = p->clock = p->random_reads = 0;
			p->getrandom_bytes = 0;
		}
		break;
	case HM_EV_SYSCALL:
	case HM_EV_RANDOM_READ:
		if (p && p->shim)
			a->sum.syscalls_shim++;
		else
			a->sum.syscalls_noshim++;
		if (e->kind == HM_EV_RANDOM_READ || e->aux == SYS_getrandom) {
			if (e->ret > 0)
				a->sum.getrandom_bytes += e->ret;
		}
		if (!p)
			break;
		if (e->kind == HM_EV_RANDOM_READ)
			p->random_reads++;
		else if (e->aux == SYS_getrandom)
			p->getrandom++;
		else
			p->clock++;
		if ((e->kind == HM_EV_RANDOM_READ || e->aux == SYS_getrandom) && e->ret > 0)
			p->getrandom_bytes += e->ret;
		break;
	}
}

void hm_audit_summary(const struct hm_audit_acc *a, struct hm_audit *out)
{
	*out = a->sum;
	out->without_shim = 0;
	out->n = 0;
	for (int pass = 0; pass < 2; pass++)
		for (uint32_t i = 0; i < a->n_procs; i++) {
			const struct hm_audit_proc *p = &a->procs[i];
			int pick = pass == 0 ? hm_audit_escaped(p) : hm_audit_bypassed(p);

			if (pass == 0 && pick)
				out->without_shim++;
			if (pick && out->n < HM_AUDIT_MAX)
				out->procs[out->n++] = *p;
		}
}
