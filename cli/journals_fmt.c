// SPDX-License-Identifier: MIT
/*
 * hermetic journals: formatting a journal's values for people and for JSON,
 * shared by show (journals_show.c) and the store listing (journals.c).
 */
#include <getopt.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <fcntl.h>
#include <libgen.h>
#include <sys/stat.h>
#include <sys/random.h>
#include "util.h"
#include "config.h"
#include "journal.h"
#include "cli.h"
#include "record.h"
#include "journals.h"

/* --- formatting -------------------------------------------------------------------- */

const char *jl_fmt_ns(uint64_t ns, char *buf, size_t size)
{
	static const struct {
		uint64_t ns;
		const char *unit;
	} units[] = { { 3600000000000ULL, "h" }, { 60000000000ULL, "m" }, { 1000000000ULL, "s" },
		      { 1000000ULL, "ms" },	 { 1000ULL, "us" },	  { 1ULL, "ns" } };

	if (ns == 0) {
		snprintf(buf, size, "0");
		return buf;
	}
	for (size_t i = 0; i < ARRAY_SIZE(units); i++) {
		if (ns % units[i].ns == 0) {
			snprintf(buf, size, "%" PRIu64 "%s", ns / units[i].ns, units[i].unit);
			return buf;
		}
		if (ns >= units[i].ns && i >= 2) {
			snprintf(buf, size, "%.3g%s", (double)ns / (double)units[i].ns,
				 units[i].unit);
			return buf;
		}
	}
	snprintf(buf, size, "%" PRIu64 "ns", ns);
	return buf;
}

const char *jl_fmt_time(int64_t ns, char *buf, size_t size)
{
	/* Times far outside the calendar come from hostile or broken
	 * journals: show the number. */
	if (ns < 0)
		snprintf(buf, size, "@%" PRId64 "ns", ns);
	else
		hm_format_time(ns, buf, size);
	return buf;
}

const char *jl_fmt_bytes(uint64_t n, char *buf, size_t size)
{
	if (n < 10000)
		snprintf(buf, size, "%" PRIu64 " B", n);
	else if (n < 10000000)
		snprintf(buf, size, "%.1f kB", n / 1e3);
	else
		snprintf(buf, size, "%.1f MB", n / 1e6);
	return buf;
}

/* Print s so that a shell reads it back as one word. */
void jl_put_shell_word(const char *s)
{
	bool plain = *s;

	for (const char *p = s; *p; p++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./"
			    "=:,+-@%",
			    *p))
			plain = false;
	if (plain) {
		fputs(s, stdout);
		return;
	}
	putchar('\'');
	for (const char *p = s; *p; p++) {
		if (*p == '\'')
			fputs("'\\''", stdout);
		else if ((unsigned char)*p < ' ' || *p == 0x7f)
			printf("\\x%02x", (unsigned char)*p); /* keep the terminal sane */
		else
			putchar(*p);
	}
	putchar('\'');
}

/* Print a journal's string without letting it drive the terminal. */
void jl_put_safe(const char *s)
{
	for (const char *p = s; *p; p++) {
		if ((unsigned char)*p < ' ' || *p == 0x7f)
			printf("\\x%02x", (unsigned char)*p);
		else
			putchar(*p);
	}
}

const char *jl_end_name(const struct hm_jstream_summary *s)
{
	return s->ended ? jl_end_reason_name(s->end_reason) : "no end record";
}


size_t jl_group_procs(const struct hm_journal *j, struct proc *p)
{
	size_t np = 0;

	for (size_t i = 0; i < j->n_streams; i++) {
		const struct hm_jstream_summary *s = &j->streams[i].sum;
		struct proc *cur;

		if (!np || p[np - 1].id != s->hdr.proc)
			p[np++] = (struct proc){ .lineage = s->hdr.lineage, .id = s->hdr.proc,
						 .parent = s->hdr.parent, .first = i };
		cur = &p[np - 1];
		cur->n++;
		/* One stream per thread of each image. */
		cur->threads++;
		if ((uint64_t)s->hdr.gen + 1 > cur->gens)
			cur->gens = (uint64_t)s->hdr.gen + 1;
		cur->clock += s->clock;
		cur->entropy += s->entropy;
		cur->entropy_bytes += s->entropy_bytes;
		cur->wait += s->wait;
		cur->timed_out += s->wait_timed_out;
		cur->lag += s->wait_lag;
		cur->ext += s->ext;
		if (s->hdr.thread == 0 &&
		    (!cur->last_main || s->hdr.gen >= cur->last_main->hdr.gen))
			cur->last_main = s;
	}
	return np;
}

