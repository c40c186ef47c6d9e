// HAZARD 13: determinism. Many functions of identical cost and shape (ties for any cost-based
// balancer, and for any hash- or pointer-ordered container), shared internal helpers and
// globals, so two runs must break ties the same way (by name/GUID, never by address).
// Every fixture is also split twice and compared byte for byte.
#include <stdio.h>

static int shared_state;
__attribute__((noinline)) static int tie_helper(int x) { return shared_state += x; }

#define TIE(n) __attribute__((noinline)) int tie_##n(int x) { return tie_helper(x + n) * (n + 1); }
TIE(0) TIE(1) TIE(2) TIE(3) TIE(4) TIE(5) TIE(6) TIE(7) TIE(8) TIE(9)
TIE(10) TIE(11) TIE(12) TIE(13) TIE(14) TIE(15) TIE(16) TIE(17) TIE(18) TIE(19)

static int (*const ties[])(int) = {tie_0, tie_1, tie_2, tie_3, tie_4, tie_5, tie_6, tie_7,
                                   tie_8, tie_9, tie_10, tie_11, tie_12, tie_13, tie_14,
                                   tie_15, tie_16, tie_17, tie_18, tie_19};

int main(void) {
  unsigned h = 0;
  for (int i = 0; i < 20; i++) h = h * 31 + (unsigned)ties[i](i);
  printf("hash=%u state=%d\n", h, shared_state);
  return 0;
}
