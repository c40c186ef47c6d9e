// HAZARD 8: inline asm inside functions naming statics by text: `call ia_helper` and
// `lea ia_state(%rip)`. Nothing in the IR references those statics (they survive through
// llvm.used / llvm.compiler.used: `used, retain` and `used`), so a splitter that only follows
// IR operands leaves them internal in another partition than the asm (undefined symbol at the
// link), and renaming them on promotion breaks the asm the same way. Some functions that name
// them also use them from C, so a partition may need them both ways.
// MTPC-KEEP: ia_helper ia_state ia_table
#include <stdio.h>

__attribute__((used, noinline)) static int ia_helper(int x) { return x * 9 + 4; }
__attribute__((used, retain)) static int ia_state = 17;
__attribute__((used)) static int ia_table[4] = {10, 20, 30, 40};

#define BODY(k)                                         \
  int acc = x;                                          \
  for (int i = 0; i < 10 + k; i++) {                    \
    acc = acc * 31 + (i ^ k);                           \
    if (acc & 1) acc += i * k; else acc -= k;           \
    acc ^= acc >> 3;                                    \
  }
static int call_helper(int x) {
  int r;
  __asm__ volatile("movl %1, %%edi\n\tcall ia_helper\n\tmovl %%eax, %0"
                   : "=r"(r) : "r"(x) : "rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10",
                     "r11", "memory");
  return r;
}
static int *state_addr(void) {
  int *p;
  __asm__("leaq ia_state(%%rip), %0" : "=r"(p));
  return p;
}
__attribute__((noinline)) int ia_one(int x) { BODY(1) return acc % 1000 + call_helper(x); }
__attribute__((noinline)) int ia_two(int x) { BODY(2) return acc % 1000 + *state_addr(); }
__attribute__((noinline)) int ia_three(int x) {
  BODY(3)
  int *t;
  __asm__("leaq ia_table(%%rip), %0" : "=r"(t));
  return acc % 1000 + t[x & 3];
}
__attribute__((noinline)) int ia_four(int x) { BODY(4) *state_addr() += x; return acc % 1000 + ia_helper(x); }
__attribute__((noinline)) int ia_five(int x) { BODY(5) return acc % 1000 + call_helper(x) + ia_state; }

int main(void) {
  printf("one=%d two=%d three=%d four=%d five=%d state=%d\n", ia_one(1), ia_two(2), ia_three(3),
         ia_four(4), ia_five(5), ia_state);
  return 0;
}
