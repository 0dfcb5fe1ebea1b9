// SPDX-License-Identifier: MIT
/* hermetic status [--json]: what the daemon runs and which hooks are active. */
#include <getopt.h>
#include <json-c/json.h>
#include "util.h"
#include "cli.h"
#include "client.h"
#include "confine.h"

/* What a run started here, by this user, would get: containment is the
 * caller's (its kernel, its privileges, a container or a chroot), not the
 * daemon's. */
static struct confine here;
#include "supervise.h"
#include "enroll.h"
#include "enroll_opts.h"
#include "run.h"

static void usage(FILE *f)
{
	fprintf(f, "Usage: hermetic status [--json]\n\n"
		   "Show the daemon's version, which BPF attach types are active and which\n"
		   "were refused and why, its cgroup subtree, the containment a run started\n"
		   "here would get (and what this kernel cannot give), whether processes\n"
		   "without the shim (static binaries, Go) can be supervised here, and your\n"
		   "active runs (root: every user's; others see how many other users have)\n"
		   "with their network mode and counts: refused (block) or audited (audit),\n"
		   "allowed (runs with enroll --connections) and events dropped.\n\n"
		   "  --json   one JSON object, for scripts\n");
}

/* A run's network counts: refused (block) or audited (audit: what block
 * would have refused), allowed when the run keeps a connection log
 * (enroll --connections), and events the kernel or daemon could not keep. */
static void print_counts(json_object *r, json_object *ref)
{
	json_object *net, *aud, *allowed, *dropped;
	bool audit = json_object_object_get_ex(r, "network", &net) &&
		     !strcmp(json_object_get_string(net), "audit");

	if (audit && json_object_object_get_ex(r, "audited", &aud))
		printf(" audited %s", json_object_get_string(aud));
	else
		printf(" refused %s", json_object_get_string(ref));
	if (json_object_object_get_ex(r, "allowed", &allowed) && allowed)
		printf(" allowed %s", json_object_get_string(allowed));
	if (json_object_object_get_ex(r, "dropped_events", &dropped))
		printf(" dropped %s", json_object_get_string(dropped));
}

/* The daemon's status, parsed (dies when it cannot be had). */
static json_object *fetch_status(void)
{
	static char buf[HM_MSG_MAX];
	const char *msg = NULL;
	struct hm_client conn;
	json_object *o;
	ssize_t n;

	conn = (struct hm_client){ .sock = cli_connect() };
	n = cli_call(&conn, HM_REQ_STATUS, NULL, 0, -1, HM_REP_STATUS, buf, sizeof(buf) - 1, false,
		     NULL, &msg);
	if (n < 0)
		die(EXIT_INTERNAL, "status: %s", msg);
	buf[n] = 0;
	o = json_tokener_parse(buf);
	if (!o)
		die(EXIT_INTERNAL, "hermeticd sent a status that is not JSON");
	return o;
}

/* What a run started here would get, next to what the daemon says. */
static void add_local(json_object *o)
{
	confine_prepare(&here, true, true);
	json_object_object_add(o, "containment", confine_layers_json(&here));
	if (here.refuse[0])
		json_object_object_add(json_object_object_get(o, "containment"), "refused",
				       json_object_new_string(here.refuse));
	/* The supervisor is this program's (docs/static.md): what this machine
	 * allows it, next to what the daemon says. */
	{
		char vdso[4096], why[256];
		bool found = enroll_find_lib("libhermetic-vdso.so", vdso, sizeof(vdso)) == 0;
		bool ok = supervise_probe(found, why, sizeof(why));
		json_object *sv = json_object_new_object();

		json_object_object_add(sv, "available", json_object_new_boolean(ok));
		json_object_object_add(sv, "route",
				       json_object_new_string(ok ? "seccomp user notification at exec, "
								   "ptrace for the exec stop" : "none"));
		json_object_object_add(sv, "vdso", vdso[0] ? json_object_new_string(vdso) : NULL);
		if (why[0])
			json_object_object_add(sv, "error", json_object_new_string(why));
		json_object_object_add(o, "supervisor", sv);
	}
	json_object_object_add(o, "identity", enroll_identity_status_json(&here));
}