json_object *jl_jstr(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}

json_object *jl_jhex(uint64_t v)
{
	char b[24];

	snprintf(b, sizeof(b), "%016" PRIx64, v);
	return json_object_new_string(b);
}

/* What a process ran, image by image: "env bash x3 python3.11" (main
 * threads' streams, in order; a run of one name counted). */
const char *jl_proc_images(const struct hm_journal *j, const struct proc *p, char *buf,
			       size_t size)
{
	size_t used = 0;
	const char *last = NULL;
	unsigned run = 0;

	buf[0] = 0;
	for (size_t k = p->first; k <= p->first + p->n; k++) {
		const struct hm_jstream_header *h =
			k < p->first + p->n ? &j->streams[k].sum.hdr : NULL;

		if (h && h->thread)
			continue;
		if (h && last && !strcmp(last, h->exe)) {
			run++;
			continue;
		}
		if (last && used < size)
			used += snprintf(buf + used, size - used, "%s%s", used ? " " : "", last);
		if (last && run > 1 && used < size)
			used += snprintf(buf + used, size - used, " x%u", run);
		last = h ? h->exe : NULL;
		run = 1;
	}
	return buf;
}

/* --- records ------------------------------------------------------------------------- */

#define RECORD_HEX_MAX 32

const char *jl_clock_name(int32_t id)
{
	static const char *const names[] = {
		"CLOCK_REALTIME",
		"CLOCK_MONOTONIC",
		"CLOCK_PROCESS_CPUTIME_ID",
		"CLOCK_THREAD_CPUTIME_ID",
		"CLOCK_MONOTONIC_RAW",
		"CLOCK_REALTIME_COARSE",
		"CLOCK_MONOTONIC_COARSE",
		"CLOCK_BOOTTIME",
		"CLOCK_REALTIME_ALARM",
		"CLOCK_BOOTTIME_ALARM",
		NULL,
		"CLOCK_TAI",
	};

	return id >= 0 && (size_t)id < ARRAY_SIZE(names) && names[id] ? names[id] : NULL;
}

/* A reading: wall clocks as ISO 8601, the others as seconds. */
const char *jl_fmt_reading(int32_t id, int64_t ns, char *buf, size_t size)
{
	if (id == 0 || id == 5 || id == 8 || id == 11)
		return jl_fmt_time(ns, buf, size);
	snprintf(buf, size, "%s%" PRIu64 ".%09" PRIu64, ns < 0 ? "-" : "",
		 (ns < 0 ? -(uint64_t)ns : (uint64_t)ns) / 1000000000u,
		 (ns < 0 ? -(uint64_t)ns : (uint64_t)ns) % 1000000000u);
	return buf;
}

void jl_hex(const uint8_t *p, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[p[i] >> 4];
		out[2 * i + 1] = digits[p[i] & 15];
	}
	out[2 * n] = 0;
}

const char *jl_end_reason_name(uint64_t reason)
{
	switch (reason) {
	case HM_JEND_EXIT:
		return "exit";
	case HM_JEND_EXEC:
		return "exec";
	case HM_JEND_THREAD_EXIT:
		return "thread exit";
	case HM_JEND_SCOPE:
		return "scope";
	}
	return "ended";
}

/* Every record of one stream: as text lines, or as a JSON array. The
 * journal was validated whole, so decoding cannot fail here. */
