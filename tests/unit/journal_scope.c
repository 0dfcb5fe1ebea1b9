// SPDX-License-Identifier: MIT
/* Scope sections (journal format 2.1): the streams after one are its; one
 * identity may appear once per scope; bad scope sections are refused. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include "jstream.h"
#include "journal.h"
#include "lineage.h"
#include "scope.h"
#include "test.h"

struct fill {
	uint8_t s[2][4096];
	size_t l[2];
	struct hm_journal_config cfg;
	struct hm_journal_scope sc[2];
	bool dup_in_scope, bad_dir;
};

static size_t stream(uint8_t *buf, size_t cap, const char *key, uint64_t proc, int n)
{
	struct hm_jstream_header h = { .pid = 77, .tid = 77, .proc = proc, .exe = "python3",
				       .exe_count = 1 };
	struct hm_jstream_enc e;
	uint8_t rnd[8];

	snprintf(h.lineage, sizeof(h.lineage), "%s", key);
	hm_jstream_enc_init(&e, buf, cap, -1, &h);
	for (int i = 0; i < n; i++) {
		memset(rnd, i, sizeof(rnd));
		hm_jstream_put_entropy(&e, HM_JE_GETRANDOM, rnd, sizeof(rnd));
	}
	hm_jstream_put_end(&e, HM_JEND_SCOPE);
	return e.len;
}

static int fill(struct hm_journal_writer *w, void *userdata)
{
	struct fill *f = userdata;
	int r;

	if ((r = hm_journal_write_config(w, &f->cfg)) < 0 ||
	    (r = hm_journal_write_stream(w, f->s[0], f->l[0])) < 0 || /* outside scopes */
	    (r = hm_journal_write_scope(w, &f->sc[0])) < 0 ||
	    (r = hm_journal_write_stream(w, f->s[0], f->l[0])) < 0 ||
	    (r = hm_journal_write_stream(w, f->s[1], f->l[1])) < 0 ||
	    (f->dup_in_scope && (r = hm_journal_write_stream(w, f->s[1], f->l[1])) < 0) ||
	    (r = hm_journal_write_scope(w, &f->sc[1])) < 0 ||
	    (r = hm_journal_write_stream(w, f->s[0], f->l[0])) < 0 ||
	    (r = hm_journal_write_kernel_summary(w, 0, 0)) < 0)
		return r;
	return 0;
}

static int roundtrip(struct fill *f, struct hm_journal **j, char *err, size_t errlen)
{
	struct hm_journal_writer *w;
	int fd = memfd_create("j", 0), r;
	void *p;
	off_t n;

	if (fd < 0 || hm_journal_writer_new(fd, 0, &w) < 0)
		return -EIO;
	r = fill(w, f);
	if (r >= 0)
		r = hm_journal_writer_finish(w);
	hm_journal_writer_free(w);
	if (r < 0) {
		close(fd);
		return r;
	}
	n = lseek(fd, 0, SEEK_END);
	p = mmap(NULL, n, PROT_READ, MAP_PRIVATE, fd, 0);
	r = hm_journal_read(p, n, 0, j, err, errlen);
	munmap(p, n);
	close(fd);
	return r;
}

