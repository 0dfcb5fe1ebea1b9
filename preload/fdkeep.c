// SPDX-License-Identifier: MIT
/*
 * The run's clock page as an inherited descriptor (lib/clockfd.h).
 *
 * enroll hands CMD the page as a descriptor named by HERMETIC_CLOCK_FD, and
 * processes hand it down as they hand down any descriptor they inherited:
 * the page has no path any process of the run could open. The descriptor is
 * the program's like any other: close, close_range, closefrom and a
 * dup2/dup3 onto its number do what they say (CPython's own tests list a
 * child's descriptors after close_fds and expect exactly what they passed).
 * The wrappers only note that it is gone (shim.h, hm_page_fd_gone); a
 * process started without it (after Python's subprocess with close_fds,
 * closefrom in daemons, a raw close) asks hermeticd for its run's page, maps
 * it and closes the descriptor again, so that it holds no descriptor its
 * program did not give it; its children ask in their turn. Where asking
 * fails too (hermeticd's socket is not open to the process's user),
 * vclock.c gives it a private page and says so.
 * enroll's own page (--no-daemon, --clock off: HM_VCF_OWN) has no hermeticd
 * to ask: its descriptor is kept as before, close(page) succeeds without
 * closing it, close_range and closefrom close around it, a dup onto its
 * number moves it first and HERMETIC_CLOCK_FD follows.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <linux/close_range.h>
#include "shim.h"
#include "config.h"

/* HERMETIC_CLOCK_FD=... for children, two buffers swapped whole so that a
 * concurrent exec copies one entry or the other, never a torn one. */
/* Where a moved descriptor goes: as enroll puts it (cli/vclock.c). */
#define PAGE_FD_MIN 100

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
	if (asked) {
		/* Mapped, the page needs no descriptor here; one this
		 * process's program did not inherit must not be seen in it. */
		hm_sys(SYS_close, c.fd, 0, 0);
		c.fd = -1;
	}
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
	nfd = hm_sys(SYS_fcntl, fd, F_DUPFD, PAGE_FD_MIN);
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
	if ((unsigned)p > first)
		r = hm_sys(SYS_close_range, first, (unsigned)p - 1, flags);
	if (r == 0 && (unsigned)p < last)
		r = hm_sys(SYS_close_range, (unsigned)p + 1, last, flags);
	return (int)r;
}

HM_EXPORT int close_range(unsigned first, unsigned last, int flags)
{
	if (likely(hm_ready()) && first <= last && hm_page_kept())
		return hm_sys_errno(hm_page_close_range(first, last, flags));
	/* (with CLOSE_RANGE_CLOEXEC it stays open here, but is not inherited) */
	if (likely(hm_ready()) && first <= last)
		hm_page_fd_range_gone(first, last);
	return hm_sys_errno(hm_sys(SYS_close_range, first, last, flags));
}

HM_EXPORT void closefrom(int low)
{
	int saved = errno;

	if (likely(hm_ready()) && low >= 0 && hm_page_kept() && hm_page_fd_is(hm.page.fd) &&
	    hm_page_close_range((unsigned)low, ~0U, 0) == 0) {
		errno = saved;
		return;
	}
	if (likely(hm_ready()) && low >= 0)
		hm_page_fd_range_gone((unsigned)low, ~0U);
	if (hm.real.closefrom)
		hm.real.closefrom(low);
	else
		hm_sys(SYS_close_range, low < 0 ? 0 : low, ~0U, 0);
	errno = saved;
}
