// SPDX-License-Identifier: (MIT OR GPL-2.0)
/*
 * Optional second layer: BPF-LSM socket_connect, for kernels that allow
 * trampoline programs. It shares the maps of net.bpf.c (the daemon reuses
 * their fds before load) and makes the same decision, so a process that
 * somehow escaped the cgroup hooks' attach point is still refused.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include "net_policy.bpf.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

#define AF_INET 2
#define AF_INET6 10

SEC("lsm/socket_connect")
int BPF_PROG(hm_lsm_connect, struct socket *sock, struct sockaddr *address, int addrlen, int ret)
{
	__u64 cgid = hm_run_cgid();
	struct hm_net_policy *pol;
	__u16 family, port = 0;
	__u8 addr[16];

	if (ret)
		return ret;
	pol = bpf_map_lookup_elem(&hm_policy, &cgid);
	if (!pol)
		return 0;
	family = BPF_CORE_READ(address, sa_family);
	if (family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)address;

		hm_map_v4(addr, BPF_CORE_READ(in, sin_addr.s_addr));
		port = bpf_ntohs(BPF_CORE_READ(in, sin_port));
	} else if (family == AF_INET6) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)address;

		bpf_core_read(addr, 16, &in6->sin6_addr);
		port = bpf_ntohs(BPF_CORE_READ(in6, sin6_port));
	} else {
		return 0;
	}
	if (hm_allowed(cgid, pol, addr, port))
		return 0;
	/* DNS of a run with a resolver: the cgroup hook, after this one,
	 * redirects it there (net.bpf.c hm_dns_redirect). */
	if (port == 53 && bpf_map_lookup_elem(&hm_dns, &cgid))
		return 0;
	/* This hook runs before the cgroup one: count and report here. */
	hm_report(cgid, pol, addr, port, family, HM_OP_CONNECT, BPF_CORE_READ(sock, sk, sk_protocol));
	if (pol->flags & HM_NET_AUDIT)
		return 0; /* --network audit */
	return -ENETUNREACH; /* as the cgroup hook says (net.bpf.c) */
}
