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

#define SHOWN_SCOPES 20 /* of those not failed; --json lists every one */

static void scope_line(const struct hm_journal_scope *sc)
{
	char t[64];

	printf("scope      ");
	for (const char *p = sc->name; *p; p++)
		putchar((unsigned char)*p < 0x20 ? '?' : *p);
	printf(": %s, seed %" PRIu64 ", clock from %s, %zu stream%s, entered by process %s\n",
	       hm_scope_status_name(sc->status), sc->seed, hm_format_time(sc->now_ns, t, sizeof(t)),
	       sc->n_streams, sc->n_streams == 1 ? "" : "s", sc->root);
}

/* Failed scopes first (what a reader looks for), then open ones, then the
 * others, each in the journal's order; at most SHOWN_SCOPES that did not
 * fail. Continuations with streams follow; those without are one line. */
void journals_scopes_text(const struct hm_journal *j)
{
	static const enum hm_scope_status order[] = { HM_SCOPE_FAILED, HM_SCOPE_OPEN,
						      HM_SCOPE_PASSED, HM_SCOPE_SKIPPED };
	size_t count[HM_SCOPE_STATUS_MAX + 1] = { 0 }, scopes = 0, shown = 0, empty = 0;

	for (size_t i = 0; i < j->n_scopes; i++)
		if (j->scopes[i].kind != HM_JSCOPE_CONT && j->scopes[i].status <= HM_SCOPE_STATUS_MAX) {
			count[j->scopes[i].status]++;
			scopes++;
		}
	if (scopes > 1) {
		const char *sep = "";

		printf("scopes     %zu:", scopes);
		for (size_t k = 0; k < ARRAY_SIZE(order); k++)
			if (count[order[k]]) {
				printf("%s %zu %s", sep, count[order[k]], hm_scope_status_name(order[k]));
				sep = ",";
			}
		putchar('\n');
	}
	for (size_t k = 0; k < ARRAY_SIZE(order); k++)
		for (size_t i = 0; i < j->n_scopes; i++) {
			const struct hm_journal_scope *sc = &j->scopes[i];

			if (sc->kind == HM_JSCOPE_CONT || sc->status != order[k])
				continue;
			if (sc->status != HM_SCOPE_FAILED && shown++ >= SHOWN_SCOPES)
				continue;
			scope_line(sc);
		}
	if (shown > SHOWN_SCOPES)
		printf("           ... and %zu more that did not fail ('journals show --json' lists "
		       "every scope)\n",
		       shown - SHOWN_SCOPES);
	for (size_t i = 0; i < j->n_scopes; i++) {
		const struct hm_journal_scope *sc = &j->scopes[i];

		if (sc->kind != HM_JSCOPE_CONT)
			continue;
		if (!sc->n_streams) {
			empty++;
			continue;
		}
		printf("continued  %s: %zu stream%s of process %s after %s%s\n", sc->dir, sc->n_streams,
		       sc->n_streams == 1 ? "" : "s", sc->root, sc->name[0] ? "scopes inside " : "its scopes",
		       sc->name);
	}
	if (empty)
		printf("continued  %zu time%s between scopes with no streams\n", empty,
		       empty == 1 ? "" : "s");
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
