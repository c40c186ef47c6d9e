/* check.h: the tiny assertion kit of the C unit tests. CHECK counts instead
 * of aborting, so one run reports every failure; CHECK_REPORT() prints the
 * closing "N passed, N failed" line that tests/units/test_c_units.py reads and
 * gives main's exit status. */
#ifndef MTPC_CHECK_H
#define MTPC_CHECK_H

#include <stdio.h>

static int passed, failed;

#define CHECK(c)                                                                              \
	do {                                                                                  \
		if (c)                                                                        \
			passed++;                                                             \
		else {                                                                        \
			failed++;                                                             \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
		}                                                                             \
	} while (0)

#define CHECK_REPORT() (printf("%d passed, %d failed\n", passed, failed), failed != 0)

#endif
