// SPDX-License-Identifier: MIT
/*
 * Which descriptors wait on the real world. A timed wait on one of them is
 * EXTERNAL (vclock.c): it keeps its real deadline and the run's clock waits
 * with it, because whoever answers is not a process of the run and answers
 * in real time. A socket talks to the real world when its peer is
 *   - not this machine (an --allow'ed host, anything under --network off);
 *   - a TCP/UDP port on loopback that no process of the run bound: a
 *     database or server started outside the run. Every process of the run
 *     marks the loopback ports it binds in the run's clock page, and binds a
 *     loopback client socket before connecting, so the server side sees the
 *     client's port marked before the connection exists;
 *   - a unix socket whose peer process (SO_PEERCRED) is not in the run's
 *     cgroup.
 * and a pipe or terminal is the real world when it is one of those the run's
 * first process inherited as 0, 1 or 2 (recorded in the clock page): the
 * other end is the CI's. Files, eventfds, other pipes, listening and
 * unconnected sockets are the run's. A descriptor is classified the first
 * time a wait meets it (so ones inherited across exec are too) and
 * forgotten when it is closed.
 *
 * Blocking calls without a timeout on such a descriptor (read, recv*,
 * connect) are EXTERNAL too while they block: the run is not idle while it
 * waits for the world, so its virtual timers do not fire meanwhile.
 *
 * epoll sets: epoll_ctl notes, per epoll descriptor, the descriptors of the
 * real world added to it; a wait on the set is EXTERNAL while one of those is.
 *
 * TCP between processes of the run has no Nagle delay (TCP_NODELAY is set
 * on loopback connections, both ends; the program still sees the value it
 * set itself). With Nagle, a small write waits for the peer's delayed ACK -
 * a timer in the kernel, up to 40 ms of real time - while the run looks idle
 * to the scheduler: the clock would move past data that is on its way.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include "shim.h"

#define EP_OUT 8 /* outside descriptors remembered per epoll set */

enum { C_UNKNOWN, C_RUN, C_OUTSIDE, C_LOOP_TCP, C_LOOP_UDP };

/* What we know of one descriptor; all zeros: nothing (fdtab.h). */
struct pfd {
	_Atomic uint8_t cls;
	/* TCP_NODELAY forced on (bit 0) and what the program set (bit 1) */
	_Atomic uint8_t nodelay;
	uint8_t bound_udp;
	_Atomic uint16_t port; /* the peer's, for C_LOOP_* */
	uint16_t bound_port; /* a loopback port this descriptor bound, marked in the page */
	pid_t bound_owner; /* the process that marked it unmarks it */
	int ep_n; /* an epoll set's outside members; -1: too many, take the set as outside */
	int ep_fd[EP_OUT];
};
#define PFD_SHIFT 10 /* the first segment: descriptors 0..1023 */

static struct {
	struct hm_fdtab fds; /* of struct pfd */
	_Atomic int high; /* 1 + the highest descriptor with an entry */
	_Atomic int outside; /* descriptors not C_RUN/C_UNKNOWN */
	char cgroup[256]; /* ours, from /proc/self/cgroup; "" until read */
} pe;

/* fd's entry; NULL when it has none (read as all zeros) and make is false,
 * or when memory ran out. */
static inline struct pfd *pfd(int fd, bool make)
{
	if (fd < 0)
		return NULL;
	if (make && fd >= atomic_load_explicit(&pe.high, memory_order_relaxed)) {
		int h = atomic_load(&pe.high);

		while (h <= fd && !atomic_compare_exchange_weak(&pe.high, &h, fd + 1))
			;
	}
	return hm_fdtab_at(&pe.fds, (unsigned)fd, sizeof(struct pfd), PFD_SHIFT, make);
}

int hm_fd_high(void)
{
	return atomic_load_explicit(&pe.high, memory_order_relaxed);
}

static uint8_t *port_map(bool udp)
{
	return udp ? HM_VCLOCK_UDP(hm.vc) : HM_VCLOCK_TCP(hm.vc);
}

static void set_class(int fd, uint8_t c, uint16_t port)
{
	struct pfd *p = pfd(fd, c != C_UNKNOWN);
	uint8_t old;

	if (!p)
		return;
	atomic_store(&p->port, port);
	old = atomic_exchange(&p->cls, c);
	if ((old >= C_OUTSIDE) != (c >= C_OUTSIDE))
		atomic_fetch_add(&pe.outside, c >= C_OUTSIDE ? 1 : -1);
}

