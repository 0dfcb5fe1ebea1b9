// SPDX-License-Identifier: MIT
/* cli/lazy_libs.c and cli/lazy_open.c: the hermetic binary's json-c, zstd
 * and zlib, loaded on first use. The tables are empty until a library's
 * first call and filled by it; the trampolines give the libraries' own
 * results; a library or a function that is missing is named, and a
 * trampoline of a missing library ends the process with EXIT_INTERNAL.
 * (This binary links the libraries too, as hermeticd does: the trampolines
 * compiled in here take precedence, and dlopen finds the copy loaded.) */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include "../../cli/lazy_open.c"
#include "../../cli/lazy_libs.c"
#include "test.h"

const char *program_name = "hermetic";

void die(int code, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", program_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(code);
}

/* In a child: point zstd's table at a library that does not exist, call a
 * trampoline. Its exit status, and its message in msg. */
static int missing_library_child(char *msg, size_t size)
{
	int pipefd[2], status = -1;
	size_t got = 0;
	ssize_t n;
	pid_t pid;

	fflush(stdout); /* the child's exit flushes its copy */
	if (pipe(pipefd) < 0 || (pid = fork()) < 0)
		return -1;
	if (pid == 0) {
		(void)dup2(pipefd[1], 2);
		/* The parent loaded zstd already: the child starts as a process
		 * that has not, with a SONAME nothing provides. */
		libs[LAZY_ZSTD].once = (pthread_once_t)PTHREAD_ONCE_INIT;
		libs[LAZY_ZSTD].err = 0;
		memset(zstd.slot, 0, sizeof(zstd.slot));
		libs[LAZY_ZSTD].lib.soname = "libhermetic-no-such-library.so.7";
		ZSTD_freeCCtx(ZSTD_createCCtx());
		_exit(0); /* not reached: the trampoline died */
	}
	close(pipefd[1]);
	while (got < size - 1 && (n = read(pipefd[0], msg + got, size - 1 - got)) > 0)
		got += (size_t)n;
	msg[got] = 0;
	close(pipefd[0]);
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1000 + status;
}

int main(void)
{
	const char *nothing[] = { "hermetic_no_such_function" }, *one[] = { "inflateEnd" };
	void *slot[1] = { (void *)1 }, *h;
	struct lazy_lib l = { "libhermetic-no-such-library.so.7", "a test", nothing, slot, 1, "" };
	unsigned char packed[128], plain[64];
	char out[4096], msg[512];
	ZSTD_inBuffer in;
	ZSTD_outBuffer zo;
	ZSTD_CCtx *cc;
	ZSTD_DCtx *dc;
	uLongf packed_len = sizeof(packed);
	z_stream z = { 0 };
	json_object *o;
	size_t r;
	int code;

	CHECK("a library that does not exist: -ENOENT, named",
	      lazy_lib_open(&l) == -ENOENT && strstr(l.why, "libhermetic-no-such-library.so.7") &&
		      strstr(l.why, "a test needs"));
	l.soname = SONAME_Z;
	CHECK("a function the library lacks: -ENOENT, named, the table left empty",
	      lazy_lib_open(&l) == -ENOENT && strstr(l.why, "hermetic_no_such_function") &&
		      strstr(l.why, SONAME_Z) && slot[0] == NULL);
	l.names = one;
	h = dlopen(SONAME_Z, RTLD_NOW | RTLD_NOLOAD);
	CHECK("a function the library has: its address",
	      lazy_lib_open(&l) == 0 && h && slot[0] == dlsym(h, "inflateEnd"));

	CHECK("the build's SONAMEs are versioned names",
	      !strncmp(SONAME_JSON_C, "libjson-c.so.", 13) && !strncmp(SONAME_ZSTD, "libzstd.so.", 11) &&
		      !strncmp(SONAME_Z, "libz.so.", 8));
	CHECK("no table is filled before its library's first call",
	      !jsonc.f.json_object_new_object && !zstd.f.ZSTD_createCCtx && !zlib.f.inflate);

	o = json_object_new_object();
	json_object_object_add(o, "k", json_object_new_int64(-5));
	json_object_object_add(o, "s", json_object_new_string_len("abc", 2));
	CHECK("json-c through the trampolines",
	      !strcmp(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN), "{\"k\":-5,\"s\":\"ab\"}"));
	json_object_put(o);
	o = json_tokener_parse("[1, true, \"x\"]");
	CHECK("json-c parses through the trampolines",
	      o && json_object_array_length(o) == 3 &&
		      json_object_get_boolean(json_object_array_get_idx(o, 1)));
	json_object_put(o);
	CHECK("json-c's table is filled by its first call, and only it",
	      jsonc.f.json_object_new_object && jsonc.f.json_tokener_parse && !zstd.f.ZSTD_createCCtx &&
		      !zlib.f.inflate);

	cc = ZSTD_createCCtx();
	in = (ZSTD_inBuffer){ "hello, hello, hello", 19, 0 };
	zo = (ZSTD_outBuffer){ packed, sizeof(packed), 0 };
	r = ZSTD_compressStream2(cc, &zo, &in, ZSTD_e_end);
	ZSTD_freeCCtx(cc);
	dc = ZSTD_createDCtx();
	in = (ZSTD_inBuffer){ packed, zo.pos, 0 };
	zo = (ZSTD_outBuffer){ plain, sizeof(plain), 0 };
	CHECK("zstd round trip through the trampolines",
	      r == 0 && !ZSTD_isError(ZSTD_decompressStream(dc, &zo, &in)) && zo.pos == 19 &&
		      !memcmp(plain, "hello, hello, hello", 19) &&
		      ZSTD_getFrameContentSize(packed, in.size) == 19);
	ZSTD_freeDCtx(dc);

	/* compress(): this binary's own libz (not a trampoline) makes a stream. */
	CHECK("zlib inflates through the trampolines",
	      compress(packed, &packed_len, (const Bytef *)"git object", 10) == Z_OK &&
		      inflateInit(&z) == Z_OK &&
		      (z.next_in = packed, z.avail_in = (uInt)packed_len, z.next_out = (Bytef *)out,
		       z.avail_out = sizeof(out), inflate(&z, Z_FINISH)) == Z_STREAM_END &&
		      z.total_out == 10 && !memcmp(out, "git object", 10) && inflateEnd(&z) == Z_OK);
	CHECK("lazy_load: each library loaded",
	      !lazy_load(LAZY_JSONC) && !lazy_load(LAZY_ZSTD) && !lazy_load(LAZY_ZLIB));

	code = missing_library_child(msg, sizeof(msg));
	printf("# %s", msg);
	CHECK("a missing library ends hermetic at its first call: EXIT_INTERNAL, naming it",
	      code == EXIT_INTERNAL && strstr(msg, "hermetic: cannot load libhermetic-no-such-library.so.7") &&
		      strstr(msg, "journals"));
	T_EXIT();
}
