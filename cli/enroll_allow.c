// SPDX-License-Identifier: MIT
/*
 * enroll --allow HOST[:PORT]: an address, [V6]:PORT, a DNS name or *.NAME,
 * resolved before the run into the destinations the kernel lets through
 * and the names the run's resolver answers (enroll_opts.h). A URL or a
 * name that cannot be one is a usage error that says what to write.
 */
#include <ctype.h>
#include <inttypes.h>
#include <netdb.h>
#include <strings.h>
#include <arpa/inet.h>
#include "util.h"
#include "config.h"
#include "cli.h"
#include "enroll.h"
#include "dnsmsg.h"
#include "enroll_opts.h"

/* Split "HOST[:PORT]", "[V6]:PORT" or a bare IPv6 address. */
static void split_host_port(const char *spec, char *host, size_t hsize, uint16_t *ret_port)
{
	const char *colon = NULL, *end;
	uint64_t port = 0;

	if (spec[0] == '[') {
		end = strchr(spec, ']');
		if (!end || (end[1] && end[1] != ':'))
			bad_usage("--allow %s: expected [IPV6]:PORT", spec);
		snprintf(host, hsize, "%.*s", (int)(end - spec - 1), spec + 1);
		colon = end[1] ? end + 1 : NULL;
	} else {
		colon = strchr(spec, ':');
		if (colon && strchr(colon + 1, ':'))
			colon = NULL; /* a bare IPv6 address */
		snprintf(host, hsize, "%.*s", colon ? (int)(colon - spec) : (int)strlen(spec), spec);
	}
	if (!*host)
		bad_usage("--allow %s: no host", spec);
	if (colon && (hm_parse_u64(colon + 1, &port) < 0 || port == 0 || port > 65535))
		bad_usage("--allow %s: port must be 1-65535", spec);
	*ret_port = port;
}

static void add_allow(struct enroll *e, const uint8_t addr[16], uint16_t port)
{
	for (uint32_t i = 0; i < e->allow.n_addrs; i++)
		if (!memcmp(e->allow.addrs[i].addr, addr, 16) && e->allow.addrs[i].port == port)
			return;
	if (e->allow.n_addrs == HM_RUN_MAX_ALLOW)
		bad_usage("at most %d --allow destinations (after resolving names)", HM_RUN_MAX_ALLOW);
	memcpy(e->allow.addrs[e->allow.n_addrs].addr, addr, 16);
	e->allow.addrs[e->allow.n_addrs++].port = port;
}

/* "--allow https://example.com/x": a URL, not HOST[:PORT]; say which
 * form it wants, with the URL's own host and port. */
static void url_allow(const char *spec)
{
	const char *p = strstr(spec, "://"), *port = "PORT";
	char host[256];

	if (!p)
		return;
	if (!strncasecmp(spec, "https://", 8))
		port = "443";
	else if (!strncasecmp(spec, "http://", 7))
		port = "80";
	p += 3;
	p += strcspn(p, "@/") < strcspn(p, "/") ? strcspn(p, "@") + 1 : 0; /* user@ */
	snprintf(host, sizeof(host), "%.*s", (int)strcspn(p, "/?#"), p);
	if (strchr(host, ':') && host[0] != '[')
		bad_usage("--allow %s: a URL; --allow takes HOST:PORT, here --allow %s", spec, host);
	bad_usage("--allow %s: a URL; --allow takes HOST:PORT, here --allow %s:%s", spec,
		  host[0] ? host : "HOST", port);
}

/* The addresses /etc/hosts gives a name (or the names below *.suffix):
 * opened now, for the whole run. Such a lookup never becomes DNS (glibc's
 * and Go's "files" answer it), so the run's resolver never sees it; the file
 * is as static as an address given on the command line. Lines are "ADDR
 * NAME [ALIAS...]", '#' to the end of a line a comment. */
static void hosts_allow(struct enroll *e, const char *pattern, uint16_t port)
{
	char line[4096];
	FILE *f = fopen("/etc/hosts", "re");

	while (f && fgets(line, sizeof(line), f)) {
		char *save, *tok, *addr;
		uint8_t a[16] = {};
		bool v4;

		line[strcspn(line, "#")] = 0;
		addr = strtok_r(line, " \t\r\n", &save);
		if (!addr)
			continue;
		v4 = inet_pton(AF_INET, addr, a + 12) == 1;
		if (v4)
			a[10] = a[11] = 0xff;
		else if (inet_pton(AF_INET6, addr, a) != 1)
			continue;
		while ((tok = strtok_r(NULL, " \t\r\n", &save))) {
			size_t n = strlen(tok);

			if (n && tok[n - 1] == '.')
				tok[--n] = 0;
			for (size_t i = 0; i < n; i++)
				tok[i] = (char)tolower((unsigned char)tok[i]);
			if (hm_dns_match(pattern, tok)) {
				add_allow(e, a, port);
				break;
			}
		}
	}
	if (f)
		fclose(f);
}

/* An address opens now; a name is given to the run's resolver in hermeticd,
 * which opens the addresses of the answers the run receives, for their TTL
 * (docs/network.md). */
void enroll_resolve_allow(struct enroll *e, const char *spec)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICHOST };
	struct addrinfo *res, *ai;
	struct hm_allow_name *nm;
	char host[256];
	uint16_t port;
	size_t len;

	url_allow(spec);
	split_host_port(spec, host, sizeof(host), &port);
	if (!getaddrinfo(host, NULL, &hints, &res)) {
		for (ai = res; ai; ai = ai->ai_next) {
			uint8_t a[16] = {};

			if (ai->ai_family == AF_INET) {
				a[10] = a[11] = 0xff;
				memcpy(a + 12, &((struct sockaddr_in *)ai->ai_addr)->sin_addr, 4);
			} else if (ai->ai_family == AF_INET6) {
				memcpy(a, &((struct sockaddr_in6 *)ai->ai_addr)->sin6_addr, 16);
			} else {
				continue;
			}
			add_allow(e, a, port);
		}
		freeaddrinfo(res);
		return;
	}
	len = strlen(host);
	if (len > 1 && host[len - 1] == '.')
		host[--len] = 0;
	for (size_t i = 0; i < len; i++)
		host[i] = (char)tolower((unsigned char)host[i]);
	if (!hm_dns_pattern_ok(host))
		bad_usage("--allow %s: '%s' is neither an address nor a DNS name (NAME or *.NAME)",
			  spec, host);
	if (e->allow.n_names == HM_RUN_MAX_NAMES)
		bad_usage("at most %d --allow names", HM_RUN_MAX_NAMES);
	nm = &e->allow.names[e->allow.n_names++];
	snprintf(nm->name, sizeof(nm->name), "%s", host);
	nm->port = port;
	hosts_allow(e, host, port);
	/* The shim lets these names through to the system's resolver, whose
	 * queries the kernel sends to the run's resolver. */
	{
		size_t used = strlen(e->allow.dns);

		if (used + len + 2 >= sizeof(e->allow.dns))
			bad_usage("too many --allow host names");
		snprintf(e->allow.dns + used, sizeof(e->allow.dns) - used, "%s%s", used ? "," : "",
			 host);
	}
}

