// SPDX-License-Identifier: MIT
/*
 * Decoding a request packet (docs/protocol.md). A whitelist: every type
 * has one exact payload size (RUN_CREATE: its struct plus n_allow entries,
 * checked without overflow; JOURNAL_LIST: empty or its struct), known
 * flag bits only, strings NUL-terminated here so that no handler can read
 * past them.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "request.h"
#include "dnsmsg.h"

static int bad(char *why, size_t size, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int bad(char *why, size_t size, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, size, fmt, ap);
	va_end(ap);
	return -err;
}

/* Payload of exactly `need` bytes into dst. */
static int fixed(const void *p, uint32_t len, void *dst, size_t need, const char *what, char *why,
		 size_t why_size)
{
	if (len != need)
		return bad(why, why_size, EBADMSG, "%s payload of %u bytes, expected %zu", what, len,
			   need);
	memcpy(dst, p, need);
	return 0;
}

#define RUN_FLAGS (HM_RUN_NET_ENFORCE | HM_RUN_NET_LOOPBACK | HM_RUN_NET_UNIX | HM_RUN_RECORD | \
		   HM_RUN_CLOCK | HM_RUN_UNCONFINED | HM_RUN_NET_AUDIT | HM_RUN_CONNLOG | \
		   HM_RUN_AUDIT_SYSCALLS)

static int decode_create(const void *p, uint32_t len, struct hmd_req *r, char *why, size_t ws)
{
	struct hm_run_create *c = &r->create.c;

	if (len < sizeof(*c))
		return bad(why, ws, EBADMSG, "RUN_CREATE payload too short");
	memcpy(c, p, sizeof(*c));
	if (c->n_allow > HM_RUN_MAX_ALLOW)
		return bad(why, ws, E2BIG, "at most %d --allow destinations", HM_RUN_MAX_ALLOW);
	/* n_allow is small now: the product cannot overflow. What follows
	 * the allow entries is whole --allow names. */
	size_t base = sizeof(*c) + c->n_allow * sizeof(struct hm_allow);
	if (len < base || (len - base) % sizeof(struct hm_allow_name))
		return bad(why, ws, EBADMSG, "RUN_CREATE length does not match n_allow");
	r->create.n_names = (len - base) / sizeof(struct hm_allow_name);
	if (r->create.n_names > HM_RUN_MAX_NAMES)
		return bad(why, ws, E2BIG, "at most %d --allow names", HM_RUN_MAX_NAMES);
	memcpy(r->create.names, (const char *)p + base, len - base);
	for (uint32_t i = 0; i < r->create.n_names; i++) {
		struct hm_allow_name *nm = &r->create.names[i];

		nm->name[sizeof(nm->name) - 1] = 0;
		if (!hm_dns_pattern_ok(nm->name))
			return bad(why, ws, EINVAL, "--allow name %u is not a DNS name", i);
	}
	if (c->flags & ~RUN_FLAGS)
		return bad(why, ws, EINVAL, "unknown run flags 0x%x", c->flags & ~RUN_FLAGS);
	/* A recorded run's KSTREAM is the kernel's whole view: it needs the
	 * syscall tracepoints whatever the client asked for. */
	if (c->flags & HM_RUN_RECORD)
		c->flags |= HM_RUN_AUDIT_SYSCALLS;
	c->label[sizeof(c->label) - 1] = 0;
	memcpy(r->create.allow, (const char *)p + sizeof(*c), c->n_allow * sizeof(struct hm_allow));
	return 0;
}

int hmd_req_decode(const void *buf, size_t n, struct hmd_req *r, char *why, size_t ws)
{
	const struct hm_hdr *h;
	const void *p;
	int err;

	memset(r, 0, sizeof(*r));
	err = hm_msg_parse(buf, n, &h);
	if (err < 0)
		return bad(why, ws, -err, "%s", err == -EMSGSIZE ? "message too large" : "malformed message");
	r->type = h->type;
	r->seq = h->seq;
	p = h + 1;
	switch (h->type) {
	case HM_REQ_HELLO:
	case HM_REQ_STATUS:
		/* Any payload is ignored: old clients sent none, and none is read. */
		return 0;
	case HM_REQ_RUN_CLOCK:
		/* The run is the asker's own, as the kernel names it. */
		if (h->len)
			return bad(why, ws, EBADMSG, "RUN_CLOCK takes no payload");
		return 0;
	case HM_REQ_RUN_CREATE:
		return decode_create(p, h->len, r, why, ws);
	case HM_REQ_RUN_ADOPT:
	case HM_REQ_RUN_KILL:
	case HM_REQ_RUN_REPORT:
	case HM_REQ_RUN_AUDIT:
	case HM_REQ_RUN_KSTREAM:
	case HM_REQ_RUN_RECLAIM:
	case HM_REQ_RUN_CONNS:
		return fixed(p, h->len, &r->ref, sizeof(r->ref), "run request", why, ws);
	case HM_REQ_RUN_END:
		if ((err = fixed(p, h->len, &r->end, sizeof(r->end), "RUN_END", why, ws)) < 0)
			return err;
		if (r->end.flags & ~HM_END_KEEP)
			return bad(why, ws, EINVAL, "unknown RUN_END flags 0x%x", r->end.flags);
		return 0;
	case HM_REQ_RUN_SCHED:
		if ((err = fixed(p, h->len, &r->sched, sizeof(r->sched), "RUN_SCHED", why, ws)) < 0)
			return err;
		if ((r->sched.mode != HM_SCHED_CHAOS && r->sched.mode != HM_SCHED_SERIAL) || r->sched.pad)
			return bad(why, ws, EINVAL, "unknown RUN_SCHED mode %u", r->sched.mode);
		return 0;
	case HM_REQ_JOURNAL_STORE:
		if ((err = fixed(p, h->len, &r->store, sizeof(r->store), "JOURNAL_STORE", why, ws)) < 0)
			return err;
		if (r->store.flags)
			return bad(why, ws, EINVAL, "unknown store flags 0x%x", r->store.flags);
		r->store.command[sizeof(r->store.command) - 1] = 0;
		return 0;
	case HM_REQ_JOURNAL_LIST:
		if (h->len == 0)
			return 0; /* skip 0 */
		return fixed(p, h->len, &r->list, sizeof(r->list), "JOURNAL_LIST", why, ws);
	case HM_REQ_JOURNAL_FETCH:
	case HM_REQ_JOURNAL_RM:
		return fixed(p, h->len, &r->jref, sizeof(r->jref), "journal request", why, ws);
	case HM_REQ_JOURNAL_GC:
		return fixed(p, h->len, &r->gc, sizeof(r->gc), "JOURNAL_GC", why, ws);
	case HM_REQ_JOURNAL_UPLOAD:
		return fixed(p, h->len, &r->upload, sizeof(r->upload), "JOURNAL_UPLOAD", why, ws);
	default:
		return bad(why, ws, EOPNOTSUPP, "unknown request type %u", h->type);
	}
}
