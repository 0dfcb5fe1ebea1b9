// SPDX-License-Identifier: MIT
/*
 * Containment, round two (issue 25): the attacks trust_round2.sh runs
 * inside a run, and bare or with --confine off as controls. Each prints one
 * line per step: "<step> ok" or "<step> <ERRNO>". Traffic goes only to the
 * addresses the test gives: loopback, or the test host in the network
 * namespace it made.
 *
 *   tiocsti TEXT              push TEXT into stdin's terminal (TIOCSTI), then
 *                             TIOCLINUX (TIOCL_GETSHIFTSTATE, harmless)
 *   clone3 CGDIR HOST PORT MARK
 *                             clone3(CLONE_INTO_CGROUP) into CGDIR (opened
 *                             O_RDONLY); the child says its cgroup and sends
 *                             MARK over UDP to HOST:PORT
 *   raw4 DST SRC MARK         ICMP echo request, IP_HDRINCL, from SRC to DST
 *   raw6 DST SRC MARK         ICMPv6 echo request to DST, source SRC
 *                             (IPV6_PKTINFO with IPV6_FREEBIND)
 *   mcast4 IFINDEX GROUP      IP_ADD_MEMBERSHIP (ip_mreqn) on IFINDEX
 *   mcast4src IFADDR GROUP SRC
 *                             IP_ADD_SOURCE_MEMBERSHIP on the interface of IFADDR
 *   mcastgrp IFINDEX GROUP    MCAST_JOIN_GROUP on IFINDEX
 *   mcast6 IFINDEX GROUP      IPV6_ADD_MEMBERSHIP on IFINDEX
 *   perf                      perf_event_open(pid -1, cpu 0): every process
 *   perfself                  perf_event_open(pid 0, cpu -1): its own
 *   sendfd FD HOST PORT MARK  sendto() on descriptor FD (inherited)
 *   udpfd FD CMD...           an unconnected UDP socket on descriptor FD,
 *                             then exec CMD (a runner's leaked socket)
 *   deputy kill|end-keep|report SOCKET RUNID
 *                             RUN_KILL, RUN_END with keep or RUN_REPORT of
 *                             RUNID on a connection of its own to the
 *                             daemon's SOCKET; prints the answer ("deputy
 *                             ok" or "deputy ERROR <ERRNO>")
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/ip_icmp.h>
#include <netinet/icmp6.h>
#include <linux/perf_event.h>
#include <linux/sched.h>

#ifndef IPV6_FREEBIND
#define IPV6_FREEBIND 78
#endif

static const char *ename(int e)
{
	static char buf[16];

	switch (e) {
	case EPERM: return "EPERM";
	case EACCES: return "EACCES";
	case ENOSYS: return "ENOSYS";
	case EINVAL: return "EINVAL";
	case ENOTTY: return "ENOTTY";
	case EIO: return "EIO";
	case ENETUNREACH: return "ENETUNREACH";
	case ENODEV: return "ENODEV";
	case EADDRNOTAVAIL: return "EADDRNOTAVAIL";
	case EBADF: return "EBADF";
	case ENOENT: return "ENOENT";
	case EAFNOSUPPORT: return "EAFNOSUPPORT";
	case ENOTSOCK: return "ENOTSOCK";
	}
	snprintf(buf, sizeof(buf), "E%d", e);
	return buf;
}

static int say(const char *step, int r)
{
	printf("%s %s\n", step, r < 0 ? ename(errno) : "ok");
	fflush(stdout);
	return r < 0;
}

static int udp_send(const char *host, int port, const char *mark)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	int s = socket(AF_INET, SOCK_DGRAM, 0);

	inet_pton(AF_INET, host, &a.sin_addr);
	return sendto(s, mark, strlen(mark), 0, (struct sockaddr *)&a, sizeof(a));
}

static uint16_t csum(const void *p, size_t n)
{
	const uint16_t *w = p;
	uint32_t s = 0;

	for (; n > 1; n -= 2)
		s += *w++;
	if (n)
		s += *(const uint8_t *)w;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return ~s;
}

static int raw4(const char *dst, const char *src, const char *mark)
{
	struct {
		struct iphdr ip;
		struct icmphdr icmp;
		char data[64];
	} pkt = {};
	struct sockaddr_in to = { .sin_family = AF_INET };
	size_t n = strlen(mark) < 64 ? strlen(mark) : 64;
	int s = socket(AF_INET, SOCK_RAW, IPPROTO_RAW), one = 1;

	if (say("raw4 socket", s))
		return 1;
	if (say("raw4 hdrincl", setsockopt(s, IPPROTO_IP, IP_HDRINCL, &one, sizeof(one))))
		return 1;
	memcpy(pkt.data, mark, n);
	pkt.ip.version = 4;
	pkt.ip.ihl = 5;
	pkt.ip.ttl = 64;
	pkt.ip.protocol = IPPROTO_ICMP;
	pkt.ip.tot_len = htons(sizeof(pkt.ip) + sizeof(pkt.icmp) + n);
	inet_pton(AF_INET, src, &pkt.ip.saddr);
	inet_pton(AF_INET, dst, &pkt.ip.daddr);
	pkt.icmp.type = ICMP_ECHO;
	pkt.icmp.un.echo.id = htons(getpid() & 0xffff);
	pkt.icmp.un.echo.sequence = htons(1);
	pkt.icmp.checksum = csum(&pkt.icmp, sizeof(pkt.icmp) + n);
	to.sin_addr.s_addr = pkt.ip.daddr;
	return say("raw4 send", sendto(s, &pkt, sizeof(pkt.ip) + sizeof(pkt.icmp) + n, 0,
				      (struct sockaddr *)&to, sizeof(to)));
}

static int raw6(const char *dst, const char *src, const char *mark)
{
	struct {
		struct icmp6_hdr h;
		char data[64];
	} pkt = {};
	struct sockaddr_in6 to = { .sin6_family = AF_INET6 };
	union {
		char buf[CMSG_SPACE(sizeof(struct in6_pktinfo))];
		struct cmsghdr align;
	} cb = {};
	size_t n = strlen(mark) < 64 ? strlen(mark) : 64;
	struct iovec iov = { &pkt, sizeof(pkt.h) + n };
	struct msghdr m = { .msg_name = &to, .msg_namelen = sizeof(to), .msg_iov = &iov,
			    .msg_iovlen = 1, .msg_control = cb.buf, .msg_controllen = sizeof(cb.buf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	struct in6_pktinfo pi = {};
	int s = socket(AF_INET6, SOCK_RAW, IPPROTO_ICMPV6), one = 1;

	if (say("raw6 socket", s))
		return 1;
	if (say("raw6 freebind", setsockopt(s, IPPROTO_IPV6, IPV6_FREEBIND, &one, sizeof(one))))
		return 1;
	memcpy(pkt.data, mark, n);
	pkt.h.icmp6_type = ICMP6_ECHO_REQUEST;
	pkt.h.icmp6_id = htons(getpid() & 0xffff);
	pkt.h.icmp6_seq = htons(1);
	inet_pton(AF_INET6, dst, &to.sin6_addr);
	inet_pton(AF_INET6, src, &pi.ipi6_addr);
	c->cmsg_level = IPPROTO_IPV6;
	c->cmsg_type = IPV6_PKTINFO;
	c->cmsg_len = CMSG_LEN(sizeof(pi));
	memcpy(CMSG_DATA(c), &pi, sizeof(pi));
	return say("raw6 send", sendmsg(s, &m, 0));
}

static int do_clone3(const char *dir, const char *host, int port, const char *mark)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), st;
	struct clone_args a = { .flags = CLONE_INTO_CGROUP, .exit_signal = SIGCHLD };
	long pid;

	if (say("clone3 open", fd))
		return 1;
	a.cgroup = fd;
	pid = syscall(SYS_clone3, &a, sizeof(a));
	if (pid == 0) {
		char buf[512];
		FILE *f = fopen("/proc/self/cgroup", "re");

		while (f && fgets(buf, sizeof(buf), f))
			if (!strncmp(buf, "0::", 3))
				printf("child cgroup %s", buf + 3);
		say("child send", udp_send(host, port, mark));
		_exit(0);
	}
	if (say("clone3", pid))
		return 1;
	waitpid(pid, &st, 0);
	return 0;
}

static int join4(int ifindex, const char *group)
{
	struct ip_mreqn m = { .imr_ifindex = ifindex };
	int s = socket(AF_INET, SOCK_DGRAM, 0);

	inet_pton(AF_INET, group, &m.imr_multiaddr);
	return say("mcast4 join", setsockopt(s, IPPROTO_IP, IP_ADD_MEMBERSHIP, &m, sizeof(m)));
}

static int join4src(const char *ifaddr, const char *group, const char *src)
{
	struct ip_mreq_source m = {};
	int s = socket(AF_INET, SOCK_DGRAM, 0);

	inet_pton(AF_INET, group, &m.imr_multiaddr);
	inet_pton(AF_INET, ifaddr, &m.imr_interface);
	inet_pton(AF_INET, src, &m.imr_sourceaddr);
	return say("mcast4src join",
		   setsockopt(s, IPPROTO_IP, IP_ADD_SOURCE_MEMBERSHIP, &m, sizeof(m)));
}

static int joingrp(int ifindex, const char *group)
{
	struct group_req g = { .gr_interface = ifindex };
	struct sockaddr_in *a = (struct sockaddr_in *)&g.gr_group;
	int s = socket(AF_INET, SOCK_DGRAM, 0);

	a->sin_family = AF_INET;
	inet_pton(AF_INET, group, &a->sin_addr);
	return say("mcastgrp join", setsockopt(s, IPPROTO_IP, MCAST_JOIN_GROUP, &g, sizeof(g)));
}

static int join6(int ifindex, const char *group)
{
	struct ipv6_mreq m = { .ipv6mr_interface = ifindex };
	int s = socket(AF_INET6, SOCK_DGRAM, 0);

	inet_pton(AF_INET6, group, &m.ipv6mr_multiaddr);
	return say("mcast6 join", setsockopt(s, IPPROTO_IPV6, IPV6_ADD_MEMBERSHIP, &m, sizeof(m)));
}

static int perf(int pid, int cpu)
{
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE, .size = sizeof(a),
				     .config = PERF_COUNT_SW_CPU_CLOCK, .disabled = 1,
				     .exclude_kernel = 1 };
	long fd = syscall(SYS_perf_event_open, &a, pid, cpu, -1, 0);

	return say(pid == -1 ? "perf system-wide" : "perf self", (int)fd);
}

/* The wire protocol's header and the three requests (lib/proto.h; kept
 * here so that this program stays one static file for the VM). */
