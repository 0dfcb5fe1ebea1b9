// SPDX-License-Identifier: MIT
/* The engine's two ways to speak: an error for its caller, a warning for
 * the user through the verb's sink (engine.h). Nothing else here. */
#include <errno.h>
#include <stdio.h>
#include "engine.h"

static eng_warn_fn warn_sink;

int eng_fail(struct eng_error *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (code <= 0) /* a caller's bug: keep it an error all the same */
		code = EIO;
	if (err) {
		err->code = code;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
	}
	return -code;
}

void eng_set_warn(eng_warn_fn sink)
{
	warn_sink = sink;
}

void eng_warn(const char *fmt, ...)
{
	char line[8192]; /* two paths and a sentence */
	va_list ap;

	if (!warn_sink)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	warn_sink(line);
}
