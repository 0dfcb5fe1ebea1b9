// SPDX-License-Identifier: MIT
/*
 * Loading, probing and attaching the BPF programs, and the policy maps.
 *
 * Lifecycle (libbpf skeleton): open -> set map sizes and which optional
 * programs load -> load -> attach to the subtree. The four inet hooks are
 * required; the unix hooks load where the kernel has the attach type; the
 * BPF-LSM layer is a separate object sharing the maps, so a kernel that
 * refuses trampolines (as CI's does) costs only that layer.
 *
 * Maps and links are pinned per subtree (pin.c): a daemon that dies leaves
 * every run enforced, and the next one takes the same maps and links over.
 */
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include <linux/bpf.h>
#include "util.h"
#include "daemon.h"
#include "net.skel.h"
#include "net_lsm.skel.h"
#include "trace.skel.h"
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>

/* Attach types newer than Debian 12's uapi headers (values from the
 * kernel's enum bpf_attach_type, stable ABI). */
#define HM_BPF_CGROUP_UNIX_CONNECT 49
#define HM_BPF_CGROUP_UNIX_SENDMSG 50

struct hmd_bpf {
	struct net_bpf *net;
	struct net_lsm_bpf *lsm;
	struct trace_bpf *trace;
	/* Tracing programs, attached as needed: [HMD_TRACE_RUNS] (trace/sched)
	 * while runs exist, [HMD_TRACE_SYSCALLS] (trace/syscalls and
	 * trace/random-fds) while runs that count syscalls exist. */
	struct bpf_link *lazy[2][16];
	int n_lazy[2];
	struct hmd_detacher dt; /* their detaching, off the main loop */
	uint32_t run_level; /* every object's hm_run_level */
	int trace_att; /* index of their first entry in the attach table */
	struct hmd_attach *att;
	bool mounted_tracefs;
	struct bpf_link *links[HMD_LINKS_MAX];
	int n_links;
	const char *pin_dir;
	uint64_t cgroup_id; /* the subtree's */
	struct ring_buffer *rb;
	void *ctx;
	bool lsm_only; /* no cgroup sock_addr hooks: nothing is redirected */
};

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_WARN && hmd_verbose)
		return vfprintf(stderr, fmt, ap);
	return 0;
}

/* Does the kernel know this cgroup sock_addr attach type? Load the smallest
 * program that could use it. */
static bool probe_sock_addr_attach(int attach_type)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 1 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = attach_type);
	int fd = bpf_prog_load(BPF_PROG_TYPE_CGROUP_SOCK_ADDR, "hm_probe", "Dual MIT/GPL", insns,
			       ARRAY_SIZE(insns), &opts);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

static void note(struct hmd_attach *a, const char *name, bool required, int err, const char *why)
{
	a->name = name;
	a->required = required;
	a->attached = err == 0;
	a->err = err;
	snprintf(a->why, sizeof(a->why), "%s", err ? why : "");
}

/* Keep a new link pinned. A link that cannot be pinned would end with this
 * process: for a required hook that is a promise broken, so it fails. */
static int keep_link(struct hmd_bpf *b, struct bpf_program *p, struct bpf_link *l)
{
	int r = hmd_pin_link(b->pin_dir, p, l);

	b->links[b->n_links++] = l;
	return r;
}

/* The pinned link of a daemon before us, or a new one, pinned. */
static int attach(struct hmd_bpf *b, struct bpf_program *p, int cgroup_fd, struct hmd_attach *a,
		  const char *name, bool required)
{
	bool upgraded;
	struct bpf_link *old = hmd_pin_link_adopt(b->pin_dir, p, b->cgroup_id, &upgraded), *l = NULL;
	int r;

	if (old && upgraded) {
		l = old;
		old = NULL;
	} else {
		l = bpf_program__attach_cgroup(p, cgroup_fd);
	}
	if (old) {
		/* A link we could not move to our program: the new one is
		 * attached beside it first, so the hook is never empty. */
		if (!l) {
			/* keep the old one: it still enforces */
			l = old;
		} else {
			hmd_pin_link_drop(old, true);
		}
	}
	if (!l) {
		int err = errno;

		note(a, name, required, err, strerror(err));
		return -err;
	}
	r = keep_link(b, p, l);
	if (r < 0) {
		note(a, name, required, -r, "cannot pin the link in bpffs");
		return required ? r : 0;
	}
	note(a, name, required, 0, NULL);
	return 0;
}