/* Might any descriptor of ours lead out? (the cheap test before the exact one) */
bool hm_remote_open(void)
{
	return atomic_load_explicit(&pe.outside, memory_order_relaxed) > 0 ||
	       (hm.vc && __atomic_load_n(&hm.vc->n_outside, __ATOMIC_RELAXED));
}

/* The cgroup line of a process ("0::/..."), or "" */
static void cgroup_of(const char *path, char *buf, size_t size)
{
	long fd = hm_sys6(SYS_openat, AT_FDCWD, (long)path, O_RDONLY | O_CLOEXEC, 0, 0, 0);
	long n;
	char *nl;

	buf[0] = 0;
	if (fd < 0)
		return;
	n = hm_sys(SYS_read, fd, buf, size - 1);
	hm_sys(SYS_close, fd, 0, 0);
	if (n <= 0)
		return;
	buf[n] = 0;
	/* cgroup v2's line is "0::/path"; a hybrid layout lists v1 lines first */
	for (char *l = buf; l && *l; l = nl ? nl + 1 : NULL) {
		nl = strchr(l, '\n');
		if (!strncmp(l, "0::", 3)) {
			size_t len = nl ? (size_t)(nl - l) : strlen(l);

			memmove(buf, l, len);
			buf[len] = 0;
			return;
		}
	}
	buf[0] = 0;
}

/* Is process pid in the run (our cgroup, or below it)? */
static bool pid_in_run(pid_t pid)
{
	char path[48] = "/proc/", other[256];
	size_t n;

	if (pid <= 0)
		return false;
	if (pid == hm.pid)
		return true;
	if (!pe.cgroup[0])
		cgroup_of("/proc/self/cgroup", pe.cgroup, sizeof(pe.cgroup));
	hm_fmt_u64(path + 6, 24, (uint64_t)pid);
	memcpy(path + strlen(path), "/cgroup", 8);
	cgroup_of(path, other, sizeof(other));
	n = strlen(pe.cgroup);
	return n && !strncmp(other, pe.cgroup, n) && (other[n] == 0 || other[n] == '/');
}

static bool loop_v4(uint32_t a)
{
	return (a >> 24) == 127 || a == 0;
}

/* The peer of an inet address: C_OUTSIDE, or C_LOOP_* with *port. */
static uint8_t inet_class(const struct sockaddr *sa, bool udp, uint16_t *port)
{
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *s = (const struct sockaddr_in *)sa;

		*port = ntohs(s->sin_port);
		return loop_v4(ntohl(s->sin_addr.s_addr)) ? (udp ? C_LOOP_UDP : C_LOOP_TCP) : C_OUTSIDE;
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s = (const struct sockaddr_in6 *)sa;
		const struct in6_addr *a = &s->sin6_addr;
		bool loop = IN6_IS_ADDR_LOOPBACK(a) || IN6_IS_ADDR_UNSPECIFIED(a) ||
			    (IN6_IS_ADDR_V4MAPPED(a) && loop_v4(ntohl(((const uint32_t *)a)[3])));

		*port = ntohs(s->sin6_port);
		return loop ? (udp ? C_LOOP_UDP : C_LOOP_TCP) : C_OUTSIDE;
	}
	return C_RUN;
}

static int sockopt_int(int fd, int opt)
{
	int v = -1;
	socklen_t len = sizeof(v);

	if (hm_sys6(SYS_getsockopt, fd, SOL_SOCKET, opt, (long)&v, (long)&len, 0) < 0)
		return -1;
	return v;
}

/* Is (dev, ino) one of the run's inherited stdio pipes and terminals? */
static bool inherited_outside(int fd)
{
	struct stat st;
	uint32_t n = __atomic_load_n(&hm.vc->n_outside, __ATOMIC_ACQUIRE);

	if (!n || hm_sys(SYS_fstat, fd, &st, 0) < 0)
		return false;
	for (uint32_t i = 0; i < n && i < 8; i++)
		if (hm.vc->outside[i][0] == (uint64_t)st.st_dev &&
		    hm.vc->outside[i][1] == (uint64_t)st.st_ino)
			return true;
	return false;
}

