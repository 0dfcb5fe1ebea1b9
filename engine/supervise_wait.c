// SPDX-License-Identifier: MIT
/*
 * Virtual timed waits of supervised processes (supervise.h, docs/static.md).
 *
 * The filter hands the supervisor nanosleep, clock_nanosleep, and
 * epoll_wait/epoll_pwait with a timeout, made from code below 4 GiB (a
 * non-PIE static or Go binary's own text). For a process whose monotonic
 * clock is the run's (HM_VDSO_MONO), the supervisor does the wait for it,
 * as the shim would (docs/virtual-time.md):
 *   - it publishes the deadline in a slot of the run's clock page on the
 *     waiting thread's behalf (its tid, so the keeper knows the task):
 *     WAITING for a wait on the run, EXTERNAL for a wait on the world;
 *   - a sleep ends when the run's clock reaches its deadline (the keeper
 *     moves it there once the run is idle); one of 100 us or less is a
 *     back-off and ends at once, without moving the clock;
 *   - an epoll wait ends with the events of its epoll set (a duplicate of
 *     the process's epoll descriptor, pidfd_getfd, polled here), or at its
 *     deadline: the run's clock when every descriptor in the set is of the
 *     run (supervise_fds.c), else real time (the
 *     world keeps real deadlines, and the run's clock follows it there);
 *   - a signal that interrupts the waiter cancels the notification
 *     (SECCOMP_IOCTL_NOTIF_ID_VALID fails): the slot is freed, and the
 *     kernel restarts the call, which comes back as a new one.
 * The keeper wakes a waiter's slot by its futex word, which no poll sees:
 * a helper thread waits on the words of the pending waits (FUTEX_WAITV)
 * and writes an eventfd the main loop polls. It touches nothing else (the
 * main thread alone traces, answers and changes the waits). Every
 * millisecond the pending waits are looked at anyway.
 */
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <linux/futex.h>
#include <stddef.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <linux/kcmp.h>
#include <linux/seccomp.h>
#include "util.h"
#include "engine.h"
#include "supervise.h"
#include "hermetic/vclock.h"

#define SHORT_NS (100LL * 1000)
/* A futex wait of SHORT_NS or less that nothing else ends ends after this
 * much real time (a poll of other threads' progress: futex_deadline). */
#define POLL_HOLD_NS (1000LL * 1000)
#define SLACK_NS 1000LL /* as the shim: a timer ends 1 us after its deadline */
#define MAX_EVENTS 128

static int64_t real_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int64_t vmono(struct supervise *s)
{
	return __atomic_load_n(&s->vc->mono, __ATOMIC_ACQUIRE);
}

/* ---- the helper that sees the keeper's wake-ups ---- */

static void *helper_main(void *arg)
{
	struct supervise *s = arg;
	struct futex_waitv wv[SV_MAX_WAITS + 1];
	uint64_t one = 1;

	for (;;) {
		int n = 0;

		pthread_mutex_lock(&s->wv_lock);
		wv[n++] = (struct futex_waitv){ .uaddr = (uintptr_t)&s->wv_ctl,
						.val = __atomic_load_n(&s->wv_ctl, __ATOMIC_ACQUIRE),
						.flags = FUTEX_32 | FUTEX_PRIVATE_FLAG };
		for (int i = 0; i < SV_MAX_WAITS; i++)
			if (s->waits_[i].used && s->waits_[i].slot && !s->waits_[i].external)
				wv[n++] = (struct futex_waitv){
					.uaddr = (uintptr_t)&s->waits_[i].slot->futex,
					.val = __atomic_load_n(&s->waits_[i].slot->futex, __ATOMIC_ACQUIRE),
					.flags = FUTEX_32, /* shared: the page is a file */
				};
		pthread_mutex_unlock(&s->wv_lock);
		if (__atomic_load_n(&s->wv_stop, __ATOMIC_ACQUIRE))
			return NULL;
		if (syscall(SYS_futex_waitv, wv, n, 0, NULL, CLOCK_MONOTONIC) >= 0 && n > 1 &&
		    write(s->wv_efd, &one, sizeof(one)) != sizeof(one)) {
			/* the eventfd is full of wake-ups already */
		}
	}
}

/* The waits changed: the helper waits on the new set (started at the
 * first wait, with every signal blocked: the main loop's signalfd takes
 * them). */
