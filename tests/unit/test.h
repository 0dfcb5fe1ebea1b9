/* SPDX-License-Identifier: MIT */
/* Minimal unit-test helpers: one PASS/FAIL line per case, read by tests/run.sh. */
#ifndef HERMETIC_TEST_H
#define HERMETIC_TEST_H
#include <stdio.h>
#include <string.h>

static int t_failed;

#define CHECK(name, cond)                                                                         \
	do {                                                                                       \
		if (cond) {                                                                        \
			printf("PASS %s\n", name);                                                 \
		} else {                                                                           \
			printf("FAIL %s: %s (%s:%d)\n", name, #cond, __FILE__, __LINE__);          \
			t_failed++;                                                                \
		}                                                                                  \
	} while (0)

#define T_EXIT() return t_failed ? 1 : 0
#endif