/* The run's first process: note what its 0, 1, 2 are, if they lead out. */
void hm_peers_note_stdio(void)
{
	struct stat st;
	uint32_t n = 0;

	/* enroll noted them already (HM_VCF_STDIO): it knows which process is
	 * the run's first, which a shim under a static parent does not */
	if (!hm.vc || hm.vc->n_outside || (__atomic_load_n(&hm.vc->flags, __ATOMIC_ACQUIRE) & HM_VCF_STDIO))
		return;
	for (int fd = 0; fd < 3; fd++) {
		bool dup = false;

		if (hm_sys(SYS_fstat, fd, &st, 0) < 0 ||
		    !(S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) ||
		      (S_ISCHR(st.st_mode) && (major(st.st_rdev) == 136 || major(st.st_rdev) == 4 ||
					       major(st.st_rdev) == 5))))
			continue;
		for (uint32_t i = 0; i < n; i++)
			dup |= hm.vc->outside[i][0] == (uint64_t)st.st_dev &&
			       hm.vc->outside[i][1] == (uint64_t)st.st_ino;
		if (dup)
			continue;
		hm.vc->outside[n][0] = st.st_dev;
		hm.vc->outside[n][1] = st.st_ino;
		n++;
	}
	__atomic_store_n(&hm.vc->n_outside, n, __ATOMIC_RELEASE);
}

static void classify(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	int domain = sockopt_int(fd, SO_DOMAIN), type;
	uint16_t port = 0;
	uint8_t c = C_RUN;

	if (domain < 0) {
		/* not a socket: a pipe or terminal that leads out, or the run's */
		if (inherited_outside(fd))
			c = C_OUTSIDE;
	} else if (domain == AF_UNIX) {
		struct ucred cr = { 0 };
		socklen_t cl = sizeof(cr);

		/* a listening or unconnected socket has no peer: the run's */
		if (hm_sys6(SYS_getpeername, fd, (long)&ss, (long)&len, 0, 0, 0) == 0 &&
		    hm_sys6(SYS_getsockopt, fd, SOL_SOCKET, SO_PEERCRED, (long)&cr, (long)&cl, 0) == 0)
			c = pid_in_run(cr.pid) ? C_RUN : C_OUTSIDE;
	} else if (domain == AF_INET || domain == AF_INET6) {
		type = sockopt_int(fd, SO_TYPE);
		if (hm_sys6(SYS_getpeername, fd, (long)&ss, (long)&len, 0, 0, 0) == 0)
			c = inet_class((struct sockaddr *)&ss, type == SOCK_DGRAM, &port);
	}
	set_class(fd, c, port);
}

/* Does a wait on fd wait on the real world? */
bool hm_fd_external(int fd)
{
	struct pfd *p;
	uint8_t c;

	if (fd < 0 || !hm.vc)
		return false;
	p = pfd(fd, false);
	c = p ? atomic_load_explicit(&p->cls, memory_order_relaxed) : C_UNKNOWN;
	if (unlikely(c == C_UNKNOWN)) {
		int e = errno;

		classify(fd);
		errno = e;
		p = pfd(fd, false);
		if (!p)
			return false; /* no memory for the table: the run's */
		c = atomic_load_explicit(&p->cls, memory_order_relaxed);
	}
	if (c == C_LOOP_TCP || c == C_LOOP_UDP)
		return !__atomic_load_n(&port_map(c == C_LOOP_UDP)[atomic_load(&p->port)],
					__ATOMIC_ACQUIRE);
	return c == C_OUTSIDE;
}

/* An epoll set waits on the real world while one of its outside members does. */
bool hm_epoll_external(int epfd)
{
	struct pfd *p;

	if (epfd < 0 || !hm_remote_open() || !(p = pfd(epfd, false)))
		return false;
	if (p->ep_n < 0)
		return true;
	for (int i = 0; i < p->ep_n && i < EP_OUT; i++)
		if (hm_fd_external(p->ep_fd[i]))
			return true;
	return false;
}

static void unmark_bound(struct pfd *p)
{
	if (!p->bound_owner)
		return;
	if (p->bound_owner == hm.pid && hm.vc) {
		uint8_t *m = &port_map(p->bound_udp)[p->bound_port];

		if (__atomic_load_n(m, __ATOMIC_RELAXED) && __atomic_load_n(m, __ATOMIC_RELAXED) < 255)
			__atomic_fetch_sub(m, 1, __ATOMIC_RELEASE);
	}
	p->bound_owner = 0;
}

