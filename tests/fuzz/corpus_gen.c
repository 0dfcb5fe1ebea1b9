// SPDX-License-Identifier: MIT
/*
 * Seeds for journal_fuzz: one valid input per mode (see journal_fuzz.c),
 * written as DIR/seed-N. Usage: corpus_gen DIR
 */
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <zstd.h>
#include "journal.h"
#include "jstream.h"
#include "util.h"

static uint8_t stream[8192];
static size_t stream_len;

static int fill(struct hm_journal_writer *w, void *userdata)
{
	static char *argv[] = { "python3", "t.py", NULL };
	static struct hm_journal_kv opts[] = { { "fs", "isolate" } };
	static struct hm_journal_kv fields[] = { { HM_FP_HOSTNAME, "ci" },
						 { HM_FP_KERNEL, "6.18" } };
	static struct hm_journal_kv env[] = { { "TZ", "UTC" }, { "HOME", NULL } };
	struct hm_journal_config c = { .argc = 2, .argv = argv, .n_opts = 1, .opts = opts };
	struct hm_journal_fingerprint f = { 2, fields, 2, env };
	struct hm_journal_exit e = { .status = 1, .wall_ns = 5 };
	uint8_t krec[2][16] = { { 1 }, { 2 } };
	/* a scope (2.1) holding a stream of the same identity */
	struct hm_journal_scope sc = { .kind = HM_JSCOPE_SCOPE, .status = 2, .seed = 3,
				       .dir = "scope.1-0-1", .name = "t::x", .root = "1" };
	int r;

	hm_config_init(&c.cfg);
	if ((r = hm_journal_write_config(w, &c)) < 0 ||
	    (r = hm_journal_write_fingerprint(w, &f)) < 0 ||
	    (r = hm_journal_write_stream(w, stream, stream_len)) < 0 ||
	    (r = hm_journal_write_scope(w, &sc)) < 0 ||
	    (r = hm_journal_write_stream(w, stream, stream_len)) < 0 ||
	    (r = hm_journal_write_kernel(w, 16, krec, 2)) < 0 ||
	    (r = hm_journal_write_kernel_summary(w, 2, 0)) < 0 ||
	    (r = hm_journal_write_exit(w, &e)) < 0)
		return r;
	return 0;
}

static int put(const char *dir, int n, uint8_t mode, const void *p, size_t len)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/seed-%d", dir, n);
	f = fopen(path, "we");
	if (!f)
		return -1;
	fputc(mode, f);
	fwrite(p, 1, len, f);
	return fclose(f);
}

int main(int argc, char **argv)
{
	struct hm_jstream_header h = { .lineage = "1.2", .thread = 1, .proc = 7, .exe = "python3", .exe_count = 1 };
	struct hm_jstream_enc e;
	struct hm_journal_writer *w;
	uint8_t rnd[16] = { 7 }, *z, *p;
	size_t zlen, plen;
	struct stat st;
	int fd;

	if (argc != 2)
		return 2;
	mkdir(argv[1], 0755);
	hm_jstream_enc_init(&e, stream, sizeof(stream), -1, &h);
	for (int i = 0; i < 20; i++) {
		hm_jstream_put_clock(&e, HM_JC_CLOCK_GETTIME, i % 2, 1000 + i * 1000);
		hm_jstream_put_clock(&e, HM_JC_TIME, -7, i);
	}
	hm_jstream_put_entropy(&e, HM_JE_GETRANDOM, rnd, sizeof(rnd));
	hm_jstream_put_wait(&e, HM_JW_POLL, true, 0, 123456);
	hm_jstream_put_end(&e, HM_JEND_THREAD_EXIT);
	stream_len = e.len;

	fd = memfd_create("seed", MFD_CLOEXEC);
	if (fd < 0 || hm_journal_writer_new(fd, 0, &w) < 0 || fill(w, NULL) < 0 ||
	    hm_journal_writer_finish(w) < 0 || fstat(fd, &st) < 0)
		return 1;
	hm_journal_writer_free(w);
	zlen = st.st_size;
	z = malloc(zlen);
	if (pread(fd, z, zlen, 0) != (ssize_t)zlen)
		return 1;
	p = malloc(1 << 20);
	plen = ZSTD_decompress(p, 1 << 20, z, zlen);
	if (ZSTD_isError(plen))
		return 1;
	/* mode 2 takes the sections only: no header, no end section. */
	if (put(argv[1], 0, 0, z, zlen) || put(argv[1], 1, 1, p, plen) ||
	    put(argv[1], 2, 2, p + 16, plen - 32) || put(argv[1], 3, 3, stream, stream_len))
		return 1;
	return 0;
}
