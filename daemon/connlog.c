// SPDX-License-Identifier: MIT
/*
 * enroll --connections: the connection attempts of a run that asked
 * (HM_RUN_CONNLOG), queued as the kernel reports them until the client
 * takes them (HM_REQ_RUN_CONNS). The kernel reports refusals and audits
 * for every run; allowed attempts only for these runs (HM_NET_LOG_ALLOWED
 * in the policy), so runs without a log pay nothing.
 *
 * Nothing is lost without being counted: what the kernel could not put on
 * the ring is in hm_dropped, what does not fit the queue here in
 * q->dropped, and the client's log ends with both.
 */
#include <inttypes.h>
#include "util.h"
#include "lineage.h"
#include "daemon.h"

/* Records merged into one: a datagram or packet like one of the last few
 * queued (unconnected sendto() in a loop, a ping) adds to its count. A
 * connect() is always a record of its own. */
#define MERGE_WINDOW 32

static struct hmd_connlog_key *key_of(struct hmd_connlog *q, uint32_t pid)
{
	for (uint32_t i = 0; q->keys && pid && i < HMD_CONNLOG_KEYS; i++)
		if (q->keys[i].pid == pid)
			return &q->keys[i];
	return NULL;
}

void hmd_connlog_trace(struct hmd_run *r, const struct hm_trace_event *e)
{
	struct hmd_connlog *q = &r->conns;
	struct hmd_connlog_key *k;

	if (!(r->flags & HM_RUN_CONNLOG) || !e->pid)
		return;
	k = key_of(q, e->pid);
	if (e->kind == HM_EV_EXIT && k) {
		k->pid = 0; /* the pid may come back as another process */
		return;
	}
	if (e->kind != HM_EV_SHIM)
		return;
	if (!q->keys && !(q->keys = calloc(HMD_CONNLOG_KEYS, sizeof(*q->keys))))
		return; /* the lines say null: unknown, never wrong */
	for (uint32_t i = 0; !k && i < HMD_CONNLOG_KEYS; i++)
		if (!q->keys[i].pid)
			k = &q->keys[i];
	if (!k)
		return; /* more live processes than slots: their keys are null */
	if (k->pid != e->pid) {
		k->pid = e->pid;
		k->key[0] = 0;
	}
	/* A key survives exec: a new image announcing none (the supervisor's,
	 * for a static binary) leaves what the process's earlier one said. The
	 * key is the process's own word, checked to be one (lib/lineage.h); it
	 * labels only its own run's lines. */
	if (e->len && e->len < sizeof(k->key) && !memchr(e->data, 0, e->len)) {
		char key[sizeof(k->key)];

		memcpy(key, e->data, e->len);
		key[e->len] = 0;
		if (hm_lineage_valid(key))
			memcpy(k->key, key, sizeof(key));
	}
}

static uint8_t verdict(const struct hmd_run *r, const struct hm_net_event *e)
{
	if (e->kind == HM_EV_NET_ALLOWED)
		return HM_VERDICT_ALLOWED;
	return (r->flags & HM_RUN_NET_AUDIT) ? HM_VERDICT_AUDITED : HM_VERDICT_REFUSED;
}

static bool same(const struct hm_conn_rec *c, const struct hm_net_event *e, uint8_t v)
{
	return c->verdict == v && c->op == e->op && c->port == e->port && c->family == e->family &&
	       c->proto == e->proto && c->pid == e->pid && !memcmp(c->addr, e->addr, 16) &&
	       !memcmp(c->comm, e->comm, sizeof(c->comm));
}

void hmd_connlog_add(struct hmd_run *r, const struct hm_net_event *e)
{
	struct hmd_connlog *q = &r->conns;
	uint8_t v = verdict(r, e);
	struct hm_conn_rec *c;

	if (!(r->flags & HM_RUN_CONNLOG))
		return;
	if (v == HM_VERDICT_ALLOWED)
		q->allowed++;
	if (e->op != HM_OP_CONNECT)
		for (uint32_t i = q->n, k = 0; i > 0 && k < MERGE_WINDOW; i--, k++)
			if (same(&q->rec[i - 1], e, v) && q->rec[i - 1].count < UINT32_MAX) {
				q->rec[i - 1].count++;
				return;
			}
	if (q->n == q->cap) {
		uint32_t cap = q->cap ? q->cap * 2 : 256;
		struct hm_conn_rec *nr;

		if (cap > HMD_CONNLOG_MAX || !(nr = realloc(q->rec, cap * sizeof(*nr)))) {
			q->dropped++;
			return;
		}
		q->rec = nr;
		q->cap = cap;
	}
	c = &q->rec[q->n++];
	memset(c, 0, sizeof(*c));
	c->time_ns = e->time_ns;
	memcpy(c->addr, e->addr, 16);
	c->port = e->port;
	c->family = e->family;
	c->op = e->op;
	c->proto = e->proto;
	c->pid = e->pid;
	c->count = 1;
	c->verdict = v;
	memcpy(c->comm, e->comm, sizeof(c->comm));
	c->comm[sizeof(c->comm) - 1] = 0;
	{
		struct hmd_connlog_key *k = key_of(q, e->pid);

		if (k)
			memcpy(c->process_key, k->key, sizeof(c->process_key));
	}
}

uint32_t hmd_connlog_take(struct hmd_run *r, struct hm_conn_rec *out, uint32_t max, bool *ret_more)
{
	struct hmd_connlog *q = &r->conns;
	uint32_t n = q->n < max ? q->n : max;

	*ret_more = false;
	if (!n)
		return 0; /* (q->rec may be NULL: no memcpy from it) */
	memcpy(out, q->rec, n * sizeof(*out));
	memmove(q->rec, q->rec + n, (q->n - n) * sizeof(*out));
	q->n -= n;
	*ret_more = q->n > 0;
	/* A queue that drained gives its memory back. */
	if (!q->n && q->cap > 256) {
		free(q->rec);
		q->rec = NULL;
		q->cap = 0;
	}
	return n;
}

void hmd_connlog_free(struct hmd_run *r)
{
	free(r->conns.keys);
	free(r->conns.rec);
	memset(&r->conns, 0, sizeof(r->conns));
}