void hm_fd_forget(int fd)
{
	struct pfd *p = pfd(fd, false);

	if (!p)
		return;
	atomic_store(&p->nodelay, 0);
	unmark_bound(p);
	if (atomic_load_explicit(&p->cls, memory_order_relaxed) != C_UNKNOWN)
		set_class(fd, C_UNKNOWN, 0);
	p->ep_n = 0;
}

void hm_fd_copy(int to, int from)
{
	struct pfd *src, *dst;

	if (to < 0 || from < 0)
		return;
	hm_fd_forget(to);
	src = pfd(from, false);
	if (!src)
		return; /* nothing known of from: nor of to now */
	set_class(to, atomic_load(&src->cls), atomic_load(&src->port));
	if ((dst = pfd(to, atomic_load(&src->nodelay) != 0)))
		atomic_store(&dst->nodelay, atomic_load(&src->nodelay));
}

/* Mark the loopback port fd is bound to as the run's. */
static void mark_bound(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	struct pfd *p = hm.vc ? pfd(fd, true) : NULL;
	uint16_t port = 0;
	uint8_t *m;
	int type;
	bool udp;

	if (!p || p->bound_owner || hm_sys6(SYS_getsockname, fd, (long)&ss, (long)&len, 0, 0, 0) < 0)
		return;
	type = sockopt_int(fd, SO_TYPE);
	udp = type == SOCK_DGRAM;
	if (type != SOCK_STREAM && !udp)
		return;
	if (inet_class((struct sockaddr *)&ss, udp, &port) == C_OUTSIDE || !port)
		return; /* bound to a non-loopback address only: not reachable as loopback */
	m = &port_map(udp)[port];
	if (__atomic_load_n(m, __ATOMIC_RELAXED) < 255)
		__atomic_fetch_add(m, 1, __ATOMIC_RELEASE);
	p->bound_port = port;
	p->bound_udp = udp;
	p->bound_owner = hm.pid;
}

HM_EXPORT int bind(int fd, const struct sockaddr *sa, socklen_t len)
{
	int r, e;

	if (unlikely(!hm_ready()))
		return hm_sys_errno(hm_sys(SYS_bind, fd, sa, len));
	r = hm.real.bind(fd, sa, len);
	if (r == 0 && hm.vc) {
		e = errno;
		mark_bound(fd);
		errno = e;
	}
	return r;
}

/*
 * Give a socket without a port one, keeping the address it has: the one the
 * program bound with IP_BIND_ADDRESS_NO_PORT (which defers the port to
 * connect), or the unspecified one, which leaves the source address to
 * connect as before. The option is cleared for this bind, else the kernel
 * would defer the port again, and put back after, so the program reads
 * back what it set.
 */
static int bind_port(int fd, const struct sockaddr_storage *ss)
{
	int no_port = 0, zero = 0;
	socklen_t ol = sizeof(no_port);
	long r;

	if (hm_sys6(SYS_getsockopt, fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, (long)&no_port,
		    (long)&ol, 0) < 0)
		no_port = 0;
	if (no_port && hm_sys6(SYS_setsockopt, fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT,
			       (long)&zero, sizeof(zero), 0) < 0)
		return -1;
	r = hm_sys(SYS_bind, fd, ss,
		   ss->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in));
	if (no_port)
		hm_sys6(SYS_setsockopt, fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, (long)&no_port,
			sizeof(no_port), 0);
	return r < 0 ? -1 : 0;
}

/*
 * A TCP connection to loopback: bind the client to its ephemeral port first
 * and mark it, so that a server of the run, classifying the accepted
 * socket, finds the client's port already marked.
 */
static void bind_loopback_client(int fd, const struct sockaddr *sa)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	uint16_t port;

	if (sockopt_int(fd, SO_TYPE) != SOCK_STREAM ||
	    hm_sys6(SYS_getsockname, fd, (long)&ss, (long)&len, 0, 0, 0) < 0 ||
	    inet_class((struct sockaddr *)&ss, false, &port) == C_OUTSIDE)
		return;
	if (!port && bind_port(fd, &ss) < 0)
		return;
	mark_bound(fd);
}

