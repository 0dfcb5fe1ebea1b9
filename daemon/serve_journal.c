// SPDX-License-Identifier: MIT
/*
 * The journal store requests: upload, store, list, fetch, remove, gc.
 * Every one works only in the peer's own store directory (store.c). A
 * journal comes in an upload buffer the daemon made (its own memfd, so no
 * read or close of it can wait on anyone), is sealed and checked here,
 * and is copied on the store thread (store_worker.c), whose answer
 * hmd_server_store_done() relays.
 */
#include <inttypes.h>
#include "util.h"
#include "daemon.h"
#include "request.h"

static int store_unavailable(struct hmd *d, struct hmd_conn *c, uint32_t seq)
{
	return hmd_reply_error(c, seq, ENOSYS, "the journal store is unavailable: %s", d->store.why);
}

/* "1.0 GiB", "12.0 MiB", "512 KiB": for messages. */
static const char *size_str(uint64_t v, char *buf, size_t size)
{
	if (v >= (1ULL << 30))
		snprintf(buf, size, "%.1f GiB", v / 1073741824.0);
	else if (v >= (1ULL << 20))
		snprintf(buf, size, "%.1f MiB", v / 1048576.0);
	else
		snprintf(buf, size, "%" PRIu64 " KiB", (v + 1023) / 1024);
	return buf;
}

static void serve_upload(struct hmd *d, struct hmd_conn *c, const struct hmd_req *req)
{
	struct hm_journal_upload rep = { .size = req->upload.size };
	char a[32], b[32], m[32];
	uint64_t old = c->upload_fd >= 0 ? c->upload_size : 0;
	int fd;

	if (d->store.fd < 0)
		return (void)store_unavailable(d, c, req->seq);
	if (req->upload.size >= 4 && req->upload.size <= hmd_store_max_journal(&d->store) &&
	    hmd_upload_charge(d, c->uid, req->upload.size, old) < 0)
		/* Checked before the buffer is made: refusing costs nothing. */
		return (void)hmd_reply_error(
			c, req->seq, EDQUOT,
			"uid %u holds %s of upload buffers; %s more passes the limit, %s "
			"(hermeticd --max-upload-bytes-per-user): store or close other uploads",
			(unsigned)c->uid, size_str(hmd_upload_held(d, c->uid), a, sizeof(a)),
			size_str(req->upload.size, b, sizeof(b)),
			size_str(d->max_upload_per_user, m, sizeof(m)));
	fd = hmd_store_upload_buffer(&d->store, req->upload.size);
	if (fd == -EFBIG)
		return (void)hmd_reply_error(c, req->seq, EFBIG,
					     "the journal has %" PRIu64 " bytes; the store takes 4 to %" PRIu64
					     " (hermeticd --store-max-bytes, at most 256 MiB)",
					     req->upload.size, hmd_store_max_journal(&d->store));
	if (fd < 0) {
		/* Back to what was charged before: the old buffer stays. */
		hmd_upload_release(d, c->uid, req->upload.size);
		if (old)
			hmd_upload_charge(d, c->uid, old, 0);
		return (void)hmd_reply_error(c, req->seq, -fd, "cannot make an upload buffer: %s",
					     strerror(-fd));
	}
	if (c->upload_fd >= 0)
		close(c->upload_fd); /* its bytes were released by the charge above */
	c->upload_fd = fd;
	c->upload_size = req->upload.size;
	hmd_reply(c, HM_REP_UPLOAD, req->seq, &rep, sizeof(rep), fd);
}

static void serve_store(struct hmd *d, int id, const struct hmd_req *req)
{
	struct hmd_conn *c = &d->conns[id];
	struct hmd_store_job *job;
	uint64_t size;
	char why[200];
	int err;

	if (d->store.fd < 0)
		return (void)store_unavailable(d, c, req->seq);
	/* Only a journal of one's own run, live or ended a short while ago:
	 * the store is keyed by run id, and nobody may claim another's. */
	if (!hmd_runs_owned_recently(d, req->store.run_id, c->uid))
		return (void)hmd_reply_error(c, req->seq, ENOENT,
					     "no run %" PRIu64 " of yours (live or ended in the last "
					     "%llu min)",
					     req->store.run_id, HMD_ENDED_TTL_NS / 60000000000ULL);
	if (c->upload_fd < 0)
		return (void)hmd_reply_error(c, req->seq, EBADF,
					     "no journal to store: write it into a JOURNAL_UPLOAD "
					     "buffer first (descriptors sent along are not taken)");
	err = hmd_store_check_upload(&d->store, c->upload_fd, &size, why, sizeof(why));
	if (err < 0) {
		close(c->upload_fd);
		c->upload_fd = -1;
		hmd_upload_release(d, c->uid, c->upload_size);
		return (void)hmd_reply_error(c, req->seq, -err, "%s", why);
	}
	job = calloc(1, sizeof(*job));
	if (!job)
		return (void)hmd_reply_error(c, req->seq, ENOMEM, "out of memory");
	*job = (struct hmd_store_job){ .uid = c->uid,
				       .req = req->store,
				       .fd = c->upload_fd,
				       .size = size,
				       .charged = c->upload_size,
				       .conn_id = id,
				       .conn_gen = c->gen,
				       .seq = req->seq };
	if ((err = hmd_store_worker_submit(&d->store, job)) < 0) {
		free(job); /* the buffer stays the connection's: it may retry */
		if (err == -EBUSY)
			return (void)hmd_reply_error(c, req->seq, EBUSY,
						     "the journal store is busy with uploads (yours "
						     "or everyone's); retry shortly");
		return (void)hmd_reply_error(c, req->seq, -err, "cannot queue the journal: %s",
					     strerror(-err));
	}
	c->upload_fd = -1; /* the job's now */
}