int main(void)
{
	static struct fill f;
	struct hm_journal *j = NULL;
	char err[256] = "";
	size_t in0 = 0, in1 = 0, out = 0;

	hm_config_init(&f.cfg.cfg);
	f.l[0] = stream(f.s[0], sizeof(f.s[0]), "1", hm_scope_proc("1"), 3);
	f.l[1] = stream(f.s[1], sizeof(f.s[1]), "1.1", hm_scope_proc("1.1"), 2);
	f.sc[0] = (struct hm_journal_scope){ .kind = HM_JSCOPE_SCOPE, .status = HM_SCOPE_FAILED,
					     .seed = 5, .now_ns = 1, .mono_ns = 2,
					     .dir = "scope.1-0-1", .name = "t.py::test_a[x y]",
					     .root = "1" };
	f.sc[1] = (struct hm_journal_scope){ .kind = HM_JSCOPE_CONT, .dir = "cont.1-0+1",
					     .name = "", .root = "1" };
	CHECK("a journal with scopes round-trips", roundtrip(&f, &j, err, sizeof(err)) == 0);
	if (!j) {
		printf("FAIL read: %s\n", err);
		T_EXIT();
	}
	CHECK("format 2.2", j->major == 2 && j->minor == 2);
	CHECK("two scopes, in order", j->n_scopes == 2 && !strcmp(j->scopes[0].name, "t.py::test_a[x y]") &&
					      j->scopes[0].status == HM_SCOPE_FAILED &&
					      j->scopes[0].seed == 5 && !strcmp(j->scopes[1].dir, "cont.1-0+1") &&
					      j->scopes[1].kind == HM_JSCOPE_CONT);
	for (size_t i = 0; i < j->n_streams; i++) {
		in0 += j->streams[i].scope == 0;
		in1 += j->streams[i].scope == 1;
		out += j->streams[i].scope == -1;
	}
	CHECK("the streams after a scope section are its; one identity once per scope",
	      j->n_streams == 4 && in0 == 2 && in1 == 1 && out == 1 && j->scopes[0].n_streams == 2);
	CHECK("streams outside scopes sort first", j->streams[0].scope == -1);
	hm_journal_free(j);
	j = NULL;

	f.dup_in_scope = true;
	CHECK("two streams of one identity in one scope are refused",
	      roundtrip(&f, &j, err, sizeof(err)) == -EBADMSG && strstr(err, "two streams"));
	f.dup_in_scope = false;
	f.sc[0].dir = "../etc";
	CHECK("a scope directory that could leave the replay directory is not written",
	      roundtrip(&f, &j, err, sizeof(err)) == -EINVAL);
	f.sc[0].dir = "scope.1-0-1";
	f.sc[0].name = "bad\tname";
	CHECK("a scope name with a control byte is not written",
	      roundtrip(&f, &j, err, sizeof(err)) == -EINVAL);
	CHECK("hm_journal_scope_dir_valid", hm_journal_scope_dir_valid("scope.1.2-0-3+1") &&
						   !hm_journal_scope_dir_valid("..") &&
						   !hm_journal_scope_dir_valid("a/b") &&
						   !hm_journal_scope_dir_valid(""));
	/* HERMETIC_SCOPE's value round-trips, name percent-encoded */
	{
		struct hm_scope_spec a = { .seed = 9, .mono = -5, .wall = 7, .children0 = 2,
					   .gen0 = 1, .seq = 3 }, b;
		char v[HM_SCOPE_ENV_MAX];

		strcpy(a.name, "tests/x.py::t[a:b c%]");
		strcpy(a.root, "1.2");
		CHECK("HERMETIC_SCOPE round-trips", hm_scope_format(&a, v, sizeof(v)) > 0 &&
							    hm_scope_parse(v, &b) == 0 &&
							    !strcmp(b.name, a.name) && b.mono == -5 &&
							    b.seq == 3 && !strcmp(b.root, "1.2"));
		CHECK("a malformed HERMETIC_SCOPE is refused",
		      hm_scope_parse("v1:1:2:3:4:5:6:1:%zz", &b) < 0 && hm_scope_parse("v2:", &b) < 0);
	}
	{
		char out2[HM_LINEAGE_MAX];

		CHECK("lineage within a scope: the root's later children count from 1",
		      hm_scope_rel_lineage("1.2", 3, "1.2.5.1", out2, sizeof(out2)) == 0 &&
			      !strcmp(out2, "1.2.1") &&
			      hm_scope_rel_lineage("1.2", 3, "1.2.3", out2, sizeof(out2)) == -ENOENT &&
			      hm_scope_rel_lineage("1.2", 3, "1.2", out2, sizeof(out2)) == 0 &&
			      !strcmp(out2, "1"));
	}
	CHECK("a scope's seed depends on the base and the name",
	      hm_scope_seed(1, "a") != hm_scope_seed(2, "a") &&
		      hm_scope_seed(1, "a") != hm_scope_seed(1, "b") &&
		      hm_scope_seed(1, "a") == hm_scope_seed(1, "a"));
	T_EXIT();
}
