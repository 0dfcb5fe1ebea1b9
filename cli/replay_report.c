// SPDX-License-Identifier: MIT
/*
 * replay, after CMD ended: what the shim appended to the report file
 * (mismatches under strict replay, values that came live), said on stderr,
 * and the exit status that follows from it (replay.h).
 */
#include <inttypes.h>
#include "util.h"
#include "journal.h"
#include "lineage.h"
#include "cli.h"
#include "record.h"
#include "replay.h"

#define REPORT_SHOW 8

/* What the recording's image ran: the binary the kernel saw its recorded
 * pid exec, else the executable's name the stream holds, else nothing. */
static void proc_name(const struct hm_journal *j, const struct hm_audit_proc *kp, uint32_t nkp,
		      uint64_t image, unsigned thread, char *buf, size_t size)
{
	const struct hm_journal_stream *s = hm_journal_find_stream(j, image, thread);

	buf[0] = 0;
	if (!s)
		s = hm_journal_find_stream(j, image, 0);
	if (!s)
		return;
	snprintf(buf, size, " (%s)", s->sum.hdr.exe);
	for (uint32_t i = 0; i < nkp; i++) {
		if (kp[i].pid != s->sum.hdr.pid)
			continue;
		if (kp[i].path[0] || kp[i].comm[0])
			snprintf(buf, size, " (%s)", kp[i].path[0] ? kp[i].path : kp[i].comm);
		return;
	}
}

/* Read what the shim appended: mismatches (strict) and live values. */
int replay_read_report(struct replay *rp, int code)
{
	struct hm_audit_acc a = {};
	_cleanup_free_ struct hm_audit_proc *kp = journal_audit(rp->j, &a) < 0 ? NULL : a.procs;
	uint32_t nkp = kp ? a.n_procs : 0;
	_cleanup_fclose_ FILE *f = fopen(rp->report, "re");
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;
	uint64_t live = 0, live_threads = 0, mismatches = 0;

	while (f && getline(&line, &cap, f) > 0) {
		char lineage[HM_LINEAGE_MAX + 1], asked[64], recorded[64];
		unsigned thread;
		uint64_t call, count, image;

		line[strcspn(line, "\n")] = 0;
		if (sscanf(line, "mismatch %255s %u %16" SCNx64 " %" SCNu64 " %63s %63s", lineage,
			   &thread, &image, &call, asked, recorded) == 6) {
			char what[160];

			proc_name(rp->j, kp, nkp, image, thread, what, sizeof(what));
			if (mismatches++ < REPORT_SHOW)
				warnx_("replay mismatch: process %s%s thread %u, call #%" PRIu64
				       ": asked %s, recorded %s",
				       lineage, what, thread, call, asked, recorded);
		} else if (sscanf(line, "live %255s %u %16" SCNx64 " %" SCNu64, lineage, &thread,
				  &image, &count) == 4) {
			live += count;
			live_threads++;
		}
	}
	if (mismatches > REPORT_SHOW)
		warnx_("replay: %" PRIu64 " more mismatches", mismatches - REPORT_SHOW);
	if (mismatches) {
		warnx_("replay failed: the program asked for values the journal does not hold "
		       "(--no-strict continues on live values)");
		return EXIT_REPLAY;
	}
	if (rp->strict && code == EXIT_REPLAY) {
		warnx_("replay failed: a process stopped at a replay mismatch (see above)");
		return EXIT_REPLAY;
	}
	if (code) {
		char net[2048] = "";
		size_t used = 0;

		/* The network as this replay had it (the journal's is not taken). */
		if (rp->pol.network)
			used += snprintf(net + used, sizeof(net) - used, " --network=%s", rp->pol.network);
		for (size_t i = 0; i < rp->pol.n_allow && used < sizeof(net); i++)
			used += snprintf(net + used, sizeof(net) - used, " --allow=%s", rp->pol.allow[i]);
		if (rp->pol.no_daemon && used < sizeof(net))
			used += snprintf(net + used, sizeof(net) - used, " --no-daemon");
		if (rp->pol.journal_policy && used < sizeof(net))
			snprintf(net + used, sizeof(net) - used, " --journal-policy");
		warnx_("command exited with status %d; replay again with:\n  hermetic replay %s%s%s%s%s%s",
		       code, rp->strict ? "" : "--no-strict ", rp->source, rp->scope ? " --scope '" : "",
		       rp->scope ? rp->scope : "", rp->scope ? "'" : "", net);
	}
	if (!rp->strict) {
		if (live)
			warnx_("replay: %" PRIu64 " value%s %s live (not in the journal), in %" PRIu64
			       " thread%s",
			       live, live == 1 ? "" : "s", live == 1 ? "was" : "were", live_threads,
			       live_threads == 1 ? "" : "s");
		else
			warnx_("replay: every value came from the journal");
	}
	return code;
}