/* A TCP socket between processes of the run: no Nagle delay (above). */
static void force_nodelay(int fd)
{
	int one = 1;

	struct pfd *p = pfd(fd, true);
	int set = 0;
	socklen_t len = sizeof(set);

	if (!p || (atomic_load(&p->nodelay) & 1))
		return;
	/* what the program set before (a client sets it before connect) */
	if (hm_sys6(SYS_getsockopt, fd, IPPROTO_TCP, TCP_NODELAY, (long)&set, (long)&len, 0) < 0)
		set = 0;
	if (hm_sys6(SYS_setsockopt, fd, IPPROTO_TCP, TCP_NODELAY, (long)&one, sizeof(one), 0) == 0)
		atomic_fetch_or(&p->nodelay, set ? 3 : 1);
}

/*
 * connect() classifies the socket by its destination (and forgets what it
 * was before), and binds loopback TCP clients as above.
 */
HM_EXPORT int connect(int fd, const struct sockaddr *sa, socklen_t len)
{
	uint16_t port = 0;
	uint8_t c = C_UNKNOWN;
	int r, e;

	if (unlikely(!hm_ready()))
		return hm_sys_errno(hm_sys(SYS_connect, fd, sa, len));
	if (hm.vc && sa && (sa->sa_family == AF_INET || sa->sa_family == AF_INET6)) {
		e = errno;
		c = inet_class(sa, sockopt_int(fd, SO_TYPE) == SOCK_DGRAM, &port);
		if (c == C_LOOP_TCP) {
			bind_loopback_client(fd, sa);
			force_nodelay(fd);
		}
		errno = e;
	}
	if (c == C_OUTSIDE ||
	    (c >= C_LOOP_TCP && !__atomic_load_n(&port_map(c == C_LOOP_UDP)[port], __ATOMIC_ACQUIRE))) {
		/* a blocking connect to the world: the run is busy meanwhile */
		struct hm_vwait w;
		bool ext = hm_vw_begin(&w, INT64_MAX, HM_VW_SIGNAL, true, "connect");

		r = hm.real.connect(fd, sa, len);
		if (ext)
			hm_fd_block_end(&w);
	} else {
		r = hm.real.connect(fd, sa, len);
	}
	if (hm.vc && fd >= 0 && (r == 0 || errno == EINPROGRESS)) {
		e = errno;
		if (c != C_UNKNOWN)
			set_class(fd, c, port);
		else
			classify(fd); /* unix: by its peer's cgroup, known once connected */
		errno = e;
	}
	return r;
}

static int after_accept(int r)
{
	if (r >= 0 && hm.vc) {
		int e = errno;
		struct pfd *p;

		hm_fd_forget(r); /* a new socket: its peer is found at its first wait */
		classify(r);
		p = pfd(r, false);
		if (p && atomic_load(&p->cls) == C_LOOP_TCP &&
		    __atomic_load_n(&port_map(false)[atomic_load(&p->port)], __ATOMIC_ACQUIRE))
			force_nodelay(r); /* a client of the run */
		errno = e;
	}
	return r;
}

/* TCP_NODELAY as the program set it, where we forced it on. */
HM_EXPORT int getsockopt(int fd, int level, int opt, void *val, socklen_t *len)
{
	if (unlikely(!hm_ready()))
		return hm_sys_errno(hm_sys6(SYS_getsockopt, fd, level, opt, (long)val, (long)len, 0));
	struct pfd *p;

	if (unlikely(level == IPPROTO_TCP && opt == TCP_NODELAY) && (p = pfd(fd, false)) &&
	    (atomic_load(&p->nodelay) & 1) && val && len && *len >= sizeof(int)) {
		*(int *)val = (atomic_load(&p->nodelay) >> 1) & 1;
		*len = sizeof(int);
		return 0;
	}
	return hm.real.getsockopt(fd, level, opt, val, len);
}

HM_EXPORT int setsockopt(int fd, int level, int opt, const void *val, socklen_t len)
{
	if (unlikely(!hm_ready()))
		return hm_sys_errno(hm_sys6(SYS_setsockopt, fd, level, opt, (long)val, len, 0));
	struct pfd *p;

	if (unlikely(level == IPPROTO_TCP && opt == TCP_NODELAY) && (p = pfd(fd, false)) &&
	    (atomic_load(&p->nodelay) & 1) && val && len >= sizeof(int)) {
		/* remembered; the socket itself stays without Nagle */
		if (*(const int *)val)
			atomic_fetch_or(&p->nodelay, 2);
		else
			atomic_fetch_and(&p->nodelay, (uint8_t)~2);
		return 0;
	}
	return hm.real.setsockopt(fd, level, opt, val, len);
}