/* The DNS maps of net_policy.bpf.h in another object: the net object's. */
static int reuse_dns_maps(struct bpf_object *o, struct net_bpf *net)
{
	struct bpf_map *mine[] = { net->maps.hm_dns, net->maps.hm_dns_ports, net->maps.hm_dns_allow,
				   net->maps.hm_dns_orig };

	for (size_t i = 0; i < ARRAY_SIZE(mine); i++) {
		struct bpf_map *m = bpf_object__find_map_by_name(o, bpf_map__name(mine[i]));

		if (!m || bpf_map__reuse_fd(m, bpf_map__fd(mine[i])))
			return -1;
	}
	return 0;
}

static int load_lsm(struct hmd_bpf *b, struct hmd_attach *a)
{
	struct net_lsm_bpf *s = net_lsm_bpf__open();
	int err;

	if (!s) {
		err = errno;
		note(a, "lsm/socket_connect", false, err, "cannot open object");
		return -err;
	}
	s->rodata->hm_run_level = b->run_level;
	/* Share the policy and event maps with the cgroup programs. */
	if (bpf_map__reuse_fd(s->maps.hm_policy, bpf_map__fd(b->net->maps.hm_policy)) ||
	    bpf_map__reuse_fd(s->maps.hm_allow, bpf_map__fd(b->net->maps.hm_allow)) ||
	    bpf_map__reuse_fd(s->maps.hm_events, bpf_map__fd(b->net->maps.hm_events)) ||
	    bpf_map__reuse_fd(s->maps.hm_dropped, bpf_map__fd(b->net->maps.hm_dropped)) ||
	    reuse_dns_maps(s->obj, b->net)) {
		err = errno;
		note(a, "lsm/socket_connect", false, err, "cannot share maps");
		net_lsm_bpf__destroy(s);
		return -err;
	}
	if (net_lsm_bpf__load(s)) {
		err = errno;
		note(a, "lsm/socket_connect", false, err,
		     err == EPERM ? "kernel refused the program (EPERM): no BPF trampolines here"
				  : "kernel refused to load (BPF-LSM not active or no BTF)");
		net_lsm_bpf__destroy(s);
		return -err;
	}
	{
		bool upgraded;

		b->links[b->n_links] =
			hmd_pin_link_adopt(b->pin_dir, s->progs.hm_lsm_connect, 0, &upgraded);
	}
	if (!b->links[b->n_links])
		b->links[b->n_links] = bpf_program__attach_lsm(s->progs.hm_lsm_connect);
	if (!b->links[b->n_links]) {
		err = errno;
		note(a, "lsm/socket_connect", false, err,
		     err == EPERM || err == 524 /* ENOTSUPP */ || err == EOPNOTSUPP
			     ? "kernel refused the BPF trampoline"
			     : "attach failed");
		net_lsm_bpf__destroy(s);
		return -err;
	}
	b->n_links++;
	b->lsm = s;
	if (hmd_pin_link(b->pin_dir, s->progs.hm_lsm_connect, b->links[b->n_links - 1]) < 0)
		hmd_warn("Failed to pin the lsm/socket_connect link: %s", strerror(errno));
	note(a, "lsm/socket_connect", false, 0, NULL);
	return 0;
}

/* Syscall tracepoints need tracefs; mount it where the kernel expects it
 * when nobody has (and undo that at shutdown). */
