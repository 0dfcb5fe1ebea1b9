// SPDX-License-Identifier: MIT
/*
 * --identity for processes without the shim (static binaries, Go): the
 * kernel release uname reports and the memory sysinfo reports, which the
 * kernel cannot be told (docs/identity.md). The filter sends uname and
 * sysinfo here only when the identity pins them, and only from low code
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

static void answer(const struct seccomp_notif *req, struct seccomp_notif_resp *resp, void *buf,
		   size_t len)
{
	struct iovec l = { .iov_base = buf, .iov_len = len };
	struct iovec r = { .iov_base = (void *)req->data.args[0], .iov_len = len };

	if (process_vm_writev((pid_t)req->pid, &l, 1, &r, 1, 0) != (ssize_t)len) {
		resp->error = -EFAULT;
		return;
	}
	resp->val = 0;
}

void sv_identity_call(struct supervise *s, const struct seccomp_notif *req,
		      struct seccomp_notif_resp *resp)
{
	struct sv_proc *p = sv_served(s, req);

	if (!p) {
		resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
		return;
	}
	if (req->data.nr == SYS_uname) {
		struct utsname u;

		if (uname(&u) < 0) {
			resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
			return;
		}
		put(u.release, sizeof(u.release), s->id.release);
		put(u.nodename, sizeof(u.nodename), s->id.hostname);
		put(u.domainname, sizeof(u.domainname), s->id.domain);
		answer(req, resp, &u, sizeof(u));
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
		answer(req, resp, &si, sizeof(si));
	}
}
