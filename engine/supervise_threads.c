// SPDX-License-Identifier: MIT
/*
 * Which served process a notifying thread belongs to, without reading
 * /proc for every notification (supervise.h).
 *
 * A notification names its thread by tid only. Finding the process reads
 * /proc/TID/status and /proc/TGID/stat, which was most of the supervisor's
 * time: a crypto/rand read of a Go program cost 80 us, for 2 us bare. So
 * the answer is kept per thread, with a pidfd of the thread itself
 * (PIDFD_THREAD, Linux 6.9): while that thread lives, its tid is its own,
 * and it is in the same process (a thread never changes process; an exec
 * by another thread keeps the thread group, and is seen at its
 * notification: the process's gen changes). Once the thread is gone the
 * pidfd says so (ESRCH), even if its tid is reused. Without PIDFD_THREAD
 * (older kernels) nothing is kept and every notification reads /proc.
 *
 * The pidfd is opened while the thread's notification is pending, and
 * checked valid after: the tid was then still the notifying thread's
 * (nothing else can have reused it while it waits on us).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/seccomp.h>
#include "supervise.h"

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif

static struct sv_thread *entry(struct supervise *s, int tid)
{
	return &s->threads[(unsigned)tid % SV_THREADS];
}

static void forget(struct sv_thread *t)
{
	if (t->pidfd >= 0)
		close(t->pidfd);
	t->pidfd = -1;
	t->tid = 0;
}

struct sv_proc *sv_thread_get(struct supervise *s, int tid)
{
	struct sv_thread *t = entry(s, tid);

	if (t->tid != tid || t->pidfd < 0)
		return NULL;
	/* the process was let go (an exec, its end) or its entry reused */
	if (!t->p->pid || t->p->gen != t->gen ||
	    syscall(SYS_pidfd_send_signal, t->pidfd, 0, NULL, 0) < 0) {
		forget(t);
		return NULL;
	}
	return t->p;
}

void sv_thread_put(struct supervise *s, const struct seccomp_notif *req, struct sv_proc *p)
{
	struct sv_thread *t = entry(s, (int)req->pid);
	int fd;

	if (s->no_thread_pidfd)
		return;
	fd = (int)syscall(SYS_pidfd_open, (int)req->pid, PIDFD_THREAD);
	if (fd < 0) {
		if (errno == EINVAL)
			s->no_thread_pidfd = true; /* before 6.9: no cache */
		return; /* EMFILE: enroll's descriptors go to the waits first */
	}
	if (ioctl(s->listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &req->id) < 0) {
		close(fd); /* it died meanwhile: the tid may be another's now */
		return;
	}
	forget(t);
	t->tid = (int)req->pid;
	t->pidfd = fd;
	t->p = p;
	t->gen = p->gen;
}

void sv_threads_init(struct supervise *s)
{
	for (int i = 0; i < SV_THREADS; i++) {
		s->threads[i].tid = 0;
		s->threads[i].pidfd = -1;
	}
}

void sv_threads_clear(struct supervise *s)
{
	for (int i = 0; i < SV_THREADS; i++)
		forget(&s->threads[i]);
}
