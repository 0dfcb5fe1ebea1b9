/* SPDX-License-Identifier: MIT */
/* die() for a unit test that includes a verb's source file: the verbs'
 * own die() lives in cli/main.c, which a unit test does not link; this one
 * prints the message and exits with the code, so a test sees the failure. */
#ifndef HERMETIC_TESTS_DIE_STUB_H
#define HERMETIC_TESTS_DIE_STUB_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void die(int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	exit(code);
}

#endif
