// HAZARD 8: module asm naming statics (issue #14). A `static __attribute__((used))` variable and
// a static function are named by file-scope asm (asm_bump increments the variable, asm_twice
// calls the function) and are also used from C functions that a splitter spreads over
// partitions. A static used across partitions is promoted; if it is renamed
// (`asm_counter.mtpc.<hash>`) the asm's reference by name stays undefined (ld.lld: undefined
// symbol), so such statics must keep their exact name and be made local again at the merge.
// The peer module defines the same static names, named by its own asm: promoted under their
// own names in both modules, they must be local again after each merge.
// MTPC-PEER: support/asm_static_peer.c
// MTPC-KEEP: asm_counter asm_helper
#include <stdio.h>

__attribute__((used)) static int asm_counter = 5;
__attribute__((used, noinline)) static int asm_helper(int x) { return x * 3 + asm_counter; }

__asm__(".text\n"
        ".globl asm_bump\n"
        ".type asm_bump,@function\n"
        "asm_bump:\n"
        "  addl %edi, asm_counter(%rip)\n"
        "  movl asm_counter(%rip), %eax\n"
        "  ret\n"
        ".size asm_bump, .-asm_bump\n"
        ".globl asm_twice\n"
        ".type asm_twice,@function\n"
        "asm_twice:\n"
        "  pushq %rbx\n"
        "  call asm_helper\n"
        "  movl %eax, %edi\n"
        "  call asm_helper\n"
        "  popq %rbx\n"
        "  ret\n"
        ".size asm_twice, .-asm_twice\n");
int asm_bump(int);
int asm_twice(int);

// Independent roots of some size, so that they land in different partitions.
#define BODY(k)                                         \
  int acc = x;                                          \
  for (int i = 0; i < 10 + k; i++) {                    \
    acc = acc * 31 + (i ^ k);                           \
    if (acc & 1) acc += i * k; else acc -= k;           \
    acc ^= acc >> 3;                                    \
  }
__attribute__((noinline)) int reader_a(int x) { BODY(1) return acc % 1000 + asm_counter; }
__attribute__((noinline)) int reader_b(int x) { BODY(2) asm_counter += x; return acc % 1000; }
__attribute__((noinline)) int reader_c(int x) { BODY(3) return acc % 1000 + asm_helper(x); }
__attribute__((noinline)) int reader_d(int x) { BODY(4) return acc % 1000 + asm_bump(x); }
__attribute__((noinline)) int reader_e(int x) { BODY(5) return acc % 1000 + asm_twice(x); }
__attribute__((noinline)) int reader_f(int x) { BODY(6) return acc % 1000 - asm_counter; }

int peer_a(int), peer_b(int), peer_c(int), peer_d(int), peer_counter(void);

int main(void) {
  int pa = peer_a(1), pb = peer_b(2), pc = peer_c(3), pd = peer_d(4);
  printf("peer a=%d b=%d c=%d d=%d counter=%d\n", pa, pb, pc, pd, peer_counter());
  int a = reader_a(1), b = reader_b(2), c = reader_c(3), d = reader_d(4), e = reader_e(5),
      f = reader_f(6);
  printf("a=%d b=%d c=%d d=%d e=%d f=%d counter=%d\n", a, b, c, d, e, f, asm_counter);
  return 0;
}
