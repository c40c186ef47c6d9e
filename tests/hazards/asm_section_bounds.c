// HAZARD 8, 10: module asm that adds to a section C globals fill too, read back through
// `__start_`/`__stop_`. The asm puts its entry (pointing at the static hook_asm) into
// section "hooks" and names __start_hooks; static C entries go there as well. The unsplit
// object has the asm's entry first (module asm is emitted before the globals); if the asm
// and the C entries land in different partitions, `ld -r` orders them by partition and the
// walk prints them in another order. Module asm naming a section (or its __start_/__stop_)
// keeps that section's globals in the asm's partition.
// MTPC-KEEP: hook_asm
#include <stdio.h>

struct hook { int id; int (*fn)(int); };

__attribute__((used, noinline)) static int hook_asm(int x) { return x + 1000; }
__asm__(".pushsection hooks,\"aw\",@progbits\n"
        ".p2align 3\n"
        ".long 0\n"
        ".long 0\n"
        ".quad hook_asm\n"
        ".popsection\n"
        ".text\n"
        ".globl hooks_first\n"
        ".type hooks_first,@function\n"
        "hooks_first:\n"
        "  leaq __start_hooks(%rip), %rax\n"
        "  ret\n"
        ".size hooks_first, .-hooks_first\n");
const struct hook *hooks_first(void);

#define BODY(k)                                         \
  int acc = x;                                          \
  for (int i = 0; i < 10 + k; i++) {                    \
    acc = acc * 31 + (i ^ k);                           \
    if (acc & 1) acc += i * k; else acc -= k;           \
    acc ^= acc >> 3;                                    \
  }
__attribute__((noinline)) static int hook_one(int x) { BODY(1) return acc % 1000; }
__attribute__((noinline)) static int hook_two(int x) { BODY(2) return acc % 1000 + 1; }
__attribute__((noinline)) static int hook_three(int x) { BODY(3) return acc % 1000 + 2; }
__attribute__((used, section("hooks"), aligned(8))) static const struct hook h1 = {1, hook_one};
__attribute__((used, section("hooks"), aligned(8))) static const struct hook h2 = {2, hook_two};
__attribute__((used, section("hooks"), aligned(8))) static const struct hook h3 = {3, hook_three};
extern const struct hook __start_hooks[], __stop_hooks[];

__attribute__((noinline)) int walk_hooks(int x) {
  int sum = 0;
  for (const struct hook *h = __start_hooks; h < __stop_hooks; h++) {
    printf("hook %d -> %d\n", h->id, h->fn(x));
    sum = sum * 10 + h->id;
  }
  return sum;
}
__attribute__((noinline)) int first_is_asm(void) { return hooks_first()->fn(1) == 1001; }
// The biggest function reads the C entries directly, so they follow it into the first
// partition, ahead of the asm's.
__attribute__((noinline)) int hooks_direct(int x) {
  BODY(7)
  for (int i = 0; i < 3; i++) { BODY(8) x += acc % 7; }
  for (int i = 0; i < 3; i++) { BODY(9) x ^= acc % 5; }
  return acc % 1000 + h1.id * 100 + h2.id * 10 + h3.id + x % 3;
}

int main(void) {
  printf("walk=%d first_is_asm=%d direct=%d\n", walk_hooks(3), first_is_asm(), hooks_direct(4));
  return 0;
}
