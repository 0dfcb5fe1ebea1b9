/* SPDX-License-Identifier: MIT */
/*
 * Network policy shared by bpf/net.bpf.c and the daemon.
 * Fixed-width types only; no includes, so the BPF side and user space
 * compile the same definition.
 */
#ifndef HERMETIC_NET_H
#define HERMETIC_NET_H

/* Policy flags of one run (struct hm_net_policy.flags). */
#define HM_NET_ENFORCE 0x1u /* refuse destinations that are not allowed */
#define HM_NET_ALLOW_LOOPBACK 0x2u /* 127.0.0.0/8 and ::1 are allowed */
#define HM_NET_ALLOW_UNIX 0x4u /* AF_UNIX connect/sendmsg allowed */
#define HM_NET_AUDIT 0x8u /* with ENFORCE: report what would be refused, refuse nothing */
/* Block mode: the run's DNS (port 53) goes only to a resolver of hermeticd
 * (its hm_dns entry); without an entry it is refused, never sent. */
#define HM_NET_DNS 0x10u
/* The run allows no name (no --allow NAME): every DNS query is refused,
 * reported as a refusal (block: answered NXDOMAIN by the shared resolver;
 * audit: let through). docs/network.md */
#define HM_NET_DNS_NONE 0x20u
/* enroll --connections: report allowed connect()/sendmsg() too (HM_EV_NET_ALLOWED);
 * a high bit, apart from the policy bits above */
#define HM_NET_LOG_ALLOWED 0x80u

/* Upper bounds a client can make the daemon allocate in the kernel. */
#define HM_NET_MAX_RUNS 1024
#define HM_NET_MAX_ALLOW 64 /* per run */
#define HM_NET_MAX_ALLOW_TOTAL 8192

/* Value of the policy map, keyed by the run's cgroup id (__u64). */
struct hm_net_policy {
	__u32 flags;
	__u32 n_allow;
	__u64 refused; /* refusals so far, updated atomically by BPF */
	/* events of the run put on the ring buffer, updated atomically by BPF:
	 * a daemon that adopted the run after a restart tells from it how many
	 * it never received */
	__u64 emitted;
};

/* Key of the allow map: one exact destination of one run.
 * IPv4 addresses are stored IPv4-mapped (::ffff:a.b.c.d) so that one
 * lookup covers both families and a mapped address is the same key.
 * port is in host byte order; 0 means every port of that address. */
struct hm_net_allow_key {
	__u64 cgroup_id;
	__u8 addr[16];
	__u16 port;
	__u16 pad[3];
};

/* Domains that follow DNS (docs/network.md). A run with --allow NAME has
 * an entry in hm_dns: its DNS (port 53, UDP and TCP, any address) is
 * redirected to the run's own resolver in hermeticd, on 127.0.0.1 and ::1
 * at these ports (host byte order; 0: none for that family). */
struct hm_net_dns {
	__u16 udp4, tcp4, udp6, tcp6;
};

/* Key of hm_dns_ports: one resolver socket (family 4 or 6, SOCK_STREAM 1
 * or SOCK_DGRAM 2, port in host order). */
#define HM_NET_DNS_PORT_KEY(fam, type, port) \
	((__u32)(port) | ((__u32)(type) & 0xff) << 16 | (__u32)(fam) << 24)

/* Addresses the resolver learned for a run: keyed like hm_allow, the value
 * is when they close to new connections (bpf_ktime_get_ns, i.e.
 * CLOCK_MONOTONIC). */
#define HM_NET_MAX_DNS_TOTAL 65536
#define HM_NET_MAX_DNS_PER_RUN 512

/* The original destination of a redirected DNS socket, by socket cookie:
 * the recvmsg hooks give answers that source address back. */
struct hm_net_dns_orig {
	__u8 addr[16]; /* IPv4-mapped for AF_INET */
	__u16 port; /* host byte order */
	__u16 pad[3];
};

/* Event kinds carried on the ring buffer. */
#define HM_EV_NET_REFUSED 1
/* An allowed connect()/sendmsg() of a run with HM_NET_LOG_ALLOWED, same
 * struct hm_net_event; apart from the trace kinds (include/hermetic/trace.h). */
#define HM_EV_NET_ALLOWED 32

#define HM_OP_CONNECT 1
#define HM_OP_SENDMSG 2
#define HM_OP_PACKET 3 /* dropped at cgroup egress: raw sockets, ICMP, ... */
#define HM_OP_JOIN 4 /* a multicast join off loopback (cgroup/setsockopt): the group */

#define HM_FAMILY_INET 2
#define HM_FAMILY_INET6 10
#define HM_FAMILY_UNIX 1

/* A refused (or, HM_EV_NET_ALLOWED, allowed) connect or sendmsg. */
struct hm_net_event {
	__u32 kind; /* HM_EV_NET_REFUSED, HM_EV_NET_ALLOWED */
	__u32 pid; /* tgid */
	__u64 cgroup_id;
	__u64 time_ns; /* CLOCK_MONOTONIC */
	__u8 addr[16]; /* IPv4-mapped for AF_INET; zero for AF_UNIX */
	__u16 port; /* host byte order */
	__u8 family; /* HM_FAMILY_* as the program asked */
	__u8 op; /* HM_OP_* */
	__u32 proto; /* IPPROTO_TCP/UDP/... (sk->protocol), 0 if unknown */
	char comm[16];
};

#endif
