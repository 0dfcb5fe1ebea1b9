// SPDX-License-Identifier: MIT
/*
 * The run's clock page as an inherited descriptor (lib/clockfd.h).
 *
 * enroll hands CMD the page as a descriptor named by HERMETIC_CLOCK_FD, and
 * every process hands it down: the page has no path any process of the run
 * could open. Programs close what they did not open before they exec
 * (Python's subprocess with close_fds, closefrom in daemons, bash, make,
 * Java's jspawnhelper); the wrappers here never close the page's
 * descriptor nor let a dup2/dup3 overwrite it:
 *   close(page)             succeeds without closing it
 *   close_range, closefrom  close (or mark close-on-exec) around it
 *   dup2/dup3 onto it       it moves to a free number first, and
 *                           HERMETIC_CLOCK_FD for children follows it
 * and so does syscall(SYS_close, ...) and its kin through libc's syscall()
 * (entropy.c).
 * A program that closed it must not find it in its children: a child lists
 * its descriptors after close_fds and expects exactly those it was passed
 * (CPython's test_pass_fds_redirected). So a close marks the page ":c" in
 * HERMETIC_CLOCK_FD, and the next image maps the page and closes the
 * descriptor in the shim's constructor, before its program runs; its own
 * children then ask hermeticd for the page (RUN_CLOCK) and keep no
 * descriptor of it either. Asking costs a round trip at start, and a wait
 * on the daemon could let the run's clock move (the run looks idle): only
 * processes two execs past a close_fds pay it. enroll's own page
 * (--no-daemon, --clock off: HM_VCF_OWN) has no daemon to ask and is never
 * marked. Where asking fails (hermeticd's socket is not open to the
 * process's user), vclock.c gives it a private page and says so.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <linux/close_range.h>
#include "shim.h"
#include "config.h"

/* HERMETIC_CLOCK_FD=... for children, two buffers swapped whole so that a
 * concurrent exec copies one entry or the other, never a torn one. */

static char env_bufs[2][sizeof(HM_ENV_CLOCK_FD "=") + HM_CLOCKFD_STR];
static int env_cur;

static void env_format(char *buf)
{
	memcpy(buf, HM_ENV_CLOCK_FD "=", sizeof(HM_ENV_CLOCK_FD "="));
	hm_clockfd_format(&hm.page, buf + strlen(HM_ENV_CLOCK_FD "="));
}

struct hm_vclock *hm_page_init(const char **ret_why)
{
	const char *v = getenv(HM_ENV_CLOCK_FD);
	struct hm_clockfd c;
	struct hm_vclock *vc;
	bool asked;
	int err;

	*ret_why = NULL;
	hm.page.fd = -1;
	if (!v)
		return NULL;
	vc = hm_clockpage_from_env(v, getenv(HM_ENV_SOCKET), &c, &asked, &err);
	if (!vc) {
		*ret_why = err == -EBADMSG ? "it has another layout: hermetic and hermeticd of "
					     "different versions?"
			 : err == -ENOENT ? "its descriptor is gone and hermeticd says the caller is "
					    "in no run with a clock"
			 : err == -EACCES || err == -EPERM
				 ? "its descriptor is gone and hermeticd's socket is not open to "
				   "this user"
				 : "its descriptor is gone and hermeticd did not give it back";
		return NULL;
	}
	if (asked || c.closed) {
		/* Mapped, the page needs no descriptor here; one this
		 * process's program did not inherit (or its parent's program
		 * closed) must not be seen in it. */
		hm_sys(SYS_close, c.fd, 0, 0);
		c.fd = -1;
	}
	c.closed = false;
	hm.page = c;
	return vc;
}

void hm_page_env_publish(void)
{
	int n = __atomic_load_n(&hm.nenv, __ATOMIC_ACQUIRE);
	char *buf;

	if (hm.page.fd < 0)
		return;
	env_cur ^= 1;
	buf = env_bufs[env_cur];
	env_format(buf);
	for (int i = 0; i < n; i++)
		if (!strncmp(hm.env[i], HM_ENV_CLOCK_FD "=", strlen(HM_ENV_CLOCK_FD "="))) {
			__atomic_store_n(&hm.env[i], buf, __ATOMIC_RELEASE);
			return;
		}
	if (n == HM_ENV_MAX) {
		hm_warn("environment too large: children will ask hermeticd for the clock page", NULL,
			NULL);
		return;
	}
	hm.env[n] = buf;
	__atomic_store_n(&hm.nenv, n + 1, __ATOMIC_RELEASE);
}

void hm_page_fd_evict(int fd)
{
	long nfd;

	if (!hm_page_fd_is(fd))
		return;
	/* A copy at a free number, kept across exec; then fd is the caller's. */
	/* (where enroll puts it, lib/clockfd.h) */
	nfd = hm_sys(SYS_fcntl, fd, F_DUPFD, HM_CLOCKFD_MIN);
	if (nfd < 0)
		nfd = hm_sys(SYS_fcntl, fd, F_DUPFD, HM_CLOCKFD_LOW);
	if (nfd < 0)
		nfd = hm_sys(SYS_fcntl, fd, F_DUPFD, 3);
	if (nfd < 0)
		return; /* no number free: the caller's dup2 takes it (children ask) */
	__atomic_store_n(&hm.page.fd, (int)nfd, __ATOMIC_RELEASE);
	hm_page_env_publish();
}

/* [first, last] without the page's descriptor, as up to two ranges. */
int hm_page_close_range(unsigned first, unsigned last, int flags)
{
	int p = __atomic_load_n(&hm.page.fd, __ATOMIC_ACQUIRE);
	long r = 0;

	if (p < 0 || (unsigned)p < first || (unsigned)p > last)
		return (int)hm_sys(SYS_close_range, first, last, flags);
	hm_page_fd_closed();
	if ((unsigned)p > first)
		r = hm_sys(SYS_close_range, first, (unsigned)p - 1, flags);
	if (r == 0 && (unsigned)p < last)
		r = hm_sys(SYS_close_range, (unsigned)p + 1, last, flags);
	return (int)r;
}

/* The program closed the page's descriptor: it stays open for the next
 * exec, marked (":c") so that the next image closes it before its program
 * runs. enroll's own page is never marked: nobody could give it back. */
void hm_page_fd_closed(void)
{
	if (hm.page.fd < 0 || hm.page.closed ||
	    (hm.vc && (__atomic_load_n(&hm.vc->flags, __ATOMIC_ACQUIRE) & HM_VCF_OWN)))
		return;
	hm.page.closed = true;
	hm_page_env_publish();
}

HM_EXPORT int close_range(unsigned first, unsigned last, int flags)
{
	if (unlikely(!hm_ready()) || first > last)
		return hm_sys_errno(hm_sys(SYS_close_range, first, last, flags));
	return hm_sys_errno(hm_page_close_range(first, last, flags));
}

HM_EXPORT void closefrom(int low)
{
	int saved = errno;

	if (unlikely(!hm_ready()) || low < 0 || !hm_page_fd_is(hm.page.fd)) {
		if (hm.real.closefrom)
			hm.real.closefrom(low);
		else
			hm_sys(SYS_close_range, low < 0 ? 0 : low, ~0U, 0);
		errno = saved;
		return;
	}
	if (hm_page_close_range((unsigned)low, ~0U, 0) < 0 && hm.real.closefrom) {
		/* (no close_range: glibc's own way, which closes the page too;
		 * children then ask hermeticd for it) */
		hm.real.closefrom(low);
	}
	errno = saved;
}
