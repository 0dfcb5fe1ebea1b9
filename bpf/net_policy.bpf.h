/* SPDX-License-Identifier: (MIT OR GPL-2.0) */
/*
 * The network decision, shared by the cgroup hooks (net.bpf.c) and the
 * optional BPF-LSM layer (net_lsm.bpf.c): the maps and one function that
 * says whether a destination of an enrolled cgroup is allowed.
 */
#ifndef HERMETIC_NET_POLICY_BPF_H
#define HERMETIC_NET_POLICY_BPF_H

#include "hermetic/net.h"

#ifndef ECONNREFUSED
#define ECONNREFUSED 111
#endif
#ifndef ENETUNREACH
#define ENETUNREACH 101
#endif

/* The depth of run cgroups in the hierarchy (the root is 0), set by the
 * daemon before load; 0 means "the task's own cgroup". */
const volatile __u32 hm_run_level = 0;

/* The run a task belongs to: the ancestor of its cgroup at the runs'
 * level. A process in a cgroup it made below its run's (root can) is
 * still the run's; a process above that level gets 0, enrolled nowhere. */
static __always_inline __u64 hm_run_cgid(void)
{
	return hm_run_level ? bpf_get_current_ancestor_cgroup_id(hm_run_level)
			    : bpf_get_current_cgroup_id();
}

/* cgroup id -> policy; a cgroup not in this map is not enrolled. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, HM_NET_MAX_RUNS);
	__type(key, __u64);
	__type(value, struct hm_net_policy);
} hm_policy SEC(".maps");

/* (cgroup id, address, port) -> 1 for each --allow destination. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, HM_NET_MAX_ALLOW_TOTAL);
	__type(key, struct hm_net_allow_key);
	__type(value, __u8);
} hm_allow SEC(".maps");

/* Domains that follow DNS (docs/network.md): cgroup id -> the ports of the
 * run's resolver in hermeticd; a run with an entry has its DNS redirected. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, HM_NET_MAX_RUNS);
	__type(key, __u64);
	__type(value, struct hm_net_dns);
} hm_dns SEC(".maps");

/* Every resolver socket of every run (key: HM_NET_DNS_PORT_KEY) -> 1. No run may reach
 * one but through the redirect: a run sending to another's resolver
 * directly would use that run's names. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, HM_NET_MAX_RUNS * 4);
	__type(key, __u32);
	__type(value, __u8);
} hm_dns_ports SEC(".maps");

/* Destinations the run's resolver learned from answers -> when they close
 * to new connections (bpf_ktime_get_ns). Allocated as used. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, HM_NET_MAX_DNS_TOTAL);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct hm_net_allow_key);
	__type(value, __u64);
} hm_dns_allow SEC(".maps");

/* Socket cookie -> original destination of a redirected DNS socket. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, __u64);
	__type(value, struct hm_net_dns_orig);
} hm_dns_orig SEC(".maps");

/* Every event of enrolled cgroups; sized by the daemon before load. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} hm_events SEC(".maps");

/* Events that could not be reserved on the ring, per cgroup id. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, HM_NET_MAX_RUNS);
	__type(key, __u64);
	__type(value, __u64);
} hm_dropped SEC(".maps");

static __always_inline int hm_is_v4_mapped(const __u8 a[16])
{
	for (int i = 0; i < 10; i++)
		if (a[i])
			return 0;
	return a[10] == 0xff && a[11] == 0xff;
}

/* Loopback in the wide sense: 127/8, ::1, and the unspecified addresses,
 * which the kernel routes to the local host. For the address a program
 * names (connect, sendmsg): the kernel picks the real destination, and the
 * packet hook judges what it picked (hm_is_loopback). */
static __always_inline int hm_is_local(const __u8 a[16])
{
	int zero = 1;

	if (hm_is_v4_mapped(a))
		return a[12] == 127 || (!a[12] && !a[13] && !a[14] && !a[15]);
	for (int i = 0; i < 15; i++)
		if (a[i])
			zero = 0;
	return zero && (a[15] == 1 || a[15] == 0);
}

/* Loopback in the strict sense, for a packet's own addresses: 127/8 and
 * ::1 only. 0.0.0.0 or :: as a packet's destination (a raw socket's own
 * header) is delivered to the local host, which answers the packet's
 * source: the source decides where the answer goes. */
static __always_inline int hm_is_loopback(const __u8 a[16])
{
	if (hm_is_v4_mapped(a))
		return a[12] == 127;
	for (int i = 0; i < 15; i++)
		if (a[i])
			return 0;
	return a[15] == 1;
}

/* A destination the run's resolver learned (key.port is tried as given and
 * as 0): still open for new connections, or, with any_age, learned at all
 * (the packet backstop: a connection opened in time keeps working). */
static __always_inline int hm_dns_learned(struct hm_net_allow_key *key, bool any_age)
{
	__u16 port = key->port;
	__u64 *exp;

	for (int i = 0; i < 2; i++) {
		key->port = i ? 0 : port;
		exp = bpf_map_lookup_elem(&hm_dns_allow, key);
		if (exp && (any_age || *exp > bpf_ktime_get_ns()))
			return 1;
	}
	return 0;
}

