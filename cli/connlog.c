// SPDX-License-Identifier: MIT
/*
 * enroll --connections FILE: one JSON line per connection attempt of the
 * run, allowed, refused or audited, as the kernel hooks saw it
 * (docs/connections.md).
 *
 * FILE is opened (created, truncated) before the run, so a path that cannot
 * be written fails before CMD starts. While CMD runs, enroll takes what the
 * daemon has queued about once a second (HM_REQ_RUN_CONNS) and appends it
 * in whole lines, one write(2) per batch: a job killed at any point leaves
 * a file of valid lines. The last line, {"end": true, ...}, is written only
 * when the run is over; it carries the counts, and says whether any event
 * was lost (a file without it was cut short).
 */
#include <fcntl.h>
#include <inttypes.h>
#include <sys/stat.h>
#include <time.h>
#include <json-c/json.h>
#include "util.h"
#include "config.h"
#include "cli.h"
#include "enroll.h"

#define EXIT_CANTCREAT 73 /* sysexits EX_CANTCREAT, as --report */
#define FETCH_EVERY_NS 1000000000ULL
/* struct hm_conn_rec's family and op (include/hermetic/net.h) */
#define FAMILY_UNIX 1
#define OP_SENDMSG 2
#define OP_PACKET 3
#define OP_JOIN 4

int connlog_open(struct enroll *e, struct cli_fail *f)
{
	struct enroll_connlog *l = &e->connlog;
	struct stat st;

	l->fd = -1;
	if (!l->path)
		return 0;
	l->fd = open(l->path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOCTTY, 0644);
	if (l->fd < 0) {
		cli_fail(f, EXIT_CANTCREAT, "--connections: cannot open '%s' for writing: %s",
			 l->path, strerror(errno));
		goto unarm;
	}
	/* Truncated only once it is known not to be the --report file, whose
	 * earlier runs' lines it would erase. */
	if (e->report_out.fd >= 0) {
		struct stat a, b;

		if (fstat(l->fd, &a) == 0 && fstat(e->report_out.fd, &b) == 0 &&
		    a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
			cli_fail(f, EXIT_USAGE, "--connections and --report name the same file '%s'",
				 l->path);
			goto unarm;
		}
	}
	/* A regular file starts empty; /dev/stderr or a pipe is written as is. */
	if (fstat(l->fd, &st) == 0 && S_ISREG(st.st_mode) && ftruncate(l->fd, 0) < 0) {
		cli_fail(f, EXIT_CANTCREAT, "--connections: cannot truncate '%s': %s", l->path,
			 strerror(errno));
		goto unarm;
	}
	return 0;
unarm:
	/* Like --report's: a log that cannot be opened gets no report line. */
	e->report_out.armed = false;
	return -1;
}

static const char *verdict_name(uint8_t v)
{
	return v == HM_VERDICT_ALLOWED ? "allowed" : v == HM_VERDICT_AUDITED ? "audited" : "refused";
}

static const char *protocol_name(const struct hm_conn_rec *c)
{
	if (c->family == FAMILY_UNIX)
		return "other";
	return c->proto == 6 ? "tcp" : c->proto == 17 ? "udp" : "other";
}

/* The kernel stamps with CLOCK_MONOTONIC (bpf_ktime_get_ns); real_off turns
 * that into the real wall clock. */
