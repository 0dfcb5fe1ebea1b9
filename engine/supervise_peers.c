// SPDX-License-Identifier: MIT
/*
 * Which descriptors of a supervised process wait on the real world: the
 * shim's rules (preload/peers.c, docs/virtual-time.md "The real world"),
 * read from outside the process, on duplicates of its descriptors
 * (pidfd_getfd). A timed wait on a set with one of the world's keeps its
 * real deadline (supervise_wait.c); a wait on the run's alone is on the
 * run's clock.
 *   - eventfds, files and directories are the run's; a pipe is unless the
 *     run's first process inherited it as 0, 1 or 2 (the page lists those);
 *   - a socket without a peer (listening, unconnected) is the run's;
 *   - a unix socket's peer is the run's when its process (SO_PEERCRED) is
 *     in the process's cgroup or below it;
 *   - a TCP or UDP peer on loopback is the run's when a process of the run
 *     marked its port in the clock page; any other inet peer is the world;
 *   - anything else (a timerfd, a netlink socket, a terminal) is taken as
 *     the world's: conservative, its timeout stays real.
 * The shim marks the loopback ports its processes bind; a supervised (Go,
 * static) process binds without it, so the ports of its loopback sockets
 * are marked here, the first time one of its waits meets them, for the
 * life of the process's image (released when the image ends or the entry
 * is reused: sv_peers_release). Every socket of a set is marked before any
 * is judged, so a client and a server in one process (net/http's tests)
 * see each other's ports whatever the order of the set.
 *
 * Trust: pidfd_getfd needs the ptrace access to the process that the
 * supervisor has (it is its supervisor, the same user); a duplicate is
 * only asked (getsockopt, getsockname, getpeername) and closed.
 */
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include "util.h"
#include "engine.h"
#include "supervise.h"
#include "hermetic/vclock.h"

/* A duplicate of process p's descriptor tfd, or -errno. */
static int peer_dup(struct sv_proc *p, int tfd)
{
	int d;

	if (p->pidfd < 0 && (p->pidfd = (int)syscall(SYS_pidfd_open, p->pid, 0)) < 0)
		return -errno;
	/* (the kernel sets close-on-exec on it) */
	d = (int)syscall(SYS_pidfd_getfd, p->pidfd, tfd, 0);
	return d < 0 ? -errno : d;
}

static int sock_int(int d, int opt)
{
	int v = -1;
	socklen_t len = sizeof(v);

	return getsockopt(d, SOL_SOCKET, opt, &v, &len) < 0 ? -1 : v;
}

static bool loop_v4(uint32_t a)
{
	return (a >> 24) == 127 || a == 0;
}

/* An inet address on loopback: true with *port. */
static bool inet_loop(const struct sockaddr_storage *ss, uint16_t *port)
{
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *s = (const struct sockaddr_in *)ss;

		*port = ntohs(s->sin_port);
		return loop_v4(ntohl(s->sin_addr.s_addr));
	}
	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s = (const struct sockaddr_in6 *)ss;
		const struct in6_addr *a = &s->sin6_addr;

		*port = ntohs(s->sin6_port);
		return IN6_IS_ADDR_LOOPBACK(a) || IN6_IS_ADDR_UNSPECIFIED(a) ||
		       (IN6_IS_ADDR_V4MAPPED(a) && loop_v4(ntohl(((const uint32_t *)a)[3])));
	}
	return false;
}

static uint8_t *port_map(struct supervise *s, bool udp)
{
	return udp ? HM_VCLOCK_UDP(s->vc) : HM_VCLOCK_TCP(s->vc);
}

/* Mark the loopback port socket d (of process p) is bound to, once per
 * image: as the shim's bind() does for its processes. */
static void mark_local(struct supervise *s, struct sv_proc *p, int d)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	int type = sock_int(d, SO_TYPE);
	bool udp = type == SOCK_DGRAM;
	uint16_t port = 0, key;
	uint8_t *m;

	if ((type != SOCK_STREAM && !udp) || getsockname(d, (struct sockaddr *)&ss, &len) < 0 ||
	    !inet_loop(&ss, &port) || !port)
		return;
	key = port;
	for (int i = 0; i < p->n_marks; i++)
		if (p->marks[i] == key && p->marks_udp[i] == udp)
			return;
	if (p->n_marks >= SV_PEER_MARKS)
		return; /* (unmarked: its peers wait on real time, as before) */
	m = &port_map(s, udp)[port];
	if (__atomic_load_n(m, __ATOMIC_RELAXED) < 255)
		__atomic_fetch_add(m, 1, __ATOMIC_RELEASE);
	p->marks[p->n_marks] = key;
	p->marks_udp[p->n_marks++] = udp;
}