/* Is addr:port this run's own resolver (reached through the redirect)? */
static __always_inline int hm_dns_own(__u64 cgid, const __u8 addr[16], __u16 port)
{
	struct hm_net_dns *dns;

	if (!port || !hm_is_local(addr))
		return 0;
	dns = bpf_map_lookup_elem(&hm_dns, &cgid);
	return dns && (port == dns->udp4 || port == dns->tcp4 || port == dns->udp6 ||
		       port == dns->tcp6);
}

/* 1 when the run may reach addr:port (addr IPv4-mapped or IPv6). */
static __always_inline int hm_allowed(__u64 cgid, const struct hm_net_policy *pol,
				      const __u8 addr[16], __u16 port)
{
	struct hm_net_allow_key key = {};

	if (!(pol->flags & HM_NET_ENFORCE))
		return 1;
	if ((pol->flags & HM_NET_ALLOW_LOOPBACK) && hm_is_local(addr))
		return 1;
	if (hm_dns_own(cgid, addr, port))
		return 1;
	key.cgroup_id = cgid;
	__builtin_memcpy(key.addr, addr, 16);
	key.port = port;
	if (pol->n_allow) {
		if (bpf_map_lookup_elem(&hm_allow, &key))
			return 1;
		key.port = 0;
		if (bpf_map_lookup_elem(&hm_allow, &key))
			return 1;
		key.port = port;
	}
	return hm_dns_learned(&key, false);
}

/* One more event of the run on the ring (struct hm_net_policy.emitted). */
static __always_inline void hm_count_emit(__u64 cgid)
{
	struct hm_net_policy *pol = bpf_map_lookup_elem(&hm_policy, &cgid);

	if (pol)
		__sync_fetch_and_add(&pol->emitted, 1);
}

static __always_inline void hm_count_drop(__u64 cgid)
{
	__u64 one = 1, *n = bpf_map_lookup_elem(&hm_dropped, &cgid);

	if (n)
		__sync_fetch_and_add(n, 1);
	else
		bpf_map_update_elem(&hm_dropped, &cgid, &one, BPF_NOEXIST);
}

/* One event of kind on the ring: the run, who (task: whether this program
 * type may ask about the current task; cgroup_skb may only on newer
 * kernels, the daemon probes) and where. A full ring counts it in
 * hm_dropped, so the daemon and the log can say they are incomplete. */
static __always_inline void hm_emit(__u32 kind, __u64 cgid, struct hm_net_policy *pol,
				    const __u8 addr[16], __u16 port, __u8 family, __u8 op,
				    __u32 proto, bool task)
{
	struct hm_net_event *ev = bpf_ringbuf_reserve(&hm_events, sizeof(*ev), 0);

	if (!ev) {
		hm_count_drop(cgid);
		return;
	}
	__sync_fetch_and_add(&pol->emitted, 1);
	ev->kind = kind;
	ev->pid = 0;
	ev->comm[0] = 0;
	if (task)
		ev->pid = bpf_get_current_pid_tgid() >> 32;
	ev->cgroup_id = cgid;
	ev->time_ns = bpf_ktime_get_ns();
	__builtin_memcpy(ev->addr, addr, 16);
	ev->port = port;
	ev->family = family;
	ev->op = op;
	ev->proto = proto;
	if (task)
		bpf_get_current_comm(ev->comm, sizeof(ev->comm));
	bpf_ringbuf_submit(ev, 0);
}

/* Count the refusal in the run's policy and tell the daemon who and where. */
static __always_inline void hm_report_ctx(__u64 cgid, struct hm_net_policy *pol,
					  const __u8 addr[16], __u16 port, __u8 family, __u8 op,
					  __u32 proto, bool task)
{
	__sync_fetch_and_add(&pol->refused, 1);
	hm_emit(HM_EV_NET_REFUSED, cgid, pol, addr, port, family, op, proto, task);
}

static __always_inline void hm_report(__u64 cgid, struct hm_net_policy *pol, const __u8 addr[16],
				      __u16 port, __u8 family, __u8 op, __u32 proto)
{
	hm_report_ctx(cgid, pol, addr, port, family, op, proto, true);
}

/* enroll --connections: an allowed connect()/sendmsg() as an event, for
 * runs that asked (HM_NET_LOG_ALLOWED); the others pay one flag test. Not
 * counted in pol->refused. */
static __always_inline void hm_log_allowed(__u64 cgid, struct hm_net_policy *pol,
					   const __u8 addr[16], __u16 port, __u8 family, __u8 op,
					   __u32 proto)
{
	if (pol->flags & HM_NET_LOG_ALLOWED)
		hm_emit(HM_EV_NET_ALLOWED, cgid, pol, addr, port, family, op, proto, true);
}

static __always_inline void hm_map_v4(__u8 out[16], __u32 ip4_be)
{
	__builtin_memset(out, 0, 16);
	out[10] = 0xff;
	out[11] = 0xff;
	__builtin_memcpy(&out[12], &ip4_be, 4);
}

#endif
