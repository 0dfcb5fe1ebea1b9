// SPDX-License-Identifier: (MIT OR GPL-2.0)
/*
 * Kernel network refusal for enrolled cgroups.
 *
 * The daemon attaches these programs once, to its cgroup subtree; every run
 * is a child cgroup, so the hooks see every process of every run and nothing
 * else. Per run, the decision is a lookup of the current cgroup id in
 * hm_policy: a cgroup without an entry (the subtree itself, a run being torn
 * down) is let through unchanged.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "net_policy.bpf.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

#define AF_INET 2
#define AF_INET6 10

#define SOCK_STREAM 1
#define SOCK_DGRAM 2

/* The cookie of hermeticd's network namespace (SO_NETNS_COOKIE), set by
 * the daemon before load; 0 when the kernel cannot say (before 5.14):
 * then every socket is taken to be in it. */
const volatile __u64 hm_daemon_netns = 0;

/* Domains that follow DNS (docs/network.md). For a run with a resolver
 * (an hm_dns entry): DNS to any address, port 53, goes to the run's own
 * resolver in hermeticd instead, and the original destination is kept by
 * socket cookie for the recvmsg hooks; a run's direct traffic to any
 * resolver port is refused (only the redirect leads there, so a run can
 * never ask another run's resolver). A run without names shares one
 * resolver that answers every query NXDOMAIN; each of its queries is
 * reported as a refusal, and under audit let through unchanged. A blocked
 * run whose resolver is gone (HM_NET_DNS, no entry) has its DNS refused.
 * Returns 1 or 0 as the hook's verdict, -1 when this is not DNS of a
 * blocked or audited run. */
static __always_inline int hm_dns_redirect(struct bpf_sock_addr *ctx, __u64 cgid,
					   struct hm_net_policy *pol, const __u8 addr[16],
					   __u16 port, __u8 family, __u8 op, __u32 proto)
{
	struct hm_net_dns_orig orig = {};
	struct hm_net_dns *dns;
	__u64 cookie;
	__u32 key = HM_NET_DNS_PORT_KEY(hm_is_v4_mapped(addr) ? 4 : 6, ctx->type, port);
	__u16 to;
	/* The resolvers listen on loopback of hermeticd's network namespace.
	 * A socket of another one (a suite's own, `unshare -n`, a container)
	 * that reaches a local address at one of their port numbers reaches
	 * a socket of its own namespace, never a resolver: refusing it broke
	 * a test server that happened to get that port. Nor can a redirect
	 * lead there: such a run's DNS fails closed, below. */
	int here = !hm_daemon_netns || bpf_get_netns_cookie(ctx) == hm_daemon_netns;

	if (here && hm_is_local(addr) && bpf_map_lookup_elem(&hm_dns_ports, &key)) {
		bpf_set_retval(-ECONNREFUSED);
		return 0;
	}
	if (port != 53 || (ctx->type != SOCK_DGRAM && ctx->type != SOCK_STREAM))
		return -1;
	if (!(pol->flags & HM_NET_ENFORCE))
		return -1;
	/* A run without names: block answers every query NXDOMAIN (the
	 * shared resolver), so each is a refusal, under audit too. */
	if (pol->flags & HM_NET_DNS_NONE)
		hm_report(cgid, pol, addr, port, family, op, proto);
	if (pol->flags & HM_NET_AUDIT)
		return 1; /* audit: nothing is redirected */
	if (!here) {
		/* No resolver of hermeticd is reachable from this namespace:
		 * refused as when the run's resolver is gone, and reported. */
		if (!(pol->flags & HM_NET_DNS_NONE))
			hm_report(cgid, pol, addr, port, family, op, proto);
		bpf_set_retval(-ENETUNREACH);
		return 0;
	}
	dns = bpf_map_lookup_elem(&hm_dns, &cgid);
	if (!dns) {
		if (!(pol->flags & HM_NET_DNS))
			return -1;
		/* Its resolver is gone (a daemon restart): fail closed. */
		bpf_set_retval(-ENETUNREACH);
		return 0;
	}
	if (family == AF_INET)
		to = ctx->type == SOCK_STREAM ? dns->tcp4 : dns->udp4;
	else
		to = ctx->type == SOCK_STREAM ? dns->tcp6 : dns->udp6;
	if (!to) {
		bpf_set_retval(-ENETUNREACH); /* no resolver of this family */
		return 0;
	}
	__builtin_memcpy(orig.addr, addr, 16);
	orig.port = port;
	cookie = bpf_get_socket_cookie(ctx);
	bpf_map_update_elem(&hm_dns_orig, &cookie, &orig, BPF_ANY);
	if (family == AF_INET) {
		ctx->user_ip4 = bpf_htonl(0x7f000001);
	} else {
		ctx->user_ip6[0] = 0;
		ctx->user_ip6[1] = 0;
		ctx->user_ip6[2] = 0;
		ctx->user_ip6[3] = bpf_htonl(1);
	}
	ctx->user_port = bpf_htons(to);
	return 1;
}

