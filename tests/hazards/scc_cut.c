// HAZARD 14: cut call-graph cycles. One large call-graph cycle, bigger than a partition's share at N >= 2,
// so mtpc-split cuts it (--scc-cut) and its functions land in different partitions. Inside
// it: static functions in the cycle (promoted when cut), mutual recursion through a table of
// function pointers, `musttail` calls between cycle members (a tail call to a function in
// another partition must stay a tail call: the recursion depth below would overflow the
// stack otherwise), direct self-recursion, and a static variable the cycle updates. The
// output depends on every path.
// MTPC-MIN-PARTS: 2
#include <stdio.h>

typedef unsigned (*step_fn)(unsigned, unsigned);
static unsigned cyc_a(unsigned x, unsigned d);
static unsigned cyc_b(unsigned x, unsigned d);
unsigned cyc_c(unsigned x, unsigned d);
unsigned cyc_d(unsigned x, unsigned d);
static unsigned counter;

static const step_fn table[4] = {cyc_a, cyc_b, cyc_c, cyc_d};

#define WORK(k)                                                                  \
	for (unsigned i = 0; i < 24; i++) {                                      \
		x = x * 2654435761u + (k) * i;                                   \
		switch ((x >> 7) % 6) {                                          \
		case 0: x ^= x >> 13; break;                                     \
		case 1: x += 0x9e3779b9u; break;                                 \
		case 2: x = (x << 5) | (x >> 27); break;                         \
		case 3: x -= i * (k); break;                                     \
		case 4: x *= 33u; break;                                         \
		default: x ^= (k) << (i & 15); break;                            \
		}                                                                \
	}

static __attribute__((noinline)) unsigned cyc_a(unsigned x, unsigned d)
{
	WORK(3)
	counter += x & 1;
	if (d == 0)
		return x;
	return table[(x >> 3) & 3](x, d - 1) + 1;
}

static __attribute__((noinline)) unsigned cyc_b(unsigned x, unsigned d)
{
	WORK(5)
	if (d == 0)
		return x ^ counter;
	if (x & 4)
		return cyc_b(x >> 1, d - 1) * 3; /* direct self-recursion */
	return cyc_c(x, d - 1);
}

__attribute__((noinline)) unsigned cyc_c(unsigned x, unsigned d)
{
	WORK(7)
	if (d == 0)
		return x;
	return cyc_a(x + 1, d - 1) ^ cyc_d(x, d - 1);
}

/* Deep tail recursion through the cycle: 200000 levels fit in no stack unless every
 * musttail call stays a jump, also across partitions. */
__attribute__((noinline)) unsigned cyc_tail_odd(unsigned x, unsigned n);
__attribute__((noinline)) unsigned cyc_tail_even(unsigned x, unsigned n)
{
	if (n == 0)
		return x;
	__attribute__((musttail)) return cyc_tail_odd(x * 31u + n, n - 1);
}
__attribute__((noinline)) unsigned cyc_tail_odd(unsigned x, unsigned n)
{
	if (n == 0)
		return x + cyc_c(x, 1);
	__attribute__((musttail)) return cyc_tail_even(x ^ n, n - 1);
}

__attribute__((noinline)) unsigned cyc_d(unsigned x, unsigned d)
{
	WORK(11)
	if (d == 0)
		return x + cyc_tail_even(x, 1000);
	return cyc_b(x, d - 1) + (unsigned)(table[x & 3] == cyc_a);
}

int main(void)
{
	unsigned s = 0;
	for (unsigned i = 0; i < 6; i++)
		s = s * 7 + cyc_a(i, 9) + cyc_c(i * 3, 7);
	printf("scc_cut %u %u %u\n", s, counter, cyc_tail_even(5, 200000));
	return 0;
}