#define HM_MAGIC 0x504D4548u
#define HM_VERSION 3
enum { REQ_RUN_KILL = 5, REQ_RUN_REPORT = 6, REQ_RUN_END = 7, REP_OK = 100, REP_ERROR = 101 };
struct hdr {
	uint32_t magic;
	uint16_t version, type;
	uint32_t len, seq;
} __attribute__((packed));

static int deputy(const char *op, const char *path, const char *id)
{
	struct {
		struct hdr h;
		uint64_t run_id;
		uint32_t flags, pad;
	} __attribute__((packed)) m = { { HM_MAGIC, HM_VERSION, 0, 8, 21 }, strtoull(id, NULL, 10), 1, 0 };
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	char buf[512];
	struct hdr h;
	int32_t err;
	ssize_t n;
	int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	if (say("deputy connect", s < 0 ? -1 : connect(s, (struct sockaddr *)&a, sizeof(a))))
		return 1;
	m.h.type = !strcmp(op, "kill") ? REQ_RUN_KILL : !strcmp(op, "report") ? REQ_RUN_REPORT : REQ_RUN_END;
	if (m.h.type == REQ_RUN_END)
		m.h.len = 16;
	if (say("deputy send", send(s, &m, sizeof(m.h) + m.h.len, 0) < 0 ? -1 : 0))
		return 1;
	n = recv(s, buf, sizeof(buf), 0);
	if (n < (ssize_t)sizeof(h)) {
		printf("deputy closed\n");
		return 1;
	}
	memcpy(&h, buf, sizeof(h));
	if (h.type == REP_ERROR && n >= (ssize_t)(sizeof(h) + 4)) {
		memcpy(&err, buf + sizeof(h), 4);
		printf("deputy ERROR %s\n", ename(err));
	} else {
		printf("deputy ok (reply type %u)\n", h.type);
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *op = argc > 1 ? argv[1] : "";

	if (!strcmp(op, "tiocsti") && argc == 3) {
		char sub = 6; /* TIOCL_GETSHIFTSTATE */
		int r = 0;

		for (const char *p = argv[2]; *p && r == 0; p++)
			r = ioctl(0, TIOCSTI, p);
		say("tiocsti", r);
		return say("tioclinux", ioctl(0, TIOCLINUX, &sub));
	}
	if (!strcmp(op, "clone3") && argc == 6)
		return do_clone3(argv[2], argv[3], atoi(argv[4]), argv[5]);
	if (!strcmp(op, "raw4") && argc == 5)
		return raw4(argv[2], argv[3], argv[4]);
	if (!strcmp(op, "raw6") && argc == 5)
		return raw6(argv[2], argv[3], argv[4]);
	if (!strcmp(op, "mcast4") && argc == 4)
		return join4(atoi(argv[2]), argv[3]);
	if (!strcmp(op, "mcast4src") && argc == 5)
		return join4src(argv[2], argv[3], argv[4]);
	if (!strcmp(op, "mcastgrp") && argc == 4)
		return joingrp(atoi(argv[2]), argv[3]);
	if (!strcmp(op, "mcast6") && argc == 4)
		return join6(atoi(argv[2]), argv[3]);
	if (!strcmp(op, "perf"))
		return perf(-1, 0);
	if (!strcmp(op, "perfself"))
		return perf(0, -1);
	if (!strcmp(op, "sendfd") && argc == 6) {
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(atoi(argv[4])) };

		inet_pton(AF_INET, argv[3], &a.sin_addr);
		return say("sendfd", sendto(atoi(argv[2]), argv[5], strlen(argv[5]), 0,
					    (struct sockaddr *)&a, sizeof(a)));
	}
	if (!strcmp(op, "udpfd") && argc >= 4) {
		int u = socket(AF_INET, SOCK_DGRAM, 0);

		if (say("udpfd socket", u) || say("udpfd dup2", dup2(u, atoi(argv[2])) < 0 ? -1 : 0))
			return 1;
		if (u != atoi(argv[2]))
			(void)close(u); /* only the one descriptor leaks */
		execvp(argv[3], argv + 3);
		return say("udpfd exec", -1);
	}
	if (!strcmp(op, "deputy") && argc == 5)
		return deputy(argv[2], argv[3], argv[4]);
	fprintf(stderr, "usage: see the comment at the top of round2.c\n");
	return 2;
}