/* Decide for one inet destination. Returns 1 to let the call proceed. */
static __always_inline int decide(struct bpf_sock_addr *ctx, const __u8 addr[16], __u8 family,
				  __u8 op)
{
	__u64 cgid = hm_run_cgid();
	struct hm_net_policy *pol = bpf_map_lookup_elem(&hm_policy, &cgid);
	__u16 port = bpf_ntohs(ctx->user_port);
	/* Read once, here: the verifier refuses a load through a ctx pointer
	 * the compiler moved (ctx + offset) to share it between the two uses. */
	__u32 proto = ctx->protocol;
	int dns;

	if (!pol)
		return 1;
	dns = hm_dns_redirect(ctx, cgid, pol, addr, port, family, op, proto);
	if (dns >= 0) {
		/* the run's DNS, sent to its resolver (or, under audit, where
		 * it was sent): logged (--connections) with the address the
		 * program asked; a run without names had it reported refused */
		if (dns == 1 && !(pol->flags & HM_NET_DNS_NONE))
			hm_log_allowed(cgid, pol, addr, port, family, op, proto);
		return dns;
	}
	if (hm_allowed(cgid, pol, addr, port)) {
		hm_log_allowed(cgid, pol, addr, port, family, op, proto);
		return 1;
	}
	hm_report(cgid, pol, addr, port, family, op, proto);
	if (pol->flags & HM_NET_AUDIT)
		return 1; /* --network audit: counted and reported, let through */
	/* Both say ENETUNREACH, what the kernel says for a destination without
	 * a route: the run looks like a machine that is offline, the answer
	 * programs that probe for a network expect (they skip, rather than
	 * fail as on a host that refused). */
	bpf_set_retval(-ENETUNREACH);
	return 0;
}

static __always_inline int v4(struct bpf_sock_addr *ctx, __u8 op)
{
	__u8 addr[16];

	hm_map_v4(addr, ctx->user_ip4);
	return decide(ctx, addr, AF_INET, op);
}

static __always_inline int v6(struct bpf_sock_addr *ctx, __u8 op)
{
	__u32 a[4];

	/* Read word by word: the verifier allows only 4-byte loads of user_ip6.
	 * An IPv4-mapped address arrives here unchanged and compares equal to
	 * the IPv4 form, since both are stored mapped. */
	a[0] = ctx->user_ip6[0];
	a[1] = ctx->user_ip6[1];
	a[2] = ctx->user_ip6[2];
	a[3] = ctx->user_ip6[3];
	/* The copy is what is read from here on: the DNS redirect rewrites
	 * the context, and the verifier allows no byte reads of it. */
	asm volatile("" : : "r"(a) : "memory");
	return decide(ctx, (const __u8 *)a, AF_INET6, op);
}

SEC("cgroup/connect4")
int hm_connect4(struct bpf_sock_addr *ctx)
{
	return v4(ctx, HM_OP_CONNECT);
}

SEC("cgroup/connect6")
int hm_connect6(struct bpf_sock_addr *ctx)
{
	return v6(ctx, HM_OP_CONNECT);
}

SEC("cgroup/sendmsg4")
int hm_sendmsg4(struct bpf_sock_addr *ctx)
{
	return v4(ctx, HM_OP_SENDMSG);
}

SEC("cgroup/sendmsg6")
int hm_sendmsg6(struct bpf_sock_addr *ctx)
{
	return v6(ctx, HM_OP_SENDMSG);
}