/* Relay the store thread's answers to whoever asked, if still connected. */
void hmd_server_store_done(struct hmd *d)
{
	struct hmd_store_job *job;

	while ((job = hmd_store_worker_done(&d->store))) {
		struct hmd_conn *c = &d->conns[job->conn_id];

		/* The worker has closed the buffer: its bytes are free again. */
		hmd_upload_release(d, job->uid, job->charged);

		if (c->fd >= 0 && c->gen == job->conn_gen) {
			if (job->err < 0)
				hmd_reply_error(c, job->seq, -job->err, "%s", job->why);
			else
				hmd_reply(c, HM_REP_OK, job->seq, NULL, 0, -1);
		}
		free(job);
	}
}

static void serve_list(struct hmd *d, struct hmd_conn *c, const struct hmd_req *req)
{
	static char out[HM_MSG_MAX - sizeof(struct hm_hdr)];
	ssize_t n = hmd_store_list(&d->store, c->uid, req->list.skip, out, sizeof(out));

	if (n == -ENOSYS)
		return (void)store_unavailable(d, c, req->seq);
	if (n < 0)
		return (void)hmd_reply_error(c, req->seq, -n, "cannot list journals: %s", strerror(-n));
	hmd_reply(c, HM_REP_JOURNALS, req->seq, out, n, -1);
}

static void serve_fetch(struct hmd *d, struct hmd_conn *c, const struct hmd_req *req)
{
	struct hm_journal_info info = { .id = req->jref.id };
	int fd = -1, err = hmd_store_fetch(&d->store, c->uid, req->jref.id, &fd, &info.size);

	if (err == -ENOSYS)
		return (void)store_unavailable(d, c, req->seq);
	if (err < 0)
		return (void)hmd_reply_error(c, req->seq, err == -ENOENT ? ENOENT : -err,
					     "no journal %" PRIu64 " of yours%s%s", req->jref.id,
					     err == -ENOENT ? "" : ": ",
					     err == -ENOENT ? "" : strerror(-err));
	hmd_reply(c, HM_REP_JOURNAL, req->seq, &info, sizeof(info), fd);
	close(fd);
}

static void serve_rm_gc(struct hmd *d, struct hmd_conn *c, const struct hmd_req *req)
{
	struct hm_journal_count cnt = {};
	int err;

	if (req->type == HM_REQ_JOURNAL_RM)
		err = hmd_store_rm(&d->store, c->uid, req->jref.id, &cnt);
	else
		err = hmd_store_gc(&d->store, c->uid, req->gc.older_than_s, &cnt);
	if (err == -ENOSYS)
		return (void)store_unavailable(d, c, req->seq);
	if (err == -ENOENT && req->type == HM_REQ_JOURNAL_RM)
		return (void)hmd_reply_error(c, req->seq, ENOENT, "no journal %" PRIu64 " of yours",
					     req->jref.id);
	if (err < 0)
		return (void)hmd_reply_error(c, req->seq, -err, "cannot remove journals: %s",
					     strerror(-err));
	hmd_reply(c, HM_REP_COUNT, req->seq, &cnt, sizeof(cnt), -1);
}

void hmd_serve_journal(struct hmd *d, int id, const struct hmd_req *req)
{
	struct hmd_conn *c = &d->conns[id];

	switch (req->type) {
	case HM_REQ_JOURNAL_UPLOAD:
		/* A memfd of the daemon's, at most the store's size cap; one per
		 * connection. */
		serve_upload(d, c, req);
		break;
	case HM_REQ_JOURNAL_STORE:
		/* Writes only into the peer's own store directory, only a journal
		 * of the peer's own run, copied (never linked) from the peer's
		 * sealed upload buffer, size-capped, retention applied. */
		serve_store(d, id, req);
		break;
	case HM_REQ_JOURNAL_LIST:
		/* Reads only the peer's own store directory. */
		serve_list(d, c, req);
		break;
	case HM_REQ_JOURNAL_FETCH:
		/* An O_RDONLY fd of a file in the peer's own store directory. */
		serve_fetch(d, c, req);
		break;
	case HM_REQ_JOURNAL_RM:
	case HM_REQ_JOURNAL_GC:
		/* Removes only files in the peer's own store directory. */
		serve_rm_gc(d, c, req);
		break;
	}
}