void sv_peers_release(struct supervise *s, struct sv_proc *p)
{
	for (int i = 0; i < p->n_marks && s->vc; i++) {
		uint8_t *m = &port_map(s, p->marks_udp[i])[p->marks[i]];

		/* (255 is a count that overflowed: it stays, as the shim's) */
		if (__atomic_load_n(m, __ATOMIC_RELAXED) && __atomic_load_n(m, __ATOMIC_RELAXED) < 255)
			__atomic_fetch_sub(m, 1, __ATOMIC_RELEASE);
	}
	p->n_marks = 0;
}

/* The cgroup line ("0::/...") of process pid into buf, or "" */
static void cgroup_of(int pid, char *buf, size_t size)
{
	char path[48], all[1024], *l, *nl;
	int fd;
	ssize_t n;

	buf[0] = 0;
	snprintf(path, sizeof(path), "/proc/%d/cgroup", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return;
	n = read(fd, all, sizeof(all) - 1);
	(void)close(fd);
	if (n <= 0)
		return;
	all[n] = 0;
	/* cgroup v2's line; a hybrid layout lists v1 lines first */
	for (l = all; l && *l; l = nl ? nl + 1 : NULL) {
		nl = strchr(l, '\n');
		if (nl)
			*nl = 0;
		if (!strncmp(l, "0::", 3)) {
			snprintf(buf, size, "%s", l + 3);
			return;
		}
	}
}

/* Is process peer in process p's cgroup or below it? */
static bool peer_in_run(struct sv_proc *p, int peer)
{
	char ours[512], theirs[512];
	size_t n;

	if (peer <= 0)
		return false;
	cgroup_of(p->pid, ours, sizeof(ours));
	cgroup_of(peer, theirs, sizeof(theirs));
	n = strlen(ours);
	return n && !strncmp(theirs, ours, n) && (theirs[n] == 0 || theirs[n] == '/');
}

/* Is TCP socket d's connect in progress (SYN_SENT)? */
static bool tcp_connecting(int d)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	memset(&ti, 0, sizeof(ti));
	return getsockopt(d, IPPROTO_TCP, TCP_INFO, &ti, &len) < 0 || ti.tcpi_state == TCP_SYN_SENT;
}

/* Socket d (process p's tfd): its SV_FD_* */
static int sock_class(struct supervise *s, struct sv_proc *p, int d, int tfd, char *why,
		      size_t wsize)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	int dom = sock_int(d, SO_DOMAIN);
	uint16_t port = 0;

	/* A listening socket is the run's, for good. One with no peer yet is
	 * the run's only for now (the shim's rule too), and not for good: it
	 * may connect without its set changing. A TCP connect in progress has
	 * no peer to read yet (getpeername says ENOTCONN in SYN_SENT): only a
	 * host beyond loopback leaves it there, so it is the world's. */
	bool listening = sock_int(d, SO_ACCEPTCONN) == 1;

	if (dom == AF_UNIX) {
		struct ucred cr = { 0 };
		socklen_t cl = sizeof(cr);

		if (getpeername(d, (struct sockaddr *)&ss, &len) < 0)
			return listening ? SV_FD_RUN : SV_FD_RUN_NOW;
		if (getsockopt(d, SOL_SOCKET, SO_PEERCRED, &cr, &cl) == 0 && peer_in_run(p, cr.pid))
			return SV_FD_RUN;
		snprintf(why, wsize, "descriptor %d: a unix socket whose peer (%d) is not the run's",
			 tfd, (int)cr.pid);
		return SV_FD_WORLD;
	}
	if (dom != AF_INET && dom != AF_INET6) {
		snprintf(why, wsize, "descriptor %d: a socket of family %d", tfd, dom);
		return SV_FD_WORLD;
	}
	if (getpeername(d, (struct sockaddr *)&ss, &len) < 0) {
		if (listening)
			return SV_FD_RUN;
		if (sock_int(d, SO_TYPE) == SOCK_STREAM && tcp_connecting(d)) {
			snprintf(why, wsize, "descriptor %d: a TCP connect in progress", tfd);
			return SV_FD_UNMARKED;
		}
		return SV_FD_RUN_NOW;
	}
	if (!inet_loop(&ss, &port)) {
		snprintf(why, wsize, "descriptor %d: a socket whose peer is not this machine", tfd);
		return SV_FD_WORLD;
	}
	if (__atomic_load_n(&port_map(s, sock_int(d, SO_TYPE) == SOCK_DGRAM)[port],
			    __ATOMIC_ACQUIRE))
		return SV_FD_RUN;
	snprintf(why, wsize, "descriptor %d: loopback port %u, which no process of the run bound",
		 tfd, port);
	return SV_FD_UNMARKED;
}

