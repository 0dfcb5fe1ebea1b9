// SPDX-License-Identifier: MIT
/*
 * hermetic journals list [--json] [--dir DIR]: your journals in hermeticd's
 * store, or the journal files of a --record directory.
 */
#include <getopt.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <fcntl.h>
#include <sys/stat.h>
#include "util.h"
#include "config.h"
#include "journal.h"
#include "cli.h"
#include "client.h"
#include "record.h"
#include "journals.h"
#include "trust.h"

static json_object *store_list(void)
{
	json_object *all = json_object_new_array();
	struct hm_client conn = { .sock = cli_connect() };

	for (;;) {
		static char buf[HM_MSG_MAX];
		struct hm_journal_list req = { .skip = json_object_array_length(all) };
		const char *msg = "";
		json_object *page;
		ssize_t n;
		size_t k;

		n = cli_call(&conn, HM_REQ_JOURNAL_LIST, &req, sizeof(req), -1, HM_REP_JOURNALS, buf,
			     sizeof(buf) - 1, false, NULL, &msg);
		if (n < 0)
			jl_store_die(n, msg, "list journals");
		buf[n] = 0;
		page = json_tokener_parse(buf);
		if (!page || !json_object_is_type(page, json_type_array))
			die(EXIT_INTERNAL, "hermeticd sent a malformed journal list");
		k = json_object_array_length(page);
		for (size_t i = 0; i < k; i++)
			json_object_array_add(all, json_object_get(json_object_array_get_idx(page, i)));
		json_object_put(page);
		if (!k)
			break;
	}
	close(conn.sock);
	return all;
}

static const char *jget_str(json_object *o, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !v)
		return NULL;
	return json_object_get_string(v);
}

static void print_row(const char *id, const char *time, const char *exit, const char *size,
		      const char *seed, const char *cmd, const char *file)
{
	printf("%-15s %-21s %4s %9s %-20s ", id, time, exit, size, seed);
	jl_put_safe(cmd);
	if (file) {
		printf("  ");
		jl_put_safe(file);
	}
	putchar('\n');
}

static void list_usage(FILE *f)
{
	fprintf(f, "Usage: hermetic journals list [--json] [--dir DIR]\n\n"
		   "List your journals in hermeticd's store, newest first: id, the run's start\n"
		   "time, exit status, size, seed and command. With --dir, list the journals\n"
		   "'enroll --record=DIR' copied to DIR, from DIR/index.json (no daemon needed).\n"
		   "Journals kept only in a directory (pytest --hermetic-record DIR, enroll\n"
		   "--journal-per-scope) are not in the store: the list names the latest such\n"
		   "directories you recorded into.\n\n"
		   "  --json      a JSON array, for scripts; each entry's run id is \"run_id\"\n"
		   "              (the store's entries also carry it as \"id\", deprecated)\n"
		   "  --dir DIR   read DIR/index.json instead of the store\n\n"
		   "Exit status: 0; 65 if index.json is malformed, 66 if it is missing;\n"
		   "69 if hermeticd cannot be reached.\n");
}

static int list_dir(const char *dir, bool json)
{
	char path[4096], sz[32], st_buf[32], seed[32], id[32];
	json_object *arr;
	size_t n;

	if ((size_t)snprintf(path, sizeof(path), "%s/index.json", dir) >= sizeof(path))
		die(EXIT_USAGE, "directory name too long: %s", dir);
	if (access(path, R_OK) < 0)
		die(EXIT_NOINPUT, "Failed to read '%s': %s", path, strerror(errno));
	arr = json_object_from_file(path);
	if (!arr || !json_object_is_type(arr, json_type_array))
		die(EXIT_DATAERR, "'%s' is not a JSON array of journals", path);
	n = json_object_array_length(arr);
	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(arr, i);
		const char *file = e ? jget_str(e, "file") : NULL;
		struct stat st;

		if (!e || !json_object_is_type(e, json_type_object))
			die(EXIT_DATAERR, "'%s': entry %zu is not an object", path, i);
		/* Sizes from the files themselves; a name is one component. */
		if (file && !strchr(file, '/') && (size_t)snprintf(path, sizeof(path), "%s/%s",
								   dir, file) < sizeof(path) &&
		    lstat(path, &st) == 0 && S_ISREG(st.st_mode))
			json_object_object_add(e, "size", json_object_new_int64(st.st_size));
		else
			json_object_object_add(e, "size", NULL);
	}
	if (json) {
		puts(json_object_to_json_string_ext(arr, JSON_C_TO_STRING_PRETTY |
							 JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(arr);
		return 0;
	}
	print_row("RUN", "TIME", "EXIT", "SIZE", "SEED", "COMMAND", "FILE");
	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(arr, i), *v;
		const char *t = jget_str(e, "time"), *cmd = jget_str(e, "command");

		snprintf(id, sizeof(id), "%s", jget_str(e, "run_id") ?: "-");
		snprintf(st_buf, sizeof(st_buf), "%s", jget_str(e, "exit_status") ?: "-");
		snprintf(seed, sizeof(seed), "%s", jget_str(e, "seed") ?: "-");
		if (json_object_object_get_ex(e, "size", &v) && v)
			jl_fmt_bytes(json_object_get_int64(v), sz, sizeof(sz));
		else
			snprintf(sz, sizeof(sz), "missing");
		print_row(id, t ? t : "-", st_buf, sz, seed, cmd ? cmd : "",
			  jget_str(e, "file") ?: "-");
	}
	json_object_put(arr);
	return 0;
}

