/* A module with enough functions for several partitions: static helpers
 * (promoted and re-localized by a split), a function-pointer table, an alias,
 * an ifunc and TLS. */
#include "sample.h"

_Thread_local int big_tls = 1;

#define F(n)                                                                   \
	static __attribute__((noinline)) int helper##n(int x)                  \
	{                                                                      \
		int s = 0;                                                     \
		for (int i = 0; i < x % 17 + n; i++)                           \
			s += (i * n) ^ (x + i);                                \
		return s + big_tls;                                            \
	}                                                                      \
	__attribute__((noinline)) int step##n(int x) { return helper##n(x) % 1000 + n; }
#define F10(n) F(n##0) F(n##1) F(n##2) F(n##3) F(n##4) F(n##5) F(n##6) F(n##7) F(n##8) F(n##9)
F10(1) F10(2) F10(3) F10(4)

static int (*const table[])(int) = {
	step10, step11, step12, step13, step14, step15, step16, step17, step18, step19,
	step20, step21, step22, step23, step24, step25, step26, step27, step28, step29,
	step30, step31, step32, step33, step34, step35, step36, step37, step38, step39,
	step40, step41, step42, step43, step44, step45, step46, step47, step48, step49,
};

int big_entry(int n)
{
	int acc = 0;
	for (int i = 0; i < n; i++)
		acc = (acc * 31 + table[i % 40](i + acc % 7)) % 100003;
	return acc;
}

int big_alias(int n) __attribute__((alias("big_entry")));

static int dispatch_impl(int x) { return x * 11; }
static int (*resolve_dispatch(void))(int) { return dispatch_impl; }
int big_dispatch(int x) __attribute__((ifunc("resolve_dispatch")));