/* A descriptor that is no socket: SV_FD_RUN or SV_FD_WORLD. */
static int file_class(struct supervise *s, const char *path, const char *link, int tfd,
		      char *why, size_t wsize)
{
	struct stat st;
	bool out = false;

	if (!strcmp(link, "anon_inode:[eventfd]"))
		return SV_FD_RUN;
	if (stat(path, &st) < 0) {
		/* (closed since the set was read: not kept) */
		snprintf(why, wsize, "descriptor %d: %s: %s", tfd, link, strerror(errno));
		return SV_FD_UNMARKED;
	}
	/* A file is always ready, as the shim has it: Go's os.Open adds the
	 * /proc/sys file its Listen reads to the poller's set, for as long as
	 * it reads it; a netpoller wait that began then was on real time, and
	 * stayed so until its 100 s ended (net/http's TestLinuxSendfile). */
	if (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))
		return SV_FD_RUN;
	if (strncmp(link, "pipe:[", 6))
		return SV_FD_WORLD;
	for (uint32_t i = 0; i < s->vc->n_outside && i < 8; i++)
		out |= s->vc->outside[i][0] == (uint64_t)st.st_dev &&
		       s->vc->outside[i][1] == (uint64_t)st.st_ino;
	if (out)
		snprintf(why, wsize, "descriptor %d: %s, the run's stdio from outside", tfd, link);
	return out ? SV_FD_WORLD : SV_FD_RUN;
}

int sv_peers_classify(struct supervise *s, struct sv_proc *p, const int *tfds, int n, char *why,
		      size_t wsize)
{
	int dups[SV_PEER_FDS], worst = SV_FD_RUN, i;
	char path[96], link[128];

	if (n > SV_PEER_FDS) {
		snprintf(why, wsize, "a set of %d descriptors (more than %d)", n, SV_PEER_FDS);
		return SV_FD_WORLD;
	}
	/* First what each is, and every socket's own loopback port marked:
	 * then judge, so that the order of the set does not matter. */
	for (i = 0; i < n; i++) {
		ssize_t l;

		dups[i] = -1;
		snprintf(path, sizeof(path), "/proc/%d/fd/%d", p->pid, tfds[i]);
		l = readlink(path, link, sizeof(link) - 1);
		link[l > 0 ? l : 0] = 0;
		snprintf(why, wsize, "descriptor %d: %s", tfds[i], l > 0 ? link : "gone");
		if (l <= 0) {
			worst = SV_FD_UNMARKED; /* closed since the set was read: not kept */
			break;
		}
		if (strncmp(link, "socket:[", 8)) {
			if ((worst = file_class(s, path, link, tfds[i], why, wsize)) != SV_FD_RUN)
				break;
			continue;
		}
		if ((dups[i] = peer_dup(p, tfds[i])) < 0) {
			snprintf(why, wsize, "descriptor %d: %s: %s", tfds[i], link, strerror(-dups[i]));
			worst = SV_FD_WORLD;
			break;
		}
		mark_local(s, p, dups[i]);
	}
	/* (i: the descriptors looked at; one that ended the look has no duplicate) */
	for (int j = 0; j < i && worst < SV_FD_UNMARKED; j++) {
		int c = dups[j] >= 0 ? sock_class(s, p, dups[j], tfds[j], why, wsize) : SV_FD_RUN;

		worst = c > worst ? c : worst;
	}
	for (int j = 0; j < i; j++)
		if (dups[j] >= 0)
			(void)close(dups[j]);
	return worst;
}
