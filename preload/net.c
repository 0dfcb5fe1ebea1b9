// SPDX-License-Identifier: MIT
/*
 * DNS under --network block: names are answered from /etc/hosts only. A name
 * that is numeric, listed in /etc/hosts, or allowed with --allow
 * (HERMETIC_DNS_ALLOW, "*.suffix" for every name below suffix) goes to the real resolver (nsswitch's "files" answers
 * the /etc/hosts ones); anything else fails at once as it fails on an
 * offline machine (glibc 2.36 in a network namespace with only loopback,
 * measured: its resolver's send fails with ENETUNREACH): EAI_AGAIN from
 * getaddrinfo, TRY_AGAIN in h_errno, EAGAIN from the _r functions, instead
 * of waiting for a resolver the kernel will not let us reach. Code that
 * retries on a temporary failure and gives up on "no such name" takes the
 * branch it takes offline. Reverse lookups (getnameinfo) of addresses not
 * in /etc/hosts fail with EAI_AGAIN too, as offline, unless the caller asked
 * for a numeric host (NI_NUMERICHOST), which needs no resolver.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <ctype.h>
#include <string.h>
#include <strings.h>
#include "shim.h"

/* Compare a host name with one of /etc/hosts or the allow list, ignoring
 * case and one trailing dot on either side. */
static bool name_eq(const char *a, size_t alen, const char *b, size_t blen)
{
	if (alen && a[alen - 1] == '.')
		alen--;
	if (blen && b[blen - 1] == '.')
		blen--;
	return alen == blen && alen && !strncasecmp(a, b, alen);
}

static bool numeric(const char *name)
{
	unsigned char buf[sizeof(struct in6_addr)];

	return inet_pton(AF_INET, name, buf) == 1 || inet_pton(AF_INET6, name, buf) == 1 ||
	       strchr(name, ':') != NULL; /* IPv6 with a scope id */
}

static bool allowed(const char *name)
{
	size_t nlen = strlen(name);

	for (const char *p = hm.dns_allow; p && *p;) {
		size_t n = strcspn(p, ",");
		size_t host = strcspn(p, ",:"); /* tolerate host:port */

		size_t plen = host < n ? host : n;

		if (name_eq(name, nlen, p, plen))
			return true;
		/* "*.suffix": every name below suffix (as the run's resolver in
		 * hermeticd matches, docs/network.md) */
		if (plen > 2 && p[0] == '*' && p[1] == '.') {
			size_t l = nlen && name[nlen - 1] == '.' ? nlen - 1 : nlen;

			if (l > plen - 1 && name_eq(name + l - (plen - 1), plen - 1, p + 1, plen - 1))
				return true;
		}
		p += n;
		p += *p == ',';
	}
	return false;
}

/* Is name (or, with addr, that address of family) listed in /etc/hosts? */
static bool hosts_lookup(const char *name, int family, const void *addr)
{
	char line[4096];
	size_t nlen = name ? strlen(name) : 0;
	bool found = false;
	FILE *f;

	f = hm.real.fopen("/etc/hosts", "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		char *save, *tok, *hash = strchr(line, '#');
		unsigned char a[sizeof(struct in6_addr)];

		if (hash)
			*hash = 0;
		tok = strtok_r(line, " \t\r\n", &save);
		if (!tok)
			continue;
		if (addr) {
			if (family == AF_INET && inet_pton(AF_INET, tok, a) == 1)
				found = !memcmp(a, addr, 4);
			else if (family == AF_INET6 && inet_pton(AF_INET6, tok, a) == 1)
				found = !memcmp(a, addr, 16);
			continue;
		}
		while ((tok = strtok_r(NULL, " \t\r\n", &save)))
			if (name_eq(name, nlen, tok, strlen(tok))) {
				found = true;
				break;
			}
	}
	fclose(f);
	return found;
}

/* May this name go to the real resolver? */
static bool pass_name(const char *name)
{
	bool ok;
	int e;

	if (!hm_ready() || !hm.net_block || !name || hm_t.depth)
		return true;
	if (numeric(name) || allowed(name))
		return true;
	e = errno;
	hm_t.depth++;
	ok = hosts_lookup(name, 0, NULL);
	hm_t.depth--;
	errno = e;
	return ok;
}

