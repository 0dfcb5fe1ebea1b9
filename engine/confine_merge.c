// SPDX-License-Identifier: MIT
/*
 * The run's two seccomp filters as one program: the confinement's
 * (confine_filter.c) and the supervisor's (supervise.c), which enroll's
 * child used to install one after the other. Stacked, the kernel compiles
 * each and runs both at every system call of every process of the run;
 * merged, one compile and one run.
 *
 * Why the merged program decides exactly as the stack did. For stacked
 * filters the kernel runs every one and keeps the most restrictive action
 * by precedence, KILL > TRAP > ERRNO > USER_NOTIF > TRACE > LOG > ALLOW
 * (between equal actions, the newest filter's return value, data included).
 * The confinement's program returns only ERRNO (its data the errno) or
 * ALLOW; the supervisor's only USER_NOTIF or ALLOW. So:
 *  - where the confinement returns ERRNO, the stack's answer is that ERRNO
 *    whatever the supervisor says (ERRNO outranks USER_NOTIF and ALLOW, and
 *    the supervisor never returns ERRNO to compete on data): the merged
 *    program returns it too, as the same instruction;
 *  - where the confinement allows, the stack's answer is the supervisor's:
 *    the merged program jumps to the supervisor's program, which runs
 *    unchanged (it loads what it reads itself and assumes nothing of A, X
 *    or scratch memory, as the first instruction of any filter).
 * confine_merge() checks the premises (each return's action) instead of
 * trusting them, and refuses to merge otherwise; the caller then installs
 * the two filters as before. tests/unit/confine_merge.c runs both forms in
 * a classic-BPF interpreter over both ABIs and asserts the same answer.
 *
 * The rewrite is one instruction for one: each `ret ALLOW` of the
 * confinement's program becomes `ja` to the end of that program, where the
 * supervisor's begins, so no jump offset of either changes. `ja` carries a
 * 32-bit offset (conditional jumps only 8 bits), and the kernel's check
 * and its constant-action cache (seccomp_cache) both follow `ja`.
 *
 * The USER_NOTIF answers go to the listener the merged filter is installed
 * with (SECCOMP_FILTER_FLAG_NEW_LISTENER, supervise_child), as the
 * supervisor's own filter's did.
 */
#include <errno.h>
#include <linux/seccomp.h>
#include "confine.h"

/* p ends in a return, and every return of p is a constant (BPF_RET |
 * BPF_K) whose action is a1 or a2. */
static bool returns_only(const struct sock_fprog *p, uint32_t a1, uint32_t a2)
{
	for (unsigned i = 0; i < p->len; i++) {
		const struct sock_filter *f = &p->filter[i];
		uint32_t act;

		if (BPF_CLASS(f->code) != BPF_RET)
			continue;
		if (BPF_RVAL(f->code) != BPF_K)
			return false; /* an action computed at run time: not provable here */
		act = f->k & SECCOMP_RET_ACTION_FULL;
		if (act != a1 && act != a2)
			return false;
	}
	return p->len > 0 && BPF_CLASS(p->filter[p->len - 1].code) == BPF_RET;
}

int confine_merge(const struct sock_fprog *conf, const struct sock_fprog *sv, struct sock_filter *out,
		  size_t cap, struct sock_fprog *ret)
{
	size_t n = (size_t)conf->len + sv->len;

	if (!returns_only(conf, SECCOMP_RET_ERRNO, SECCOMP_RET_ALLOW) ||
	    !returns_only(sv, SECCOMP_RET_USER_NOTIF, SECCOMP_RET_ALLOW))
		return -EINVAL;
	if (n > cap || n > BPF_MAXINSNS)
		return -E2BIG;
	for (unsigned i = 0; i < conf->len; i++) {
		out[i] = conf->filter[i];
		if (conf->filter[i].code == (BPF_RET | BPF_K) &&
		    (conf->filter[i].k & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_ALLOW)
			/* to index conf->len: the supervisor's first instruction */
			out[i] = (struct sock_filter)BPF_STMT(BPF_JMP | BPF_JA, conf->len - i - 1);
	}
	for (unsigned i = 0; i < sv->len; i++)
		out[conf->len + i] = sv->filter[i];
	*ret = (struct sock_fprog){ .len = (unsigned short)n, .filter = out };
	return 0;
}