static int ensure_tracefs(struct hmd_bpf *b)
{
	struct stat st;

	if (stat("/sys/kernel/tracing/events", &st) == 0 ||
	    stat("/sys/kernel/debug/tracing/events", &st) == 0)
		return 0;
	if (mount("tracefs", "/sys/kernel/tracing", "tracefs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		  NULL) < 0)
		return -errno;
	b->mounted_tracefs = true;
	return 0;
}

/* The kernel's view: process lifecycle, time/entropy syscalls and
 * /dev/urandom reads. Loaded at start-up, attached only while runs exist:
 * syscall tracepoints run for every process on the machine, so a daemon
 * with no runs must not have them attached (the kernel here has neither
 * kprobes nor trampolines, which could have narrowed them further). */
static const char *const trace_groups[] = { "trace/sched", "trace/syscalls", "trace/random-fds" };

static const char *lazy_note(int set)
{
	return set == HMD_TRACE_RUNS ? "attached while runs exist and for 10 s after the last"
				     : "attached while runs with --audit-syscalls exist and for 10 s after the last";
}

static void load_trace(struct hmd_bpf *b, uint32_t ring_wakeup, struct hmd_attach *att, int *n)
{
	struct trace_bpf *s;
	int err;

	b->trace_att = *n;
	err = ensure_tracefs(b);
	if (err < 0) {
		for (size_t g = 0; g < ARRAY_SIZE(trace_groups); g++)
			note(&att[(*n)++], trace_groups[g], false, -err, "cannot mount tracefs");
		return;
	}
	s = trace_bpf__open();
	if (s) {
		s->rodata->hm_run_level = b->run_level;
		/* The early exit for processes outside every run. */
		s->rodata->hm_subtree_id = b->cgroup_id;
		s->rodata->hm_ring_wakeup = ring_wakeup;
	}
	if (!s || hmd_pin_maps(s->obj, b->pin_dir) < 0 || bpf_map__reuse_fd(s->maps.hm_policy, bpf_map__fd(b->net->maps.hm_policy)) ||
	    bpf_map__reuse_fd(s->maps.hm_allow, bpf_map__fd(b->net->maps.hm_allow)) ||
	    bpf_map__reuse_fd(s->maps.hm_events, bpf_map__fd(b->net->maps.hm_events)) ||
	    bpf_map__reuse_fd(s->maps.hm_dropped, bpf_map__fd(b->net->maps.hm_dropped)) ||
	    reuse_dns_maps(s->obj, b->net) || trace_bpf__load(s)) {
		err = errno;
		for (size_t g = 0; g < ARRAY_SIZE(trace_groups); g++)
			note(&att[(*n)++], trace_groups[g], false, err,
			     "kernel refused the tracing programs");
		trace_bpf__destroy(s);
		return;
	}
	b->trace = s;
	for (size_t g = 0; g < ARRAY_SIZE(trace_groups); g++)
		note(&att[(*n)++], trace_groups[g], false, EAGAIN,
		     lazy_note(g ? HMD_TRACE_SYSCALLS : HMD_TRACE_RUNS));
}

/* The programs of trace group g (trace_groups), NULL-terminated. */
static void group_progs(struct trace_bpf *s, size_t g, struct bpf_program *out[8])
{
	struct bpf_program *groups[3][8] = {
		{ s->progs.hm_exec, s->progs.hm_fork, s->progs.hm_exit, s->progs.hm_rename },
		{ s->progs.hm_getrandom_enter, s->progs.hm_getrandom_exit, s->progs.hm_clock_gettime,
		  s->progs.hm_gettimeofday, s->progs.hm_time, s->progs.hm_clock_nanosleep,
		  s->progs.hm_nanosleep },
		{ s->progs.hm_openat_enter, s->progs.hm_openat_exit, s->progs.hm_read_enter,
		  s->progs.hm_read_exit, s->progs.hm_close_enter },
	};

	memcpy(out, groups[g], sizeof(groups[g]));
}

/* Attach one group's programs into set (pinned too: while a run lives, its
 * kernel events go on being counted, and kept on the ring, with no daemon). */
static int attach_group(struct hmd_bpf *b, int set, size_t g)
{
	struct bpf_program *progs[8];

	group_progs(b->trace, g, progs);
	for (int i = 0; i < 8 && progs[i]; i++) {
		struct bpf_link *l;
		bool upgraded;

		if (b->n_lazy[set] == (int)ARRAY_SIZE(b->lazy[set]))
			return -ENOSPC;
		l = hmd_pin_link_adopt(b->pin_dir, progs[i], 0, &upgraded);
		if (!l && (l = bpf_program__attach(progs[i])) &&
		    hmd_pin_link(b->pin_dir, progs[i], l) < 0)
			hmd_warn("Failed to pin the link of %s: %s", bpf_program__name(progs[i]),
				 strerror(errno));
		if (!l)
			return -errno;
		b->lazy[set][b->n_lazy[set]++] = l;
	}
	return 0;
}

int hmd_bpf_trace_lazy(struct hmd_bpf *b, int set, bool on)
{
	struct trace_bpf *s = b->trace;
	size_t g0 = set == HMD_TRACE_RUNS ? 0 : 1, g1 = set == HMD_TRACE_RUNS ? 1 : 3;
	struct bpf_link *drop[HMD_DETACH_MAX];
	int err = 0, n = 0;

	if (!s || on == (b->n_lazy[set] > 0))
		return 0;
	/* Never twice at once: the last detach is done first. */
	hmd_detach_wait(&b->dt);
	for (size_t g = g0; on && g < g1; g++) {
		int gerr = attach_group(b, set, g);

		note(&b->att[b->trace_att + g], trace_groups[g], false, gerr ? -gerr : 0,
		     gerr ? strerror(-gerr) : lazy_note(set));
		if (gerr)
			err = gerr;
	}
	if (on)
		return err;
	for (size_t g = g0; g < g1; g++)
		note(&b->att[b->trace_att + g], trace_groups[g], false, EAGAIN, lazy_note(set));
	/* Ours, unpinned now (so that the walk below finds only those of a
	 * daemon before us) and destroyed by a thread (detach.c). */
	while (b->n_lazy[set] && n < HMD_DETACH_MAX) {
		struct bpf_link *l = b->lazy[set][--b->n_lazy[set]];

		if (bpf_link__pin_path(l) && bpf_link__unpin(l) && errno != ENOENT)
			hmd_warn("Failed to unpin link: %s", strerror(errno));
		drop[n++] = l;
	}
	/* Links a daemon before us pinned and we never took (it died with
	 * runs that since ended): detach them too. */
	for (size_t g = g0; g < g1; g++) {
		struct bpf_program *progs[8];

		group_progs(s, g, progs);
		for (int i = 0; i < 8 && progs[i]; i++) {
			bool upgraded;
			struct bpf_link *l = hmd_pin_link_adopt(b->pin_dir, progs[i], 0, &upgraded);

			if (l && n < HMD_DETACH_MAX)
				drop[n++] = l;
			else
				hmd_pin_link_drop(l, true);
		}
	}
	/* Descriptors opened meanwhile are unknown then: the map is emptied
	 * once the programs that fill it are gone. */
	hmd_detach_async(&b->dt, drop, n,
			 set == HMD_TRACE_SYSCALLS ? bpf_map__fd(s->maps.hm_random_fds) : -1);
	return 0;
}

/* At start-up with no run of the set to adopt: detach only the links a
 * daemon before us left pinned (none, mostly), instead of attaching every
 * program to detach it again, which would cost two rounds of RCU grace
 * periods. */
void hmd_bpf_trace_forget(struct hmd_bpf *b, int set)
{
	struct trace_bpf *s = b->trace;

	if (!s || b->n_lazy[set])
		return;
	for (size_t g = set == HMD_TRACE_RUNS ? 0 : 1; g < (set == HMD_TRACE_RUNS ? 1u : 3u); g++) {
		struct bpf_program *progs[8];

		group_progs(s, g, progs);
		for (int i = 0; i < 8 && progs[i]; i++) {
			bool upgraded;

			hmd_pin_link_drop(hmd_pin_link_adopt(b->pin_dir, progs[i], 0, &upgraded), true);
		}
	}
	/* Descriptors a daemon before us saw opened: unknown now. */
	if (set == HMD_TRACE_SYSCALLS) {
		int fd = bpf_map__fd(s->maps.hm_random_fds);
		uint64_t key;

		while (!bpf_map_get_next_key(fd, NULL, &key))
			if (bpf_map_delete_elem(fd, &key))
				break;
	}
}

static int on_event(void *ctx, void *data, size_t size)
{
	hmd_runs_event(ctx, data, size);
	return 0;
}

/* The resolvers of a daemon before us went with it (dns.c): no pinned entry
 * may send a run's DNS to a port that is no longer theirs (a resolver of
 * ours could get it). Without its entry an adopted run's DNS goes where it
 * was sent, which its policy refuses: it fails closed. */
static void dns_reset(struct hmd_bpf *b)
{
	int fds[] = { bpf_map__fd(b->net->maps.hm_dns), bpf_map__fd(b->net->maps.hm_dns_ports) };
	uint8_t key[8];

	for (size_t i = 0; i < ARRAY_SIZE(fds); i++)
		while (!bpf_map_get_next_key(fds[i], NULL, key))
			if (bpf_map_delete_elem(fds[i], key))
				break;
}

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71
#endif

/* The cookie of our network namespace, where the resolvers listen
 * (net.bpf.c: hm_daemon_netns); 0 before 5.14, which has no way to ask. */
static uint64_t own_netns_cookie(void)
{
	uint64_t cookie = 0;
	socklen_t len = sizeof(cookie);
	int s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (s < 0)
		return 0;
	if (getsockopt(s, SOL_SOCKET, SO_NETNS_COOKIE, &cookie, &len) < 0 || len != sizeof(cookie))
		cookie = 0;
	close(s);
	return cookie;
}

int hmd_bpf_load(struct hmd_bpf **ret, int cgroup_fd, uint32_t run_level, bool lsm_only,
		 uint32_t ringbuf_size, uint32_t ring_wakeup, const char *pin_dir,
		 struct hmd_attach *att, int *ret_n_att)
{
	struct hmd_bpf *b = calloc(1, sizeof(*b));
	struct stat st;
	static const enum bpf_func_id sockopt_helpers[] = {
		BPF_FUNC_get_current_ancestor_cgroup_id, BPF_FUNC_get_current_cgroup_id,
		BPF_FUNC_get_current_pid_tgid, BPF_FUNC_get_current_comm, BPF_FUNC_ringbuf_reserve,
	};
	bool have_unix, have_sockopt;
	int n = 0, r;

	if (!b)
		return -ENOMEM;
	libbpf_set_print(libbpf_quiet);
	b->pin_dir = pin_dir;
	b->lsm_only = lsm_only;
	if (fstat(cgroup_fd, &st) < 0) {
		r = -errno;
		free(b);
		return r;
	}
	b->cgroup_id = st.st_ino;
	b->net = net_bpf__open();
	if (!b->net) {
		r = -errno;
		free(b);
		return r;
	}
	/* The policy of runs that outlived a daemon before us is in the
	 * pinned maps: load reuses them (or pins new ones). A pinned map of
	 * another shape (another ring size, a daemon of another layout) fails
	 * the load, which is fail-closed: its runs stay refused by the links. */
	r = hmd_pin_maps(b->net->obj, pin_dir);
	if (r < 0) {
		net_bpf__destroy(b->net);
		free(b);
		return r;
	}
	/* The ring buffer is shared by every program (the other objects reuse
	 * this map): its size decides how long a burst of events the daemon
	 * can fall behind before the kernel has to drop (and count) them. */
	if (bpf_map__set_max_entries(b->net->maps.hm_events, ringbuf_size)) {
		r = -errno;
		net_bpf__destroy(b->net);
		free(b);
		return r;
	}
	/* The multicast join hook asks about the current task (its run, and
	 * who for the report) and writes the ring: helpers a cgroup/setsockopt
	 * program may not have on every kernel. Where one is missing it is not
	 * loaded (the object must load whole) and status says why. */
	have_sockopt = true;
	for (size_t i = 0; i < ARRAY_SIZE(sockopt_helpers); i++)
		if (libbpf_probe_bpf_helper(BPF_PROG_TYPE_CGROUP_SOCKOPT, sockopt_helpers[i], NULL) != 1)
			have_sockopt = false;
	bpf_program__set_autoload(b->net->progs.hm_setsockopt, have_sockopt);
	have_unix = probe_sock_addr_attach(HM_BPF_CGROUP_UNIX_CONNECT) &&
		    probe_sock_addr_attach(HM_BPF_CGROUP_UNIX_SENDMSG);
	if (have_unix) {
		bpf_program__set_autoload(b->net->progs.hm_connect_unix, true);
		bpf_program__set_autoload(b->net->progs.hm_sendmsg_unix, true);
		bpf_program__set_expected_attach_type(b->net->progs.hm_connect_unix,
						      HM_BPF_CGROUP_UNIX_CONNECT);
		bpf_program__set_expected_attach_type(b->net->progs.hm_sendmsg_unix,
						      HM_BPF_CGROUP_UNIX_SENDMSG);
	}
	b->run_level = run_level;
	b->net->rodata->hm_run_level = run_level;
	b->net->rodata->hm_daemon_netns = own_netns_cookie();
	b->net->rodata->hm_skb_task_helpers =
		libbpf_probe_bpf_helper(BPF_PROG_TYPE_CGROUP_SKB, BPF_FUNC_get_current_pid_tgid, NULL) ==
			1 &&
		libbpf_probe_bpf_helper(BPF_PROG_TYPE_CGROUP_SKB, BPF_FUNC_get_current_comm, NULL) == 1;
	if (net_bpf__load(b->net)) {
		r = -errno;
		net_bpf__destroy(b->net);
		free(b);
		return r;
	}

	/* Required: without these the daemon would promise a blocked network
	 * it cannot deliver. */
	struct {
		struct bpf_program *p;
		const char *name;
	} req[] = {
		{ b->net->progs.hm_connect4, "cgroup/connect4" },
		{ b->net->progs.hm_connect6, "cgroup/connect6" },
		{ b->net->progs.hm_sendmsg4, "cgroup/sendmsg4" },
		{ b->net->progs.hm_sendmsg6, "cgroup/sendmsg6" },
	};
	if (lsm_only) {
		/* Testing the second layer alone (tests/vm): it must work. */
		r = load_lsm(b, &att[n++]);
		if (r < 0)
			goto fail;
		goto trace;
	}
	for (size_t i = 0; i < ARRAY_SIZE(req); i++) {
		r = attach(b, req[i].p, cgroup_fd, &att[n++], req[i].name, true);
		if (r < 0)
			goto fail;
	}
	attach(b, b->net->progs.hm_egress, cgroup_fd, &att[n++], "cgroup_skb/egress", false);
	/* Domains that follow DNS: answers to redirected sockets carry the
	 * nameserver's address (without them glibc ignores the answers). */
	attach(b, b->net->progs.hm_recvmsg4, cgroup_fd, &att[n++], "cgroup/recvmsg4", false);
	attach(b, b->net->progs.hm_recvmsg6, cgroup_fd, &att[n++], "cgroup/recvmsg6", false);
	/* Multicast joins off loopback (the reports they make come from no
	 * socket of the run). */
	if (have_sockopt)
		attach(b, b->net->progs.hm_setsockopt, cgroup_fd, &att[n++], "cgroup/setsockopt",
		       false);
	else
		note(&att[n++], "cgroup/setsockopt", false, EOPNOTSUPP,
		     "kernel lacks helpers for it: multicast joins off loopback not refused");
	if (have_unix) {
		attach(b, b->net->progs.hm_connect_unix, cgroup_fd, &att[n++],
		       "cgroup/connect_unix", false);
		attach(b, b->net->progs.hm_sendmsg_unix, cgroup_fd, &att[n++],
		       "cgroup/sendmsg_unix", false);
	} else {
		note(&att[n++], "cgroup/connect_unix", false, EOPNOTSUPP, "kernel lacks attach type");
		note(&att[n++], "cgroup/sendmsg_unix", false, EOPNOTSUPP, "kernel lacks attach type");
	}
	load_lsm(b, &att[n++]);
trace:
	b->att = att;
	load_trace(b, ring_wakeup, att, &n);
	dns_reset(b);

	*ret_n_att = n;
	*ret = b;
	return 0;
fail:
	*ret_n_att = n;
	/* Fail closed: what is pinned may be the enforcement of live runs. */
	hmd_bpf_unload(b, true);
	return r;
}

void hmd_bpf_unload(struct hmd_bpf *b, bool keep)
{
	if (!b)
		return;
	hmd_detach_wait(&b->dt);
	ring_buffer__free(b->rb);
	for (int set = 0; set < 2; set++)
		while (b->n_lazy[set])
			hmd_pin_link_drop(b->lazy[set][--b->n_lazy[set]], !keep);
	for (int i = 0; i < b->n_links; i++)
		hmd_pin_link_drop(b->links[i], !keep);
	if (!keep) {
		/* No run is left: nothing is enrolled, nothing to keep. */
		if (b->trace)
			hmd_pin_unpin_maps(b->trace->obj);
		hmd_pin_unpin_maps(b->net->obj);
	}
	trace_bpf__destroy(b->trace);
	if (b->mounted_tracefs)
		umount2("/sys/kernel/tracing", MNT_DETACH);
	net_lsm_bpf__destroy(b->lsm);
	net_bpf__destroy(b->net);
	free(b);
}

static void allow_key(struct hm_net_allow_key *k, uint64_t cgid, const struct hm_allow *a)
{
	memset(k, 0, sizeof(*k));
	k->cgroup_id = cgid;
	memcpy(k->addr, a->addr, 16);
	k->port = a->port;
}

int hmd_bpf_set_policy(struct hmd_bpf *b, uint64_t cgid, uint32_t flags, const struct hm_allow *allow,
		       uint32_t n_allow)
{
	struct hm_net_policy pol = { .flags = flags, .n_allow = n_allow };
	uint64_t zero = 0;
	uint8_t one = 1;
	int r;

	/* The drop counter exists before the cgroup is enrolled, so the BPF
	 * side only ever adds to it atomically: creating it there could race
	 * between CPUs and lose a count. */
	if (bpf_map_update_elem(bpf_map__fd(b->net->maps.hm_dropped), &cgid, &zero, BPF_ANY))
		return -errno;

	/* Allow entries first: the policy entry is what enrolls the cgroup. */
	for (uint32_t i = 0; i < n_allow; i++) {
		struct hm_net_allow_key k;

		allow_key(&k, cgid, &allow[i]);
		if (bpf_map_update_elem(bpf_map__fd(b->net->maps.hm_allow), &k, &one, BPF_ANY)) {
			r = -errno;
			hmd_bpf_clear_policy(b, cgid, allow, i);
			return r;
		}
	}
	if (bpf_map_update_elem(bpf_map__fd(b->net->maps.hm_policy), &cgid, &pol, BPF_NOEXIST)) {
		r = -errno;
		hmd_bpf_clear_policy(b, cgid, allow, n_allow);
		return r;
	}
	return 0;
}

void hmd_bpf_clear_policy(struct hmd_bpf *b, uint64_t cgid, const struct hm_allow *allow,
			  uint32_t n_allow)
{
	bpf_map_delete_elem(bpf_map__fd(b->net->maps.hm_policy), &cgid);
	bpf_map_delete_elem(bpf_map__fd(b->net->maps.hm_dropped), &cgid);
	for (uint32_t i = 0; i < n_allow; i++) {
		struct hm_net_allow_key k;

		allow_key(&k, cgid, &allow[i]);
		bpf_map_delete_elem(bpf_map__fd(b->net->maps.hm_allow), &k);
	}
}

int hmd_bpf_get_policy(struct hmd_bpf *b, uint64_t cgid, struct hm_net_policy *ret)
{
	if (bpf_map_lookup_elem(bpf_map__fd(b->net->maps.hm_policy), &cgid, ret))
		return -errno;
	return 0;
}

uint64_t hmd_bpf_refused(struct hmd_bpf *b, uint64_t cgid)
{
	struct hm_net_policy pol;

	if (bpf_map_lookup_elem(bpf_map__fd(b->net->maps.hm_policy), &cgid, &pol))
		return 0;
	return pol.refused;
}

uint64_t hmd_bpf_dropped(struct hmd_bpf *b, uint64_t cgid)
{
	uint64_t n;

	if (bpf_map_lookup_elem(bpf_map__fd(b->net->maps.hm_dropped), &cgid, &n))
		return 0;
	return n;
}

int hmd_bpf_events_fd(struct hmd_bpf *b)
{
	return b->rb ? ring_buffer__epoll_fd(b->rb) : -EINVAL;
}

int hmd_bpf_open_events(struct hmd_bpf *b, void *ctx)
{
	b->rb = ring_buffer__new(bpf_map__fd(b->net->maps.hm_events), on_event, ctx, NULL);
	return b->rb ? 0 : -errno;
}

int hmd_bpf_drain(struct hmd_bpf *b)
{
	return ring_buffer__consume(b->rb);
}

/* Keys of fd, a hash map whose keys start with a cgroup id, that keep()
 * does not want. */
static void prune_map(int fd, size_t key_size, bool (*keep)(void *ctx, uint64_t cgid), void *ctx)
{
	uint8_t key[64], next[64];
	bool first = true;
	uint64_t cgid;

	if (key_size > sizeof(key))
		return;
	while (!bpf_map_get_next_key(fd, first ? NULL : key, next)) {
		memcpy(&cgid, next, sizeof(cgid));
		if (!keep(ctx, cgid)) {
			bpf_map_delete_elem(fd, next);
			first = true; /* start over after a deletion */
			continue;
		}
		first = false;
		memcpy(key, next, key_size);
	}
}

void hmd_bpf_prune(struct hmd_bpf *b, bool (*keep)(void *ctx, uint64_t cgid), void *ctx)
{
	/* The allow entries first: the policy entry is what enrolls. */
	prune_map(bpf_map__fd(b->net->maps.hm_allow), sizeof(struct hm_net_allow_key), keep, ctx);
	prune_map(bpf_map__fd(b->net->maps.hm_policy), sizeof(uint64_t), keep, ctx);
	prune_map(bpf_map__fd(b->net->maps.hm_dropped), sizeof(uint64_t), keep, ctx);
	prune_map(bpf_map__fd(b->net->maps.hm_dns_allow), sizeof(struct hm_net_allow_key), keep, ctx);
	prune_map(bpf_map__fd(b->net->maps.hm_dns), sizeof(uint64_t), keep, ctx);
}

int hmd_bpf_dns_fds(struct hmd_bpf *b, struct hmd_bpf_dns_fds *ret)
{
	if (!b || !b->net)
		return -EOPNOTSUPP;
	ret->dns = bpf_map__fd(b->net->maps.hm_dns);
	ret->ports = bpf_map__fd(b->net->maps.hm_dns_ports);
	ret->allow = bpf_map__fd(b->net->maps.hm_dns_allow);
	ret->redirect = !b->lsm_only;
	return 0;
}