/* A refused lookup, counted in the run's clock page for enroll's summary
 * (a refused connect is counted by the kernel; a lookup never reaches it). */
static void note_refused(const char *name)
{
	struct hm_vclock *vc = hm.vc;
	size_t n;

	if (!vc || !name)
		return;
	n = strnlen(name, sizeof(vc->dns_first[0]) - 1);
	for (int i = 0; i < 4; i++) {
		char *slot = vc->dns_first[i];
		char expected = 0;

		if (!strncmp(slot, name, n) && slot[n] == 0)
			break; /* named already */
		/* Claim an empty slot by its first byte; the rest follows. */
		if (__atomic_compare_exchange_n(slot, &expected, name[0], false, __ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED)) {
			memcpy(slot + 1, name + 1, n ? n - 1 : 0);
			slot[n] = 0;
			break;
		}
	}
	__atomic_fetch_add(&vc->dns_refused, 1, __ATOMIC_RELAXED);
}

HM_EXPORT int getaddrinfo(const char *node, const char *service, const struct addrinfo *hints,
			  struct addrinfo **res)
{
	if ((hints && (hints->ai_flags & AI_NUMERICHOST)) || pass_name(node))
		return hm.real.getaddrinfo(node, service, hints, res);
	note_refused(node);
	return EAI_AGAIN;
}

HM_EXPORT struct hostent *gethostbyname(const char *name)
{
	if (pass_name(name))
		return hm.real.gethostbyname(name);
	note_refused(name);
	h_errno = TRY_AGAIN;
	return NULL;
}

HM_EXPORT struct hostent *gethostbyname2(const char *name, int af)
{
	if (pass_name(name))
		return hm.real.gethostbyname2(name, af);
	note_refused(name);
	h_errno = TRY_AGAIN;
	return NULL;
}

HM_EXPORT int gethostbyname_r(const char *name, struct hostent *ret, char *buf, size_t len,
			      struct hostent **result, int *herr)
{
	if (pass_name(name))
		return hm.real.gethostbyname_r(name, ret, buf, len, result, herr);
	note_refused(name);
	*result = NULL;
	if (herr)
		*herr = TRY_AGAIN;
	return EAGAIN;
}

HM_EXPORT int gethostbyname2_r(const char *name, int af, struct hostent *ret, char *buf,
			       size_t len, struct hostent **result, int *herr)
{
	if (pass_name(name))
		return hm.real.gethostbyname2_r(name, af, ret, buf, len, result, herr);
	note_refused(name);
	*result = NULL;
	if (herr)
		*herr = TRY_AGAIN;
	return EAGAIN;
}

HM_EXPORT int getnameinfo(const struct sockaddr *sa, socklen_t salen, char *host,
			  socklen_t hostlen, char *serv, socklen_t servlen, int flags)
{
	const void *addr = NULL;
	bool listed;
	int e;

	if (!hm_ready() || !hm.net_block || !host || !hostlen || (flags & NI_NUMERICHOST) || !sa ||
	    hm_t.depth)
		return hm.real.getnameinfo(sa, salen, host, hostlen, serv, servlen, flags);
	if (sa->sa_family == AF_INET && salen >= sizeof(struct sockaddr_in))
		addr = &((const struct sockaddr_in *)sa)->sin_addr;
	else if (sa->sa_family == AF_INET6 && salen >= sizeof(struct sockaddr_in6))
		addr = &((const struct sockaddr_in6 *)sa)->sin6_addr;
	else
		return hm.real.getnameinfo(sa, salen, host, hostlen, serv, servlen, flags);
	e = errno;
	hm_t.depth++;
	listed = hosts_lookup(NULL, sa->sa_family, addr);
	hm_t.depth--;
	errno = e;
	if (listed)
		return hm.real.getnameinfo(sa, salen, host, hostlen, serv, servlen, flags);
	return EAI_AGAIN;
}
