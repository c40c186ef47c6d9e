// HAZARD 8: module-level inline asm. `.symver` names a C function defined in this module: if
// the asm lands in a partition without that function the versioned alias silently disappears
// (missing global foo@VERS_1); if the asm is copied into every partition, the asm-defined
// functions and data below are defined twice (ld -r fails). Asm symbols are called from C
// functions that a splitter spreads over partitions.
#include <stdio.h>

__asm__(".symver versioned_impl, versioned@VERS_1");
__asm__(".symver versioned_impl2, versioned@@VERS_2");
__attribute__((noinline, used)) int versioned_impl(int x) { return x + 100; }
__attribute__((noinline, used)) int versioned_impl2(int x) { return x + 200; }

__asm__(".text\n"
        ".globl asm_triple\n"
        ".type asm_triple,@function\n"
        "asm_triple:\n"
        "  leal (%rdi,%rdi,2), %eax\n"
        "  ret\n"
        ".size asm_triple, .-asm_triple\n"
        ".data\n"
        ".globl asm_data\n"
        ".type asm_data,@object\n"
        "asm_data:\n"
        "  .long 1234\n"
        ".size asm_data, 4\n"
        ".text\n");
int asm_triple(int);
extern int asm_data;

__attribute__((noinline)) int m_one(int x) { return asm_triple(x) + versioned_impl(x); }
__attribute__((noinline)) int m_two(int x) { return asm_data + x + versioned_impl2(x); }
__attribute__((noinline)) int m_three(int x) { return asm_triple(m_two(x)); }

int main(void) {
  printf("one=%d two=%d three=%d\n", m_one(2), m_two(3), m_three(4));
  return 0;
}
