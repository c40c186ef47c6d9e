// HAZARD 6, 8: `.set`/`.equ` in module asm and `__attribute__((alias))` chains through asm
// naming statics. set_pub is `.set` to s_alias, a static alias of the static s_impl; equ_pub
// is `.equ` to the static s_other; equ_chain is `.set` to equ_pub (an asm-only chain). C
// functions in other partitions call the statics directly and the asm names through extern
// declarations. Renaming a promoted static (or alias) leaves the asm's `.set` undefined.
// MTPC-KEEP: s_impl s_alias s_other
#include <stdio.h>

__attribute__((used, noinline)) static int s_impl(int x) { return x * 7 + 1; }
static int s_alias(int) __attribute__((alias("s_impl"), used));
__attribute__((used, noinline)) static int s_other(int x) { return x * 11 - 2; }

__asm__(".globl set_pub\n"
        ".set set_pub, s_alias\n"
        ".globl equ_pub\n"
        ".equ equ_pub, s_other\n"
        ".globl equ_chain\n"
        ".set equ_chain, equ_pub\n");
int set_pub(int);
int equ_pub(int);
int equ_chain(int);

#define BODY(k)                                         \
  int acc = x;                                          \
  for (int i = 0; i < 10 + k; i++) {                    \
    acc = acc * 31 + (i ^ k);                           \
    if (acc & 1) acc += i * k; else acc -= k;           \
    acc ^= acc >> 3;                                    \
  }
__attribute__((noinline)) int sa_one(int x) { BODY(1) return acc % 1000 + s_alias(x); }
__attribute__((noinline)) int sa_two(int x) { BODY(2) return acc % 1000 + s_impl(x); }
__attribute__((noinline)) int sa_three(int x) { BODY(3) return acc % 1000 + s_other(x); }
__attribute__((noinline)) int sa_four(int x) { BODY(4) return acc % 1000 + set_pub(x); }
__attribute__((noinline)) int sa_five(int x) { BODY(5) return acc % 1000 + equ_pub(x) + equ_chain(x); }

int main(void) {
  printf("one=%d two=%d three=%d four=%d five=%d\n", sa_one(1), sa_two(2), sa_three(3),
         sa_four(4), sa_five(5));
  return 0;
}
