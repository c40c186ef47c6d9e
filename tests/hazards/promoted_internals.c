// HAZARD 1: promoted internals. Static functions and static data are used by several external
// functions that a call-graph splitter puts in different partitions, so the splitter must
// promote them (hidden, dso_local) and list them in localize.txt. The peer module
// support/promoted_peer.c defines the SAME static names; both modules are split and linked
// into one program, so a promoted name that is not localized again collides (duplicate
// symbol) or, worse, resolves to the other module's helper (wrong output).
// MTPC-PEER: support/promoted_peer.c
// MTPC-MAIN: support/main_promoted.c
#include <stdio.h>

static int counter;                       // internal data written from many partitions
static const int table[8] = {3, 1, 4, 1, 5, 9, 2, 6};
static int cache[16];

__attribute__((noinline)) static int helper(int x) {   // same name in the peer
  counter++;
  return table[x & 7] * 10 + x;
}

__attribute__((noinline)) static int scale(int x) {
  int r = 0;
  for (int i = 0; i < (x & 15); i++) r += helper(i + x);
  return r;
}

static int (*const dispatch[2])(int) = {helper, scale};  // internal fn pointers in data

int a_one(int x) { return helper(x) + 1; }
int a_two(int x) { return scale(x) - helper(x + 1); }
int a_three(int x) { return dispatch[x & 1](x) * 2; }
int a_four(int x) {
  if (cache[x & 15]) return cache[x & 15];
  return cache[x & 15] = scale(x) + a_one(x);
}
int a_counter(void) { return counter; }

void a_report(void) {
  printf("a: one=%d two=%d three=%d four=%d four=%d counter=%d\n", a_one(5), a_two(7),
         a_three(3), a_four(9), a_four(9), a_counter());
}