/* An answer of a run's resolver to a redirected socket: its source is
 * given back as the address the program asked (glibc drops answers from
 * anyone but its nameserver). */
static __always_inline int hm_dns_recv(struct bpf_sock_addr *ctx, const __u8 addr[16], __u8 family)
{
	__u64 cgid = hm_run_cgid(), cookie;
	struct hm_net_dns_orig *orig;

	if (!hm_dns_own(cgid, addr, bpf_ntohs(ctx->user_port)))
		return 1;
	cookie = bpf_get_socket_cookie(ctx);
	orig = bpf_map_lookup_elem(&hm_dns_orig, &cookie);
	if (!orig)
		return 1;
	/* Each hook may write only its own family's field (family is a
	 * constant here: the other branch is not compiled in). */
	if (family == AF_INET) {
		__u32 a;

		if (!hm_is_v4_mapped(orig->addr))
			return 1;
		__builtin_memcpy(&a, &orig->addr[12], 4);
		ctx->user_ip4 = a;
	} else {
		__u32 a[4]; /* ::ffff:a.b.c.d as the AF_INET6 socket asked */

		__builtin_memcpy(a, orig->addr, 16);
		ctx->user_ip6[0] = a[0];
		ctx->user_ip6[1] = a[1];
		ctx->user_ip6[2] = a[2];
		ctx->user_ip6[3] = a[3];
	}
	ctx->user_port = bpf_htons(orig->port);
	return 1;
}

SEC("cgroup/recvmsg4")
int hm_recvmsg4(struct bpf_sock_addr *ctx)
{
	__u8 addr[16];

	hm_map_v4(addr, ctx->user_ip4);
	if (hm_is_local(addr))
		return hm_dns_recv(ctx, addr, AF_INET);
	return 1;
}

SEC("cgroup/recvmsg6")
int hm_recvmsg6(struct bpf_sock_addr *ctx)
{
	__u32 a[4];

	a[0] = ctx->user_ip6[0];
	a[1] = ctx->user_ip6[1];
	a[2] = ctx->user_ip6[2];
	a[3] = ctx->user_ip6[3];
	asm volatile("" : : "r"(a) : "memory"); /* as in v6() */
	if (hm_is_local((const __u8 *)a))
		return hm_dns_recv(ctx, (const __u8 *)a, AF_INET6);
	return 1;
}

/* Unix sockets. libbpf 1.1 has no section name for these attach types, so
 * they are declared as connect4 programs, autoload off, and the daemon sets
 * the real expected attach type (BPF_CGROUP_UNIX_CONNECT/SENDMSG) and enables
 * them when its probe says the kernel has them. They must not touch the
 * inet fields of the context. */
static __always_inline int unix_decide(struct bpf_sock_addr *ctx, __u8 op)
{
	__u64 cgid = hm_run_cgid();
	struct hm_net_policy *pol = bpf_map_lookup_elem(&hm_policy, &cgid);
	__u8 none[16] = {};

	if (!pol || !(pol->flags & HM_NET_ENFORCE) || (pol->flags & HM_NET_ALLOW_UNIX))
		return 1;
	hm_report(cgid, pol, none, 0, HM_FAMILY_UNIX, op, 0);
	if (pol->flags & HM_NET_AUDIT)
		return 1;
	/* A unix socket nobody listens on says ECONNREFUSED; ENETUNREACH is
	 * not an answer unix sockets give. sendmsg() keeps the hook's EPERM. */
	if (op == HM_OP_CONNECT)
		bpf_set_retval(-ECONNREFUSED);
	return 0;
}

SEC("?cgroup/connect4")
int hm_connect_unix(struct bpf_sock_addr *ctx)
{
	return unix_decide(ctx, HM_OP_CONNECT);
}

SEC("?cgroup/sendmsg4")
int hm_sendmsg_unix(struct bpf_sock_addr *ctx)
{
	return unix_decide(ctx, HM_OP_SENDMSG);
}

/* Backstop at the packet level. The socket hooks above see connect() and
 * UDP sendmsg(); raw and ICMP sockets (ping, a root test crafting packets)
 * never pass through them. Every packet a run's socket sends is checked
 * here against the same policy; a refused one is dropped, and the sender
 * gets EPERM. The cgroup is the socket's, so retransmits from timers are
 * attributed correctly. */
