// SPDX-License-Identifier: MIT
/*
 * What a journal is assembled from (record.c): the stream files the shim
 * wrote into the spool, and the run's kernel stream that hermeticd hands
 * over as a sealed memfd; and, reading a journal back, the kernel's view of
 * its processes (journal_kernel_each, journal_audit).
 */
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include "util.h"
#include "enroll.h"
#include "record.h"
#include "record_int.h"
#include "hermetic/trace.h"

/* The kernel's stream of the run, mapped. Failures are warnings: the
 * shim's values are worth keeping without it. */
void record_fetch_kstream(struct enroll *e)
{
	struct record *r = e->rec;
	struct hm_run_ref ref = { .run_id = e->run.run_id };
	const char *msg = NULL;
	struct hm_kstream_hdr h;
	struct stat st;
	uint64_t need;
	ssize_t n;

	n = enroll_daemon_call(e, HM_REQ_RUN_KSTREAM, &ref, sizeof(ref), HM_REP_KSTREAM, &r->khdr,
			       sizeof(r->khdr), true, &r->kfd, &msg);
	if (n < 0) {
		eng_warn("cannot read the run's kernel stream: %s", msg);
		return;
	}
	if (r->kfd < 0) {
		eng_warn("hermeticd sent no kernel stream");
		return;
	}
	/* The memfd is sealed; still, believe only what it holds. */
	if (pread(r->kfd, &h, sizeof(h), 0) != sizeof(h) || fstat(r->kfd, &st) < 0 ||
	    h.record_size == 0 || h.record_size > HM_JOURNAL_KREC_MAX ||
	    h.records > (UINT64_MAX - sizeof(h)) / h.record_size ||
	    (need = sizeof(h) + h.records * h.record_size) > (uint64_t)st.st_size) {
		eng_warn("the run's kernel stream from hermeticd is malformed; not recorded");
		close(r->kfd);
		r->kfd = -1;
		return;
	}
	r->khdr = h;
	if (!h.records)
		return;
	r->kmap_len = need;
	r->kmap = mmap(NULL, need, PROT_READ, MAP_PRIVATE, r->kfd, 0);
	if (r->kmap == MAP_FAILED) {
		r->kmap = NULL;
		eng_warn("cannot map the run's kernel stream: %s", strerror(errno));
		return;
	}
	r->krec = (const uint8_t *)r->kmap + sizeof(h);
}

/* Every stream file of one spool directory (dfd, which is taken):
 * "<lineage>.<thread>.<image>.hjs". */
int record_write_dir(struct enroll *e, struct hm_journal_writer *w, int dfd)
{
	struct record *r = e->rec;
	DIR *d;
	struct dirent *de;
	int ret = 0;

	if (dfd < 0)
		return -errno;
	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return -errno;
	}
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name), cut = 0;
		struct stat st;
		int fd, k;

		if (de->d_name[0] == '.' || len < 5 || strcmp(de->d_name + len - 4, ".hjs"))
			continue;
		fd = openat(dirfd(d), de->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
		if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
			r->bad_streams++;
			if (fd >= 0)
				close(fd);
			continue;
		}
		k = hm_journal_write_stream_fd(w, fd, &cut);
		close(fd);
		if (k == -EINVAL || k == -EFBIG) {
			/* No whole header (killed at once), or too big for a section. */
			r->bad_streams++;
			continue;
		}
		if (k < 0) {
			ret = k;
			break;
		}
		r->streams++;
		if (cut) {
			r->cut_streams++;
			r->cut_bytes += cut;
		}
	}
	closedir(d);
	return ret;
}

/* --- the kernel's view of a journal ------------------------------------------------- */

int journal_kernel_each(const struct hm_journal *j, journal_kernel_fn fn, void *userdata)
{
	for (size_t k = 0; k < j->n_kernel; k++) {
		const struct hm_journal_kernel *ch = &j->kernel[k];

		if (ch->record_size < sizeof(struct hm_trace_event))
			continue; /* not the records this hermetic writes */
		for (size_t i = 0; i < ch->n_records; i++) {
			struct hm_trace_event ev;
			int r;

			/* records are packed, not aligned: copy each out */
			memcpy(&ev, ch->records + i * ch->record_size, sizeof(ev));
			r = fn(&ev, userdata);
			if (r)
				return r;
		}
	}
	return 0;
}

static int audit_one(const struct hm_trace_event *ev, void *userdata)
{
	hm_audit_add(userdata, ev);
	return 0;
}

int journal_audit(const struct hm_journal *j, struct hm_audit_acc *a)
{
	size_t records = 0;
	uint32_t cap;
	struct hm_audit_proc *procs;

	for (size_t k = 0; k < j->n_kernel; k++)
		records += j->kernel[k].n_records;
	/* A process needs at least one record; a fork names two. */
	cap = records * 2 + 1 < 65536 ? records * 2 + 1 : 65536;
	procs = calloc(cap, sizeof(*procs));
	if (!procs)
		return -ENOMEM;
	hm_audit_init(a, procs, cap);
	return journal_kernel_each(j, audit_one, a);
}
