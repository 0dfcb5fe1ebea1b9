// SPDX-License-Identifier: MIT
/*
 * The DNS parser of hermeticd's resolver (dnsmsg.h). Strict: a query has
 * exactly one question in an uncompressed name of letters, digits, '-' and
 * '_'; an answer is read only as far as it must be, every offset checked
 * against its length, compression pointers followed at most 32 times.
 */
#include <errno.h>
#include <string.h>
#include "dnsmsg.h"

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static bool label_char(uint8_t c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

/* Read the name at *off into out (lower case, dotted, no trailing dot; the
 * root is ""). compress: pointers allowed (answers). *off moves past the
 * name as it appears at *off. 0 or -EBADMSG. */
static int read_name(const uint8_t *m, size_t n, size_t *off, bool compress, char *out)
{
	size_t p = *off, len = 0, end = 0;
	int jumps = 0;

	for (;;) {
		uint8_t l;

		if (p >= n)
			return -EBADMSG;
		l = m[p];
		if ((l & 0xc0) == 0xc0) {
			if (!compress || p + 1 >= n || ++jumps > 32)
				return -EBADMSG;
			if (!end)
				end = p + 2;
			p = (size_t)(l & 0x3f) << 8 | m[p + 1];
			continue;
		}
		if (l & 0xc0)
			return -EBADMSG; /* 0x40, 0x80: extended label types */
		if (!l) {
			if (!end)
				end = p + 1;
			break;
		}
		if (p + 1 + l > n || len + l + 1 >= HM_DNS_MAX_NAME)
			return -EBADMSG;
		if (len)
			out[len++] = '.';
		for (uint8_t i = 0; i < l; i++) {
			uint8_t c = m[p + 1 + i];

			if (c >= 'A' && c <= 'Z')
				c += 'a' - 'A';
			if (!label_char(c))
				return -EBADMSG;
			out[len++] = (char)c;
		}
		p += 1 + l;
	}
	out[len] = 0;
	*off = end;
	return 0;
}

int hm_dns_parse_query(const uint8_t *m, size_t n, struct hm_dns_query *q)
{
	size_t off = 12;

	memset(q, 0, sizeof(*q));
	if (n < 12 || n > HM_DNS_MAX_MSG)
		return -EBADMSG;
	q->id = get16(m);
	/* QR set (an answer), or a count no query of ours has. */
	if ((m[2] & 0x80) || get16(m + 4) != 1 || get16(m + 6) || get16(m + 8) || get16(m + 10) > 1)
		return -EBADMSG;
	if (read_name(m, n, &off, false, q->name) < 0 || !q->name[0] || off + 4 > n)
		return -EBADMSG;
	q->qtype = get16(m + off);
	q->qclass = get16(m + off + 2);
	q->qend = off + 4;
	if (((m[2] >> 3) & 0xf) != 0 || q->qclass != 1)
		return -EOPNOTSUPP; /* opcode QUERY, class IN only */
	return 0;
}

size_t hm_dns_reply(const uint8_t *m, const struct hm_dns_query *q, int rcode, uint8_t *out,
		    size_t cap)
{
	size_t len = q->qend >= 12 ? q->qend : 12;

	if (cap < len)
		return 0;
	memcpy(out, m, len);
	out[2] = (uint8_t)(0x80 | (m[2] & 0x79)); /* QR, opcode and RD kept, AA/TC clear */
	out[3] = (uint8_t)(0x80 | (rcode & 0xf)); /* RA */
	out[4] = 0;
	out[5] = q->qend >= 12 ? 1 : 0;
	memset(out + 6, 0, 6);
	return len;
}

struct rr {
	char owner[HM_DNS_MAX_NAME];
	uint16_t type;
	uint32_t ttl;
	size_t rdata, rdlen;
};

/* The answer section's records (at most HM_DNS_MAX_RRS; more are not read). */
static int read_rrs(const uint8_t *m, size_t n, size_t off, int count, struct rr *rrs)
{
	int k = 0;

	for (int i = 0; i < count && k < HM_DNS_MAX_RRS; i++) {
		struct rr *r = &rrs[k];

		if (read_name(m, n, &off, true, r->owner) < 0)
			return -EBADMSG;
		if (off + 10 > n)
			return -EBADMSG;
		r->type = get16(m + off);
		r->ttl = get32(m + off + 4);
		r->rdlen = get16(m + off + 8);
		r->rdata = off + 10;
		if (r->rdata + r->rdlen > n)
			return -EBADMSG;
		off = r->rdata + r->rdlen;
		if (get16(m + r->rdata - 8) != 1)
			continue; /* class IN only */
		if (r->ttl > 0x7fffffff)
			r->ttl = 0; /* RFC 2181 8: treat as 0 */
		k++;
	}
	return k;
}

int hm_dns_parse_answer(const uint8_t *m, size_t n, const struct hm_dns_query *q,
			struct hm_dns_addr *out, int max, int *rcode)
{
	struct rr rrs[HM_DNS_MAX_RRS];
	char cur[HM_DNS_MAX_NAME], qname[HM_DNS_MAX_NAME];
	size_t off = 12;
	uint32_t ttl = 0x7fffffff;
	int nrr, found = 0;

	*rcode = HM_DNS_SERVFAIL;
	if (n < 12 || get16(m) != q->id || !(m[2] & 0x80) || ((m[2] >> 3) & 0xf) ||
	    get16(m + 4) != 1)
		return -EBADMSG;
	if (read_name(m, n, &off, true, qname) < 0 || off + 4 > n || strcmp(qname, q->name) ||
	    get16(m + off) != q->qtype || get16(m + off + 2) != q->qclass)
		return -EBADMSG;
	*rcode = m[3] & 0xf;
	if (*rcode != HM_DNS_NOERROR)
		return 0;
	nrr = read_rrs(m, n, off + 4, get16(m + 6), rrs);
	if (nrr < 0)
		return nrr;
	memcpy(cur, q->name, sizeof(cur));
	for (int depth = 0; depth <= HM_DNS_MAX_CHAIN; depth++) {
		int next = -1;

		for (int i = 0; i < nrr; i++) {
			struct rr *r = &rrs[i];

			if (strcmp(r->owner, cur))
				continue;
			if (r->type == HM_DNS_T_CNAME && next < 0) {
				next = i;
			} else if ((r->type == HM_DNS_T_A && r->rdlen == 4) ||
				   (r->type == HM_DNS_T_AAAA && r->rdlen == 16)) {
				struct hm_dns_addr *a;

				if (found == max)
					continue;
				a = &out[found++];
				memset(a->addr, 0, 16);
				if (r->type == HM_DNS_T_A) {
					a->addr[10] = a->addr[11] = 0xff;
					memcpy(a->addr + 12, m + r->rdata, 4);
				} else {
					memcpy(a->addr, m + r->rdata, 16);
				}
				a->ttl = r->ttl < ttl ? r->ttl : ttl;
			}
		}
		if (next < 0 || depth == HM_DNS_MAX_CHAIN)
			break;
		off = rrs[next].rdata;
		if (read_name(m, n, &off, true, cur) < 0 || off > rrs[next].rdata + rrs[next].rdlen)
			return -EBADMSG;
		if (rrs[next].ttl < ttl)
			ttl = rrs[next].ttl;
	}
	return found;
}

bool hm_dns_pattern_ok(const char *p)
{
	size_t len = strlen(p), lab = 0;

	if (!strncmp(p, "*.", 2)) {
		p += 2;
		len -= 2;
	}
	if (!len || len >= HM_DNS_MAX_NAME)
		return false;
	for (; *p; p++) {
		if (*p == '.') {
			if (!lab)
				return false;
			lab = 0;
		} else if (!label_char((uint8_t)*p) || ++lab > 63) {
			return false;
		}
	}
	return lab > 0;
}

bool hm_dns_match(const char *pattern, const char *name)
{
	size_t pl, nl = strlen(name);

	if (strncmp(pattern, "*.", 2))
		return !strcmp(pattern, name);
	pattern += 1; /* ".suffix" */
	pl = strlen(pattern);
	return nl > pl && !strcmp(name + nl - pl, pattern);
}