/* Set by the daemon before load: cgroup_skb programs may call the
 * current-task helpers on this kernel (the verifier prunes the branch when
 * false, so older kernels accept the program). */
const volatile bool hm_skb_task_helpers = false;

#define ETH_P_IP 0x0800
#define ETH_P_IPV6 0x86DD
#define IPPROTO_TCP 6
#define IPPROTO_UDP 17

SEC("cgroup_skb/egress")
int hm_egress(struct __sk_buff *skb)
{
	/* The socket's cgroup's ancestor at the runs' level (see hm_run_cgid). */
	__u64 cgid = hm_run_level ? bpf_skb_ancestor_cgroup_id(skb, hm_run_level)
				  : bpf_skb_cgroup_id(skb);
	struct hm_net_policy *pol = bpf_map_lookup_elem(&hm_policy, &cgid);
	__u8 addr[16], src[16], proto, family;
	__u32 l4off;
	__u16 port = 0;

	if (!pol || !(pol->flags & HM_NET_ENFORCE))
		return 1;
	if (skb->protocol == bpf_htons(ETH_P_IP)) {
		struct iphdr ip;

		if (bpf_skb_load_bytes(skb, 0, &ip, sizeof(ip)))
			return 1;
		hm_map_v4(addr, ip.daddr);
		hm_map_v4(src, ip.saddr);
		proto = ip.protocol;
		l4off = ip.ihl * 4;
		family = AF_INET;
	} else if (skb->protocol == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr ip6;

		if (bpf_skb_load_bytes(skb, 0, &ip6, sizeof(ip6)))
			return 1;
		__builtin_memcpy(addr, &ip6.daddr, 16);
		__builtin_memcpy(src, &ip6.saddr, 16);
		proto = ip6.nexthdr;
		l4off = sizeof(ip6);
		family = AF_INET6;
	} else {
		return 1;
	}
	/* --network audit: TCP and UDP were reported by the socket hooks, at
	 * connect() and sendmsg(); reporting their every packet here would
	 * flood the ring. Other packets (raw sockets, ICMP) are reported. */
	if ((pol->flags & HM_NET_AUDIT) && (proto == IPPROTO_TCP || proto == IPPROTO_UDP))
		return 1;
	if (proto == IPPROTO_TCP || proto == IPPROTO_UDP) {
		__u16 ports[2];

		if (!bpf_skb_load_bytes(skb, l4off, ports, sizeof(ports)))
			port = bpf_ntohs(ports[1]);
	}
	/* Local in the wide sense (what hm_allowed lets through) but not a
	 * loopback packet both ways: 0.0.0.0 or :: as the destination, or a
	 * source that is not loopback (a raw socket's own header, IP_PKTINFO
	 * or IP_TRANSPARENT). The local host would answer that source, from
	 * its own sockets, which no hook of a run sees: refused. */
	if (hm_is_local(addr) && !(hm_is_loopback(addr) && hm_is_loopback(src)))
		goto refuse;
	if (hm_allowed(cgid, pol, addr, port))
		return 1;
	/* A learned destination past its TTL: a TCP or UDP socket connected
	 * while it was open keeps working (connect and sendmsg were checked). */
	if (proto == IPPROTO_TCP || proto == IPPROTO_UDP) {
		struct hm_net_allow_key key = { .cgroup_id = cgid, .port = port };

		__builtin_memcpy(key.addr, addr, 16);
		if (hm_dns_learned(&key, true))
			return 1;
	}
refuse:
	hm_report_ctx(cgid, pol, addr, port, family, HM_OP_PACKET, proto, hm_skb_task_helpers);
	return (pol->flags & HM_NET_AUDIT) ? 1 : 0;
}

/* Multicast joins. A join makes the kernel itself send membership reports
 * (IGMP, MLD) on the interface, from no socket: no hook above sees them,
 * and they carry the group (and source) addresses the run chose, again on
 * every query. A run whose network is enforced may join only on loopback,
 * named explicitly (lo is ifindex 1 in every network namespace, or an
 * address in 127/8): with neither, the kernel picks the interface by the
 * route to the group, which is the host's. Refused with EPERM (the hook's
 * answer) and reported; --network audit reports and lets it through.
 * Every other option passes untouched. */
