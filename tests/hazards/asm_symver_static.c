// HAZARD 8: `.symver` naming a static that C code in other partitions calls. The versioned
// name takes the binding of its target: in the unsplit object `s_ver@VERS_1` is local. A
// splitter that renames the promoted static loses `s_ver@VERS_1` silently (`.symver` of an
// undefined symbol emits nothing); one that keeps the name must also make the versioned name
// local again, else the merged object gains a global `s_ver@VERS_1`.
// `.symver x, name@@@V` renames x itself (the object keeps no x): what calls sv3_impl must stay
// in the asm's partition, promoted or not.
// MTPC-KEEP: sv_impl s_ver@VERS_1 s_ver3@@VERS_3
#include <stdio.h>

__asm__(".symver sv_impl, s_ver@VERS_1");
__attribute__((used, noinline)) static int sv_impl(int x) { return x * 5 + 3; }
__asm__(".symver sv3_impl, s_ver3@@@VERS_3");
__attribute__((used, noinline)) static int sv3_impl(int x) { return x * 13 - 1; }

#define BODY(k)                                         \
  int acc = x;                                          \
  for (int i = 0; i < 10 + k; i++) {                    \
    acc = acc * 31 + (i ^ k);                           \
    if (acc & 1) acc += i * k; else acc -= k;           \
    acc ^= acc >> 3;                                    \
  }
__attribute__((noinline)) int sv_one(int x) { BODY(1) return acc % 1000 + sv_impl(x); }
__attribute__((noinline)) int sv_two(int x) { BODY(2) return acc % 1000 + sv_impl(x + 1); }
__attribute__((noinline)) int sv_three(int x) { BODY(3) return acc % 1000 + sv_impl(x + 2); }
__attribute__((noinline)) int sv_four(int x) { BODY(4) return acc % 1000 - sv_impl(x); }
__attribute__((noinline)) int sv_five(int x) { BODY(5) return acc % 1000 + sv3_impl(x); }
__attribute__((noinline)) int sv_six(int x) { BODY(6) return acc % 1000 - sv3_impl(x); }

int main(void) {
  printf("one=%d two=%d three=%d four=%d five=%d six=%d\n", sv_one(1), sv_two(2), sv_three(3),
         sv_four(4), sv_five(5), sv_six(6));
  return 0;
}
