// SPDX-License-Identifier: MIT
/*
 * json-c, zstd and zlib in the hermetic binary, loaded on first use: a
 * function of each library the code calls is defined here under the
 * library's own name (a trampoline), so the callers in cli/, engine/ and
 * lib/ are unchanged; its first call dlopens the library by the SONAME the
 * build read (build/sonames.h, the Makefile) and fills one table of
 * function pointers per library. A run that never writes JSON, a journal or
 * reads a packed git object (most `enroll`s) never loads them, and the
 * dynamic loader no longer opens and relocates them at every start.
 * hermeticd and the unit tests link the libraries as usual and never see
 * this file.
 *
 * Each table's types are the library header's own (__typeof__), and each
 * trampoline is a definition of the header's declaration, so the compiler
 * checks every signature. A call to a function not listed below fails the
 * link of hermetic ("undefined reference"): add one line to the list.
 *
 * A library that cannot be loaded ends hermetic with a message naming it
 * (EXIT_INTERNAL) at the first call, as the dynamic loader ended it at
 * start when the library was linked; a verb that would rather fail before
 * it starts a run asks lazy_load() first (cli/enroll.c).
 */
#include <pthread.h>
#include <json-c/json.h>
#include <zlib.h>
#include <zstd.h>
#include "util.h"
#include "cli.h"
#include "lazy_libs.h"
#include "sonames.h"

/* F(return type, name, (parameters), (arguments)) */
#define JSONC_FNS(F)                                                                                      \
	F(int, json_object_array_add, (struct json_object * o, struct json_object * v), (o, v))           \
	F(struct json_object *, json_object_array_get_idx, (const struct json_object *o, size_t i), (o, i)) \
	F(size_t, json_object_array_length, (const struct json_object *o), (o))                          \
	F(struct json_object *, json_object_from_file, (const char *path), (path))                       \
	F(struct json_object *, json_object_get, (struct json_object * o), (o))                          \
	F(json_bool, json_object_get_boolean, (const struct json_object *o), (o))                         \
	F(int32_t, json_object_get_int, (const struct json_object *o), (o))                               \
	F(int64_t, json_object_get_int64, (const struct json_object *o), (o))                             \
	F(const char *, json_object_get_string, (struct json_object * o), (o))                            \
	F(uint64_t, json_object_get_uint64, (const struct json_object *o), (o))                           \
	F(int, json_object_is_type, (const struct json_object *o, enum json_type t), (o, t))              \
	F(struct json_object *, json_object_new_array, (void), ())                                        \
	F(struct json_object *, json_object_new_boolean, (json_bool b), (b))                              \
	F(struct json_object *, json_object_new_double, (double d), (d))                                  \
	F(struct json_object *, json_object_new_double_s, (double d, const char *s), (d, s))              \
	F(struct json_object *, json_object_new_int, (int32_t i), (i))                                    \
	F(struct json_object *, json_object_new_int64, (int64_t i), (i))                                  \
	F(struct json_object *, json_object_new_object, (void), ())                                       \
	F(struct json_object *, json_object_new_string, (const char *s), (s))                             \
	F(struct json_object *, json_object_new_string_len, (const char *s, const int len), (s, len))     \
	F(struct json_object *, json_object_new_uint64, (uint64_t i), (i))                                \
	F(int, json_object_object_add, (struct json_object * o, const char *k, struct json_object *v),    \
	  (o, k, v))                                                                                      \
	F(struct json_object *, json_object_object_get, (const struct json_object *o, const char *k),     \
	  (o, k))                                                                                         \
	F(json_bool, json_object_object_get_ex,                                                           \
	  (const struct json_object *o, const char *k, struct json_object **v), (o, k, v))                \
	F(int, json_object_put, (struct json_object * o), (o))                                            \
	F(const char *, json_object_to_json_string_ext, (struct json_object * o, int flags), (o, flags))  \
	F(const char *, json_object_to_json_string_length,                                                \
	  (struct json_object * o, int flags, size_t *len), (o, flags, len))                              \
	F(struct json_object *, json_tokener_parse, (const char *s), (s))

#define ZSTD_FNS(F)                                                                                       \
	F(size_t, ZSTD_CCtx_setParameter, (ZSTD_CCtx * c, ZSTD_cParameter p, int v), (c, p, v))           \
	F(size_t, ZSTD_CStreamOutSize, (void), ())                                                        \
	F(size_t, ZSTD_DCtx_setParameter, (ZSTD_DCtx * d, ZSTD_dParameter p, int v), (d, p, v))           \
	F(size_t, ZSTD_compressStream2,                                                                   \
	  (ZSTD_CCtx * c, ZSTD_outBuffer * out, ZSTD_inBuffer * in, ZSTD_EndDirective end),               \
	  (c, out, in, end))                                                                              \
	F(ZSTD_CCtx *, ZSTD_createCCtx, (void), ())                                                       \
	F(ZSTD_DCtx *, ZSTD_createDCtx, (void), ())                                                       \
	F(size_t, ZSTD_decompressStream, (ZSTD_DStream * d, ZSTD_outBuffer * out, ZSTD_inBuffer * in),    \
	  (d, out, in))                                                                                   \
	F(size_t, ZSTD_freeCCtx, (ZSTD_CCtx * c), (c))                                                    \
	F(size_t, ZSTD_freeDCtx, (ZSTD_DCtx * d), (d))                                                    \
	F(const char *, ZSTD_getErrorName, (size_t code), (code))                                         \
	F(unsigned long long, ZSTD_getFrameContentSize, (const void *src, size_t size), (src, size))     \
	F(unsigned, ZSTD_isError, (size_t code), (code))

