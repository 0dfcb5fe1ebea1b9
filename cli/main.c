// SPDX-License-Identifier: MIT
/* hermetic: the CLI. One file per verb; this table dispatches. */
#include "util.h"
#include "cli.h"
#include "engine.h"

const char *program_name = "hermetic";

static int cmd_help(int argc, char **argv);

static const struct verb {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
} verbs[] = {
	{ "enroll", cmd_enroll, "run a command deterministic and offline" },
	{ "replay", cmd_replay, "run a command again on the values a journal recorded" },
	{ "status", cmd_status, "show the daemon, its BPF programs and active runs" },
	{ "journals", cmd_journals, "show what a recorded run's journal holds" },
	{ "hunt", cmd_hunt, "run a command under many seeds: find, verify and explain its flaky failures" },
	{ "check-determinism", cmd_check_determinism,
	  "run a command N times under one seed: the first value that differed" },
	{ "report", cmd_report, "turn enroll --report lines into a Markdown summary" },
	{ "help", cmd_help, "show this help, or a command's (help COMMAND)" },
};

static void usage(FILE *f)
{
	int w = 0;

	for (size_t i = 0; i < ARRAY_SIZE(verbs); i++)
		if ((int)strlen(verbs[i].name) > w)
			w = (int)strlen(verbs[i].name);
	fprintf(f, "Usage: hermetic COMMAND [OPTIONS]\n\nCommands:\n");
	for (size_t i = 0; i < ARRAY_SIZE(verbs); i++)
		fprintf(f, "  %-*s %s\n", w, verbs[i].name, verbs[i].summary);
	fprintf(f, "\nOptions:\n"
		   "  -h, --help     show this help\n"
		   "  -V, --version  show the version\n"
		   "\nRun 'hermetic COMMAND --help' for a command's options.\n"
		   "Environment: HERMETIC_SOCKET overrides the daemon socket (default %s).\n",
		HM_DEFAULT_SOCKET);
}

static const struct verb *find_verb(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(verbs); i++)
		if (!strcmp(name, verbs[i].name))
			return &verbs[i];
	return NULL;
}

static int unknown_command(const char *name)
{
	const char *names[ARRAY_SIZE(verbs)], *near;

	for (size_t i = 0; i < ARRAY_SIZE(verbs); i++)
		names[i] = verbs[i].name;
	near = cli_near_miss(name, names, ARRAY_SIZE(verbs));
	fprintf(stderr, "hermetic: unknown command '%s'", name);
	if (near)
		fprintf(stderr, "; did you mean '%s'?", near);
	fprintf(stderr, "\nRun 'hermetic --help' for the commands.\n");
	return EXIT_USAGE;
}

/* hermetic help [COMMAND]: COMMAND's own help, as 'COMMAND --help'. */
static int cmd_help(int argc, char **argv)
{
	const struct verb *v;
	char *args[] = { NULL, "--help", NULL };

	if (argc < 2 || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	v = find_verb(argv[1]);
	if (!v)
		return unknown_command(argv[1]);
	args[0] = argv[1];
	return v->fn(2, args);
}

/* The engine's warnings, as hermetic's own (engine.h). */
static void warn_line(const char *line)
{
	warnx_("%s", line);
}

int main(int argc, char **argv)
{
	eng_set_warn(warn_line);
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("hermetic %s\n", HERMETIC_VERSION);
		return 0;
	}
	if (find_verb(argv[1]))
		return find_verb(argv[1])->fn(argc - 1, argv + 1);
	if (argv[1][0] == '-') {
		fprintf(stderr, "hermetic: unknown option '%s'\nTry 'hermetic --help'.\n", argv[1]);
		return EXIT_USAGE;
	}
	return unknown_command(argv[1]);
}
