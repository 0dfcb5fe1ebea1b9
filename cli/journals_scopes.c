// SPDX-License-Identifier: MIT
/*
 * What 'hermetic journals show' says about a journal's scopes (one test of
 * a suite each, lib/scope.h): name, how it was left, seed, where its clock
 * started, how many streams it holds.
 */
#include <inttypes.h>
#include <json-c/json.h>
#include "util.h"
#include "config.h"
#include "journal.h"
#include "scope.h"
#include "cli.h"

static const char *kind_name(const struct hm_journal_scope *sc)
{
	return sc->kind == HM_JSCOPE_CONT ? "continuation" : "scope";
}

void journals_scopes_text(const struct hm_journal *j)
{
	char t[64];

	for (size_t i = 0; i < j->n_scopes; i++) {
		const struct hm_journal_scope *sc = &j->scopes[i];

		if (sc->kind == HM_JSCOPE_CONT) {
			printf("continued  %s: %zu stream%s of process %s after %s%s\n", sc->dir,
			       sc->n_streams, sc->n_streams == 1 ? "" : "s", sc->root,
			       sc->name[0] ? "scopes inside " : "its scopes", sc->name);
			continue;
		}
		printf("scope      ");
		for (const char *p = sc->name; *p; p++)
			putchar((unsigned char)*p < 0x20 ? '?' : *p);
		printf(": %s, seed %" PRIu64 ", clock from %s, %zu stream%s, entered by process %s\n",
		       hm_scope_status_name(sc->status), sc->seed,
		       hm_format_time(sc->now_ns, t, sizeof(t)), sc->n_streams,
		       sc->n_streams == 1 ? "" : "s", sc->root);
	}
}

json_object *journals_scopes_json(const struct hm_journal *j)
{
	json_object *arr = json_object_new_array();
	char t[64];

	for (size_t i = 0; i < j->n_scopes; i++) {
		const struct hm_journal_scope *sc = &j->scopes[i];
		json_object *o = json_object_new_object();

		json_object_object_add(o, "kind", json_object_new_string(kind_name(sc)));
		json_object_object_add(o, "name", json_object_new_string(sc->name));
		json_object_object_add(o, "status",
				       json_object_new_string(hm_scope_status_name(sc->status)));
		json_object_object_add(o, "seed", json_object_new_uint64(sc->seed));
		json_object_object_add(o, "now", json_object_new_string(hm_format_time(sc->now_ns, t,
											 sizeof(t))));
		json_object_object_add(o, "mono_ns", json_object_new_int64(sc->mono_ns));
		json_object_object_add(o, "dir", json_object_new_string(sc->dir));
		json_object_object_add(o, "root", json_object_new_string(sc->root));
		json_object_object_add(o, "streams", json_object_new_uint64(sc->n_streams));
		json_object_array_add(arr, o);
	}
	return arr;
}
