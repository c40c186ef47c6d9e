// Peer of asm_static_used.c: the SAME static names (asm_counter, asm_helper), also named by
// file-scope asm and used from several partitions. Both modules promote them under their own
// names; each merge must make them local again or the program has duplicate symbols.
__attribute__((used)) static int asm_counter = 40;
__attribute__((used, noinline)) static int asm_helper(int x) { return x * 2 + asm_counter; }

__asm__(".text\n"
        ".globl peer_bump\n"
        ".type peer_bump,@function\n"
        "peer_bump:\n"
        "  subl %edi, asm_counter(%rip)\n"
        "  movl %edi, %edi\n"
        "  jmp asm_helper\n"
        ".size peer_bump, .-peer_bump\n");
int peer_bump(int);

#define BODY(k)                                         \
  int acc = x;                                          \
  for (int i = 0; i < 10 + k; i++) {                    \
    acc = acc * 29 + (i ^ k);                           \
    if (acc & 1) acc += i * k; else acc -= k;           \
    acc ^= acc >> 3;                                    \
  }
__attribute__((noinline)) int peer_a(int x) { BODY(1) return acc % 1000 + asm_counter; }
__attribute__((noinline)) int peer_b(int x) { BODY(2) asm_counter *= 2; return acc % 1000; }
__attribute__((noinline)) int peer_c(int x) { BODY(3) return acc % 1000 + asm_helper(x); }
__attribute__((noinline)) int peer_d(int x) { BODY(4) return acc % 1000 + peer_bump(x); }
int peer_counter(void) { return asm_counter; }
