/* Small functions that ThinLTO imports into calc.c and inlines. */
#include "lib.h"

int lib_mix(int a, int b)
{
	return (a * 31) ^ (b + 7); /* MARK:lib_mix */
}

__attribute__((noinline)) int lib_scale(int x)
{
	int s = lib_trace(x); /* MARK:lib_scale */
	for (int i = 0; i < 3; i++)
		s = s * 3 + i;
	return s;
}

volatile int lib_sink;

/* Called first by every function of calc.c: a call the optimizer keeps where
 * it is, so a breakpoint on the function stops on the MARK line. */
__attribute__((noinline)) int lib_trace(int x)
{
	lib_sink = x; /* MARK:lib_trace */
	return lib_sink & 1;
}
