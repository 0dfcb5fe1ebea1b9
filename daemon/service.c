// SPDX-License-Identifier: MIT
/*
 * hermeticd under a service manager (packaging/systemd/): the listening
 * socket handed over by socket activation, readiness proven by a request
 * through that very socket, STATUS= lines, the watchdog, and log lines
 * with syslog priorities. Without systemd each of these is a no-op.
 */
#include <fcntl.h>
#include <stdarg.h>
#include <syslog.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <systemd/sd-daemon.h>
#include "util.h"
#include "daemon.h"

/* stderr is connected to the journal: systemd sets JOURNAL_STREAM to its
 * device and inode. Then each line starts with "<N>", which journald
 * turns into the entry's priority; by hand, lines say "hermeticd: ". */
static int log_to_journal = -1;

static bool stderr_is_journal(void)
{
	const char *e = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	if (!e || sscanf(e, "%llu:%llu", &dev, &ino) != 2 || fstat(STDERR_FILENO, &st) < 0)
		return false;
	return st.st_dev == dev && st.st_ino == ino;
}

void hmd_log_at(int prio, const char *fmt, ...)
{
	char line[2048];
	va_list ap;

	if (log_to_journal < 0)
		log_to_journal = stderr_is_journal();
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	/* One write per line, so lines of two threads never interleave. */
	if (log_to_journal)
		fprintf(stderr, "<%d>%s\n", prio & LOG_PRIMASK, line);
	else
		fprintf(stderr, "hermeticd: %s\n", line);
	fflush(stderr);
}

int hmd_service_listen(struct hmd *d, const char *path)
{
	int n = sd_listen_fds(1), fd = SD_LISTEN_FDS_START, fl;
	struct sockaddr_un sa;
	socklen_t len = sizeof(sa);

	if (n < 0)
		return n;
	if (n == 0) {
		d->activated = false;
		return hmd_server_listen(d);
	}
	/* Socket activation: systemd made the socket (path, mode, group are
	 * the socket unit's) and keeps it across restarts of the daemon. */
	if (n > 1) {
		hmd_err("socket activation passed %d sockets; hermeticd takes exactly one", n);
		return -EINVAL;
	}
	if (sd_is_socket_unix(fd, SOCK_SEQPACKET, 1, NULL, 0) <= 0) {
		hmd_err("the socket passed by systemd is not a listening AF_UNIX SOCK_SEQPACKET "
			"socket (ListenSequentialPacket= in hermeticd.socket)");
		return -EINVAL;
	}
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 || fcntl(fd, F_SETFD, FD_CLOEXEC) < 0)
		return -errno;
	if (getsockname(fd, (struct sockaddr *)&sa, &len) < 0)
		return -errno;
	if (len <= offsetof(struct sockaddr_un, sun_path) || !sa.sun_path[0]) {
		hmd_err("the socket passed by systemd has no path");
		return -EINVAL;
	}
	snprintf(d->activated_path, sizeof(d->activated_path), "%.*s",
		 (int)(len - offsetof(struct sockaddr_un, sun_path)), sa.sun_path);
	d->socket_path = d->activated_path;
	d->activated = true;
	return fd;
}

/* Readiness: connect to our own socket by its path and send HELLO; the
 * reply comes back through accept and the request handler in the event
 * loop, and only then is READY=1 sent. So "ready" means a client can be
 * served, not merely that the programs loaded. */
