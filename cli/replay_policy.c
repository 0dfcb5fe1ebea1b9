// SPDX-License-Identifier: MIT
/*
 * replay's network policy and its question before a journal that is not
 * ours (replay.h). The journal is data another user may have written: its
 * command, environment options and network policy are theirs. So the
 * network is the replay command line's (blocked by default), and a journal
 * this user did not record here runs only once they saw what it runs.
 */
#include <unistd.h>
#include "util.h"
#include "config.h"
#include "cli.h"
#include "enroll.h"
#include "replay.h"
#include "trust.h"

static void __attribute__((noreturn)) bad(const char *what)
{
	fprintf(stderr, "hermetic replay: %s\nTry 'hermetic replay --help'.\n", what);
	exit(EXIT_USAGE);
}

bool replay_policy_option(struct replay_policy *p, int argc, char **argv, int *i)
{
	const char *a = argv[*i], *v = NULL;
	size_t len;

	if (!strcmp(a, "--yes") || !strcmp(a, "-y")) {
		p->yes = true;
		return true;
	}
	if (!strcmp(a, "--journal-policy")) {
		p->journal_policy = true;
		return true;
	}
	if (!strcmp(a, "--no-daemon")) {
		p->no_daemon = true;
		return true;
	}
	for (const char *const *o = (const char *const[]){ "--network", "--allow", NULL }; *o; o++) {
		len = strlen(*o);
		if (strncmp(a, *o, len) || (a[len] && a[len] != '='))
			continue;
		v = a[len] == '=' ? a + len + 1 : *i + 1 < argc ? argv[++*i] : NULL;
		if (!v || !*v)
			bad(len == 9 ? "--network needs block, audit or off" : "--allow needs HOST[:PORT]");
		if (len == 9) {
			if (strcmp(v, "block") && strcmp(v, "off") && strcmp(v, "audit"))
				bad("--network: expected block, audit or off");
			p->network = v;
		} else {
			if (p->n_allow == HM_RUN_MAX_ALLOW)
				bad("too many --allow options");
			p->allow[p->n_allow++] = v;
		}
		return true;
	}
	return false;
}

bool replay_policy_key(const char *key)
{
	return !strcmp(key, "allow") || !strcmp(key, "no-daemon");
}

/* s as a shell word, for a person to read: what a journal holds is shown
 * with its control characters escaped (no terminal sequence of a crafted
 * journal reaches the screen). Appends to buf at *used, within size. */
static void quote(const char *s, char *buf, size_t size, size_t *used)
{
	bool plain = *s;

	for (const char *c = s; *c; c++)
		plain &= !!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
				  "_-./=:,+@%",
				  *c);
	if (*used >= size)
		return;
	if (plain) {
		*used += snprintf(buf + *used, size - *used, "%s", s);
		return;
	}
	*used += snprintf(buf + *used, size - *used, "'");
	for (; *s && *used < size; s++)
		*used += *s == '\'' ? snprintf(buf + *used, size - *used, "'\\''")
				    : (unsigned char)*s < ' ' || *s == 0x7f
					      ? snprintf(buf + *used, size - *used, "\\x%02x",
							 (unsigned char)*s)
					      : snprintf(buf + *used, size - *used, "%c", *s);
	if (*used < size)
		*used += snprintf(buf + *used, size - *used, "'");
}

static void note_dropped(struct replay_policy *p, const char *opt, const char *value)
{
	size_t used = strlen(p->dropped), size = sizeof(p->dropped) - 1;

	used += snprintf(p->dropped + used, size - used, "%s%s", used ? " " : "", opt);
	if (value && used < size)
		quote(value, p->dropped, size, &used);
}

static bool given_allow(const struct replay_policy *p, const char *spec)
{
	for (size_t i = 0; i < p->n_allow; i++)
		if (!strcmp(p->allow[i], spec))
			return true;
	return false;
}

void replay_policy_push(struct replay_policy *p, const struct hm_journal_config *c, char **args,
			size_t *n, size_t max)
{
	bool off, no_daemon = p->no_daemon, jp = p->journal_policy, j_no_daemon = false;
	enum hm_network net = HM_NETWORK_BLOCK;

	for (size_t i = 0; i < c->n_opts; i++)
		j_no_daemon |= !strcmp(c->opts[i].key, "no-daemon");
	/* Open only as far as this command line says (or --journal-policy):
	 * off and audit both let through what block refuses. */
	if (p->network)
		net = !strcmp(p->network, "off")     ? HM_NETWORK_OFF
		      : !strcmp(p->network, "audit") ? HM_NETWORK_AUDIT
						     : HM_NETWORK_BLOCK;
	else if (jp)
		net = c->cfg.network;
	off = net == HM_NETWORK_OFF;
	if (c->cfg.network != HM_NETWORK_BLOCK && c->cfg.network != net)
		note_dropped(p, c->cfg.network == HM_NETWORK_OFF ? "--network=off" : "--network=audit",
			     NULL);
	if (j_no_daemon && !no_daemon && !jp)
		note_dropped(p, "--no-daemon", NULL);
	no_daemon |= jp && j_no_daemon;
	push_arg(args, n, max, xasprintf("--network=%s", hm_network_name(net)));
	if (no_daemon)
		push_arg(args, n, max, "--no-daemon");
	/* What narrows is kept, where it means something. */
	if (!off && !no_daemon && !c->cfg.loopback)
		push_arg(args, n, max, "--no-loopback");
	if (!off && !no_daemon && !c->cfg.unix_sockets)
		push_arg(args, n, max, "--no-unix");
	for (size_t i = 0; i < p->n_allow; i++)
		push_arg(args, n, max, xasprintf("--allow=%s", p->allow[i]));
	for (size_t i = 0; i < c->n_opts; i++) {
		const char *v = c->opts[i].value;

		if (strcmp(c->opts[i].key, "allow") || !v || given_allow(p, v))
			continue;
		if (jp && !off && !no_daemon)
			push_arg(args, n, max, xasprintf("--allow=%s", v));
		else if (!jp && !off && !no_daemon)
			note_dropped(p, "--allow=", v);
	}
}