static void helper_kick(struct supervise *s)
{
	if (!s->wv_started) {
		sigset_t all, old;

		s->wv_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		pthread_mutex_init(&s->wv_lock, NULL);
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		s->wv_started = s->wv_efd >= 0 && pthread_create(&s->wv_thread, NULL, helper_main, s) == 0;
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (!s->wv_started)
			return; /* the millisecond's look still answers */
	}
	__atomic_add_fetch(&s->wv_ctl, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &s->wv_ctl, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

void supervise_wait_stop(struct supervise *s)
{
	if (!s->wv_started)
		return;
	__atomic_store_n(&s->wv_stop, 1, __ATOMIC_RELEASE);
	__atomic_add_fetch(&s->wv_ctl, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &s->wv_ctl, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	pthread_join(s->wv_thread, NULL);
	close(s->wv_efd);
	s->wv_started = false;
}

/* ---- slots, on the waiting thread's behalf ---- */

struct hm_vslot *sv_slot_begin(struct supervise *s, int pid, uint64_t order, int tid,
			       int64_t deadline, bool external)
{
	struct hm_vslot *sl;

	if (!s->vc)
		return NULL;
	sl = HM_VCLOCK_SLOTS(s->vc);
	for (uint32_t n = 0, i = (uint32_t)tid % HM_VSLOTS; n < HM_VSLOTS;
	     n++, i = (i + 1) % HM_VSLOTS) {
		uint32_t free_ = HM_VS_FREE;

		if (__atomic_load_n(&sl[i].state, __ATOMIC_ACQUIRE) != HM_VS_FREE ||
		    !__atomic_compare_exchange_n(&sl[i].state, &free_, HM_VS_OWNED, false,
						 __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			continue;
		__atomic_store_n(&sl[i].tid, (uint32_t)tid, __ATOMIC_RELEASE);
		__atomic_store_n(&sl[i].pid, (uint32_t)pid, __ATOMIC_RELEASE);
		__atomic_store_n(&sl[i].order, order, __ATOMIC_RELEASE);
		hm_vclock_raise_hw(&s->vc->hw, i + 1);
		__atomic_store_n(&sl[i].deadline, deadline, __ATOMIC_RELEASE);
		__atomic_store_n(&sl[i].real_begin, real_mono(), __ATOMIC_RELEASE);
		/* its thread is blocked on us: SUPER (bpf/sched.bpf.c) */
		__atomic_store_n(&sl[i].flags, (uint32_t)HM_VSF_SUPER, __ATOMIC_RELEASE);
		__atomic_store_n(&sl[i].wake, (uint32_t)HM_VW_FUTEX, __ATOMIC_RELEASE);
		__atomic_add_fetch(&sl[i].seq, 1, __ATOMIC_ACQ_REL);
		__atomic_add_fetch(&s->vc->activity, 1, __ATOMIC_RELAXED);
		__atomic_store_n(&sl[i].state, external ? HM_VS_EXTERNAL : HM_VS_WAITING,
				 __ATOMIC_RELEASE);
		return &sl[i];
	}
	return NULL;
}

void sv_slot_end(struct supervise *s, struct hm_vslot *sl)
{
	if (!sl)
		return;
	__atomic_add_fetch(&s->vc->activity, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&sl->state, HM_VS_FREE, __ATOMIC_RELEASE);
}

/* ---- the process's epoll set ---- */

/* Our duplicate of the process's epoll descriptor fd, or -errno. */
static int epoll_dup(struct supervise *s, struct sv_proc *p, int fd)
{
	if (p->ep_ours >= 0 && p->ep_fd == fd &&
	    syscall(SYS_kcmp, getpid(), p->pid, KCMP_FILE, p->ep_ours, fd) == 0)
		return p->ep_ours;
	if (p->ep_ours >= 0)
		close(p->ep_ours);
	p->ep_ours = -1;
	if (p->pidfd < 0 && (p->pidfd = syscall(SYS_pidfd_open, p->pid, 0)) < 0)
		return -errno;
	p->ep_ours = syscall(SYS_pidfd_getfd, p->pidfd, fd, 0);
	if (p->ep_ours < 0)
		return -errno;
	fcntl(p->ep_ours, F_SETFD, FD_CLOEXEC);
	p->ep_fd = fd;
	return p->ep_ours;
}

/* The fdinfo of process p's epoll descriptor fd into buf (NUL-ended): its
 * length, or -1. The file stays open for the next wait on the same set. */
static ssize_t epoll_info(struct sv_proc *p, int fd, char *buf, size_t size)
{
	char path[96];
	ssize_t n;

	if (p->epi_fd >= 0 && p->epi_num != fd) {
		close(p->epi_fd);
		p->epi_fd = -1;
	}
	if (p->epi_fd < 0) {
		snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", p->pid, fd);
		if ((p->epi_fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			return -1;
		p->epi_num = fd;
	}
	n = pread(p->epi_fd, buf, size - 1, 0);
	if (n <= 0 || n >= (ssize_t)size - 1)
		return -1;
	buf[n] = 0;
	return n;
}

/* Is every descriptor in process p's epoll set fd one of the run's
 * (sv_fd_classify)? why: the first that is not, for HERMETIC_DEBUG=supervise.
 * A set whose fdinfo reads as it did last time (its members: number,
 * events, data, inode) is the set it was, and gets the same answer
 * without looking at each member again (a Go program's poller waits on
 * the same set of sockets thousands of times a second). */
static bool epoll_internal(struct supervise *s, struct sv_proc *p, int fd, char *why, size_t wsize)
{
	char buf[8192], *line, *save;
	int c = SV_FD_RUN;
	ssize_t n;
	bool in;

	snprintf(why, wsize, "its epoll set cannot be read");
	if ((n = epoll_info(p, fd, buf, sizeof(buf))) < 0)
		return false;
	if (p->epi_text && p->epi_len == (size_t)n && !memcmp(p->epi_text, buf, (size_t)n)) {
		snprintf(why, wsize, "%s (as before)", p->epi_why);
		return p->epi_internal;
	}
	/* kept before strtok_r cuts buf up; no copy: no cache */
	free(p->epi_text);
	if ((p->epi_text = malloc((size_t)n))) {
		memcpy(p->epi_text, buf, (size_t)n);
		p->epi_len = (size_t)n;
	}
	for (line = strtok_r(buf, "\n", &save); line && c == SV_FD_RUN;
	     line = strtok_r(NULL, "\n", &save)) {
		int tfd;

		if (sscanf(line, "tfd: %d", &tfd) == 1)
			c = sv_fd_classify(s, p, tfd, why, wsize);
	}
	in = c == SV_FD_RUN;
	if (in)
		snprintf(why, wsize, "eventfds, files and the run's pipes");
	/* A member closed since the set was read: this answer is not kept. */
	if (c == SV_FD_GONE) {
		free(p->epi_text);
		p->epi_text = NULL;
	}
	p->epi_internal = in;
	snprintf(p->epi_why, sizeof(p->epi_why), "%s", why);
	return in;
}

/* ---- a poll of descriptors ---- */

/* Descriptors ready in w's poll: their results written to the process's
 * array, their count; 0 none; -errno. */
static int poll_take(struct sv_wait *w)
{
	struct pollfd ours[SV_POLL_FDS], theirs[SV_POLL_FDS];
	struct iovec l = { .iov_base = theirs, .iov_len = (size_t)w->n_pfd * sizeof(theirs[0]) };
	struct iovec r = { .iov_base = (void *)w->events, .iov_len = l.iov_len };
	int n;

	for (int i = 0; i < w->n_pfd; i++)
		ours[i] = (struct pollfd){ .fd = w->pfd_ours[i], .events = w->pfd_events[i] };
	if ((n = poll(ours, (nfds_t)w->n_pfd, 0)) <= 0)
		return n < 0 ? -errno : 0;
	for (int i = 0; i < w->n_pfd; i++)
		theirs[i] = (struct pollfd){ .fd = w->pfd_num[i], .events = w->pfd_events[i],
					     .revents = ours[i].revents };
	if (process_vm_writev(w->tid, &l, 1, &r, 1, 0) != (ssize_t)l.iov_len)
		return -EFAULT;
	return n;
}

/*
 * A poll or ppoll of descriptors, all of them the run's (sv_fd_classify): our
 * duplicates of them (pidfd_getfd, as of an epoll set) and an epoll set of
 * ours that wakes the main loop when one is ready. 1: the wait is ours; 0:
 * the kernel's (too many descriptors, one of the world's or not open:
 * there it keeps its real timeout, or says POLLNVAL); -errno: the answer.
 */
static int poll_fds(struct supervise *s, struct sv_proc *p, const struct seccomp_notif *req,
		    struct sv_wait *w)
{
	const struct seccomp_data *d = &req->data;
	uint32_t nfds = (uint32_t)d->args[1];
	struct pollfd a[SV_POLL_FDS];
	struct iovec l = { .iov_base = a, .iov_len = nfds * sizeof(a[0]) };
	struct iovec r = { .iov_base = (void *)d->args[0], .iov_len = l.iov_len };
	char why[192];

	if (nfds > SV_POLL_FDS)
		return 0;
	if (process_vm_readv(req->pid, &l, 1, &r, 1, 0) != (ssize_t)l.iov_len)
		return -EFAULT;
	if (p->pidfd < 0 && (p->pidfd = syscall(SYS_pidfd_open, p->pid, 0)) < 0)
		return 0;
	w->events = d->args[0];
	w->n_pfd = (int)nfds;
	for (uint32_t i = 0; i < nfds; i++) {
		w->pfd_num[i] = a[i].fd;
		w->pfd_events[i] = a[i].events;
		w->pfd_ours[i] = -1;
	}
	for (uint32_t i = 0; i < nfds; i++) {
		if (a[i].fd < 0)
			continue;
		if (sv_fd_classify(s, p, a[i].fd, why, sizeof(why)) != SV_FD_RUN ||
		    (w->pfd_ours[i] = syscall(SYS_pidfd_getfd, p->pidfd, a[i].fd, 0)) < 0) {
			if (s->debug)
				eng_warn("supervisor: poll of %d on real time: %s", w->tid, why);
			return 0;
		}
		fcntl(w->pfd_ours[i], F_SETFD, FD_CLOEXEC);
	}
	if ((w->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0)
		return 0;
	w->own_ep = true;
	for (int i = 0; i < w->n_pfd; i++) {
		/* poll's bits are epoll's (POLLIN is EPOLLIN, ...) */
		struct epoll_event ev = { .events = (uint16_t)w->pfd_events[i] | EPOLLERR | EPOLLHUP };

		if (w->pfd_ours[i] >= 0 && epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->pfd_ours[i], &ev) < 0)
			return 0;
	}
	return 1;
}

/* Events ready in w's set: copied to the process, their count; 0 none;
 * -errno. */
static int epoll_take(struct sv_wait *w)
{
	struct epoll_event ev[MAX_EVENTS];
	int n = epoll_wait(w->epfd, ev, w->maxevents < MAX_EVENTS ? w->maxevents : MAX_EVENTS, 0);
	struct iovec l = { .iov_base = ev }, r = { .iov_base = (void *)w->events };

	if (n <= 0)
		return n < 0 ? -errno : 0;
	l.iov_len = r.iov_len = (size_t)n * sizeof(ev[0]);
	if (process_vm_writev(w->tid, &l, 1, &r, 1, 0) != (ssize_t)l.iov_len)
		return -EFAULT;
	return n;
}

/* Ready descriptors of w's poll or epoll set: as poll_take, epoll_take. */
static int fds_take(struct sv_wait *w)
{
	return w->n_pfd ? poll_take(w) : epoll_take(w);
}

/* ---- a wait begins ---- */

/* sec seconds and nsec nanoseconds (both >= 0, nsec under a second) as
 * nanoseconds; a time too far for 64 bits is far enough (INT64_MAX / 2). */
static int64_t ns_of(int64_t sec, int64_t nsec)
{
	return sec > INT64_MAX / 1000000000LL - 1 ? INT64_MAX / 2 : sec * 1000000000LL + nsec;
}

static int read_ts(int pid, uint64_t addr, int64_t *ns)
{
	struct timespec ts;
	struct iovec l = { .iov_base = &ts, .iov_len = sizeof(ts) };
	struct iovec r = { .iov_base = (void *)addr, .iov_len = sizeof(ts) };

	if (process_vm_readv(pid, &l, 1, &r, 1, 0) != sizeof(ts))
		return -EFAULT;
	if (ts.tv_sec < 0 || ts.tv_nsec < 0 || ts.tv_nsec >= 1000000000L)
		return -EINVAL;
	*ns = ns_of(ts.tv_sec, ts.tv_nsec);
	return 0;
}

static void lock(struct supervise *s)
{
	if (s->wv_started)
		pthread_mutex_lock(&s->wv_lock);
}

static void unlock(struct supervise *s)
{
	if (s->wv_started)
		pthread_mutex_unlock(&s->wv_lock);
}

/* A wait leaves the table (the helper must not read its slot meanwhile). */
static void wait_free(struct supervise *s, struct sv_wait *w)
{
	lock(s);
	w->used = false;
	s->n_waits--;
	unlock(s);
	for (int i = 0; i < w->n_pfd; i++)
		if (w->pfd_ours[i] >= 0)
			close(w->pfd_ours[i]);
	if (w->own_ep && w->epfd >= 0)
		close(w->epfd);
	w->n_pfd = 0;
	w->own_ep = false;
	w->epfd = -1;
}

static struct sv_wait *wait_new(struct supervise *s)
{
	for (int i = 0; i < SV_MAX_WAITS; i++)
		if (!s->waits_[i].used) {
			lock(s);
			memset(&s->waits_[i], 0, sizeof(s->waits_[i]));
			s->waits_[i].epfd = -1;
			s->waits_[i].used = true;
			s->n_waits++;
			unlock(s);
			return &s->waits_[i];
		}
	return NULL;
}

/* A wait of the poll family that timed out: nothing is left of its time.
 * Written while the thread is still stopped in the call (the notification
 * still valid), before the answer lets it run. */
static void wait_left(struct supervise *s, const struct sv_wait *w, uint64_t id)
{
	struct timespec zero_ts = { 0, 0 };
	struct timeval zero_tv = { 0, 0 };
	struct iovec l = { .iov_base = w->left_kind == 1 ? (void *)&zero_tv : (void *)&zero_ts,
			   .iov_len = w->left_kind == 1 ? sizeof(zero_tv) : sizeof(zero_ts) };
	struct iovec r = { .iov_base = (void *)w->left_addr, .iov_len = l.iov_len };

	if (!w->left_kind || ioctl(s->listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) < 0)
		return;
	if (process_vm_writev(w->tid, &l, 1, &r, 1, 0) != (ssize_t)l.iov_len && s->debug)
		eng_warn("supervisor: cannot write the time left of %d's wait: %s", w->tid, strerror(errno));
}

static void wait_end(struct supervise *s, struct sv_wait *w, long val, int error)
{
	struct seccomp_notif_resp *resp = s->resp;
	/* The slot goes first: from the answer on, the thread runs, and the
	 * keeper must not take it for one still waiting on us. */
	struct hm_vslot *sl;

	lock(s);
	sl = w->slot;
	w->slot = NULL;
	unlock(s);
	sv_slot_end(s, sl);
	memset(resp, 0, s->resp_size);
	resp->id = w->id;
	resp->val = val;
	resp->error = error;
	if (!val && !error)
		wait_left(s, w, w->id);
	if (s->debug_waits)
		eng_warn("supervisor: %lld end %d of %d: %ld/%d at %lld%s", (long long)(real_mono() / 1000), w->nr, w->tid, val, error, (long long)vmono(s), w->lagged ? " (lag bound)" : "");
	/* ENOENT: the waiter is gone, or a signal took it out of the wait */
	ioctl(s->listener, SECCOMP_IOCTL_NOTIF_SEND, resp);
	wait_free(s, w);
}

/* The deadline of a sleep on the run's monotonic clock, or false: not a
 * clock of ours (the kernel's then). */
static int sleep_deadline(struct supervise *s, const struct seccomp_notif *req, int64_t *dl,
			  int64_t *len)
{
	const struct seccomp_data *d = &req->data;
	int64_t t, now = vmono(s), wall = __atomic_load_n(&s->vc->wall_off, __ATOMIC_ACQUIRE);
	int clk = (int)d->args[0], r;
	bool abs = d->nr == SV_NR_CLOCK_NANOSLEEP && (d->args[1] & 1 /* TIMER_ABSTIME */);

	if (d->nr == SV_NR_NANOSLEEP) {
		if ((r = read_ts(req->pid, d->args[0], &t)) < 0)
			return r;
		*len = t;
		*dl = now + t;
		return 1;
	}
	if (clk != CLOCK_REALTIME && clk != CLOCK_MONOTONIC && clk != CLOCK_BOOTTIME &&
	    clk != 8 && clk != 9 && clk != 11)
		return 0;
	if ((r = read_ts(req->pid, d->args[2], &t)) < 0)
		return r;
	if (abs) {
		if (clk == CLOCK_REALTIME || clk == 8)
			t -= wall;
		else if (clk == 11)
			t -= wall + 37LL * 1000000000LL;
		*len = t - now;
		*dl = t;
	} else {
		*len = t;
		*dl = now + t;
	}
	return 1;
}

static bool poll_family(int nr)
{
	return nr == SV_NR_POLL || nr == SV_NR_PPOLL || nr == SV_NR_SELECT || nr == SV_NR_PSELECT6;
}

/*
 * poll, ppoll, select or pselect6 with a timeout, as the filter hands them
 * over: select and pselect6 of no descriptors, poll and ppoll of any (of
 * the run's own: poll_fds). Relative, on the run's monotonic clock. 1 with
 * its length; 0: the kernel's (one that sets a signal mask for the wait,
 * which the supervisor cannot do for it, or a poll poll_fds leaves to it);
 * -errno: the answer. The time left is written back when it times out
 * (wait_left), as Linux does.
 */
static int poll_sleep(struct supervise *s, struct sv_proc *p, const struct seccomp_notif *req,
		      struct sv_wait *w, int64_t *len)
{
	const struct seccomp_data *d = &req->data;
	uint64_t mask[2] = { 0, 0 }; /* pselect6's { sigset pointer, its size } */
	struct iovec l = { .iov_base = mask, .iov_len = sizeof(mask) };
	struct iovec r = { .iov_base = (void *)d->args[5], .iov_len = sizeof(mask) };
	struct timeval tv;
	int rc;

	switch (d->nr) {
	case SV_NR_POLL:
		*len = (int64_t)(int)d->args[2] * 1000000LL;
		return (uint32_t)d->args[1] ? poll_fds(s, p, req, w) : 1;
	case SV_NR_PPOLL:
		if (d->args[3])
			return 0;
		w->left_addr = d->args[2];
		w->left_kind = 2;
		if ((rc = read_ts(req->pid, d->args[2], len)) < 0)
			return rc;
		return (uint32_t)d->args[1] ? poll_fds(s, p, req, w) : 1;
	case SV_NR_PSELECT6:
		if (d->args[5] && process_vm_readv(req->pid, &l, 1, &r, 1, 0) != sizeof(mask))
			return -EFAULT;
		if (mask[0])
			return 0;
		w->left_addr = d->args[4];
		w->left_kind = 2;
		return (rc = read_ts(req->pid, d->args[4], len)) < 0 ? rc : 1;
	default: /* select: a timeval, whose microseconds may exceed a second */
		l = (struct iovec){ .iov_base = &tv, .iov_len = sizeof(tv) };
		r = (struct iovec){ .iov_base = (void *)d->args[4], .iov_len = sizeof(tv) };
		if (process_vm_readv(req->pid, &l, 1, &r, 1, 0) != sizeof(tv))
			return -EFAULT;
		if (tv.tv_sec < 0 || tv.tv_usec < 0)
			return -EINVAL;
		w->left_addr = d->args[4];
		w->left_kind = 1;
		*len = ns_of(tv.tv_sec > INT64_MAX - tv.tv_usec / 1000000 ? INT64_MAX
									   : tv.tv_sec + tv.tv_usec / 1000000,
			     (int64_t)(tv.tv_usec % 1000000) * 1000);
		return 1;
	}
}

/* Ask the keeper to look at the run now (daemon/quiesce.c): a write(2) to
 * the page file, of a byte of padding as it is. */
static void poke(struct supervise *s)
{
	uint8_t b;

	if (s->page_fd < 0)
		return;
	b = __atomic_load_n((uint8_t *)&s->vc->pad1[0], __ATOMIC_RELAXED);
	if (pwrite(s->page_fd, &b, 1, offsetof(struct hm_vclock, pad1)) != 1) {
		/* the keeper's 50 ms tick comes anyway */
	}
}

static int read_word(int pid, uint64_t addr, uint32_t *v)
{
	struct iovec l = { .iov_base = v, .iov_len = sizeof(*v) };
	struct iovec r = { .iov_base = (void *)addr, .iov_len = sizeof(*v) };

	return process_vm_readv(pid, &l, 1, &r, 1, 0) == sizeof(*v) ? 0 : -EFAULT;
}

/*
 * A futex wait with a timeout (the filter hands over no other): FUTEX_WAIT
 * has a relative one, FUTEX_WAIT_BITSET an absolute one on CLOCK_MONOTONIC,
 * or CLOCK_REALTIME with FUTEX_CLOCK_REALTIME: the program read either
 * through the synthetic vDSO, so it is on the run's clock: monotonic as
 * is, realtime less the page's wall offset (as the vDSO adds it). Never a
 * back-off that ends at once, however short: a futex waiter waits for a
 * wake, and Go's system monitor sleeps until its next timer this way (a
 * 9 us wait that ended at once, the clock staying, had it spin until the
 * lag bound). But one of SHORT_NS or less is also a poll of other threads'
 * progress, which comes while the run is busy, so its clock stands: Go's
 * stopTheWorld and forEachP wait 100 us for the other threads to stop,
 * then signal them again (a preemption can be lost). Held until the clock
 * got there, such a wait lasted until the lag bound, a second: 100
 * runtime.GC() took 5 s instead of 0.13 s. So it also ends, the clock
 * staying, after POLL_HOLD_NS of real time, unless the keeper has asked
 * about it (the run is idle: the clock is about to move there). 1 with the
 * deadline and length; -errno: the answer (EAGAIN: the word is not val any
 * more; ETIMEDOUT: an absolute deadline that passed).
 */
static int futex_deadline(struct supervise *s, const struct seccomp_notif *req, int64_t *dl,
			  int64_t *len)
{
	const struct seccomp_data *d = &req->data;
	uint32_t op = (uint32_t)d->args[1], word;
	int64_t t, now = vmono(s);
	int r;

	if ((r = read_ts(req->pid, d->args[3], &t)) < 0)
		return r;
	if ((op & FUTEX_CMD_MASK) == FUTEX_WAIT) {
		*len = t;
		*dl = now + t;
	} else {
		if (op & FUTEX_CLOCK_REALTIME)
			t -= __atomic_load_n(&s->vc->wall_off, __ATOMIC_ACQUIRE);
		*dl = t;
		*len = t - now;
	}
	if (*len <= 0)
		return -ETIMEDOUT;
	if ((r = read_word(req->pid, d->args[0], &word)) < 0)
		return r;
	return word == (uint32_t)d->args[2] ? 1 : -EAGAIN;
}

/* An epoll wait with a timeout: our duplicate of its set, and whether all
 * of it is the run's (else the timeout stays real). 1 with its length; 0:
 * the kernel's (it says what is wrong with the call). */
static int epoll_begin(struct supervise *s, struct sv_proc *p, const struct seccomp_notif *req,
		       struct sv_wait *w, int64_t *len)
{
	const struct seccomp_data *d = &req->data;
	char why[192];

	w->events = d->args[1];
	w->maxevents = (int)d->args[2];
	*len = (int64_t)(int)d->args[3] * 1000000LL;
	if (w->maxevents <= 0 || (w->epfd = epoll_dup(s, p, (int)d->args[0])) < 0)
		return 0;
	w->external = !epoll_internal(s, p, (int)d->args[0], why, sizeof(why));
	if (s->debug)
		eng_warn("supervisor: epoll wait of %d for %lld ms on %s: %s", w->tid,
		       (long long)(*len / 1000000), w->external ? "real time" : "the run's clock", why);
	return 1;
}

bool sv_wait_begin(struct supervise *s, struct sv_proc *p, const struct seccomp_notif *req,
		   struct seccomp_notif_resp *resp)
{
	const struct seccomp_data *d = &req->data;
	bool epoll = d->nr == SV_NR_EPOLL_WAIT || d->nr == SV_NR_EPOLL_PWAIT;
	int64_t dl = 0, len = 0;
	struct sv_wait *w;
	int r, n;

	if (!(w = wait_new(s))) {
		resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE; /* too many: a real wait */
		return false;
	}
	w->id = req->id;
	w->tid = (int)req->pid;
	w->p = p;
	w->nr = d->nr;
	s->wstat[epoll ? SV_WS_EPOLL : poll_family(d->nr) ? SV_WS_POLL
			   : d->nr == SV_NR_FUTEX ? SV_WS_FUTEX : SV_WS_SLEEP]++;
	if (epoll || poll_family(d->nr)) {
		r = epoll ? epoll_begin(s, p, req, w, &len) : poll_sleep(s, p, req, w, &len);
		dl = vmono(s) + len;
	} else { /* a futex wait or a sleep: its deadline */
		r = d->nr == SV_NR_FUTEX ? futex_deadline(s, req, &dl, &len)
					 : sleep_deadline(s, req, &dl, &len);
	}
	if (r > 0 && w->epfd >= 0 && (n = fds_take(w)) != 0) {
		s->wstat[SV_WS_AT_ONCE]++;
		wait_end(s, w, n > 0 ? n : 0, n < 0 ? n : 0);
		return true; /* answered: ready already */
	}
	if (r <= 0 || (!epoll && d->nr != SV_NR_FUTEX && len <= SHORT_NS)) {
		s->wstat[r == 0 ? SV_WS_KERNEL : r < 0 ? SV_WS_AT_ONCE : SV_WS_BACKOFF]++;
		if (r == 0)
			resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
		else if (r < 0)
			resp->error = r;
		else /* a back-off: over at once, the clock stays (val 0) */
			wait_left(s, w, req->id);
		wait_free(s, w);
		return false;
	}
	if (d->nr == SV_NR_FUTEX) {
		w->faddr = d->args[0];
		w->fval = (uint32_t)d->args[2];
	}
	w->deadline = dl + SLACK_NS;
	w->poll = d->nr == SV_NR_FUTEX && len <= SHORT_NS;
	w->real_deadline = real_mono() + (w->poll ? POLL_HOLD_NS : len);
	lock(s);
	w->slot = sv_slot_begin(s, p->pid, p->image, w->tid, w->deadline, w->external);
	if (w->slot) {
		w->seq = __atomic_load_n(&w->slot->seq, __ATOMIC_ACQUIRE);
		/* The keeper asks us before its deadline: a futex word, or a
		 * descriptor a process of the run made ready just before the
		 * run went idle, is seen only here, a moment later. */
		if (w->nr == SV_NR_FUTEX || w->epfd >= 0)
			__atomic_or_fetch(&w->slot->flags, (uint32_t)HM_VSF_ASK, __ATOMIC_RELEASE);
	}
	unlock(s);
	if (!w->external)
		helper_kick(s);
	/* The thread blocked before we published its deadline: the run may be
	 * idle already, with no new record for the keeper to come. Ask it to
	 * look (daemon/quiesce.c): a write(2) to the page file, of a byte of
	 * padding as it is. */
	if (!w->external)
		poke(s);
	s->waits_total++;
	if (s->debug_waits)
		eng_warn("supervisor: %lld wait %d of %d for %lld us until %lld%s slot %ld", (long long)(real_mono() / 1000),
		       w->nr, w->tid, (long long)(len / 1000), (long long)w->deadline, w->slot ? "" : " (no slot)", w->slot ? (long)(w->slot - HM_VCLOCK_SLOTS(s->vc)) : -1L);
	return true;
}

/* ---- the main loop's part ---- */

int supervise_wait_pollfds(struct supervise *s, struct pollfd *pfd, int max)
{
	int n = 0;

	if (!s->n_waits)
		return 0; /* the table is not read while empty */
	if (s->wv_started && n < max)
		pfd[n++] = (struct pollfd){ .fd = s->wv_efd, .events = POLLIN };
	for (int i = 0; i < SV_MAX_WAITS && n < max; i++)
		if (s->waits_[i].used && s->waits_[i].epfd >= 0)
			pfd[n++] = (struct pollfd){ .fd = s->waits_[i].epfd, .events = POLLIN };
	return n;
}

int supervise_wait_timeout(struct supervise *s, int timeout_ms)
{
	int64_t now;

	if (!s->n_waits)
		return timeout_ms;
	now = real_mono();
	for (int i = 0; i < SV_MAX_WAITS; i++) {
		struct sv_wait *w = &s->waits_[i];
		int ms;

		if (!w->used)
			continue;
		/* the keeper's move is seen by looking: every millisecond */
		ms = w->external ? (int)((w->real_deadline - now) / 1000000 + 1) : 1;
		if (ms < 1)
			ms = 1;
		if (timeout_ms < 0 || ms < timeout_ms)
			timeout_ms = ms;
	}
	return timeout_ms;
}

void supervise_wait_tick(struct supervise *s)
{
	uint64_t v;
	uint32_t v32;

	if (s->wv_started && read(s->wv_efd, &v, sizeof(v)) < 0) {
		/* nothing woke: the millisecond's look */
	}
	for (int i = 0; i < SV_MAX_WAITS && s->n_waits; i++) {
		struct sv_wait *w = &s->waits_[i];
		bool lagged = false;
		int r;

		if (!w->used)
			continue;
		if (ioctl(s->listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &w->id) < 0) {
			sv_slot_end(s, w->slot); /* interrupted: it will come back */
			wait_free(s, w);
			continue;
		}
		if (w->epfd >= 0 && (r = fds_take(w)) != 0) {
			s->wstat[SV_WS_EVENT]++;
			wait_end(s, w, r > 0 ? r : 0, r < 0 ? r : 0);
			continue;
		}
		/* A futex wait is woken by a change of its word: every waker
		 * changes it before FUTEX_WAKE (or a waiter about to sleep
		 * would miss the wake); 0 is what a wake returns, and a waiter
		 * looks again at the word anyway. */
		if (w->nr == SV_NR_FUTEX &&
		    (read_word(w->tid, w->faddr, &v32) < 0 || v32 != w->fval)) {
			s->wstat[SV_WS_EVENT]++;
			wait_end(s, w, 0, 0);
			continue;
		}
		/* The keeper would move the clock to its deadline: the word did
		 * not change (looked at just now), say so, and ask it to look. */
		if ((w->nr == SV_NR_FUTEX || w->epfd >= 0) && w->slot &&
		    __atomic_load_n(&w->slot->woken, __ATOMIC_ACQUIRE) == w->seq &&
		    __atomic_load_n(&w->slot->pad, __ATOMIC_ACQUIRE) != w->seq) {
			__atomic_store_n(&w->slot->pad, w->seq, __ATOMIC_RELEASE);
			poke(s);
		}
		/* The lag bound fired it (the run was busy all along,
		 * docs/virtual-time.md): it ends as at its deadline, and the
		 * run's clock goes there (the synthetic vDSO has no thread of
		 * its own to keep a waiter's readings in, as the shim does). */
		if (w->slot && !w->external &&
		    __atomic_load_n(&w->slot->lagged, __ATOMIC_ACQUIRE) == w->seq && w->seq) {
			(void)hm_vclock_raise(&s->vc->mono, w->deadline); /* moved or later */
			__atomic_add_fetch(&s->vc->activity, 1, __ATOMIC_RELAXED);
			lagged = w->lagged = true;
		}
		if (w->external && real_mono() >= w->real_deadline) {
			/* The world's deadline came: the run's clock goes there too. */
			(void)hm_vclock_raise(&s->vc->mono, w->deadline); /* moved or later */
			s->wstat[SV_WS_REAL]++;
			wait_end(s, w, 0, w->nr == SV_NR_FUTEX ? -ETIMEDOUT : 0);
		} else if (!w->external && vmono(s) >= w->deadline) {
			s->wstat[lagged ? SV_WS_LAG : SV_WS_CLOCK]++;
			wait_end(s, w, 0, w->nr == SV_NR_FUTEX ? -ETIMEDOUT : 0);
		} else if (w->poll && real_mono() >= w->real_deadline &&
			   !(w->slot && __atomic_load_n(&w->slot->woken, __ATOMIC_ACQUIRE) == w->seq)) {
			s->wstat[SV_WS_HOLD]++;
			wait_end(s, w, 0, -ETIMEDOUT); /* a poll: futex_deadline */
		}
	}
}

/* The run is over, or the process execs: its waits go. */
void supervise_wait_drop(struct supervise *s, struct sv_proc *p)
{
	for (int i = 0; i < SV_MAX_WAITS && s->n_waits; i++)
		if (s->waits_[i].used && (!p || s->waits_[i].p == p)) {
			sv_slot_end(s, s->waits_[i].slot);
			wait_free(s, &s->waits_[i]);
		}
	if (!p)
		return;
	if (p->ep_ours >= 0)
		close(p->ep_ours);
	if (p->pidfd >= 0)
		close(p->pidfd);
	if (p->epi_fd >= 0)
		close(p->epi_fd);
	free(p->epi_text);
	p->epi_text = NULL;
	p->ep_ours = p->pidfd = p->epi_fd = -1;
}
