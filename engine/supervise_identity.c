// SPDX-License-Identifier: MIT
/*
 * --identity for processes without the shim (static binaries, Go): the
 * kernel release uname reports, the memory sysinfo reports and a CPU count
 * above the machine's in sched_getaffinity, which the kernel cannot be
 * told (docs/identity.md). The filter sends those calls here only when the
 * identity pins them, and only from low code
 * (supervise.c's L_LOW: a non-PIE static or Go binary's text); a process
 * we do not serve goes on to the kernel.
 *
 * The answer is the kernel's own, made in enroll, with the pinned fields
 * put in. enroll is outside the run's UTS namespace, so the node and
 * domain names are the identity's where it pins them (the namespace says
 * the same) and the machine's otherwise (the run then has the machine's).
 * It is written into the caller's buffer with process_vm_writev, which
 * checks, as the kernel would, that the buffer is the caller's to write:
 * a bad pointer is EFAULT, as from the real call.
 */
#include <sched.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <linux/seccomp.h>
#include "util.h"
#include "supervise.h"

static void put(char *dst, size_t size, const char *v)
{
	if (v[0])
		snprintf(dst, size, "%s", v);
}

/* buf into the caller's memory at addr; 0, or EFAULT as from the kernel */
static void answer(const struct seccomp_notif *req, struct seccomp_notif_resp *resp, uint64_t addr,
		   void *buf, size_t len)
{
	struct iovec l = { .iov_base = buf, .iov_len = len };
	struct iovec r = { .iov_base = (void *)addr, .iov_len = len };

	if (process_vm_writev((pid_t)req->pid, &l, 1, &r, 1, 0) != (ssize_t)len) {
		resp->error = -EFAULT;
		return;
	}
	resp->val = 0;
}

/* A CPU count above the machine's: CPUs 0..cpus-1; else, under --sched,
 * the run's CPUs before the pinning; as the raw call says it (the bytes
 * written: whole longs covering the larger of the count and the machine's
 * possible CPUs; EINVAL for a buffer shorter than that or not a multiple
 * of a long, as the kernel). Another process's affinity is the kernel's
 * to say. */
static void affinity(struct supervise *s, const struct seccomp_notif *req,
		     struct seccomp_notif_resp *resp)
{
	uint8_t mask[CPU_SETSIZE / 8] = { 0 };
	long conf = sysconf(_SC_NPROCESSORS_CONF);
	unsigned bits = s->id.cpus > (unsigned)conf ? s->id.cpus : (unsigned)conf;
	size_t size = (bits + 63) / 64 * 8, len = (size_t)req->data.args[1];
	pid_t pid = (pid_t)req->data.args[0];

	if (pid != 0 && pid != (pid_t)req->pid) {
		resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
		return;
	}
	if (len < size || len % sizeof(long) || size > sizeof(mask)) {
		resp->error = -EINVAL;
		return;
	}
	for (unsigned i = 0; i < s->id.cpus; i++)
		mask[i / 8] |= (uint8_t)(1u << (i % 8));
	for (unsigned i = 0; !s->id.cpus && i < bits && i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &s->id.sched_cpus))
			mask[i / 8] |= (uint8_t)(1u << (i % 8));
	answer(req, resp, req->data.args[2], mask, size);
	if (!resp->error)
		resp->val = (int64_t)size;
}

void sv_identity_call(struct supervise *s, const struct seccomp_notif *req,
		      struct seccomp_notif_resp *resp)
{
	struct sv_proc *p = sv_served(s, req);

	if (!p) {
		resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
		return;
	}
	if (req->data.nr == SYS_sched_getaffinity) {
		affinity(s, req, resp);
	} else if (req->data.nr == SYS_uname) {
		struct utsname u;

		if (uname(&u) < 0) {
			resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
			return;
		}
		put(u.release, sizeof(u.release), s->id.release);
		put(u.nodename, sizeof(u.nodename), s->id.hostname);
		put(u.domainname, sizeof(u.domainname), s->id.domain);
		answer(req, resp, req->data.args[0], &u, sizeof(u));
	} else { /* SYS_sysinfo */
		struct sysinfo si;

		if (sysinfo(&si) < 0) {
			resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
			return;
		}
		if (s->id.memkb && si.mem_unit) {
			si.totalram = s->id.memkb * 1024 / si.mem_unit;
			si.freeram = si.totalram / 4 * 3;
		}
		answer(req, resp, req->data.args[0], &si, sizeof(si));
	}
}