static json_object *rec_json(struct enroll *e, const struct hm_conn_rec *c, int64_t real_off)
{
	json_object *j = json_object_new_object();
	int64_t real = (int64_t)c->time_ns + real_off;
	char addr[64], when[64], comm[17];

	hm_format_time(real, when, sizeof(when));
	json_object_object_add(j, "time", json_object_new_string(when));
	json_object_object_add(j, "clock", json_object_new_string("real"));
	{
		double ms = (double)((int64_t)c->time_ns - (int64_t)e->started_mono) / 1e6;
		char t[32];

		snprintf(t, sizeof(t), "%.3f", ms);
		json_object_object_add(j, "since_start_ms", json_object_new_double_s(ms, t));
	}
	json_object_object_add(j, "verdict", json_object_new_string(verdict_name(c->verdict)));
	json_object_object_add(j, "protocol", json_object_new_string(protocol_name(c)));
	json_object_object_add(j, "op", json_object_new_string(c->op == OP_SENDMSG ? "sendto"
							     : c->op == OP_PACKET  ? "packet"
							     : c->op == OP_JOIN    ? "join"
										      : "connect"));
	if (c->family == FAMILY_UNIX) {
		json_object_object_add(j, "family", json_object_new_string("unix"));
		json_object_object_add(j, "address", NULL);
		json_object_object_add(j, "port", NULL);
		json_object_object_add(j, "destination", json_object_new_string("unix socket"));
	} else {
		bool v4 = !memcmp(c->addr, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12);

		hm_addr_str(c->addr, c->port, addr, sizeof(addr));
		json_object_object_add(j, "family", json_object_new_string(v4 ? "ipv4" : "ipv6"));
		json_object_object_add(j, "destination", json_object_new_string(addr));
		*strrchr(addr, ':') = 0; /* "1.2.3.4", "[::1]" */
		if (addr[0] == '[') {
			memmove(addr, addr + 1, strlen(addr));
			addr[strlen(addr) - 1] = 0;
		}
		json_object_object_add(j, "address", json_object_new_string(addr));
		json_object_object_add(j, "port", json_object_new_int(c->port));
	}
	json_object_object_add(j, "ip_protocol", json_object_new_int((int)c->proto));
	memcpy(comm, c->comm, 16);
	comm[16] = 0;
	json_object_object_add(j, "pid", c->pid ? json_object_new_int64(c->pid) : NULL);
	json_object_object_add(j, "comm", comm[0] ? json_object_new_string(comm) : NULL);
	/* The lineage key its shim announced (daemon/connlog.c); null when
	 * none did: no shim, or a fork child that did not exec. */
	{
		char key[sizeof(c->process_key) + 1];

		memcpy(key, c->process_key, sizeof(c->process_key));
		key[sizeof(c->process_key)] = 0;
		json_object_object_add(j, "process_key",
				       key[0] ? json_object_new_string(key) : NULL);
	}
	json_object_object_add(j, "count", json_object_new_int64(c->count));
	return j;
}

/* Append o as one line to buf (grown as needed); 0 or -ENOMEM. */
static int add_line(char **buf, size_t *len, size_t *cap, json_object *o)
{
	size_t n;
	const char *s = json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN, &n);

	if (*len + n + 1 > *cap) {
		size_t nc = (*len + n + 1) * 2;
		char *nb = realloc(*buf, nc);

		if (!nb)
			return -ENOMEM;
		*buf = nb;
		*cap = nc;
	}
	memcpy(*buf + *len, s, n);
	(*buf)[*len + n] = '\n';
	*len += n + 1;
	return 0;
}

static void write_lines(struct enroll *e, const char *buf, size_t len)
{
	struct enroll_connlog *l = &e->connlog;
	int r;

	if (!len || l->write_err)
		return;
	if ((r = hm_write_all(l->fd, buf, len)) < 0) {
		l->write_err = -r;
		warnx_("--connections: cannot write '%s': %s; the log stops here", l->path,
		       strerror(-r));
	}
}

static int64_t real_offset(void)
{
	struct timespec r, m;

	clock_gettime(CLOCK_REALTIME, &r);
	clock_gettime(CLOCK_MONOTONIC, &m);
	return ((int64_t)r.tv_sec - m.tv_sec) * 1000000000LL + (r.tv_nsec - m.tv_nsec);
}

/* Take everything the daemon has queued and append it; -ENOMEM. */
static int fetch(struct enroll *e)
{
	static struct {
		struct hm_conns h;
		struct hm_conn_rec rec[HM_CONNS_MAX];
	} rep;
	struct enroll_connlog *l = &e->connlog;
	struct hm_run_ref ref = { .run_id = e->run.run_id };
	_cleanup_free_ char *buf = NULL;
	size_t len = 0, cap = 0;
	int64_t off = real_offset();
	const char *msg = NULL;
	ssize_t n;

	if (e->daemon.lost || e->conn.sock < 0)
		return 0; /* after the reclaim (reconnect.c) */
	do {
		n = client_call(&e->conn, HM_REQ_RUN_CONNS, &ref, sizeof(ref), -1, HM_REP_CONNS,
				&rep, sizeof(rep), false, NULL, &msg);
		if (n < (ssize_t)sizeof(rep.h) ||
		    n != (ssize_t)(sizeof(rep.h) + rep.h.n * sizeof(rep.rec[0])) ||
		    rep.h.n > HM_CONNS_MAX) {
			if (!l->fetch_err)
				warnx_("--connections: cannot read the run's connections: %s",
				       n < 0 && msg ? msg : "malformed reply");
			l->fetch_err = true;
			break;
		}
		l->refused = rep.h.refused;
		l->kernel_dropped = rep.h.kernel_dropped;
		l->daemon_dropped = rep.h.daemon_dropped;
		for (uint32_t i = 0; i < rep.h.n; i++) {
			json_object *o = rec_json(e, &rep.rec[i], off);
			int err = add_line(&buf, &len, &cap, o);

			json_object_put(o);
			if (err < 0)
				return err;
			l->lines++;
			l->attempts[rep.rec[i].verdict <= 3 ? rep.rec[i].verdict : 0] += rep.rec[i].count;
		}
	} while (rep.h.more);
	write_lines(e, buf, len);
	return 0;
}