HM_EXPORT int accept(int fd, struct sockaddr *sa, socklen_t *len)
{
	if (unlikely(!hm_ready()))
		return hm_sys_errno(hm_sys6(SYS_accept4, fd, (long)sa, (long)len, 0, 0, 0));
	return after_accept(hm.real.accept(fd, sa, len));
}

HM_EXPORT int accept4(int fd, struct sockaddr *sa, socklen_t *len, int flags)
{
	if (unlikely(!hm_ready()))
		return hm_sys_errno(hm_sys6(SYS_accept4, fd, (long)sa, (long)len, flags, 0, 0));
	return after_accept(hm.real.accept4(fd, sa, len, flags));
}

HM_EXPORT int socket(int domain, int type, int protocol)
{
	int r;

	if (unlikely(!hm_ready()))
		return hm_sys_errno(hm_sys(SYS_socket, domain, type, protocol));
	r = hm.real.socket(domain, type, protocol);
	if (r >= 0 && hm.vc) {
		int e = errno;

		hm_fd_forget(r);
		pfd(r, true); /* met: select looks this far (hm_fd_high) */
		errno = e;
	}
	return r;
}

HM_EXPORT int epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
	int r;

	if (unlikely(!hm_ready()))
		return hm_sys_errno(hm_sys6(SYS_epoll_ctl, epfd, op, fd, (long)ev, 0, 0));
	r = hm.real.epoll_ctl(epfd, op, fd, ev);
	if (r == 0 && hm.vc && op != EPOLL_CTL_DEL && epfd >= 0 && fd >= 0) {
		int e = errno;
		struct pfd *m, *ep;

		hm_fd_external(fd); /* classifies it */
		m = pfd(fd, false);
		if (m && atomic_load(&m->cls) >= C_OUTSIDE && (ep = pfd(epfd, true)) && ep->ep_n >= 0) {
			bool have = false;

			for (int i = 0; i < ep->ep_n; i++)
				have |= ep->ep_fd[i] == fd;
			if (!have) {
				if (ep->ep_n == EP_OUT)
					ep->ep_n = -1;
				else
					ep->ep_fd[ep->ep_n++] = fd;
			}
		}
		errno = e;
	}
	return r;
}

/* ---- blocking calls on the real world ---- */

/* Around a blocking call on fd: EXTERNAL when fd leads out (true: call
 * hm_fd_block_end after). */
bool hm_fd_block_begin(int fd, struct hm_vwait *w)
{
	if (!hm.vc || !hm_remote_open() || !hm_fd_external(fd))
		return false;
	return hm_vw_begin(w, INT64_MAX, HM_VW_SIGNAL, true, "read");
}

void hm_fd_block_end(struct hm_vwait *w)
{
	int e = errno;

	hm_vw_end(w);
	errno = e;
}

#define BLOCKING(fd, CALL)                                                                        \
	({                                                                                         \
		struct hm_vwait w_;                                                                \
		bool ext_ = hm_fd_block_begin((fd), &w_);                                          \
		ssize_t r_ = (CALL);                                                               \
		if (ext_)                                                                          \
			hm_fd_block_end(&w_);                                                      \
		r_;                                                                                \
	})

HM_EXPORT ssize_t recv(int fd, void *buf, size_t n, int flags)
{
	if (unlikely(!hm_ready()))
		return hm_sys_errno(hm_sys6(SYS_recvfrom, fd, (long)buf, n, flags, 0, 0));
	return BLOCKING(fd, hm.real.recv(fd, buf, n, flags));
}

HM_EXPORT ssize_t recvfrom(int fd, void *buf, size_t n, int flags, struct sockaddr *sa,
			   socklen_t *len)
{
	if (unlikely(!hm_ready()))
		return hm_sys_errno(hm_sys6(SYS_recvfrom, fd, (long)buf, n, flags, (long)sa, (long)len));
	return BLOCKING(fd, hm.real.recvfrom(fd, buf, n, flags, sa, len));
}

HM_EXPORT ssize_t recvmsg(int fd, struct msghdr *m, int flags)
{
	if (unlikely(!hm_ready()))
		return hm_sys_errno(hm_sys(SYS_recvmsg, fd, m, flags));
	return BLOCKING(fd, hm.real.recvmsg(fd, m, flags));
}
