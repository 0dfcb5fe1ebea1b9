// SPDX-License-Identifier: MIT
/* hermetic: the CLI. One file per verb; this table dispatches. */
#include "util.h"
#include "cli.h"

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
	{ "help", cmd_help, "show this help" },
};

static void usage(FILE *f)
{
	fprintf(f, "Usage: hermetic COMMAND [OPTIONS]\n\nCommands:\n");
	for (size_t i = 0; i < ARRAY_SIZE(verbs); i++)
		fprintf(f, "  %-9s %s\n", verbs[i].name, verbs[i].summary);
	fprintf(f, "\nOptions:\n"
		   "  -h, --help     show this help\n"
		   "  -V, --version  show the version\n"
		   "\nRun 'hermetic COMMAND --help' for a command's options.\n"
		   "Environment: HERMETIC_SOCKET overrides the daemon socket (default %s).\n",
		HM_DEFAULT_SOCKET);
}

static int cmd_help(int argc, char **argv)
{
	usage(stdout);
	return 0;
}

int main(int argc, char **argv)
{
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
	for (size_t i = 0; i < ARRAY_SIZE(verbs); i++)
		if (!strcmp(argv[1], verbs[i].name))
			return verbs[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "hermetic: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return EXIT_USAGE;
}