/* Journals the store does not hold: those kept only in a directory
 * (--journal-per-scope, pytest --hermetic-record DIR, --no-daemon), as the
 * ledger of the journals recorded here names them (trust.h). */
static void dir_only_note(bool empty)
{
	static char dirs[3][4096];
	char index[4096 + 16];
	size_t n = trust_recent_dirs(dirs, ARRAY_SIZE(dirs)), shown = 0;

	for (size_t i = 0; i < n; i++) {
		snprintf(index, sizeof(index), "%s/index.json", dirs[i]);
		if (access(index, R_OK) < 0)
			continue;
		if (!shown++)
			printf("%sJournals you recorded into a directory only (pytest --hermetic-record "
			       "DIR, enroll --journal-per-scope) are not in the store; the latest are in:\n",
			       empty ? "" : "\n");
		printf("  %s  (hermetic journals list --dir ", dirs[i]);
		jl_put_safe(dirs[i]);
		printf(")\n");
	}
	if (!shown && empty)
		printf("Record one with 'hermetic enroll --record'; journals kept only in a directory "
		       "(pytest --hermetic-record DIR, enroll --journal-per-scope) are listed with "
		       "'hermetic journals list --dir DIR'.\n");
}

int jl_journals_list(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "dir", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	const char *dir = NULL;
	bool json = false;
	json_object *arr;
	size_t n;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "jd:h", opts, NULL)) != -1) {
		if (c == 'j')
			json = true;
		else if (c == 'd')
			dir = optarg;
		else if (c == 'h')
			return list_usage(stdout), 0;
		else
			return cli_bad_option("hermetic journals list", "jd:h", argv);
	}
	if (optind != argc)
		return list_usage(stderr), EXIT_USAGE;
	if (dir)
		return list_dir(dir, json);
	arr = store_list();
	n = json_object_array_length(arr);
	/* One key for the run's id everywhere (index.json and --dir say
	 * run_id); "id", the daemon's name, stays for scripts (deprecated). */
	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(arr, i), *v;

		if (json_object_object_get_ex(e, "id", &v) && !json_object_object_get_ex(e, "run_id", NULL))
			json_object_object_add(e, "run_id", json_object_get(v));
	}
	if (json) {
		puts(json_object_to_json_string_ext(arr, JSON_C_TO_STRING_PRETTY |
							 JSON_C_TO_STRING_NOSLASHESCAPE));
	} else if (!n) {
		printf("No journals in hermeticd's store.\n");
		dir_only_note(true);
	} else {
		print_row("ID", "TIME", "EXIT", "SIZE", "SEED", "COMMAND", NULL);
		for (size_t i = 0; i < n; i++) {
			json_object *e = json_object_array_get_idx(arr, i), *v;
			const char *t = jget_str(e, "time"), *cmd = jget_str(e, "command");
			char sz[32] = "-";

			if (json_object_object_get_ex(e, "size", &v) && v)
				jl_fmt_bytes(json_object_get_int64(v), sz, sizeof(sz));
			print_row(jget_str(e, "run_id") ?: "-", t ? t : "-",
				  jget_str(e, "exit_status") ?: "-", sz, jget_str(e, "seed") ?: "-",
				  cmd ? cmd : "", NULL);
		}
		dir_only_note(false);
	}
	json_object_put(arr);
	return 0;
}