json_object *jl_show_records(const struct hm_journal_stream *st, bool json)
{
	json_object *arr = json ? json_object_new_array() : NULL;
	char a[64], h[2 * RECORD_HEX_MAX + 1], id[32];
	struct hm_jstream_dec d;
	struct hm_jrec r;

	if (hm_jstream_dec_init(&d, st->data, st->len) < 0)
		return arr;
	if (!json) {
		printf("\nstream %s thread %" PRIu32 ": %s #%" PRIu32 ", image %016" PRIx64
		       " (pid %" PRIu32 ", tid %" PRIu32 "): %" PRIu64 " records\n",
		       d.hdr.lineage, d.hdr.thread, d.hdr.exe, d.hdr.exe_count, d.hdr.image,
		       d.hdr.pid, d.hdr.tid, st->sum.records);
	}
	while (hm_jstream_next(&d, &r) > 0) {
		const char *call = hm_jrec_call_name(r.type, r.call);
		json_object *o = json ? json_object_new_object() : NULL;

		if (o) {
			json_object_object_add(o, "n", json_object_new_uint64(r.index));
			json_object_object_add(o, "kind", jl_jstr(hm_jrec_type_name(r.type)));
			if (r.type != HM_JREC_END && r.type != HM_JREC_EXT)
				json_object_object_add(o, "call", jl_jstr(call));
		} else {
			printf("  #%-8" PRIu64 " ", r.index);
		}
		switch (r.type) {
		case HM_JREC_CLOCK:
			if (!jl_clock_name(r.clock.id))
				snprintf(id, sizeof(id), "clock %" PRId32, r.clock.id);
			jl_fmt_reading(r.clock.id, r.clock.ns, a, sizeof(a));
			if (o) {
				json_object_object_add(o, "clock",
						       json_object_new_int64(r.clock.id));
				json_object_object_add(o, "ns", json_object_new_int64(r.clock.ns));
			} else {
				printf("%-22s %-24s %s\n", call,
				       jl_clock_name(r.clock.id) ? jl_clock_name(r.clock.id) : id, a);
			}
			break;
		case HM_JREC_ENTROPY: {
			size_t n = r.entropy.len < RECORD_HEX_MAX ? r.entropy.len : RECORD_HEX_MAX;

			jl_hex(r.entropy.bytes, n, h);
			if (o) {
				json_object_object_add(o, "bytes",
						       json_object_new_uint64(r.entropy.len));
				json_object_object_add(o, "hex", jl_jstr(h));
			} else {
				printf("%-22s %-24s %s%s\n", call,
				       jl_fmt_bytes(r.entropy.len, a, sizeof(a)), h,
				       r.entropy.len > n ? "..." : "");
			}
			break;
		}
		case HM_JREC_WAIT:
			if (o) {
				json_object_object_add(o, "timed_out",
						       json_object_new_boolean(r.wait.timed_out));
				if (r.wait.lag)
					json_object_object_add(o, "lag_bound",
							       json_object_new_boolean(true));
				json_object_object_add(o, "result",
						       json_object_new_int64(r.wait.result));
				json_object_object_add(o, "vtime_ns",
						       json_object_new_uint64(r.wait.vtime_ns));
			} else {
				printf("%-22s %-24s returned %" PRId64 ", monotonic %s\n", call,
				       r.wait.lag ? "timed out (lag bound)" :
				       r.wait.timed_out ? "timed out" : "woken", r.wait.result,
				       jl_fmt_reading(1, (int64_t)r.wait.vtime_ns, a, sizeof(a)));
			}
			break;
		case HM_JREC_END:
			if (o)
				json_object_object_add(o, "reason",
						       jl_jstr(jl_end_reason_name(r.end.reason)));
			else
				printf("%-22s %s\n", "end", jl_end_reason_name(r.end.reason));
			break;
		case HM_JREC_EXT:
			if (o) {
				json_object_object_add(o, "ext_kind",
						       json_object_new_int64(r.ext.kind));
				json_object_object_add(o, "bytes",
						       json_object_new_uint64(r.ext.len));
			} else {
				printf("%-22s kind %u, %zu bytes (from a newer hermetic)\n",
				       "extension", r.ext.kind, r.ext.len);
			}
			break;
		}
		if (o)
			json_object_array_add(arr, o);
	}
	return arr;
}

