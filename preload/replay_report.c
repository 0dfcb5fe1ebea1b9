// SPDX-License-Identifier: MIT
/*
 * Replay's reports: a question the recording cannot answer, said to the
 * process's stderr in words ("call #12 asked getrandom(16 bytes), recorded
 * clock_gettime(CLOCK_REALTIME)") and appended to HERMETIC_REPLAY_REPORT as
 * one line per event for the CLI (cli/replay.c) to read back. No stdio, no
 * malloc: these run inside any wrapper (record.c).
 */
#include <fcntl.h>
#include <string.h>
#include "shim.h"
#include "config.h"
#include "record_int.h"

static const char *clock_name(int32_t id)
{
	static const char *const names[] = {
		"CLOCK_REALTIME",	 "CLOCK_MONOTONIC",	    "CLOCK_PROCESS_CPUTIME_ID",
		"CLOCK_THREAD_CPUTIME_ID", "CLOCK_MONOTONIC_RAW",  "CLOCK_REALTIME_COARSE",
		"CLOCK_MONOTONIC_COARSE", "CLOCK_BOOTTIME",	    "CLOCK_REALTIME_ALARM",
		"CLOCK_BOOTTIME_ALARM",	 NULL,			    "CLOCK_TAI",
	};

	return id >= 0 && id < (int32_t)(sizeof(names) / sizeof(names[0])) ? names[id] : NULL;
}

/* name(arg) or, for names that end in ')', name-without-')' ", arg)". */
static void sb_call(struct sbuf *b, const char *name, const char *arg, const char *arg2)
{
	size_t n = strlen(name);

	if (n && name[n - 1] == ')') {
		for (size_t i = 0; i + 1 < n; i++) {
			char c[2] = { name[i], 0 };

			sb_str(b, c);
		}
		if (arg || arg2)
			sb_str(b, ", ");
	} else {
		sb_str(b, name);
		sb_str(b, "(");
	}
	sb_str(b, arg);
	sb_str(b, arg2);
	sb_str(b, ")");
}

/* What a question or a record is, for people: "getrandom(16 bytes)",
 * "clock_gettime(CLOCK_REALTIME)", "time()", "poll(timed out)". */
void hm_jr_describe(struct sbuf *b, enum hm_jrec_type type, uint8_t call, int32_t id,
		    size_t len, int outcome)
{
	const char *name = hm_jrec_call_name(type, call);
	char num[32];

	switch (type) {
	case HM_JREC_CLOCK:
		if (call == HM_JC_CLOCK_GETTIME || call == HM_JC_SYSCALL || call == HM_JC_OTHER) {
			const char *cn = clock_name(id);

			if (cn) {
				sb_call(b, name, cn, NULL);
			} else {
				hm_fmt_i64(num, sizeof(num), id);
				sb_call(b, name, "clock ", num);
			}
		} else {
			sb_call(b, name, NULL, NULL);
		}
		break;
	case HM_JREC_ENTROPY:
		hm_fmt_u64(num, sizeof(num), len);
		sb_call(b, name, num, " bytes");
		break;
	case HM_JREC_WAIT:
		if (outcome < 0)
			sb_str(b, name);
		else
			sb_call(b, name, outcome ? "timed out" : "event", NULL);
		break;
	case HM_JREC_END:
		sb_str(b, "end");
		break;
	default:
		sb_str(b, hm_jrec_type_name(type));
		break;
	}
}

/* The same for the report file: no spaces ("getrandom(16)", "poll(timed_out)"). */
static void report_field(struct sbuf *b, const char *s)
{
	for (; *s; s++) {
		if (!strncmp(s, " bytes", 6)) {
			s += 5;
			continue;
		}
		if (s[0] == ',' && s[1] == ' ') {
			sb_str(b, ",");
			s++;
			continue;
		}
		sb_str(b, *s == ' ' ? "_" : (char[2]){ *s, 0 });
	}
}

/* A report line's start: "<kind><lineage> <thread> <image> ". */
static void report_head(struct sbuf *l, const char *kind, uint32_t index)
{
	struct hm_stream_ident id;

	hm_stream_ident(index, true, &id);
	sb_str(l, kind);
	sb_str(l, id.lineage);
	sb_str(l, " ");
	sb_u64(l, id.thread);
	sb_str(l, " ");
	sb_hex(l, id.image);
	sb_str(l, " ");
}

