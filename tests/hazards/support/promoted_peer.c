// Peer of promoted_internals.c: the same static names with different bodies and values.
#include <stdio.h>

static int counter = 1000;
static const int table[8] = {2, 7, 1, 8, 2, 8, 1, 8};
static int cache[16];

__attribute__((noinline)) static int helper(int x) {
  counter += 2;
  return table[x & 7] * 100 - x;
}

__attribute__((noinline)) static int scale(int x) {
  int r = 1;
  for (int i = 0; i < (x & 7); i++) r += helper(i * x);
  return r;
}

static int (*const dispatch[2])(int) = {scale, helper};

int b_one(int x) { return helper(x) + 3; }
int b_two(int x) { return scale(x) + helper(x - 1); }
int b_three(int x) { return dispatch[x & 1](x) * 3; }
int b_four(int x) {
  if (cache[x & 15]) return cache[x & 15];
  return cache[x & 15] = scale(x) - b_one(x);
}
int b_counter(void) { return counter; }

void b_report(void) {
  printf("b: one=%d two=%d three=%d four=%d four=%d counter=%d\n", b_one(5), b_two(7),
         b_three(3), b_four(9), b_four(9), b_counter());
}