int connlog_timeout(struct enroll *e, int timeout_ms)
{
	struct enroll_connlog *l = &e->connlog;
	uint64_t now = hm_now_ns();
	int due;

	if (l->fd < 0)
		return timeout_ms;
	due = l->next_ns > now ? (int)((l->next_ns - now) / 1000000) + 1 : 0;
	return timeout_ms < 0 || due < timeout_ms ? due : timeout_ms;
}

int connlog_tick(struct enroll *e)
{
	struct enroll_connlog *l = &e->connlog;
	uint64_t now = hm_now_ns();

	if (l->fd < 0 || now < l->next_ns)
		return 0;
	l->next_ns = now + FETCH_EVERY_NS;
	return fetch(e);
}

/* After the run is over (the daemon drained the ring when answering):
 * the rest, then the end line; stderr says when the log is incomplete. */
int connlog_finish(struct enroll *e, bool daemon, struct cli_fail *f)
{
	struct enroll_connlog *l = &e->connlog;
	json_object *o;
	_cleanup_free_ char *buf = NULL;
	size_t len = 0, cap = 0;
	uint64_t lost, dropped;

	if (l->fd < 0)
		return 0;
	if (daemon && fetch(e) < 0)
		return cli_fail(f, EXIT_INTERNAL, "out of memory");
	lost = e->daemon.events_lost;
	dropped = l->kernel_dropped + l->daemon_dropped;
	o = json_object_new_object();
	json_object_object_add(o, "end", json_object_new_boolean(true));
	json_object_object_add(o, "run", json_object_new_uint64(e->run.run_id));
	json_object_object_add(o, "network", json_object_new_string(hm_network_name(e->cfg.network)));
	json_object_object_add(o, "lines", json_object_new_uint64(l->lines));
	json_object_object_add(o, "allowed", json_object_new_uint64(l->attempts[HM_VERDICT_ALLOWED]));
	json_object_object_add(o, "refused", json_object_new_uint64(l->attempts[HM_VERDICT_REFUSED]));
	json_object_object_add(o, "audited", json_object_new_uint64(l->attempts[HM_VERDICT_AUDITED]));
	/* The kernel's own count of what the policy did not allow, for a
	 * check that nothing refused is missing from the lines above. */
	json_object_object_add(o, "kernel_refused", json_object_new_uint64(l->refused));
	json_object_object_add(o, "dropped_events", json_object_new_uint64(dropped));
	json_object_object_add(o, "kernel_dropped", json_object_new_uint64(l->kernel_dropped));
	json_object_object_add(o, "daemon_dropped", json_object_new_uint64(l->daemon_dropped));
	json_object_object_add(o, "lost_in_restart", json_object_new_uint64(lost));
	json_object_object_add(o, "complete", json_object_new_boolean(daemon && !l->fetch_err &&
								      !dropped && !lost));
	if (add_line(&buf, &len, &cap, o) < 0) {
		json_object_put(o);
		return cli_fail(f, EXIT_INTERNAL, "out of memory");
	}
	json_object_put(o);
	write_lines(e, buf, len);
	if (dropped || lost)
		warnx_("--connections: the log is incomplete: %" PRIu64
		       " kernel event%s of the run could not be delivered or kept%s",
		       dropped + lost, dropped + lost == 1 ? "" : "s",
		       lost ? " (some in the daemon's restart)" : "");
	else if (!daemon || l->fetch_err)
		warnx_("--connections: the log is incomplete: hermeticd could not be asked");
	close(l->fd);
	l->fd = -1;
	return 0;
}
