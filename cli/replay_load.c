// SPDX-License-Identifier: MIT
/*
 * hermetic replay's journal: a file (its bytes read once, the ones whose
 * digest trust.c checks), or an id in hermeticd's store, which hands its
 * owner a read-only descriptor. Dies with replay's statuses: EXIT_NOINPUT
 * when it cannot be had, EXIT_DATAERR when it is malformed.
 */
#include <sys/stat.h>
#include "util.h"
#include "journal.h"
#include "cli.h"
#include "client.h"
#include "trust.h"
#include "replay.h"

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

/* A journal from hermeticd's store: it hands its owner a read-only fd. */
static struct hm_journal *fetch(struct replay *rp, const char *id_s, char *err, size_t errlen,
				int *ret)
{
	struct hm_journal_ref ref = {};
	struct hm_journal_info info;
	struct hm_journal *j = NULL;
	const char *msg = NULL;
	_cleanup_free_ uint8_t *buf = NULL;
	struct hm_client conn;
	int fd = -1;
	size_t got = 0;
	struct stat st;
	ssize_t n;

	if (hm_parse_u64(id_s, &ref.id) < 0)
		die(EXIT_NOINPUT, "Failed to read journal '%s': not a file, nor a store id", id_s);
	conn = (struct hm_client){ .sock = cli_connect() };
	n = cli_call(&conn, HM_REQ_JOURNAL_FETCH, &ref, sizeof(ref), -1, HM_REP_JOURNAL, &info,
		     sizeof(info), true, &fd, &msg);
	close(conn.sock);
	if (n < 0)
		die(EXIT_NOINPUT, "Failed to fetch journal %s from hermeticd: %s", id_s, msg);
	if (fd < 0)
		die(EXIT_INTERNAL, "hermeticd sent no journal descriptor");
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > HM_JOURNAL_MAX_SIZE)
		die(EXIT_NOINPUT, "Failed to fetch journal %s: not a regular file of sane size", id_s);
	buf = malloc(st.st_size ? st.st_size : 1);
	if (!buf)
		die(EXIT_INTERNAL, "out of memory");
	while (got < (size_t)st.st_size) {
		n = pread(fd, buf + got, st.st_size - got, got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += n;
	}
	close(fd);
	*ret = hm_journal_read(buf, got, 0, &j, err, errlen);
	rp->bytes = buf;
	rp->len = got;
	buf = NULL;
	return j;
}

struct hm_journal *replay_load(struct replay *rp, const char *src)
{
	struct hm_journal *j = NULL;
	char err[256] = "";
	struct stat st;
	int r;

	if (stat(src, &st) == 0 || !all_digits(src)) {
		/* The very bytes parsed are the ones whose digest is checked. */
		r = trust_read_file(src, HM_JOURNAL_MAX_SIZE, &rp->bytes, &rp->len, err, sizeof(err));
		if (r == 0)
			r = hm_journal_read(rp->bytes, rp->len, 0, &j, err, sizeof(err));
	} else {
		j = fetch(rp, src, err, sizeof(err), &r);
	}
	if (r == -EBADMSG || r == -EFBIG || r == -EPROTONOSUPPORT)
		die(EXIT_DATAERR, "Failed to read journal '%s': %s", src, err);
	if (r < 0)
		die(r == -ENOMEM ? EXIT_INTERNAL : EXIT_NOINPUT, "Failed to read journal '%s': %s",
		    src, err[0] ? err : strerror(-r));
	return j;
}