/* The daemon: version, subtree, attach types, pins, clock keeper. */
static void print_daemon(json_object *o)
{
	json_object *v;

	printf("hermeticd %s\n", json_object_object_get_ex(o, "version", &v) ? json_object_get_string(v) : "?");
	if (json_object_object_get_ex(o, "subtree", &v))
		printf("cgroup subtree: %s\n", json_object_get_string(v));
	if (json_object_object_get_ex(o, "attach", &v)) {
		printf("attach types:\n");
		for (size_t i = 0; i < json_object_array_length(v); i++) {
			json_object *a = json_object_array_get_idx(v, i), *name, *state, *err;

			json_object_object_get_ex(a, "name", &name);
			json_object_object_get_ex(a, "state", &state);
			printf("  %-22s %s", json_object_get_string(name), json_object_get_string(state));
			if (json_object_object_get_ex(a, "error", &err))
				printf(" (%s)", json_object_get_string(err));
			putchar('\n');
		}
	}
	if (json_object_object_get_ex(o, "pins", &v))
		printf("pinned in bpffs: %s\n",
		       v ? json_object_get_string(v) : "no (runs end when hermeticd stops)");
	if (json_object_object_get_ex(o, "clock_keeper", &v)) {
		json_object *act, *err;

		json_object_object_get_ex(v, "active", &act);
		printf("virtual clock keeper: %s", json_object_get_boolean(act) ? "active" : "unavailable");
		if (json_object_object_get_ex(v, "error", &err))
			printf(" (%s; runs need --clock off)", json_object_get_string(err));
		putchar('\n');
	}
}

/* A run started here: containment, supervisor, identity, --sched. */
static void print_here(json_object *o)
{
	json_object *v;

	printf("containment of a run started here (%s):\n", here.root ? "root" : "this user");
	if (here.refuse[0])
		printf("  refused: cannot confine: %s\n", here.refuse);
	else
		confine_layers_print(stdout, &here, "");
	if (json_object_object_get_ex(o, "supervisor", &v)) {
		json_object *av, *vd, *err;

		json_object_object_get_ex(v, "available", &av);
		json_object_object_get_ex(v, "vdso", &vd);
		if (json_object_get_boolean(av))
			printf("static binaries, Go: supervised by enroll (seccomp notification at exec, "
			       "ptrace; %s)",
			       vd ? "wall clock through the synthetic vDSO, entropy, virtual waits" :
				    "entropy");
		else
			printf("static binaries, Go: not supervised: no route on this machine");
		if (json_object_object_get_ex(v, "error", &err))
			printf(" (%s)", json_object_get_string(err));
		putchar('\n');
	}
	if (json_object_object_get_ex(o, "identity", &v)) {
		json_object *k = NULL;

		json_object_object_get_ex(v, "kernel", &k);
		printf("--identity of a run started here: %s\n", k ? json_object_get_string(k) : "?");
	}
	if (json_object_object_get_ex(o, "sched", &v)) {
		json_object *ch, *se, *why;

		json_object_object_get_ex(v, "chaos", &ch);
		printf("--sched chaos: %s", ch ? json_object_get_string(ch) : "?");
		if (json_object_object_get_ex(v, "why", &why) && why)
			printf(" (%s)", json_object_get_string(why));
		printf(" (sched_ext is not used)\n");
		if (json_object_object_get_ex(v, "serial", &se) && se)
			printf("--sched serial: %s\n", json_object_get_string(se));
	}
}

/* The active runs, a line each. */
static void print_runs(json_object *o)
{
	json_object *v;

	if (json_object_object_get_ex(o, "runs", &v)) {
		size_t nr = json_object_array_length(v);

		json_object *others = NULL;

		json_object_object_get_ex(o, "runs_of_others", &others);
		printf("active runs: %zu", nr);
		if (others && json_object_get_int(others))
			printf(" of yours, and %d of other users", json_object_get_int(others));
		putchar('\n');
		for (size_t i = 0; i < nr; i++) {
			json_object *r = json_object_array_get_idx(v, i), *id, *uid, *label, *net, *ref,
				    *adopted, *conn;
			bool waiting;

			json_object_object_get_ex(r, "id", &id);
			json_object_object_get_ex(r, "uid", &uid);
			json_object_object_get_ex(r, "label", &label);
			json_object_object_get_ex(r, "network", &net);
			json_object_object_get_ex(r, "refused", &ref);
			/* adopted after a restart, its client not back yet */
			waiting = json_object_object_get_ex(r, "adopted", &adopted) &&
				  json_object_get_boolean(adopted) &&
				  json_object_object_get_ex(r, "connected", &conn) &&
				  !json_object_get_boolean(conn);
			printf("  run %s uid %s network %s", json_object_get_string(id),
			       json_object_get_string(uid), json_object_get_string(net));
			print_counts(r, ref);
			printf("%s: %s\n",
			       waiting ? " (adopted after a restart, waiting for its client)" : "",
			       json_object_get_string(label));
		}
	}
}

int cmd_status(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	bool json = false;
	json_object *o;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "jh", opts, NULL)) != -1) {
		if (c == 'j')
			json = true;
		else if (c == 'h')
			return usage(stdout), 0;
		else
			return cli_bad_option("hermetic status", "jh", argv);
	}
	if (optind != argc) {
		fprintf(stderr, "hermetic status: unexpected argument '%s'\nTry 'hermetic status --help'.\n",
			argv[optind]);
		return EXIT_USAGE;
	}
	o = fetch_status();
	add_local(o);
	if (json) {
		puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY));
		json_object_put(o);
		return 0;
	}
	print_daemon(o);
	print_here(o);
	print_runs(o);
	json_object_put(o);
	return 0;
}