int hmd_service_probe_start(struct hmd *d)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = HMD_EP(HMD_EP_PROBE, 0) };
	_cleanup_close_ int fd = -1;
	int r;

	if (strlen(d->socket_path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, d->socket_path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -errno;
	r = hm_send(fd, HM_REQ_HELLO, 1, NULL, 0, -1);
	if (r < 0)
		return r;
	if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
		return -errno;
	d->probe_fd = steal_fd(&fd);
	return 0;
}

/* The probe's answer arrived: ready. Returns 0, or -errno when the answer
 * is not a HELLO (then the daemon cannot serve and must not claim to). */
int hmd_service_probe_done(struct hmd *d)
{
	char buf[HM_MSG_MAX];
	struct hm_hdr *h;
	int fd = -1;
	ssize_t n = hm_recv(d->probe_fd, buf, sizeof(buf), &h, &fd);

	if (n == -EAGAIN)
		return 0; /* spurious wake-up: not yet */
	if (fd >= 0)
		close(fd);
	(void)epoll_ctl(d->epfd, EPOLL_CTL_DEL, d->probe_fd, NULL); /* close() drops it too */
	close(d->probe_fd);
	d->probe_fd = -1;
	if (n < 0)
		return (int)n;
	if (h->type != HM_REP_HELLO)
		return -EPROTO;
	d->ready = true;
	hmd_log("ready: socket %s%s, cgroup subtree %s", d->socket_path,
		d->activated ? " (from systemd)" : "", d->cg.subtree);
	sd_notifyf(0, "READY=1\nSTATUS=Serving on %s: no runs", d->socket_path);
	d->status_runs = 0;
	return 0;
}

void hmd_service_status(struct hmd *d, const char *fmt, ...)
{
	char s[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s, sizeof(s), fmt, ap);
	va_end(ap);
	sd_notifyf(0, "STATUS=%s", s);
}

/* STATUS= follows the number of runs; called after every turn of the loop,
 * it talks to systemd only when the number changed. */
void hmd_service_update(struct hmd *d)
{
	if (!d->ready || d->status_runs == d->n_runs)
		return;
	d->status_runs = d->n_runs;
	if (d->n_runs)
		hmd_service_status(d, "Serving on %s: %d run%s", d->socket_path, d->n_runs,
				   d->n_runs == 1 ? "" : "s");
	else
		hmd_service_status(d, "Serving on %s: no runs", d->socket_path);
}

/* WatchdogSec=: a timer at half the interval; each expiry that the loop
 * gets to, with the daemon healthy, pings. A loop stuck in one request
 * sends nothing and systemd restarts the daemon. */
int hmd_service_watchdog_start(struct hmd *d)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = HMD_EP(HMD_EP_WATCHDOG, 0) };
	uint64_t usec = 0;
	struct itimerspec its = {};
	int r = sd_watchdog_enabled(0, &usec);

	d->watchdog_fd = -1;
	if (r <= 0)
		return r;
	usec /= 2;
	if (!usec)
		usec = 1;
	its.it_interval.tv_sec = usec / 1000000;
	its.it_interval.tv_nsec = (usec % 1000000) * 1000;
	its.it_value = its.it_interval;
	d->watchdog_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (d->watchdog_fd < 0)
		return -errno;
	if (timerfd_settime(d->watchdog_fd, 0, &its, NULL) < 0 ||
	    epoll_ctl(d->epfd, EPOLL_CTL_ADD, d->watchdog_fd, &ev) < 0) {
		r = -errno;
		close(d->watchdog_fd);
		d->watchdog_fd = -1;
		return r;
	}
	hmd_debug("watchdog: pinging every %llu us", (unsigned long long)usec);
	return 1;
}

/* Healthy: the listening socket still listens and the kernel's event ring
 * buffer is there to drain. */
static bool healthy(struct hmd *d)
{
	int v = 0;
	socklen_t len = sizeof(v);

	if (getsockopt(d->listen_fd, SOL_SOCKET, SO_ACCEPTCONN, &v, &len) < 0 || !v)
		return false;
	return hmd_bpf_events_fd(d->bpf) >= 0;
}

void hmd_service_watchdog(struct hmd *d)
{
	uint64_t t;

	if (read(d->watchdog_fd, &t, sizeof(t)) < 0) {
		/* nothing to do: a spurious wake-up */
	}
	if (healthy(d))
		sd_notify(0, "WATCHDOG=1");
	else
		hmd_err("unhealthy (socket not listening or no event ring buffer): "
			"no watchdog ping");
}

void hmd_service_stopping(struct hmd *d, const char *why)
{
	sd_notifyf(0, "STOPPING=1\nSTATUS=Stopping: %s", why);
	if (d->watchdog_fd >= 0)
		close(d->watchdog_fd);
	d->watchdog_fd = -1;
	if (d->probe_fd >= 0)
		close(d->probe_fd);
	d->probe_fd = -1;
}
