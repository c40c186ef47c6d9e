/* The module the tests split: several external functions with enough work
 * (and noinline) to land in different partitions, static helpers, and calls
 * into lib.c that are inlined after the ThinLTO import. */
#include "calc.h"
#include "lib.h"

static __attribute__((noinline)) int calc_helper(int x, int k)
{
	int s = lib_trace(x); /* MARK:calc_helper */
	for (int i = 0; i < x % 13 + k; i++)
		s += (i * k) ^ (x + i);
	return s;
}

#define BODY(k)                                                                \
	int acc = n;                                                           \
	for (int i = 0; i < 8; i++) {                                          \
		acc = lib_mix(acc, i) % 100003;                                \
		acc += calc_helper(acc, k);                                    \
		if (acc % (k + 3) == 0)                                        \
			acc ^= i * k;                                          \
		else                                                           \
			acc -= i;                                              \
	}                                                                      \
	return acc % 10007

__attribute__((noinline)) int calc_alpha(int n)
{
	n += lib_trace(1); /* MARK:calc_alpha */
	BODY(1);
}

__attribute__((noinline)) int calc_beta(int n)
{
	n += lib_trace(2); /* MARK:calc_beta */
	BODY(2);
}

__attribute__((noinline)) int calc_gamma(int n)
{
	n += lib_trace(3); /* MARK:calc_gamma */
	BODY(3);
}

__attribute__((noinline)) int calc_delta(int n)
{
	n += lib_trace(4); /* MARK:calc_delta */
	BODY(4);
}

__attribute__((noinline)) int calc_epsilon(int n)
{
	n += lib_trace(5); /* MARK:calc_epsilon */
	BODY(5);
}

__attribute__((noinline)) int calc_zeta(int n)
{
	n += lib_trace(6); /* MARK:calc_zeta */
	BODY(6);
}

__attribute__((noinline)) int calc_eta(int n)
{
	n += lib_trace(7); /* MARK:calc_eta */
	BODY(7);
}

__attribute__((noinline)) int calc_theta(int n)
{
	n += lib_trace(8); /* MARK:calc_theta */
	BODY(8);
}

__attribute__((noinline)) int calc_all(int n)
{
	int r = lib_trace(n); /* MARK:calc_all */
	r = calc_alpha(r);
	r += calc_beta(r) + calc_gamma(r) + calc_delta(r);
	r += calc_epsilon(r) + calc_zeta(r) + calc_eta(r) + calc_theta(r);
	return r + lib_scale(r % 100);
}