/* Append one line to HERMETIC_REPLAY_REPORT with one write(2). */
static void report(const char *line, size_t len)
{
	long fd;

	if (!hm.rep_report)
		return;
	fd = hm_sys6(SYS_openat, AT_FDCWD, (long)hm.rep_report,
		     O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600, 0, 0);
	if (fd < 0)
		return;
	hm_sys(SYS_write, fd, line, len);
	hm_sys(SYS_close, fd, 0, 0);
}

static void sb_comm(struct sbuf *b)
{
	char comm[32];
	long fd, n = 0;

	fd = hm_sys6(SYS_openat, AT_FDCWD, (long)"/proc/self/comm", O_RDONLY | O_CLOEXEC, 0, 0,
		     0);
	if (fd >= 0) {
		n = hm_sys(SYS_read, fd, comm, sizeof(comm) - 1);
		hm_sys(SYS_close, fd, 0, 0);
	}
	if (n <= 0)
		n = 0;
	comm[n] = 0;
	if (n && comm[n - 1] == '\n')
		comm[n - 1] = 0;
	sb_str(b, comm[0] ? comm : "?");
}

/* "process 1.2 thread 0 (python3.11, pid N, comm python3)"; the image's
 * count when the process ran its executable more than once ("bash #3");
 * "... in scope NAME" inside one. */
static void sb_where(struct sbuf *b, uint32_t index)
{
	struct hm_stream_ident id;

	hm_stream_ident(index, true, &id);
	sb_str(b, "process ");
	sb_str(b, id.lineage);
	sb_str(b, " thread ");
	sb_u64(b, id.thread);
	if (hm_scope_name()) {
		sb_str(b, " in scope ");
		sb_str(b, hm_scope_name());
	}
	sb_str(b, " (");
	sb_str(b, hm.exe);
	if (hm.exe_count != 1) {
		sb_str(b, " #");
		sb_u64(b, hm.exe_count);
	}
	sb_str(b, ", pid ");
	sb_u64(b, (uint64_t)hm_sys(SYS_getpid, 0, 0, 0));
	sb_str(b, ", comm ");
	sb_comm(b);
	sb_str(b, ")");
}

/*
 * A question the recording cannot answer. Strict: say so and end the
 * process. Otherwise count a live value (and say so the first time).
 */
__attribute__((noinline, cold)) void hm_jr_mismatch(struct hm_jr_thread *t, uint64_t callno,
						    const char *asked, const char *recorded)
{
	char msg[1024], line[640];
	struct sbuf m = { msg, 0, sizeof(msg) }, l = { line, 0, sizeof(line) };
	int saved = errno;

	m.p[0] = l.p[0] = 0;
	sb_str(&m, hm.jr_strict ? "hermetic: replay mismatch in " : "hermetic: replay diverged in ");
	sb_where(&m, t->index);
	sb_str(&m, ": call #");
	sb_u64(&m, callno);
	sb_str(&m, " asked ");
	sb_str(&m, asked);
	sb_str(&m, ", recorded ");
	sb_str(&m, recorded);
	if (t->rep == RP_BAD && t->bad_why) {
		sb_str(&m, " (");
		sb_str(&m, t->bad_why);
		sb_str(&m, ")");
	}
	if (!hm.jr_strict) {
		t->live++;
		if (t->diverged) {
			errno = saved;
			return;
		}
		t->diverged = true;
		sb_str(&m, "; going on with live values");
	}
	sb_str(&m, "\n");
	hm_sys(SYS_write, 2, msg, m.n);
	if (hm.jr_strict) {
		report_head(&l, "mismatch ", t->index);
		sb_u64(&l, callno);
		sb_str(&l, " ");
		report_field(&l, asked);
		sb_str(&l, " ");
		report_field(&l, recorded);
		sb_str(&l, "\n");
		report(line, l.n);
		hm_sys(SYS_exit_group, HM_EXIT_REPLAY, 0, 0);
	}
	errno = saved;
}

/* "live <lineage> <thread> <image> <count>" for a thread that used live values. */
void hm_jr_report_live(struct hm_jr_thread *t)
{
	char line[HM_LINEAGE_MAX + 80];
	struct sbuf l = { line, 0, sizeof(line) };

	if (!t->live)
		return;
	report_head(&l, "live ", t->index);
	sb_u64(&l, t->live);
	sb_str(&l, "\n");
	report(line, l.n);
	t->live = 0;
}
