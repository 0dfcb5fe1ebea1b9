// SPDX-License-Identifier: MIT
/*
 * Domains that follow DNS: the resolvers of blocked runs (docs/network.md).
 *
 * Every blocked run's DNS goes to one of these. A run without names shares
 * one resolver with all such runs (one thread, four sockets for the
 * daemon), which answers SERVFAIL to every query and forwards nothing; its
 * TCP clients are read without blocking, so no run can hold it.
 *
 * A run with --allow NAME gets four sockets of its own, UDP and TCP on
 * 127.0.0.1 and ::1, and a thread serving them. The kernel (bpf/net.bpf.c
 * hm_dns_redirect) sends the run's DNS, port 53 to any address, there and
 * refuses any run's traffic sent to them directly: whatever arrives on a
 * run's sockets came from that run (or from outside every run), so the
 * socket says which run asked and which names it may resolve.
 *
 * A query for a name the run may not resolve is answered SERVFAIL at once
 * (an offline machine's temporary failure: docs/network.md says why)
 * and never leaves the machine. An allowed one goes, with a new ID, to the
 * upstream nameservers (/etc/resolv.conf's, or hermeticd --dns-upstream);
 * the A/AAAA addresses of the answer's CNAME chain from the question are
 * written into hm_dns_allow, for the allowed ports and until the TTL,
 * before the answer goes back to the run.
 *
 * Hostile runs: everything read is bounded (HM_DNS_MAX_MSG, the parser in
 * lib/dnsmsg.c, fuzzed); a thread serves one run, one query at a time, so a
 * run that floods or stalls its resolver delays only itself (the kernel's
 * socket buffer is the queue, and drops); the addresses a run may learn are
 * capped (HM_NET_MAX_DNS_PER_RUN). Any failure answers SERVFAIL or nothing:
 * the kernel still refuses what was not learned.
 */
#include <inttypes.h>
#include <pthread.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include "util.h"
#include "daemon.h"
#include "dnsmsg.h"

#define UPSTREAM_MAX 3
#define UPSTREAM_MS 2000 /* per nameserver */
#define TCP_CONN_MS 5000 /* a client's TCP connection, all its queries */
#define TCP_QUERIES_MAX 32
#define TTL_MAX 86400u

static struct sockaddr_storage upstream[UPSTREAM_MAX];
static socklen_t upstream_len[UPSTREAM_MAX];
static int n_upstream;

struct learned {
	struct hm_net_allow_key key;
	uint64_t exp;
};

/* One client TCP connection of the shared resolver (below). */
struct tconn {
	int fd; /* -1: free */
	uint64_t deadline;
	size_t got;
	int queries;
	uint8_t buf[HM_DNS_MAX_MSG + 2];
};

#define SHARED_TCP_MAX 64 /* past it, a new client takes the oldest one's place */

/* A resolver: a run's own (names), or the shared one (no names, cgid 0). */
struct resolver {
	uint64_t cgid;
	struct hm_allow_name names[HM_RUN_MAX_NAMES];
	uint32_t n_names;
	struct hmd_bpf_dns_fds fds;
	int stop; /* eventfd: the thread ends */
	int sock[4]; /* udp4, tcp4, udp6, tcp6; -1 when none */
	struct hm_net_dns ports;
	pthread_t th;
	bool started;
	int n_learned;
	struct learned learned[HM_NET_MAX_DNS_PER_RUN];
	uint8_t q[HM_DNS_MAX_MSG], a[HM_DNS_MAX_MSG + 2];
	struct tconn *tc; /* the shared resolver's TCP clients */
};

/* What a run holds: its own resolver, or (own NULL) its entry pointing at
 * the shared one. */
struct hmd_dns {
	uint64_t cgid;
	int dns_fd;
	struct resolver *own;
};

/* Every blocked run without names: one thread and four sockets for the
 * daemon, started with the first such run, stopped by hmd_dns_shutdown. */