#define SOL_IP 0
#define SOL_IPV6 41
#define IP_ADD_MEMBERSHIP 35
#define IP_ADD_SOURCE_MEMBERSHIP 39
#define MCAST_JOIN_GROUP 42
#define MCAST_JOIN_SOURCE_GROUP 46
#define IPV6_ADD_MEMBERSHIP 20 /* = IPV6_JOIN_GROUP */
#define LOOPBACK_IFINDEX 1
#define HM_PAGE_SIZE 4096

/* 1 when the join names loopback; the group goes to group[16] (mapped). */
static __always_inline int join_on_loopback(struct bpf_sockopt *ctx, int level, int name,
					    __u8 group[16])
{
	__u8 *p = ctx->optval, *end = ctx->optval_end;
	__u32 v, ifindex;

	__builtin_memset(group, 0, 16);
	if (name == MCAST_JOIN_GROUP || name == MCAST_JOIN_SOURCE_GROUP) {
		/* struct group_req / group_source_req: __u32 gr_interface,
		 * then a sockaddr_storage at 8 (its address at 8 + 4 or 8 + 8) */
		if (p + 28 > end)
			return 0;
		__builtin_memcpy(&ifindex, p, 4);
		if (p[8] == AF_INET) {
			__builtin_memcpy(&v, p + 12, 4);
			hm_map_v4(group, v);
		} else {
			__builtin_memcpy(group, p + 16, 12);
		}
		return ifindex == LOOPBACK_IFINDEX;
	}
	if (level == SOL_IPV6) {
		/* struct ipv6_mreq: in6_addr, then int ipv6mr_interface */
		if (p + 20 > end)
			return 0;
		__builtin_memcpy(group, p, 16);
		__builtin_memcpy(&ifindex, p + 16, 4);
		return ifindex == LOOPBACK_IFINDEX;
	}
	/* struct ip_mreq(n) / ip_mreq_source: group, interface address, then
	 * (ip_mreqn, 12 bytes or more) an ifindex, which wins when set */
	if (p + 8 > end)
		return 0;
	__builtin_memcpy(&v, p, 4);
	hm_map_v4(group, v);
	if (name == IP_ADD_MEMBERSHIP && ctx->optlen >= 12 && p + 12 <= end) {
		__builtin_memcpy(&ifindex, p + 8, 4);
		if (ifindex)
			return ifindex == LOOPBACK_IFINDEX;
	}
	return p[4] == 127;
}

/* Autoload off: the daemon loads it where its probe says cgroup/setsockopt
 * programs have the helpers it calls (daemon/bpf.c, have_sockopt). */
SEC("?cgroup/setsockopt")
int hm_setsockopt(struct bpf_sockopt *ctx)
{
	int level = ctx->level, name = ctx->optname;
	__u64 cgid;
	struct hm_net_policy *pol;
	__u8 group[16];

	if ((level == SOL_IP && (name == IP_ADD_MEMBERSHIP || name == IP_ADD_SOURCE_MEMBERSHIP)) ||
	    ((level == SOL_IP || level == SOL_IPV6) &&
	     (name == MCAST_JOIN_GROUP || name == MCAST_JOIN_SOURCE_GROUP)) ||
	    (level == SOL_IPV6 && name == IPV6_ADD_MEMBERSHIP)) {
		cgid = hm_run_cgid();
		pol = bpf_map_lookup_elem(&hm_policy, &cgid);
		if (pol && (pol->flags & HM_NET_ENFORCE) &&
		    !join_on_loopback(ctx, level, name, group)) {
			hm_report(cgid, pol, group, 0, level == SOL_IP ? AF_INET : AF_INET6,
				  HM_OP_JOIN, 0);
			if (!(pol->flags & HM_NET_AUDIT))
				return 0; /* EPERM */
		}
	}
	/* Past a page the program sees only the first one: 0 tells the
	 * kernel to use the caller's own buffer, unchanged. */
	if (ctx->optlen > HM_PAGE_SIZE)
		ctx->optlen = 0;
	return 1;
}