/* The run's network, as enroll_parse set it up. */
static void describe_network(const struct enroll *e, char *buf, size_t size)
{
	size_t used;

	if (e->no_daemon)
		used = snprintf(buf, size, "NOT refused by the kernel (--no-daemon: the shim only "
					   "refuses name lookups)");
	else if (e->cfg.network == HM_NETWORK_OFF)
		used = snprintf(buf, size, "OPEN (--network off: every destination)");
	else if (e->cfg.network == HM_NETWORK_AUDIT)
		used = snprintf(buf, size, "OPEN (--network audit: what block would refuse is let "
					   "through and listed)");
	else
		used = snprintf(buf, size, "blocked; loopback %s, unix sockets %s",
				e->cfg.loopback ? "open" : "refused",
				e->cfg.unix_sockets ? "open" : "refused");
	for (int i = 0; i < e->allow.n_specs && used < size - 1; i++) {
		used += snprintf(buf + used, size - used, "%s", i ? ", " : "; open to ");
		quote(e->allow.specs[i], buf, size - 1, &used);
	}
}

/* What it is about to run, to stderr: command, network, options. */
static void show(const struct replay_policy *p, const char *source, const struct hm_journal *j,
		 const char *why, const struct enroll *e)
{
	static char line[8192];
	const char *host = hm_journal_fp_get(&j->fingerprint, HM_FP_HOSTNAME);
	char hostq[300];
	size_t used = 0;

	quote(host ? host : "?", hostq, sizeof(hostq) - 1, &used);
	hostq[used < sizeof(hostq) ? used : sizeof(hostq) - 1] = 0;
	used = 0;
	fprintf(stderr,
		"hermetic replay: journal '%s' was not recorded by you on this machine (%s; it "
		"says uid %u, host %s).\nIt would run, enrolled, as you:\n",
		source, why, (unsigned)j->config.uid, hostq);
	for (char **a = e->argv; *a && used < sizeof(line); a++) {
		if (a != e->argv && used < sizeof(line))
			line[used++] = ' ';
		quote(*a, line, sizeof(line) - 1, &used);
	}
	line[used < sizeof(line) ? used : sizeof(line) - 1] = 0;
	fprintf(stderr, "  command: %s\n", line);
	describe_network(e, line, sizeof(line));
	fprintf(stderr, "  network: %s\n", line);
	used = 0;
	line[0] = 0;
	for (size_t i = 0; i < e->n_opts && used < sizeof(line) - 1; i++) {
		const struct enroll_opt *o = &e->opts[i];

		if (!strcmp(o->name, "allow") || !strcmp(o->name, "no-daemon"))
			continue;
		used += snprintf(line + used, sizeof(line) - used, "%s--%s%s", used ? " " : "",
				 o->name, o->value ? "=" : "");
		if (o->value)
			quote(o->value, line, sizeof(line) - 1, &used);
	}
	line[used < sizeof(line) ? used : sizeof(line) - 1] = 0;
	fprintf(stderr, "  options: %s\n", line[0] ? line : "(none)");
	if (p->dropped[0])
		fprintf(stderr, "  not taken from the journal: %s\n", p->dropped);
}

/* One line from a terminal on stdin, byte by byte: what follows the answer
 * stays for the command. */
static bool ask(void)
{
	char buf[16];
	size_t n = 0;
	char c;

	fprintf(stderr, "Run it? [y/N] ");
	fflush(stderr);
	for (;;) {
		ssize_t k = read(STDIN_FILENO, &c, 1);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0 || c == '\n')
			break;
		if (n < sizeof(buf) - 1)
			buf[n++] = c;
	}
	buf[n] = 0;
	return !strcasecmp(buf, "y") || !strcasecmp(buf, "yes");
}

void replay_policy_confirm(struct replay_policy *p, const char *source, const struct hm_journal *j,
			   const void *bytes, size_t len, const struct enroll *e)
{
	char hex[HM_SHA256_HEX], why[PATH_MAX + 200];

	hm_sha256_hex(bytes, len, hex);
	if (!trust_known(hex, why, sizeof(why))) {
		show(p, source, j, why, e);
		if (p->yes) {
			warnx_("replay: running it (--yes)");
		} else if (!isatty(STDIN_FILENO)) {
			die(EXIT_FOREIGN,
			    "replay: not run: no terminal to ask on; look at what it runs (above, "
			    "or 'hermetic journals show %s') and pass --yes to run it (pytest: "
			    "--hermetic-yes)",
			    source);
		} else if (!ask()) {
			die(EXIT_FOREIGN, "replay: not run (answer was not 'y')");
		}
	}
	if (p->dropped[0])
		warnx_("replay: not taken from the journal: %s (a journal opens no more network than "
		       "the replay's command line); pass %s to replay, or --journal-policy, to run as "
		       "recorded",
		       p->dropped, strchr(p->dropped, ' ') ? "them" : "it");
}