static struct resolver *shared;

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts); /* bpf_ktime_get_ns's clock */
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* "ADDR", "ADDR:PORT", "[V6]:PORT" or a bare IPv6 address. */
static int parse_addr(const char *s, struct sockaddr_storage *ss, socklen_t *len)
{
	struct sockaddr_in *in = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
	char host[64];
	const char *colon = NULL;
	uint64_t port = 53;

	memset(ss, 0, sizeof(*ss));
	if (s[0] == '[') {
		const char *end = strchr(s, ']');

		if (!end || (end[1] && end[1] != ':') || (size_t)(end - s - 1) >= sizeof(host))
			return -EINVAL;
		snprintf(host, sizeof(host), "%.*s", (int)(end - s - 1), s + 1);
		colon = end[1] ? end + 1 : NULL;
	} else {
		colon = strchr(s, ':');
		if (colon && strchr(colon + 1, ':'))
			colon = NULL;
		if ((colon ? (size_t)(colon - s) : strlen(s)) >= sizeof(host))
			return -EINVAL;
		snprintf(host, sizeof(host), "%.*s", colon ? (int)(colon - s) : (int)strlen(s), s);
	}
	if (colon && (hm_parse_u64(colon + 1, &port) < 0 || !port || port > 65535))
		return -EINVAL;
	if (inet_pton(AF_INET, host, &in->sin_addr) == 1) {
		in->sin_family = AF_INET;
		in->sin_port = htons(port);
		*len = sizeof(*in);
	} else if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		*len = sizeof(*in6);
	} else {
		return -EINVAL;
	}
	return 0;
}

int hmd_dns_add_upstream(const char *spec)
{
	if (n_upstream == UPSTREAM_MAX)
		return -E2BIG;
	if (parse_addr(spec, &upstream[n_upstream], &upstream_len[n_upstream]) < 0)
		return -EINVAL;
	n_upstream++;
	return 0;
}

/* No --dns-upstream: the "nameserver ADDR" lines of /etc/resolv.conf, the
 * first three as glibc takes them (a line is the keyword, blanks, the
 * address, then anything); none, or no file: 127.0.0.1, glibc's default. */
int hmd_dns_init(void)
{
	char line[512];
	FILE *f;

	if (n_upstream)
		return 0;
	f = fopen("/etc/resolv.conf", "re");
	while (f && n_upstream < UPSTREAM_MAX && fgets(line, sizeof(line), f)) {
		char *p = line, *end;

		if (strncmp(p, "nameserver", 10) || (p[10] != ' ' && p[10] != '\t'))
			continue;
		p += 10 + strspn(p + 10, " \t");
		end = p + strcspn(p, " \t\r\n#;");
		*end = 0;
		if (strchr(p, '%'))
			continue; /* a scoped address: not ours to route */
		if (hmd_dns_add_upstream(p) < 0)
			hmd_warn("/etc/resolv.conf: ignoring nameserver '%s'", p);
	}
	if (f)
		fclose(f);
	if (!n_upstream)
		return hmd_dns_add_upstream("127.0.0.1");
	return 0;
}

/* Read exactly n bytes from a TCP socket by the deadline (or fail). */
static int read_full(int fd, int stop, uint8_t *buf, size_t n, uint64_t deadline)
{
	size_t got = 0;

	while (got < n) {
		struct pollfd p[2] = { { .fd = fd, .events = POLLIN }, { .fd = stop, .events = POLLIN } };
		uint64_t now = mono_ns();
		ssize_t k;

		if (now >= deadline || poll(p, 2, (int)((deadline - now) / 1000000 + 1)) <= 0 ||
		    p[1].revents)
			return -ETIMEDOUT;
		k = recv(fd, buf + got, n - got, MSG_DONTWAIT);
		if (k == 0)
			return -EPIPE;
		if (k < 0 && errno != EAGAIN && errno != EINTR)
			return -errno;
		if (k > 0)
			got += (size_t)k;
	}
	return 0;
}

/* One exchange with one nameserver: over UDP, or TCP when tcp. Returns the
 * answer's length in a (with q's ID put back), or -errno. */
