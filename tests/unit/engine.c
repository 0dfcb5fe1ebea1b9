// SPDX-License-Identifier: MIT
/* The engine's contract (engine/engine.h): a failure is -errno with its
 * reason, a warning reaches the verb's sink and nothing else; and the
 * private temporary directory comes and goes without dying or printing. */
#include <errno.h>
#include <sys/stat.h>
#include "util.h"
#include "engine.h"
#include "tmpdir.h"
#include "test.h"

static char last[256];
static int n_warn;

static void sink(const char *line)
{
	snprintf(last, sizeof(last), "%s", line);
	n_warn++;
}

int main(void)
{
	struct eng_error err = { 0 };
	struct run_tmpdir t;
	struct stat st;

	CHECK("eng_fail returns -code and keeps the reason",
	      eng_fail(&err, ENOENT, "Failed to open '%s': %s", "x", strerror(ENOENT)) == -ENOENT &&
		      err.code == ENOENT &&
		      !strcmp(err.msg, "Failed to open 'x': No such file or directory"));
	CHECK("eng_fail without an error struct still returns -code",
	      eng_fail(NULL, EPERM, "ignored") == -EPERM);
	CHECK("eng_fail never returns success for a zero code", eng_fail(&err, 0, "bug") < 0);
	eng_warn("dropped: no sink yet");
	CHECK("no sink: a warning is dropped", n_warn == 0);
	eng_set_warn(sink);
	eng_warn("kept root: %s", "/tmp/hm-x");
	CHECK("the sink gets the line, no prefix, no newline",
	      n_warn == 1 && !strcmp(last, "kept root: /tmp/hm-x"));
	setenv("TMPDIR", "/nonexistent-hermetic-test", 1);
	CHECK("a missing $TMPDIR is an error with a reason, not an exit",
	      run_tmpdir_make(&t, "hermetic-unit", "a test directory", &err) < 0 &&
		      strstr(err.msg, "/nonexistent-hermetic-test"));
	setenv("TMPDIR", "/tmp", 1);
	CHECK("a private directory is made 0700",
	      run_tmpdir_make(&t, "hermetic-unit", "a test directory", &err) == 0 &&
		      stat(t.path, &st) == 0 && (st.st_mode & 0777) == 0700);
	run_tmpdir_remove(&t);
	CHECK("and removed", stat(t.path, &st) < 0 && errno == ENOENT);
	T_EXIT();
}