#define ZLIB_FNS(F)                                                                                       \
	F(int, inflate, (z_streamp s, int flush), (s, flush))                                             \
	F(int, inflateEnd, (z_streamp s), (s))                                                            \
	F(int, inflateInit_, (z_streamp s, const char *version, int size), (s, version, size))

#define NAME_OF(ret, name, params, args) #name,
#define FIELD_OF(ret, name, params, args) __typeof__(name) *name;
#define ONE(ret, name, params, args) +1

/* One library's table: the typed pointers the trampolines call, seen by
 * lazy_lib_open as an array of as many void pointers. */
#define LAZY_TABLE(id, FNS)                                             \
	static const char *const id##_names[] = { FNS(NAME_OF) };        \
	static union {                                                   \
		struct {                                                 \
			FNS(FIELD_OF)                                    \
		} f;                                                     \
		void *slot[0 FNS(ONE)];                                  \
	} id;                                                            \
	_Static_assert(sizeof(id.f) == sizeof(id.slot), #id ": a function pointer is not a void pointer")

LAZY_TABLE(jsonc, JSONC_FNS);
LAZY_TABLE(zstd, ZSTD_FNS);
LAZY_TABLE(zlib, ZLIB_FNS);

static struct lazy_state {
	struct lazy_lib lib;
	pthread_once_t once;
	int err;
} libs[] = {
	[LAZY_JSONC] = { { SONAME_JSON_C, "JSON (reports, journals, hunt)", jsonc_names, jsonc.slot,
			   ARRAY_SIZE(jsonc_names) },
			 PTHREAD_ONCE_INIT, 0 },
	[LAZY_ZSTD] = { { SONAME_ZSTD, "reading and writing journals", zstd_names, zstd.slot,
			  ARRAY_SIZE(zstd_names) },
			PTHREAD_ONCE_INIT, 0 },
	[LAZY_ZLIB] = { { SONAME_Z, "reading git objects (--now's default)", zlib_names, zlib.slot,
			  ARRAY_SIZE(zlib_names) },
			PTHREAD_ONCE_INIT, 0 },
};

/* pthread_once runs a function of no argument: one per library. */
static void open_jsonc(void)
{
	libs[LAZY_JSONC].err = lazy_lib_open(&libs[LAZY_JSONC].lib);
}
static void open_zstd(void)
{
	libs[LAZY_ZSTD].err = lazy_lib_open(&libs[LAZY_ZSTD].lib);
}
static void open_zlib(void)
{
	libs[LAZY_ZLIB].err = lazy_lib_open(&libs[LAZY_ZLIB].lib);
}
static void (*const openers[])(void) = {
	[LAZY_JSONC] = open_jsonc,
	[LAZY_ZSTD] = open_zstd,
	[LAZY_ZLIB] = open_zlib,
};

const char *lazy_load(enum lazy_which w)
{
	/* Once per process, whichever thread calls first (hunt's workers);
	 * later calls are one load and a compare. */
	int r = pthread_once(&libs[w].once, openers[w]);

	if (r != 0)
		return "pthread_once failed";
	return libs[w].err < 0 ? libs[w].lib.why : NULL;
}

/* A trampoline's first step: the table filled, or hermetic ends here. */
static void need(enum lazy_which w)
{
	const char *why = lazy_load(w);

	if (why)
		die(EXIT_INTERNAL, "%s", why);
}

#define JSONC_TRAMPOLINE(ret, name, params, args) \
	ret name params                           \
	{                                         \
		need(LAZY_JSONC);                 \
		return jsonc.f.name args;         \
	}
#define ZSTD_TRAMPOLINE(ret, name, params, args) \
	ret name params                          \
	{                                        \
		need(LAZY_ZSTD);                 \
		return zstd.f.name args;         \
	}
#define ZLIB_TRAMPOLINE(ret, name, params, args) \
	ret name params                          \
	{                                        \
		need(LAZY_ZLIB);                 \
		return zlib.f.name args;         \
	}

JSONC_FNS(JSONC_TRAMPOLINE)
ZSTD_FNS(ZSTD_TRAMPOLINE)
ZLIB_FNS(ZLIB_TRAMPOLINE)