static ssize_t ask(struct resolver *r, int i, const uint8_t *m, size_t n,
		   const struct hm_dns_query *q, bool tcp, uint8_t *a, size_t cap)
{
	struct hm_dns_query uq = *q;
	struct hm_dns_addr dummy;
	uint8_t out[HM_DNS_MAX_MSG + 2];
	uint64_t deadline = mono_ns() + UPSTREAM_MS * 1000000ull;
	ssize_t len = -ETIMEDOUT;
	int s, rcode;

	if (getrandom(&uq.id, sizeof(uq.id), 0) != sizeof(uq.id))
		return -EIO;
	s = socket(upstream[i].ss_family,
		   (tcp ? SOCK_STREAM : SOCK_DGRAM) | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s < 0)
		return -errno;
	/* Connected: the kernel takes only the nameserver's datagrams. Never
	 * blocking: a stop (the run ended) must not wait for a TCP handshake. */
	if (connect(s, (struct sockaddr *)&upstream[i], upstream_len[i]) < 0) {
		struct pollfd p[2] = { { .fd = s, .events = POLLOUT },
				       { .fd = r->stop, .events = POLLIN } };
		int soerr = 0;
		socklen_t sl = sizeof(soerr);

		if (errno != EINPROGRESS || poll(p, 2, UPSTREAM_MS) <= 0 || p[1].revents ||
		    getsockopt(s, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0 || soerr) {
			len = -ETIMEDOUT;
			goto cleanup;
		}
	}
	out[0] = (uint8_t)(n >> 8);
	out[1] = (uint8_t)n;
	memcpy(out + 2, m, n);
	out[2] = (uint8_t)(uq.id >> 8);
	out[3] = (uint8_t)uq.id;
	if (send(s, tcp ? out : out + 2, tcp ? n + 2 : n, MSG_NOSIGNAL | MSG_DONTWAIT) !=
	    (ssize_t)(tcp ? n + 2 : n)) {
		len = -EIO;
		goto cleanup;
	}
	for (;;) {
		uint8_t hdr[2];
		size_t k;

		if (tcp) {
			if (read_full(s, r->stop, hdr, 2, deadline) < 0)
				break;
			k = (size_t)(hdr[0] << 8 | hdr[1]);
			if (k > cap || read_full(s, r->stop, a, k, deadline) < 0)
				break;
		} else {
			struct pollfd p[2] = { { .fd = s, .events = POLLIN },
					       { .fd = r->stop, .events = POLLIN } };
			uint64_t now = mono_ns();
			ssize_t got;

			if (now >= deadline ||
			    poll(p, 2, (int)((deadline - now) / 1000000 + 1)) <= 0 || p[1].revents)
				break;
			got = recv(s, a, cap, MSG_DONTWAIT | MSG_TRUNC);
			if (got < 0 || (size_t)got > cap)
				continue; /* nothing, or cut: not an answer to use */
			k = (size_t)got;
		}
		/* Only an answer to this question, with this ID, counts. */
		if (hm_dns_parse_answer(a, k, &uq, &dummy, 0, &rcode) < 0) {
			if (tcp)
				break;
			continue;
		}
		a[0] = (uint8_t)(q->id >> 8);
		a[1] = (uint8_t)q->id;
		len = (ssize_t)k;
		break;
	}
cleanup:
	close(s);
	return len;
}

/* Every upstream in turn; a truncated UDP answer to a TCP client is asked
 * again over TCP. */
static ssize_t forward(struct resolver *r, const uint8_t *m, size_t n,
		       const struct hm_dns_query *q, bool tcp, uint8_t *a, size_t cap)
{
	ssize_t len = -EHOSTUNREACH;

	for (int i = 0; i < n_upstream; i++) {
		len = ask(r, i, m, n, q, false, a, cap);
		if (len > 0 && tcp && (a[2] & 0x02))
			len = ask(r, i, m, n, q, true, a, cap);
		if (len > 0)
			return len;
	}
	return len;
}

/* Open one learned destination until exp, in the table and the kernel. */
static void learn_one(struct resolver *r, const struct hm_net_allow_key *k, uint64_t exp)
{
	uint64_t now = mono_ns();
	bool fresh = false;
	int slot = -1;

	for (int i = 0; i < r->n_learned; i++)
		if (!memcmp(&r->learned[i].key, k, sizeof(*k))) {
			if (r->learned[i].exp >= exp)
				return;
			slot = i;
			break;
		}
	if (slot < 0 && r->n_learned < HM_NET_MAX_DNS_PER_RUN) {
		slot = r->n_learned++;
		fresh = true;
	}
	/* Full: the place of one past its TTL (its open connections end). */
	for (int i = 0; slot < 0 && i < r->n_learned; i++)
		if (r->learned[i].exp < now) {
			bpf_map_delete_elem(r->fds.allow, &r->learned[i].key);
			slot = i;
		}
	if (slot < 0) {
		hmd_warn("run cgroup %" PRIu64 ": %d DNS destinations open, not opening more",
			 r->cgid, HM_NET_MAX_DNS_PER_RUN);
		return;
	}
	if (bpf_map_update_elem(r->fds.allow, k, &exp, BPF_ANY)) {
		hmd_warn("run cgroup %" PRIu64 ": cannot open a DNS destination: %s", r->cgid,
			 strerror(errno));
		if (fresh)
			r->n_learned--;
		return;
	}
	r->learned[slot].key = *k;
	r->learned[slot].exp = exp;
}

/* The answer's addresses, at each port its name is allowed at. */
static void learn(struct resolver *r, const uint8_t *a, size_t n, const struct hm_dns_query *q)
{
	struct hm_dns_addr addrs[HM_DNS_MAX_RRS];
	int rcode, k = hm_dns_parse_answer(a, n, q, addrs, HM_DNS_MAX_RRS, &rcode);
	uint64_t now = mono_ns();

	for (int i = 0; i < k; i++) {
		uint32_t ttl = addrs[i].ttl > TTL_MAX ? TTL_MAX : addrs[i].ttl ? addrs[i].ttl : 1;

		for (uint32_t j = 0; j < r->n_names; j++) {
			struct hm_net_allow_key key = { .cgroup_id = r->cgid,
							.port = r->names[j].port };

			if (!hm_dns_match(r->names[j].name, q->name))
				continue;
			memcpy(key.addr, addrs[i].addr, 16);
			learn_one(r, &key, now + ttl * 1000000000ull);
		}
	}
}

/* The reply to query m[0..n) in a (at most cap), or 0 for none. */
static size_t answer(struct resolver *r, const uint8_t *m, size_t n, bool tcp, uint8_t *a,
		     size_t cap)
{
	struct hm_dns_query q;
	int err = hm_dns_parse_query(m, n, &q);
	bool allowed = false;
	ssize_t len;

	if (n < 12)
		return 0; /* not even a header: no ID to answer to */
	if (err < 0)
		return hm_dns_reply(m, &q, err == -EOPNOTSUPP ? HM_DNS_REFUSED : HM_DNS_FORMERR, a,
				    cap);
	for (uint32_t j = 0; j < r->n_names && !allowed; j++)
		allowed = hm_dns_match(r->names[j].name, q.name);
	if (!allowed) {
		if (r->cgid)
			hmd_debug("run cgroup %" PRIu64 ": DNS %s refused (not allowed)", r->cgid,
				  q.name);
		else
			hmd_debug("shared resolver: DNS %s refused (the run allows no name)", q.name);
		return hm_dns_reply(m, &q, HM_DNS_SERVFAIL, a, cap);
	}
	len = forward(r, m, n, &q, tcp, a, cap);
	if (len <= 0)
		return hm_dns_reply(m, &q, HM_DNS_SERVFAIL, a, cap);
	/* Open first, answer after: the run connects as soon as it reads. */
	learn(r, a, (size_t)len, &q);
	return (size_t)len;
}

static void serve_udp(struct resolver *r, int s)
{
	struct sockaddr_storage from;
	socklen_t flen = sizeof(from);
	ssize_t n = recvfrom(s, r->q, sizeof(r->q), MSG_DONTWAIT | MSG_TRUNC,
			     (struct sockaddr *)&from, &flen);
	size_t len;

	if (n < 0 || (size_t)n > sizeof(r->q))
		return; /* nothing, or larger than any query: dropped */
	len = answer(r, r->q, (size_t)n, false, r->a, sizeof(r->a));
	if (len)
		sendto(s, r->a, len, MSG_DONTWAIT, (struct sockaddr *)&from, flen);
}

static void serve_tcp(struct resolver *r, int ls)
{
	uint64_t deadline = mono_ns() + TCP_CONN_MS * 1000000ull;
	int c = accept4(ls, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

	if (c < 0)
		return;
	for (int i = 0; i < TCP_QUERIES_MAX; i++) {
		uint8_t hdr[2];
		size_t n, len;

		if (read_full(c, r->stop, hdr, 2, deadline) < 0)
			break;
		n = (size_t)(hdr[0] << 8 | hdr[1]);
		if (n < 12 || n > sizeof(r->q) || read_full(c, r->stop, r->q, n, deadline) < 0)
			break;
		len = answer(r, r->q, n, true, r->a + 2, sizeof(r->a) - 2);
		if (!len)
			break;
		r->a[0] = (uint8_t)(len >> 8);
		r->a[1] = (uint8_t)len;
		/* The reply is small and the socket's buffer empty: one send
		 * that does not block; a client that does not read loses it. */
		if (send(c, r->a, len + 2, MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t)(len + 2))
			break;
	}
	close(c);
}

/* The shared resolver's TCP clients, read without blocking: it serves
 * every run without names, so no client may hold it (serve_tcp waits for
 * one). Every answer is immediate (SERVFAIL, nothing is forwarded). */
static void tconn_close(struct tconn *c)
{
	close(c->fd);
	c->fd = -1;
}

static void tconn_read(struct resolver *r, struct tconn *c)
{
	ssize_t k = recv(c->fd, c->buf + c->got, sizeof(c->buf) - c->got, MSG_DONTWAIT);

	if (k < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (k <= 0) {
		tconn_close(c);
		return;
	}
	c->got += (size_t)k;
	while (c->got >= 2) {
		size_t n = (size_t)(c->buf[0] << 8 | c->buf[1]), len;

		if (n < 12 || n > HM_DNS_MAX_MSG) {
			tconn_close(c);
			return;
		}
		if (c->got < n + 2)
			return;
		len = answer(r, c->buf + 2, n, true, r->a + 2, sizeof(r->a) - 2);
		r->a[0] = (uint8_t)(len >> 8);
		r->a[1] = (uint8_t)len;
		if (!len || send(c->fd, r->a, len + 2, MSG_DONTWAIT | MSG_NOSIGNAL) !=
				    (ssize_t)(len + 2) ||
		    ++c->queries == TCP_QUERIES_MAX) {
			tconn_close(c);
			return;
		}
		c->got -= n + 2;
		memmove(c->buf, c->buf + n + 2, c->got);
	}
}

/* A new client in a free place, or in that of the one nearest its end. */
static void tconn_accept(struct resolver *r, int ls)
{
	int fd = accept4(ls, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	struct tconn *c = &r->tc[0];

	if (fd < 0)
		return;
	for (int i = 0; i < SHARED_TCP_MAX && c->fd >= 0; i++)
		if (r->tc[i].fd < 0 || r->tc[i].deadline < c->deadline)
			c = &r->tc[i];
	if (c->fd >= 0)
		tconn_close(c);
	c->fd = fd;
	c->deadline = mono_ns() + TCP_CONN_MS * 1000000ull;
	c->got = 0;
	c->queries = 0;
}

static void *shared_main(void *arg)
{
	struct resolver *r = arg;

	for (;;) {
		struct pollfd p[5 + SHARED_TCP_MAX] = { { .fd = r->stop, .events = POLLIN } };
		uint64_t now = mono_ns(), next = UINT64_MAX;
		int timeout = -1;

		for (int i = 0; i < 4; i++)
			p[i + 1] = (struct pollfd){ .fd = r->sock[i], .events = POLLIN };
		for (int i = 0; i < SHARED_TCP_MAX; i++) {
			p[5 + i] = (struct pollfd){ .fd = r->tc[i].fd, .events = POLLIN };
			if (r->tc[i].fd >= 0 && r->tc[i].deadline < next)
				next = r->tc[i].deadline;
		}
		if (next != UINT64_MAX)
			timeout = next <= now ? 0 : (int)((next - now) / 1000000 + 1);
		if (poll(p, 5 + SHARED_TCP_MAX, timeout) < 0) {
			if (errno == EINTR)
				continue;
			hmd_warn("shared resolver poll: %s", strerror(errno));
			break;
		}
		if (p[0].revents)
			break;
		/* Clients first: an accept may take the place of one. */
		for (int i = 0; i < SHARED_TCP_MAX; i++)
			if (r->tc[i].fd >= 0 && p[5 + i].revents)
				tconn_read(r, &r->tc[i]);
		for (int i = 0; i < 4; i++)
			if (p[i + 1].revents & POLLIN)
				(i % 2 ? tconn_accept : serve_udp)(r, r->sock[i]);
		now = mono_ns();
		for (int i = 0; i < SHARED_TCP_MAX; i++)
			if (r->tc[i].fd >= 0 && r->tc[i].deadline <= now)
				tconn_close(&r->tc[i]);
	}
	for (int i = 0; i < SHARED_TCP_MAX; i++)
		if (r->tc[i].fd >= 0)
			tconn_close(&r->tc[i]);
	return NULL;
}

static void *dns_main(void *arg)
{
	struct resolver *r = arg;

	for (;;) {
		struct pollfd p[5] = { { .fd = r->stop, .events = POLLIN } };

		for (int i = 0; i < 4; i++)
			p[i + 1] = (struct pollfd){ .fd = r->sock[i], .events = POLLIN };
		if (poll(p, 5, -1) < 0) {
			if (errno == EINTR)
				continue;
			hmd_warn("run cgroup %" PRIu64 ": resolver poll: %s", r->cgid, strerror(errno));
			break;
		}
		if (p[0].revents)
			break;
		for (int i = 0; i < 4; i++)
			if (p[i + 1].revents & POLLIN)
				(i % 2 ? serve_tcp : serve_udp)(r, r->sock[i]);
	}
	return NULL;
}

/* A socket of the resolver on loopback; its port in *port. */
static int open_sock(int family, int type, uint16_t *port)
{
	struct sockaddr_storage ss = {};
	socklen_t len = family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
	int one = 1, buf = 65536, s = socket(family, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	if (s < 0)
		return -errno;
	ss.ss_family = family;
	if (family == AF_INET)
		((struct sockaddr_in *)&ss)->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	else
		((struct sockaddr_in6 *)&ss)->sin6_addr = in6addr_loopback;
	if ((family == AF_INET6 && setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) < 0) ||
	    (type == SOCK_DGRAM && setsockopt(s, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf)) < 0) ||
	    bind(s, (struct sockaddr *)&ss, len) < 0 || (type == SOCK_STREAM && listen(s, 16) < 0) ||
	    getsockname(s, (struct sockaddr *)&ss, &len) < 0) {
		int err = -errno;

		close(s);
		return err;
	}
	*port = ntohs(family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
					: ((struct sockaddr_in6 *)&ss)->sin6_port);
	return s;
}

static uint32_t port_key(int i, uint16_t port)
{
	return HM_NET_DNS_PORT_KEY(i < 2 ? 4 : 6, i % 2 ? SOCK_STREAM : SOCK_DGRAM, port);
}

static void resolver_stop(struct resolver *r);

/* A resolver for cgid with these names (the shared one: cgid 0, none). */
static int resolver_start(struct hmd_bpf *b, uint64_t cgid, const struct hm_allow_name *names,
			  uint32_t n_names, struct resolver **ret)
{
	struct resolver *r;
	uint16_t *ports[4];
	sigset_t all, old;
	uint8_t one = 1;
	int err;

	*ret = NULL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->cgid = cgid;
	r->n_names = n_names;
	if (n_names) /* (the shared one has none, and names NULL) */
		memcpy(r->names, names, n_names * sizeof(*names));
	r->stop = -1;
	r->fds.dns = r->fds.ports = r->fds.allow = -1;
	for (int i = 0; i < 4; i++)
		r->sock[i] = -1;
	if (!cgid) {
		r->tc = calloc(SHARED_TCP_MAX, sizeof(*r->tc));
		if (!r->tc) {
			err = -ENOMEM;
			goto fail;
		}
		for (int i = 0; i < SHARED_TCP_MAX; i++)
			r->tc[i].fd = -1;
	}
	ports[0] = &r->ports.udp4;
	ports[1] = &r->ports.tcp4;
	ports[2] = &r->ports.udp6;
	ports[3] = &r->ports.tcp6;
	err = hmd_bpf_dns_fds(b, &r->fds);
	if (err < 0)
		goto fail;
	r->stop = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (r->stop < 0) {
		err = -errno;
		goto fail;
	}
	for (int i = 0; i < 4; i++) {
		int s = open_sock(i < 2 ? AF_INET : AF_INET6, i % 2 ? SOCK_STREAM : SOCK_DGRAM,
				  ports[i]);

		if (s < 0 && i < 2) {
			err = s; /* IPv4 is required; IPv6 loopback may be absent */
			goto fail;
		}
		r->sock[i] = s < 0 ? -1 : s;
	}
	for (int i = 0; i < 4; i++) {
		uint32_t k = port_key(i, *ports[i]);

		if (r->sock[i] >= 0 && bpf_map_update_elem(r->fds.ports, &k, &one, BPF_ANY)) {
			err = -errno;
			goto fail;
		}
	}
	/* The thread takes no signal: the event loop's signalfd has them. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	err = -pthread_create(&r->th, &attr, cgid ? dns_main : shared_main, r);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err < 0)
		goto fail;
	r->started = true;
	/* Last: the entry that redirects the run's DNS. */
	if (cgid && bpf_map_update_elem(r->fds.dns, &cgid, &r->ports, BPF_ANY)) {
		err = -errno;
		goto fail;
	}
	*ret = r;
	return 0;
fail:
	resolver_stop(r);
	return err;
}

static void resolver_stop(struct resolver *r)
{
	uint64_t one = 1;
	uint16_t ports[4];

	if (!r)
		return;
	if (r->fds.dns >= 0 && r->cgid)
		bpf_map_delete_elem(r->fds.dns, &r->cgid);
	if (r->started) {
		if (write(r->stop, &one, sizeof(one)) != sizeof(one)) {
			/* Never free what a running thread uses: leak it. */
			hmd_warn("run cgroup %" PRIu64 ": cannot stop the resolver", r->cgid);
			return;
		}
		pthread_join(r->th, NULL);
	}
	ports[0] = r->ports.udp4;
	ports[1] = r->ports.tcp4;
	ports[2] = r->ports.udp6;
	ports[3] = r->ports.tcp6;
	for (int i = 0; i < 4; i++) {
		uint32_t k = port_key(i, ports[i]);

		if (r->sock[i] < 0)
			continue;
		if (r->fds.ports >= 0)
			bpf_map_delete_elem(r->fds.ports, &k);
		close(r->sock[i]);
	}
	for (int i = 0; i < r->n_learned && r->fds.allow >= 0; i++)
		bpf_map_delete_elem(r->fds.allow, &r->learned[i].key);
	if (r->stop >= 0)
		close(r->stop);
	free(r->tc);
	free(r);
}

/* A run with names gets its own resolver; one without, an hm_dns entry
 * pointing at the shared resolver (started with the first such run). */
int hmd_dns_start(struct hmd_bpf *b, uint64_t cgid, const struct hm_allow_name *names,
		  uint32_t n_names, struct hmd_dns **ret)
{
	struct hmd_dns *h = calloc(1, sizeof(*h));
	struct hmd_bpf_dns_fds fds;
	int err;

	*ret = NULL;
	if (!h)
		return -ENOMEM;
	/* --no-cgroup-hooks (make vm-test) has no hook that redirects: an entry would
	 * only make the LSM layer let the run's DNS through (net_lsm.bpf.c),
	 * so a run without names keeps that layer's verdict on it. */
	if (!n_names && (hmd_bpf_dns_fds(b, &fds) < 0 || !fds.redirect)) {
		free(h);
		return 0;
	}
	h->cgid = cgid;
	h->dns_fd = -1;
	if (n_names) {
		err = resolver_start(b, cgid, names, n_names, &h->own);
		if (err < 0)
			goto fail;
	} else {
		if (!shared) {
			err = resolver_start(b, 0, NULL, 0, &shared);
			if (err < 0)
				goto fail;
		}
		if (bpf_map_update_elem(shared->fds.dns, &cgid, &shared->ports, BPF_ANY)) {
			err = -errno;
			goto fail;
		}
		h->dns_fd = shared->fds.dns;
	}
	*ret = h;
	return 0;
fail:
	free(h);
	return err;
}

void hmd_dns_stop(struct hmd_dns *h)
{
	if (!h)
		return;
	if (h->own)
		resolver_stop(h->own);
	else if (h->dns_fd >= 0)
		bpf_map_delete_elem(h->dns_fd, &h->cgid);
	free(h);
}

void hmd_dns_shutdown(void)
{
	resolver_stop(shared);
	shared = NULL;
}
